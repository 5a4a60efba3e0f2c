package server

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// TestReadParam pins execHook's decoding of each binary-protocol
// parameter type to what vitess's parseStmtArgs produces (integers and
// floats as decimal text of a 64-bit type, every string-like type as
// VARBINARY bytes), and its refusals: date and time types, and values cut
// short.
func TestReadParam(t *testing.T) {
	le16 := func(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	le64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	long := strings.Repeat("x", 300)
	cases := []struct {
		name     string
		typ      querypb.Type
		in       []byte
		wantType querypb.Type
		want     string
		ok       bool
	}{
		{"TINY", sqltypes.Int8, []byte{0xff}, sqltypes.Int64, "-1", true},
		{"TINY UNSIGNED", sqltypes.Uint8, []byte{0xff}, sqltypes.Uint64, "255", true},
		{"SHORT", sqltypes.Int16, le16(0xfffe), sqltypes.Int64, "-2", true},
		{"SHORT UNSIGNED", sqltypes.Uint16, le16(0xfffe), sqltypes.Uint64, "65534", true},
		{"YEAR", sqltypes.Year, le16(2024), sqltypes.Int64, "2024", true},
		{"LONG", sqltypes.Int32, le32(0xfffffffd), sqltypes.Int64, "-3", true},
		{"INT24", sqltypes.Int24, le32(7), sqltypes.Int64, "7", true},
		{"LONG UNSIGNED", sqltypes.Uint32, le32(0xfffffffd), sqltypes.Uint64, "4294967293", true},
		{"LONGLONG", sqltypes.Int64, le64(1 << 63), sqltypes.Int64, "-9223372036854775808", true},
		{"LONGLONG UNSIGNED", sqltypes.Uint64, le64(math.MaxUint64), sqltypes.Uint64, "18446744073709551615", true},
		{"FLOAT", sqltypes.Float32, le32(math.Float32bits(1.5)), sqltypes.Float64, "1.5", true},
		{"DOUBLE", sqltypes.Float64, le64(math.Float64bits(-2.25)), sqltypes.Float64, "-2.25", true},
		{"VARCHAR", sqltypes.VarChar, append([]byte{6}, "héllo"...), sqltypes.VarBinary, "héllo", true},
		{"DECIMAL", sqltypes.Decimal, append([]byte{5}, "12.34"...), sqltypes.VarBinary, "12.34", true},
		{"BLOB, 2-byte length", sqltypes.Blob, append([]byte{0xfc, 44, 1}, long...), sqltypes.VarBinary, long, true},
		{"empty string", sqltypes.VarChar, []byte{0}, sqltypes.VarBinary, "", true},
		{"DATETIME left to vitess", sqltypes.Datetime, []byte{0}, 0, "", false},
		{"DATE left to vitess", sqltypes.Date, []byte{4, 0xe8, 7, 1, 2}, 0, "", false},
		{"TIME left to vitess", sqltypes.Time, []byte{0}, 0, "", false},
		{"LONGLONG cut short", sqltypes.Int64, []byte{1, 2, 3}, 0, "", false},
		{"string cut short", sqltypes.VarChar, append([]byte{9}, "abc"...), 0, "", false},
		{"length cut short", sqltypes.VarChar, []byte{0xfc, 1}, 0, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pkt := append([]byte{0xaa}, tc.in...) // a byte before, as in a packet
			v := &querypb.BindVariable{Value: []byte("stale contents")}
			end, ok := readParam(pkt, 1, tc.typ, v)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if end != len(pkt) || v.Type != tc.wantType || string(v.Value) != tc.want {
				t.Fatalf("got end %d type %v value %q, want end %d type %v value %q", end, v.Type, v.Value, len(pkt), tc.wantType, tc.want)
			}
		})
	}
}
