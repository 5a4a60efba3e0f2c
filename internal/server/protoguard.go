package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strconv"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// Packets the protocol layer (vitess) mishandles, answered or refused in
// wireConn before it reads them, as MySQL answers them.
//
// Found by TestProtocolFuzz: each of these made vitess panic (caught in
// its connection handler, logged with the stack, the connection dropped
// without an answer) or drop the connection without one:
//
//   - a handshake response vitess cannot parse: one shorter than its
//     fixed part panicked (readNullString's slice bounds), others were
//     dropped (a NUL inside a user name: the name ends at it, and the rest
//     no longer parses). MySQL answers ER_HANDSHAKE_ERROR (1043, 08S01,
//     "Bad handshake"): handshakeFault below mirrors vitess's parser;
//   - an empty command packet (vitess reads its command byte from
//     data[0]). MySQL reads it as COM_SLEEP and answers
//     ER_UNKNOWN_COM_ERROR (1047, 08S01, "Unknown command");
//   - COM_STMT_RESET of a statement that does not exist, or too short to
//     name one (vitess dereferenced a nil statement). MySQL:
//     ER_UNKNOWN_STMT_HANDLER (1243) or ER_MALFORMED_PACKET (1835). The
//     same for COM_STMT_EXECUTE (vitess answered 2014 "statement ID is
//     not found from record"): among others, the id of a statement that
//     failed to prepare or was killed while prepared (handler.ComPrepare
//     forgets it);
//   - COM_REGISTER_SLAVE and COM_BINLOG_DUMP_GTID: vitess hands them to a
//     handler that implements its BinlogReplicaHandler, and lockstep's
//     does not: it then neither answered nor released the packet, and the
//     next read panicked. Answered 1047 here, as vitess answers the
//     commands it does not know (COM_BINLOG_DUMP among them): lockstep is
//     not a replication source yet;
//   - COM_STMT_EXECUTE while vitess has a cursor open (vitess allows one
//     per connection; its refusal left the packet unreleased, and the
//     next read panicked: "readEphemeralPacket: unexpected
//     currentEphemeralPolicy"). Refused here with the error vitess meant
//     (1047); MySQL would run it (a known limit: one open cursor).
//
// A command is answered here only at the head of the stream, with nothing
// read before it still waiting for vitess (as COM_STATISTICS is), so
// vitess's state (its prepared statements, its cursor) is what it will be
// when it would read the command.

var (
	errBadHandshake   = mysql.NewSQLError(1043, "08S01", "Bad handshake")
	errUnknownCommand = mysql.NewSQLError(mysql.ERUnknownComError, mysql.SSUnknownComError, "Unknown command")
	errMalformed      = mysql.NewSQLError(1835, "HY000", "Malformed communication packet.")
	errCursorOpen     = mysql.NewSQLError(mysql.ERUnknownComError, mysql.SSUnknownComError,
		"error handling ComStmtExecute packet: a cursor is open (fetch it to its end, or reset or close its statement, first)")

	errOutOfOrder = mysql.NewSQLError(1156, "08S01", "Got packets out of order")

	errHandshakeRefused  = errors.New("lockstep: bad handshake; connection closed")
	errPacketsOutOfOrder = errors.New("lockstep: packets out of order; connection closed")
)

// maxPendingPacket bounds the packets of a connection that has not logged
// in: a handshake response holds a user name (at most 32 characters), an
// auth response, a database name and connection attributes (MySQL refuses
// more than 64 KiB of them). Refused with 1043 beyond it.
const maxPendingPacket = 68 << 10

// handshakeFault reports why vitess could not read payload as a protocol
// 4.1 handshake response (its parseClientHandshakePacket, step by step),
// or "".
func handshakeFault(p []byte) string {
	if len(p) < 4 {
		return "no capability flags"
	}
	flags := binary.LittleEndian.Uint32(p)
	if flags&mysql.CapabilityClientProtocol41 == 0 {
		return "not protocol 4.1"
	}
	pos := 4 + 4 + 1 + 23 // flags, max packet size, character set, filler
	if len(p) < pos {
		return "short fixed part"
	}
	nullString := func() bool {
		end := bytes.IndexByte(p[pos:], 0)
		if end < 0 {
			return false
		}
		pos += end + 1
		return true
	}
	if !nullString() {
		return "user name"
	}
	switch {
	case flags&mysql.CapabilityClientPluginAuthLenencClientData != 0:
		n, at, ok := readLenEncInt(p, pos) // execproto.go
		if !ok || n > uint64(len(p)-at) {
			return "auth response"
		}
		pos = at + int(n)
	case flags&mysql.CapabilityClientSecureConnection != 0:
		if pos >= len(p) || int(p[pos]) > len(p)-pos-1 {
			return "auth response"
		}
		pos += 1 + int(p[pos])
	default:
		if !nullString() {
			return "auth response"
		}
	}
	if flags&mysql.CapabilityClientConnectWithDB != 0 && !nullString() {
		return "database name"
	}
	if flags&mysql.CapabilityClientPluginAuth != 0 && !nullString() {
		return "auth plugin name"
	}
	return ""
}

// refuseOutOfOrder answers a packet with sequence number seq that does
// not follow the one before it with MySQL's error, and ends the stream.
func (c *wireConn) refuseOutOfOrder(seq byte) error {
	w := packetWriter{seq: seq + 1}
	w.errPacket(errOutOfOrder)
	_, _ = c.conn().Write(w.b)
	return c.end(errPacketsOutOfOrder)
}

// refuseHandshake answers a client's handshake packet with sequence
// number seq with 1043 and ends the stream.
func (c *wireConn) refuseHandshake(seq byte) error {
	w := packetWriter{seq: seq + 1}
	w.errPacket(errBadHandshake)
	_, _ = c.conn().Write(w.b)
	return c.end(errHandshakeRefused)
}

// guard returns the error to answer a command with instead of handing it
// to vitess (nil: hand it on); rest starts at the packet's header, size
// is its payload's size. wait: more of the packet is needed to tell.
func (c *wireConn) guard(rest []byte, size int) (answer *mysql.SQLError, wait bool) {
	if size == 0 {
		return errUnknownCommand, false
	}
	if len(rest) < 5 {
		return nil, true
	}
	switch rest[4] {
	case comStmtReset:
		if size < 5 {
			return errMalformed, false
		}
		if len(rest) < 9 {
			return nil, true
		}
		id := binary.LittleEndian.Uint32(rest[5:9])
		if vc := c.vitessConn(); vc != nil {
			if _, ok := vc.PrepareData[id]; !ok {
				return mysql.NewSQLError(1243, "HY000", "Unknown prepared statement handler (%d) given to mysqld_stmt_reset", id), false
			}
		}
	case comStmtExecute:
		if size < 5 {
			return errMalformed, false
		}
		if len(rest) < 9 {
			return nil, true
		}
		vc := c.vitessConn()
		if vc == nil {
			break
		}
		if id := binary.LittleEndian.Uint32(rest[5:9]); vc.PrepareData[id] == nil {
			return mysql.NewSQLError(1243, "HY000", "Unknown prepared statement handler (%d) given to mysqld_stmt_execute", id), false
		}
		if vitessCursorOpen(vc) {
			return errCursorOpen, false
		}
		payload, st := c.message(rest)
		switch st {
		case messageShort:
			return nil, true
		case messageOver:
			return nil, false // refused as it arrives (countPacket)
		}
		if !executeReadable(payload, vc.PrepareData[binary.LittleEndian.Uint32(rest[5:9])]) {
			return errMalformed, false
		}
	case comRegisterReplica, comBinlogDumpGTID:
		if !replicaHandler {
			return mysql.NewSQLError(mysql.ERUnknownComError, mysql.SSUnknownComError, "command handling not implemented yet: %d", rest[4]), false
		}
	}
	return nil, false
}

const (
	comRegisterReplica = 0x15
	comStmtReset       = 0x1a
	comBinlogDumpGTID  = 0x1e
)

// replicaHandler: lockstep's protocol handler takes the replication
// commands (it does not).
var replicaHandler = func() bool {
	_, ok := any(&handler{}).(mysql.BinlogReplicaHandler)
	return ok
}()

// vitessConn is the protocol layer's connection over c (known once the
// handler has seen it: handler.NewConnection), or nil.
func (c *wireConn) vitessConn() *mysql.Conn {
	if x, ok := c.hook.(*execHook); ok {
		return x.vc
	}
	return nil
}

// vitessCursorField is the index of mysql.Conn's unexported cursor state
// (cs, a pointer: nil when no cursor is open), or -1 if this vitess has
// none (TestVitessCursorField fails then).
var vitessCursorField = func() int {
	f, ok := reflect.TypeOf(mysql.Conn{}).FieldByName("cs")
	if !ok || f.Type.Kind() != reflect.Pointer || len(f.Index) != 1 {
		return -1
	}
	return f.Index[0]
}()

// vitessCursorOpen reports whether vitess has a cursor open on vc. Only
// the connection's own goroutine may ask (the one reading from it).
func vitessCursorOpen(vc *mysql.Conn) bool {
	if vitessCursorField < 0 {
		return false
	}
	return !reflect.ValueOf(vc).Elem().Field(vitessCursorField).IsNil()
}

// outTracker follows the server's packets as they are written, to know
// whether the last one asked the client for a file (LOAD DATA LOCAL
// INFILE): the client's packets then carry the file, whatever their
// first bytes, up to an empty one.
type outTracker struct {
	hdr   [4]byte
	seq   byte // the sequence number of the last packet begun
	n     int  // header bytes seen
	left  int  // payload bytes of the current packet still to come
	first bool // the current packet's first payload byte still to come
	last  int  // the first payload byte of the last packet; -1: empty
	count int  // packets begun
}

func (t *outTracker) track(p []byte) {
	for len(p) > 0 {
		if t.left > 0 {
			if t.first {
				t.last, t.first = int(p[0]), false
			}
			k := min(t.left, len(p))
			t.left -= k
			p = p[k:]
			continue
		}
		k := copy(t.hdr[t.n:], p)
		t.n += k
		p = p[k:]
		if t.n < 4 {
			return
		}
		t.n = 0
		t.count++
		t.seq = t.hdr[3]
		t.left = int(t.hdr[0]) | int(t.hdr[1])<<8 | int(t.hdr[2])<<16
		t.first = t.left > 0
		if t.left == 0 {
			t.last = -1
		}
	}
}

// fileRequested reports whether the last packet written, whole, asked for
// a file.
func (t *outTracker) fileRequested() bool {
	return t.left == 0 && t.n == 0 && t.last == 0xfb
}

// Message states (wireConn.message).
const (
	messageWhole = iota
	messageShort // more of it still to come
	messageOver  // more than max_allowed_packet: refused as it arrives
)

// message returns the payload of the command whose first packet starts
// rest, whole: one packet's payload, or the pieces of one sent in several
// (each full piece followed by another) joined in a copy.
func (c *wireConn) message(rest []byte) ([]byte, int) {
	end, _, st := c.messageEnd(rest)
	if st != messageWhole {
		return nil, st
	}
	size := int(rest[0]) | int(rest[1])<<8 | int(rest[2])<<16
	if 4+size == end {
		return rest[4:end], messageWhole
	}
	payload := make([]byte, 0, end)
	for off := 0; off < end; {
		n := int(rest[off]) | int(rest[off+1])<<8 | int(rest[off+2])<<16
		payload = append(payload, rest[off+4:off+4+n]...)
		off += 4 + n
	}
	return payload, messageWhole
}

// messageEnd returns the length of the command starting rest, headers
// included, and the sequence number of its last packet.
func (c *wireConn) messageEnd(rest []byte) (end int, lastSeq byte, st int) {
	limit := c.maxPacket
	if limit <= 0 {
		limit = 1 << 30 // MySQL's largest max_allowed_packet
	}
	var total int64
	for {
		if len(rest) < end+4 {
			return 0, 0, messageShort
		}
		n := int(rest[end]) | int(rest[end+1])<<8 | int(rest[end+2])<<16
		lastSeq = rest[end+3]
		if total += int64(n); total > limit {
			return 0, 0, messageOver
		}
		if len(rest) < end+4+n {
			return 0, 0, messageShort
		}
		end += 4 + n
		if n < maxPacketPayload {
			return end, lastSeq, messageWhole
		}
	}
}

// executeReadable reports whether vitess can read the COM_STMT_EXECUTE
// payload p (command byte first) of statement prep: its parser
// (parseComStmtExecute, parseStmtArgs), step by step. vitess answers
// most unreadable packets itself, but trusted a string parameter's
// length: one of 2^63 or more made it allocate a slice of negative
// length and panic (TestProtocolFuzz). Refused here with 1835, as MySQL
// refuses a packet it cannot read.
func executeReadable(p []byte, prep *mysql.PrepareData) bool {
	if prep == nil || len(p) < 10 {
		return false
	}
	pos := 10 // command, statement id, cursor flags, iteration count
	n := int(prep.ParamsCount)
	if len(prep.ParamsType) != n {
		return false
	}
	if n == 0 {
		return true
	}
	nulls := (n + 7) / 8
	if len(p) < pos+nulls {
		return false
	}
	bitmap := p[pos : pos+nulls]
	pos += nulls
	types := make([]querypb.Type, n)
	for i := range types {
		types[i] = querypb.Type(prep.ParamsType[i])
	}
	if pos < len(p) && p[pos] == 1 {
		pos++
		if len(p) < pos+2*n {
			return false
		}
		for i := range types {
			t, err := sqltypes.MySQLToType(int64(p[pos+2*i]), int64(p[pos+2*i+1])>>2)
			if err != nil {
				return false
			}
			types[i] = t
		}
		pos += 2 * n
	} else if pos < len(p) {
		pos++
	}
	for i, t := range types {
		if v, ok := prep.BindVars["v"+strconv.Itoa(i+1)]; ok && v != nil {
			continue // sent before (COM_STMT_SEND_LONG_DATA): not in the packet
		}
		if bitmap[i/8]&(1<<uint(i%8)) != 0 {
			continue
		}
		var ok bool
		if pos, ok = paramEnd(p, pos, t); !ok {
			return false
		}
	}
	return true
}

// paramEnd returns where the value of a parameter of type t starting at
// p[pos] ends, as vitess's parseStmtArgs reads it.
func paramEnd(p []byte, pos int, t querypb.Type) (int, bool) {
	fixed := 0
	switch t {
	case sqltypes.Null:
		return pos, true
	case sqltypes.Int8, sqltypes.Uint8:
		fixed = 1
	case sqltypes.Int16, sqltypes.Uint16, sqltypes.Year:
		fixed = 2
	case sqltypes.Int24, sqltypes.Uint24, sqltypes.Int32, sqltypes.Uint32, sqltypes.Float32:
		fixed = 4
	case sqltypes.Int64, sqltypes.Uint64, sqltypes.Float64:
		fixed = 8
	case sqltypes.Timestamp, sqltypes.Date, sqltypes.Datetime, sqltypes.Time:
		// A length byte, then that many bytes of the lengths vitess reads.
		if pos >= len(p) {
			return 0, false
		}
		l := int(p[pos])
		valid := l == 0 || l == 4 || l == 7 || l == 11
		if t == sqltypes.Time {
			valid = l == 0 || l == 8 || l == 12
		}
		if !valid || len(p) < pos+1+l {
			return 0, false
		}
		return pos + 1 + l, true
	case sqltypes.Decimal, sqltypes.Text, sqltypes.Blob, sqltypes.VarChar, sqltypes.Char, sqltypes.VarBinary,
		sqltypes.Bit, sqltypes.Enum, sqltypes.Set, sqltypes.Geometry, sqltypes.Binary, sqltypes.TypeJSON:
		l, at, ok := readLenEncInt(p, pos)
		if !ok || l > uint64(len(p)-at) {
			return 0, false
		}
		return at + int(l), true
	default:
		return 0, false
	}
	if len(p) < pos+fixed {
		return 0, false
	}
	return pos + fixed, true
}
