package server

import (
	"errors"

	"github.com/dolthub/vitess/go/mysql"
)

// max_allowed_packet, as MySQL enforces it: a command whose payload (all
// of its packets, when it spans more than one) is larger than the
// connection's max_allowed_packet is refused with ER_NET_PACKET_TOO_LARGE
// (1153, 08S01) and the connection is closed. go-mysql-server reported 1
// GiB and the protocol layer read any size into memory: one client could
// make the server allocate what it sent. The limit is the global value
// when the connection was accepted (MySQL's session value is read-only and
// taken from the global at connect); the default is MySQL 8's 64 MiB.
//
// wireConn counts each command's payload as its packet headers pass
// (parse): a packet of the largest size, 2^24-1, is continued by the next.

const defaultMaxAllowedPacket = 64 << 20

var errPacketTooLarge = errors.New("lockstep: packet bigger than max_allowed_packet; connection closed")

// countPacket adds a packet of size payload bytes and sequence number seq
// to the current command and reports whether the command is now over the
// limit. A command starts at sequence 0 (so a header parse() reads twice,
// waiting for its payload, counts once).
func (c *wireConn) countPacket(size int, seq byte) (over bool) {
	if c.continued && seq != 0 {
		c.cmdBytes += int64(size)
	} else {
		c.cmdBytes = int64(size)
	}
	c.continued = size == maxPacketPayload
	limit := c.maxPacket
	if c.pendingLogin && (limit == 0 || limit > maxPendingPacket) {
		limit = maxPendingPacket // protoguard.go
	}
	return limit > 0 && c.cmdBytes > limit
}

// refuseTooLarge answers the packet with sequence number seq that took its
// command over the limit with MySQL's error, and ends the stream.
func (c *wireConn) refuseTooLarge(seq byte) error {
	w := packetWriter{seq: seq + 1}
	w.errPacket(errNetPacketTooLarge)
	_, _ = c.conn().Write(w.b)
	return c.end(errPacketTooLarge)
}

var errNetPacketTooLarge = mysql.NewSQLError(mysql.ERNetPacketTooLarge, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes")
