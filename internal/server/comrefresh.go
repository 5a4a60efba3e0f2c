package server

// COM_REFRESH (0x07) is the protocol's older form of FLUSH: one byte of
// REFRESH_* flags. `mysqldump --flush-logs` sends it (mysql_refresh with
// REFRESH_LOG), and the protocol layer answered "command handling not
// implemented yet: 7". wireConn hands the protocol layer the FLUSH
// statement the flags stand for as a COM_QUERY in its place, so the
// privilege check (RELOAD), the statement and its OK or ERR packet are
// those of the text statement. Every FLUSH but PRIVILEGES changes nothing
// in lockstep (sqlfront/flush.go), so flags asking for several things
// become FLUSH PRIVILEGES when REFRESH_GRANT is among them, else FLUSH
// LOGS.

const (
	comRefresh   = 0x07
	comQuery     = 0x03
	refreshGrant = 0x01 // REFRESH_GRANT: reload the privilege tables
)

// refreshQuery is the FLUSH statement for COM_REFRESH's flags.
func refreshQuery(flags byte) string {
	if flags&refreshGrant != 0 {
		return "FLUSH PRIVILEGES"
	}
	return "FLUSH LOGS"
}

// packetOf frames payload as one packet with sequence number seq.
func packetOf(seq byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}
