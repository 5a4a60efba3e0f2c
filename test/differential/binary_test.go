package differential

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The binary protocol: COM_STMT_PREPARE and COM_STMT_EXECUTE of a
// statement without parameters, and its rows decoded to text. Every
// database/sql driver (go-sql-driver/mysql prepares each query with
// arguments), Connector/J with useServerPrepStmts and mysql-connector-python's
// prepared cursor read results this way; lockstep writes some of these
// packets itself (internal/server/execproto.go, packets.go).

const (
	comStmtPrepare = 0x16
	comStmtExecute = 0x17
	comStmtClose   = 0x19
)

// prepared runs q as a prepared statement: prepare, execute once, close.
// An error from the prepare is the outcome's error.
func (c *conn) prepared(q string) (*outcome, error) {
	c.seq = 0
	if err := c.writePacket(append([]byte{comStmtPrepare}, q...)); err != nil {
		return nil, err
	}
	p, err := c.readPacket()
	if err != nil {
		return nil, err
	}
	if p[0] == 0xff {
		return &outcome{err: parseError(p)}, nil
	}
	if p[0] != 0x00 || len(p) < 12 {
		return nil, fmt.Errorf("unexpected COM_STMT_PREPARE response % x", p[:min(len(p), 16)])
	}
	id := binary.LittleEndian.Uint32(p[1:5])
	ncols, nparams := binary.LittleEndian.Uint16(p[5:7]), binary.LittleEndian.Uint16(p[7:9])
	if nparams != 0 {
		return nil, fmt.Errorf("%d parameters in a statement without any", nparams)
	}
	if ncols > 0 { // column definitions, then EOF
		for i := 0; i <= int(ncols); i++ {
			if _, err := c.readPacket(); err != nil {
				return nil, err
			}
		}
	}
	defer func() {
		c.seq = 0
		_ = c.writePacket(binary.LittleEndian.AppendUint32([]byte{comStmtClose}, id)) // no response
	}()
	c.seq = 0
	exec := binary.LittleEndian.AppendUint32([]byte{comStmtExecute}, id)
	exec = append(exec, 0)                           // no cursor
	exec = binary.LittleEndian.AppendUint32(exec, 1) // iteration count
	if err := c.writePacket(exec); err != nil {
		return nil, err
	}
	first, err := c.readResultWith(decodeBinaryRow)
	for o := first; err == nil && o.err == nil && o.status&statusMoreResults != 0; {
		if o, err = c.readResultWith(decodeBinaryRow); err == nil {
			first.status, first.err = o.status, o.err
		}
	}
	return first, err
}

// decodeBinaryRow decodes a binary-protocol row: a 0x00 header, the NULL
// bitmap (offset 2), then each value by its column's type. Values are
// rendered as a client shows them: integers in decimal (unsigned when the
// column says so), floats in the shortest form that reads back, dates and
// times with the column's fractional digits.
func decodeBinaryRow(p []byte, cols []column) ([]*string, error) {
	if len(p) == 0 || p[0] != 0x00 {
		return nil, fmt.Errorf("binary row without its 0x00 header: % x", p[:min(len(p), 16)])
	}
	nullBytes := (len(cols) + 7 + 2) / 8
	if len(p) < 1+nullBytes {
		return nil, fmt.Errorf("binary row shorter than its NULL bitmap")
	}
	nulls, pos := p[1:1+nullBytes], 1+nullBytes
	row := make([]*string, len(cols))
	for i, c := range cols {
		if bit := i + 2; nulls[bit/8]&(1<<(bit%8)) != 0 {
			continue
		}
		s, n, err := binaryValue(p[pos:], c)
		if err != nil {
			return nil, fmt.Errorf("column %d (%s, %s): %w", i, c.name, typeName(c.typ), err)
		}
		row[i] = &s
		pos += n
	}
	if pos != len(p) {
		return nil, fmt.Errorf("%d bytes after the last value", len(p)-pos)
	}
	return row, nil
}

func binaryValue(p []byte, c column) (string, int, error) {
	unsigned := c.flags&32 != 0
	fixed := func(n int) (uint64, error) {
		if len(p) < n {
			return 0, fmt.Errorf("%d bytes, want %d", len(p), n)
		}
		var v uint64
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(p[i])
		}
		return v, nil
	}
	integer := func(n int) (string, int, error) {
		v, err := fixed(n)
		if err != nil {
			return "", 0, err
		}
		if unsigned {
			return strconv.FormatUint(v, 10), n, nil
		}
		shift := 64 - 8*n
		return strconv.FormatInt(int64(v<<shift)>>shift, 10), n, nil
	}
	switch c.typ {
	case 1: // TINY
		return integer(1)
	case 2, 13: // SHORT, YEAR
		return integer(2)
	case 3, 9: // LONG, INT24
		return integer(4)
	case 8: // LONGLONG
		return integer(8)
	case 4: // FLOAT
		v, err := fixed(4)
		return strconv.FormatFloat(float64(math.Float32frombits(uint32(v))), 'g', -1, 32), 4, err
	case 5: // DOUBLE
		v, err := fixed(8)
		return strconv.FormatFloat(math.Float64frombits(v), 'g', -1, 64), 8, err
	case 7, 10, 12: // TIMESTAMP, DATE, DATETIME
		return binaryDateTime(p, c)
	case 11: // TIME
		return binaryTime(p, c)
	}
	if len(p) == 0 {
		return "", 0, fmt.Errorf("no length")
	}
	n, w := lenEnc(p)
	if w+int(n) > len(p) {
		return "", 0, fmt.Errorf("string of %d bytes in %d", n, len(p)-w)
	}
	return string(p[w : w+int(n)]), w + int(n), nil
}

// fraction renders micro with the column's fractional digits (none for 0 or
// more than 6, MySQL's "not fixed").
func fraction(micro uint32, c column) string {
	if c.decimals == 0 || c.decimals > 6 {
		return ""
	}
	return "." + fmt.Sprintf("%06d", micro)[:c.decimals]
}

func binaryDateTime(p []byte, c column) (string, int, error) {
	if len(p) == 0 || !strings.Contains("\x00\x04\x07\x0b", string(p[:1])) || len(p) < 1+int(p[0]) {
		return "", 0, fmt.Errorf("bad date/time length")
	}
	n := int(p[0])
	var b [12]byte
	copy(b[:], p[:1+n])
	year := binary.LittleEndian.Uint16(b[1:3])
	s := fmt.Sprintf("%04d-%02d-%02d", year, b[3], b[4])
	if c.typ != 10 {
		s += fmt.Sprintf(" %02d:%02d:%02d", b[5], b[6], b[7]) + fraction(binary.LittleEndian.Uint32(b[8:12]), c)
	}
	return s, 1 + n, nil
}

func binaryTime(p []byte, c column) (string, int, error) {
	if len(p) == 0 || !strings.Contains("\x00\x08\x0c", string(p[:1])) || len(p) < 1+int(p[0]) {
		return "", 0, fmt.Errorf("bad time length")
	}
	n := int(p[0])
	var b [13]byte
	copy(b[:], p[:1+n])
	sign := ""
	if b[1] == 1 {
		sign = "-"
	}
	hours := binary.LittleEndian.Uint32(b[2:6])*24 + uint32(b[6])
	return fmt.Sprintf("%s%02d:%02d:%02d", sign, hours, b[7], b[8]) + fraction(binary.LittleEndian.Uint32(b[9:13]), c), 1 + n, nil
}
