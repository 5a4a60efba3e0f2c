package rowenc

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

func testRow() sql.Row {
	return sql.Row{nil, int8(-3), int16(300), int32(-70000), int64(math.MinInt64), uint8(200), uint16(60000),
		uint32(4e9), uint64(math.MaxUint64), float32(1.5), -2.25, "héllo", []byte{0, 1, 0xff}, []byte{},
		decimal.RequireFromString("-12.3400"), time.Date(2024, 2, 29, 12, 0, 0, 5000, time.UTC),
		types.Timespan(-1500000), true, false}
}

// TestRowRoundTrip: decoding gives back the values encoded, with their Go
// types (ints widen: int and uint are stored as int64 and uint64).
func TestRowRoundTrip(t *testing.T) {
	row := testRow()
	b, err := EncodeRow(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRow(b, len(row))
	if err != nil {
		t.Fatal(err)
	}
	for i := range row {
		if d, ok := row[i].(decimal.Decimal); ok {
			if g, ok := got[i].(decimal.Decimal); !ok || g.String() != d.String() {
				t.Errorf("column %d: %v, want %v", i, got[i], row[i])
			}
			continue
		}
		if !reflect.DeepEqual(got[i], row[i]) {
			t.Errorf("column %d: %#v, want %#v", i, got[i], row[i])
		}
	}
	if _, err := DecodeRow(b, len(row)+1); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("decoding past the end: %v", err)
	}
	if _, err := EncodeRow(nil, sql.Row{struct{}{}}); !errors.As(err, new(UnsupportedValueError)) {
		t.Fatalf("unsupported value: %v", err)
	}
}

// TestSkipValue: SkipValue ends every value where DecodeValue does, and a
// value cut short is ErrCorrupt, never a panic or a wrong length.
func TestSkipValue(t *testing.T) {
	row := append(testRow(), types.MustJSON(`{"a": [1, 2]}`))
	b, err := EncodeRow(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	for i, rest := 0, b; i < len(row); i++ {
		_, want, err := DecodeValue(rest)
		if err != nil {
			t.Fatalf("column %d: %v", i, err)
		}
		got, err := SkipValue(rest)
		if err != nil || len(got) != len(want) {
			t.Fatalf("column %d (%T): skipped to %d bytes left (%v), decoding to %d", i, row[i], len(got), err, len(want))
		}
		if n := len(rest) - len(want); n > 1 {
			if _, err := SkipValue(rest[:n-1]); !errors.Is(err, ErrCorrupt) {
				t.Errorf("column %d cut short: %v", i, err)
			}
		}
		rest = want
	}
	if _, err := SkipValue(nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("empty: %v", err)
	}
}

// FuzzDecodeRow: garbage fails with ErrCorrupt or decodes; never a panic.
func FuzzDecodeRow(f *testing.F) {
	b, _ := EncodeRow(nil, testRow())
	f.Add(b, 19)
	f.Add([]byte{tagDecimal, 0x02, 0x03, 'x'}, 1)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		n = min(max(n, 0), 64)
		if _, rest, err := DecodeValue(b); err == nil {
			if got, err := SkipValue(b); err != nil || len(got) != len(rest) {
				t.Fatalf("SkipValue: %d bytes left (%v), DecodeValue: %d", len(got), err, len(rest))
			}
		}
		row, err := DecodeRow(b, n)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		kc := NewKeyColumn(0, sql.Collation_utf8mb4_0900_ai_ci, 3)
		for _, v := range row {
			_, _ = kc.AppendKey(nil, v) // JSON values have no key: an error, not a panic
		}
	})
}

// TestKeyOrder: keys sort as the values do, per collation.
func TestKeyOrder(t *testing.T) {
	ordered := func(kc KeyColumn, vals ...interface{}) {
		t.Helper()
		var prev []byte
		for i, v := range vals {
			k, err := kc.AppendKey(nil, v)
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 && bytes.Compare(prev, k) >= 0 {
				t.Errorf("key of %v (%x) not above key of %v (%x)", v, k, vals[i-1], prev)
			}
			prev = k
		}
	}
	bin := NewKeyColumn(0, 0, 0)
	ordered(bin, nil, int64(math.MinInt64), int64(-1), int64(0), int64(1), int64(math.MaxInt64))
	ordered(bin, uint64(0), uint64(1), uint64(math.MaxUint64))
	ordered(bin, -math.MaxFloat64, -1.0, 0.0, 1e-300, 1.0, math.Inf(1))
	ordered(bin, decimal.RequireFromString("-100"), decimal.RequireFromString("-99.5"), decimal.Zero,
		decimal.RequireFromString("0.001"), decimal.RequireFromString("1.5"), decimal.RequireFromString("10"))
	ordered(bin, "", "\x00", "\x00\x00", "a", "a\x00", "b")
	ci := NewKeyColumn(0, sql.Collation_utf8mb4_general_ci, 0)
	ordered(ci, "a", "B", "c")
	same := func(kc KeyColumn, a, b interface{}) {
		t.Helper()
		ka, _ := kc.AppendKey(nil, a)
		kb, _ := kc.AppendKey(nil, b)
		if !bytes.Equal(ka, kb) {
			t.Errorf("%q and %q have different keys %x, %x", a, b, ka, kb)
		}
	}
	same(ci, "abc", "ABC ")                                           // case-insensitive, PAD SPACE
	same(NewKeyColumn(0, sql.Collation_utf8mb4_bin, 0), "ab", "ab  ") // binary, PAD SPACE
	same(bin, 0.0, math.Copysign(0, -1))
	same(bin, decimal.RequireFromString("1.50"), decimal.RequireFromString("1.5"))
	same(NewKeyColumn(0, sql.Collation_utf8mb4_0900_bin, 4), "abcdé", "abcd") // prefix in characters
	if bytes.Equal(mustKey(t, "ab "), mustKey(t, "ab")) {
		t.Error("NO PAD collation ignored a trailing space")
	}
}

func mustKey(t *testing.T, v interface{}) []byte {
	kc := NewKeyColumn(0, sql.Collation_utf8mb4_0900_bin, 0)
	k, err := kc.AppendKey(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestValidCollation(t *testing.T) {
	for id, want := range map[sql.CollationID]bool{0: true, sql.Collation_binary: true, sql.Collation_utf8mb4_0900_ai_ci: true, 2000: false, 65535: false} {
		if ValidCollation(id) != want {
			t.Errorf("ValidCollation(%d) = %v", id, !want)
		}
	}
}

func TestNextRaw(t *testing.T) {
	row, err := EncodeRow(nil, sql.Row{int64(-7), uint32(300), "héllo", nil, 1.5, int8(-128)})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		kind RawKind
		s    string
		n    uint64
	}
	wants := []want{{RawInt, "", uint64(1<<64 - 7)}, {RawUint, "", 300}, {RawString, "héllo", 0}, {RawNull, "", 0}, {RawOther, "", 0}, {RawInt, "", uint64(1<<64 - 128)}}
	b := row
	for i, w := range wants {
		kind, s, n, rest, err := NextRaw(b)
		if err != nil {
			t.Fatalf("column %d: %v", i, err)
		}
		if kind != w.kind || string(s) != w.s || n != w.n {
			t.Fatalf("column %d: got (%d, %q, %d), want %+v", i, kind, s, n, w)
		}
		if kind == RawOther {
			if rest != nil {
				t.Fatalf("column %d: RawOther with rest", i)
			}
			if rest, err = SkipValue(b); err != nil {
				t.Fatal(err)
			}
		}
		b = rest
	}
	if len(b) != 0 {
		t.Fatalf("%d bytes left", len(b))
	}
	for _, bad := range [][]byte{nil, {tagString, 5, 'a'}, {tagInt64, 0x80}} {
		if _, _, _, _, err := NextRaw(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("NextRaw(%v): err %v, want ErrCorrupt", bad, err)
		}
	}
}
