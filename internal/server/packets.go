package server

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// packetWriter appends MySQL protocol packets (3-byte length, sequence
// number, payload) to b, as execHook's response. Payloads are built in
// place: begin reserves the header, end fills it in, splitting a payload
// of 16 MiB - 1 bytes or more into the protocol's chunks.
type packetWriter struct {
	b     []byte
	seq   uint8
	start int
}

const maxPacketPayload = 1<<24 - 1

func (w *packetWriter) begin() {
	w.start = len(w.b)
	w.b = append(w.b, 0, 0, 0, 0)
}

func (w *packetWriter) end() {
	n := len(w.b) - w.start - 4
	if n < maxPacketPayload {
		w.header(w.start, n)
		return
	}
	// Split: chunks of maxPacketPayload, each with its own header, and an
	// empty packet after a last chunk of exactly that size.
	payload := append([]byte(nil), w.b[w.start+4:]...)
	w.b = w.b[:w.start]
	for {
		k := min(len(payload), maxPacketPayload)
		at := len(w.b)
		w.b = append(w.b, 0, 0, 0, 0)
		w.b = append(w.b, payload[:k]...)
		w.header(at, k)
		payload = payload[k:]
		if k < maxPacketPayload {
			return
		}
	}
}

func (w *packetWriter) header(at, n int) {
	w.b[at], w.b[at+1], w.b[at+2], w.b[at+3] = byte(n), byte(n>>8), byte(n>>16), w.seq
	w.seq++
}

func (w *packetWriter) u16(v uint16) { w.b = binary.LittleEndian.AppendUint16(w.b, v) }
func (w *packetWriter) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }

func (w *packetWriter) lenEncInt(v uint64) {
	switch {
	case v < 251:
		w.b = append(w.b, byte(v))
	case v < 1<<16:
		w.b = append(w.b, 0xfc, byte(v), byte(v>>8))
	case v < 1<<24:
		w.b = append(w.b, 0xfd, byte(v), byte(v>>8), byte(v>>16))
	default:
		w.b = append(w.b, 0xfe)
		w.b = binary.LittleEndian.AppendUint64(w.b, v)
	}
}

func (w *packetWriter) lenEncString(s string) {
	w.lenEncInt(uint64(len(s)))
	w.b = append(w.b, s...)
}

// okPacket: an OK packet, or with head EOFPacket the OK that ends a result
// set for a CLIENT_DEPRECATE_EOF client.
func (w *packetWriter) okPacket(head byte, affected, insertID uint64, flags, warnings uint16) {
	w.begin()
	w.b = append(w.b, head)
	w.lenEncInt(affected)
	w.lenEncInt(insertID)
	w.u16(flags)
	w.u16(warnings)
	w.end()
}

func (w *packetWriter) eofPacket(flags, warnings uint16) {
	w.begin()
	w.b = append(w.b, mysql.EOFPacket)
	w.u16(warnings)
	w.u16(flags)
	w.end()
}

func (w *packetWriter) errPacket(se *mysql.SQLError) {
	state := se.State
	if len(state) != 5 {
		state = mysql.SSUnknownSQLState
	}
	w.begin()
	w.b = append(w.b, mysql.ErrPacket)
	w.u16(uint16(se.Num))
	w.b = append(w.b, '#')
	w.b = append(w.b, state...)
	w.b = append(w.b, se.Message...)
	w.end()
}

func (w *packetWriter) columnCount(n int) {
	w.begin()
	w.lenEncInt(uint64(n))
	w.end()
}

// columnDefinition writes a Protocol::ColumnDefinition41 as vitess does:
// the field's flags if it has any, else the ones its type implies.
func (w *packetWriter) columnDefinition(f *querypb.Field) {
	typ, flags := sqltypes.TypeToMySQL(f.Type)
	if f.Flags != 0 {
		flags = int64(f.Flags)
	}
	w.begin()
	w.lenEncString("def")
	w.lenEncString(f.Database)
	w.lenEncString(f.Table)
	w.lenEncString(f.OrgTable)
	w.lenEncString(f.Name)
	w.lenEncString(f.OrgName)
	w.b = append(w.b, 0x0c)
	w.u16(uint16(f.Charset))
	w.u32(f.ColumnLength)
	w.b = append(w.b, byte(typ))
	w.u16(uint16(flags))
	w.b = append(w.b, byte(f.Decimals))
	w.u16(0)
	w.end()
}

// binaryRow writes a row of the binary protocol: a 0x00 header, the NULL
// bitmap (offset 2), then each non-NULL value in its binary form.
func (w *packetWriter) binaryRow(row []sqltypes.Value) error {
	w.begin()
	w.b = append(w.b, 0)
	bitmap := len(w.b)
	for i := 0; i < (len(row)+7+2)/8; i++ {
		w.b = append(w.b, 0)
	}
	for i, v := range row {
		if v.IsNull() {
			w.b[bitmap+(i+2)/8] |= 1 << uint((i+2)%8)
			continue
		}
		if err := w.binaryValue(v); err != nil {
			return err
		}
	}
	w.end()
	return nil
}

// binaryValue appends v in the binary protocol's form for its type (the
// forms vitess's val2MySQL writes).
func (w *packetWriter) binaryValue(v sqltypes.Value) error {
	raw := v.Raw()
	bad := func(err error) error { return fmt.Errorf("internal value %v to MySQL value error: %v", v, err) }
	switch t := v.Type(); t {
	case sqltypes.Int8, sqltypes.Uint8:
		n, err := parseInt(raw, t == sqltypes.Int8, 8)
		if err != nil {
			return bad(err)
		}
		w.b = append(w.b, byte(n))
	case sqltypes.Int16, sqltypes.Uint16, sqltypes.Year:
		n, err := parseInt(raw, t != sqltypes.Uint16, 16)
		if err != nil {
			return bad(err)
		}
		w.u16(uint16(n))
	case sqltypes.Int24, sqltypes.Int32, sqltypes.Uint24, sqltypes.Uint32:
		n, err := parseInt(raw, t == sqltypes.Int24 || t == sqltypes.Int32, 32)
		if err != nil {
			return bad(err)
		}
		w.u32(uint32(n))
	case sqltypes.Int64, sqltypes.Uint64:
		n, err := parseInt(raw, t == sqltypes.Int64, 64)
		if err != nil {
			return bad(err)
		}
		w.b = binary.LittleEndian.AppendUint64(w.b, n)
	case sqltypes.Float32:
		f, err := strconv.ParseFloat(string(raw), 32)
		if err != nil {
			return bad(err)
		}
		w.u32(math.Float32bits(float32(f)))
	case sqltypes.Float64:
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return bad(err)
		}
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(f))
	case sqltypes.Timestamp, sqltypes.Date, sqltypes.Datetime:
		return w.datetime(raw, bad)
	case sqltypes.Time:
		return w.time(string(raw), bad)
	case sqltypes.Decimal, sqltypes.Text, sqltypes.Blob, sqltypes.VarChar,
		sqltypes.VarBinary, sqltypes.Char, sqltypes.Bit, sqltypes.Enum,
		sqltypes.Set, sqltypes.Geometry, sqltypes.Binary, sqltypes.TypeJSON:
		w.lenEncInt(uint64(len(raw)))
		w.b = append(w.b, raw...)
	default:
		w.b = append(w.b, raw...)
	}
	return nil
}

// parseInt parses a decimal integer of the given width, signed or not,
// returning its two's-complement bits.
func parseInt(raw []byte, signed bool, bits int) (uint64, error) {
	if signed {
		n, err := strconv.ParseInt(string(raw), 10, bits)
		return uint64(n), err
	}
	return strconv.ParseUint(string(raw), 10, bits)
}

// datetime writes 'YYYY-MM-DD[ hh:mm:ss[.ffffff]]' as the binary protocol's
// 11-, 7-, 4- or 0-byte form, chosen by the text's length as vitess does.
func (w *packetWriter) datetime(raw []byte, bad func(error) error) error {
	var err error
	num := func(s []byte, bits int) uint64 {
		n, perr := strconv.ParseUint(string(s), 10, bits)
		if perr != nil && err == nil {
			err = bad(perr)
		}
		return n
	}
	switch {
	case len(raw) > 19:
		frac := []byte("000000")
		copy(frac, raw[20:])
		w.b = append(w.b, 0x0b)
		w.u16(uint16(num(raw[0:4], 16)))
		w.b = append(w.b, byte(num(raw[5:7], 8)), byte(num(raw[8:10], 8)), byte(num(raw[11:13], 8)), byte(num(raw[14:16], 8)), byte(num(raw[17:19], 8)))
		w.u32(uint32(num(frac, 32)))
	case len(raw) == 19:
		w.b = append(w.b, 0x07)
		w.u16(uint16(num(raw[0:4], 16)))
		w.b = append(w.b, byte(num(raw[5:7], 8)), byte(num(raw[8:10], 8)), byte(num(raw[11:13], 8)), byte(num(raw[14:16], 8)), byte(num(raw[17:], 8)))
	case len(raw) == 10:
		w.b = append(w.b, 0x04)
		w.u16(uint16(num(raw[0:4], 16)))
		w.b = append(w.b, byte(num(raw[5:7], 8)), byte(num(raw[8:], 8)))
	case len(raw) > 0:
		return bad(fmt.Errorf("incorrect date value %q", raw))
	default:
		w.b = append(w.b, 0x00)
	}
	return err
}

// time writes '[-]h:mm:ss[.ffffff]' as the binary protocol's 12-, 8- or
// 0-byte TIME form, as vitess does.
func (w *packetWriter) time(s string, bad func(error) error) error {
	if s == "00:00:00" {
		w.b = append(w.b, 0x00)
		return nil
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return bad(fmt.Errorf("incorrect time value, ':' is not found"))
	}
	neg := strings.HasPrefix(parts[0], "-")
	h, err := strconv.ParseUint(strings.TrimPrefix(parts[0], "-"), 10, 32)
	if err != nil {
		return bad(err)
	}
	sec, frac, hasFrac := strings.Cut(parts[2], ".")
	m, err := strconv.ParseUint(parts[1], 10, 8)
	if err != nil {
		return bad(err)
	}
	sc, err := strconv.ParseUint(sec, 10, 8)
	if err != nil {
		return bad(err)
	}
	size := byte(0x08)
	if hasFrac {
		size = 0x0c
	}
	sign := byte(0)
	if neg {
		sign = 1
	}
	w.b = append(w.b, size, sign)
	w.u32(uint32(h / 24))
	w.b = append(w.b, byte(h%24), byte(m), byte(sc))
	if hasFrac {
		f := []byte("000000")
		copy(f, frac)
		us, err := strconv.ParseUint(string(f), 10, 32)
		if err != nil {
			return bad(err)
		}
		w.u32(uint32(us))
	}
	return nil
}
