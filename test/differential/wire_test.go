package differential

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// A small MySQL protocol client: the harness needs what database/sql drivers
// hide — the status flags of every OK and EOF packet, the warning count, the
// info string ("Rows matched: 1  Changed: 1  Warnings: 0"), and each result
// column's type, flags and decimals. Text protocol, and prepared statements
// without parameters (binary_test.go); no TLS; the account must use
// mysql_native_password or no password.

const (
	capLongPassword     = 1 << 0
	capLongFlag         = 1 << 2
	capConnectWithDB    = 1 << 3
	capProtocol41       = 1 << 9
	capTransactions     = 1 << 13
	capSecureConnection = 1 << 15
	capMultiResults     = 1 << 17
	capPluginAuth       = 1 << 19
)

// Server status flags the harness compares (MySQL's SERVER_STATUS_*).
const (
	statusInTrans    = 0x0001
	statusAutocommit = 0x0002
	// statusMoreResults (SERVER_MORE_RESULTS_EXISTS) is not compared: it
	// says another result follows.
	statusMoreResults = 0x0008
)

type conn struct {
	nc  net.Conn
	r   *bufio.Reader
	seq byte
}

// column is one result column's definition.
type column struct {
	name     string
	orgTable string // empty for a computed column
	typ      byte
	flags    uint16
	decimals byte
	charset  uint16
	length   uint32
}

// outcome is everything a statement returned.
type outcome struct {
	err      *serverError
	cols     []column
	rows     [][]*string // nil = SQL NULL
	affected uint64
	insertID uint64
	status   uint16
	warnings uint16
	info     string
	// infoLength is the length byte the info string came with when it
	// disagrees with the packet (0 when they agree).
	infoLength int
}

type serverError struct {
	code    uint16
	state   string
	message string
}

func (e *serverError) Error() string {
	return fmt.Sprintf("error %d (%s): %s", e.code, e.state, e.message)
}

func dial(addr, user, db string) (*conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	c := &conn{nc: nc, r: bufio.NewReader(nc)}
	if err := c.handshake(user, db); err != nil {
		nc.Close()
		return nil, fmt.Errorf("handshake with %s: %w", addr, err)
	}
	return c, nil
}

func (c *conn) close() { c.nc.Close() }

func (c *conn) readPacket() ([]byte, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	var out []byte
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
			return nil, err
		}
		n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
		c.seq = hdr[3] + 1
		buf := make([]byte, n)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		out = append(out, buf...)
		if n < 0xffffff {
			return out, nil
		}
	}
}

func (c *conn) writePacket(p []byte) error {
	for {
		n := len(p)
		if n > 0xffffff {
			n = 0xffffff
		}
		hdr := []byte{byte(n), byte(n >> 8), byte(n >> 16), c.seq}
		c.seq++
		if _, err := c.nc.Write(append(hdr, p[:n]...)); err != nil {
			return err
		}
		p = p[n:]
		if n < 0xffffff {
			return nil
		}
	}
}

func (c *conn) handshake(user, db string) error {
	c.seq = 0
	p, err := c.readPacket()
	if err != nil {
		return err
	}
	if len(p) == 0 || p[0] != 10 {
		return fmt.Errorf("unexpected handshake packet % x", p[:min(len(p), 16)])
	}
	flags := uint32(capLongPassword | capLongFlag | capProtocol41 | capTransactions |
		capSecureConnection | capMultiResults | capPluginAuth)
	if db != "" {
		flags |= capConnectWithDB
	}
	var resp []byte
	resp = binary.LittleEndian.AppendUint32(resp, flags)
	resp = binary.LittleEndian.AppendUint32(resp, 1<<24)
	resp = append(resp, 45) // utf8mb4_general_ci: the server's default collation applies
	resp = append(resp, make([]byte, 23)...)
	resp = append(append(resp, user...), 0)
	resp = append(resp, 0) // no password: an empty auth response
	if db != "" {
		resp = append(append(resp, db...), 0)
	}
	resp = append(append(resp, "mysql_native_password"...), 0)
	if err := c.writePacket(resp); err != nil {
		return err
	}
	for {
		p, err := c.readPacket()
		if err != nil {
			return err
		}
		switch p[0] {
		case 0x00:
			return nil
		case 0xff:
			return parseError(p)
		case 0xfe: // auth switch: answer for an empty password
			if err := c.writePacket(nil); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unexpected auth packet % x", p[:min(len(p), 16)])
		}
	}
}

func parseError(p []byte) *serverError {
	e := &serverError{code: binary.LittleEndian.Uint16(p[1:3])}
	rest := p[3:]
	if len(rest) > 0 && rest[0] == '#' {
		e.state = string(rest[1:6])
		rest = rest[6:]
	}
	e.message = string(rest)
	return e
}

func lenEnc(p []byte) (uint64, int) {
	switch {
	case p[0] < 0xfb:
		return uint64(p[0]), 1
	case p[0] == 0xfc:
		return uint64(binary.LittleEndian.Uint16(p[1:3])), 3
	case p[0] == 0xfd:
		return uint64(p[1]) | uint64(p[2])<<8 | uint64(p[3])<<16, 4
	case p[0] == 0xfe:
		return binary.LittleEndian.Uint64(p[1:9]), 9
	}
	return 0, 1 // 0xfb: NULL
}

func lenEncString(p []byte) (*string, int) {
	if p[0] == 0xfb {
		return nil, 1
	}
	n, w := lenEnc(p)
	s := string(p[w : w+int(n)])
	return &s, w + int(n)
}

// query runs one statement and reads its (first) result. A statement that
// returns several results (a CALL) has them read and the last one's status
// kept; only the first result set's rows are returned.
func (c *conn) query(q string) (*outcome, error) {
	c.seq = 0
	if err := c.writePacket(append([]byte{0x03}, q...)); err != nil {
		return nil, err
	}
	first, err := c.readResult()
	for o := first; err == nil && o.err == nil && o.status&statusMoreResults != 0; {
		if o, err = c.readResult(); err == nil {
			first.status, first.err = o.status, o.err
		}
	}
	return first, err
}

func (c *conn) readResult() (*outcome, error) { return c.readResultWith(decodeTextRow) }

// decodeTextRow decodes a text-protocol row: a length-encoded string or
// NULL (0xfb) per column.
func decodeTextRow(p []byte, cols []column) ([]*string, error) {
	row := make([]*string, len(cols))
	pos := 0
	for j := range row {
		if pos >= len(p) {
			return nil, fmt.Errorf("text row with %d of %d values", j, len(cols))
		}
		s, w := lenEncString(p[pos:])
		row[j] = s
		pos += w
	}
	return row, nil
}

// readResultWith reads one result, its rows decoded by decode.
func (c *conn) readResultWith(decode func(p []byte, cols []column) ([]*string, error)) (*outcome, error) {
	p, err := c.readPacket()
	if err != nil {
		return nil, err
	}
	o := &outcome{}
	switch p[0] {
	case 0x00:
		c.parseOK(p, o)
		return o, nil
	case 0xff:
		o.err = parseError(p)
		return o, nil
	}
	n, _ := lenEnc(p)
	for i := uint64(0); i < n; i++ {
		p, err := c.readPacket()
		if err != nil {
			return nil, err
		}
		pos := 0
		var fields [6]*string
		for j := range fields {
			s, w := lenEncString(p[pos:])
			fields[j] = s
			pos += w
		}
		pos++ // length of the fixed fields
		col := column{name: *fields[4]}
		if fields[3] != nil {
			col.orgTable = *fields[3]
		}
		col.charset = binary.LittleEndian.Uint16(p[pos:])
		col.length = binary.LittleEndian.Uint32(p[pos+2:])
		col.typ = p[pos+6]
		col.flags = binary.LittleEndian.Uint16(p[pos+7:])
		col.decimals = p[pos+9]
		o.cols = append(o.cols, col)
	}
	if p, err = c.readPacket(); err != nil { // EOF after the columns
		return nil, err
	}
	for {
		p, err := c.readPacket()
		if err != nil {
			return nil, err
		}
		if p[0] == 0xfe && len(p) < 9 {
			o.warnings = binary.LittleEndian.Uint16(p[1:3])
			o.status = binary.LittleEndian.Uint16(p[3:5])
			return o, nil
		}
		if p[0] == 0xff {
			o.err = parseError(p)
			o.rows = nil
			return o, nil
		}
		row, err := decode(p, o.cols)
		if err != nil {
			return nil, err
		}
		o.rows = append(o.rows, row)
	}
}

func (c *conn) parseOK(p []byte, o *outcome) {
	pos := 1
	v, w := lenEnc(p[pos:])
	o.affected = v
	pos += w
	v, w = lenEnc(p[pos:])
	o.insertID = v
	pos += w
	o.status = binary.LittleEndian.Uint16(p[pos:])
	o.warnings = binary.LittleEndian.Uint16(p[pos+2:])
	pos += 4
	if pos < len(p) {
		// string<lenenc> as both servers send it (without
		// CLIENT_SESSION_TRACK); a length that disagrees with the packet is
		// shown so that it fails the comparison.
		n, w := lenEnc(p[pos:])
		if pos+w+int(n) == len(p) {
			o.info = string(p[pos+w:])
		} else {
			o.info = string(p[pos+w:])
			o.infoLength = int(n)
		}
	}
}

// typeNames are MySQL's names for the protocol's column types.
var typeNames = map[byte]string{
	0: "DECIMAL", 1: "TINY", 2: "SHORT", 3: "LONG", 4: "FLOAT", 5: "DOUBLE",
	6: "NULL", 7: "TIMESTAMP", 8: "LONGLONG", 9: "INT24", 10: "DATE", 11: "TIME",
	12: "DATETIME", 13: "YEAR", 15: "VARCHAR", 16: "BIT", 245: "JSON",
	246: "NEWDECIMAL", 247: "ENUM", 248: "SET", 249: "TINY_BLOB",
	250: "MEDIUM_BLOB", 251: "LONG_BLOB", 252: "BLOB", 253: "VAR_STRING",
	254: "STRING", 255: "GEOMETRY",
}

func typeName(t byte) string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return "TYPE" + strconv.Itoa(int(t))
}
