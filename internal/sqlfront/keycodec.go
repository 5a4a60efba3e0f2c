package sqlfront

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// Key encoding. Index keys are memcomparable: bytes.Compare on two encoded
// keys orders them as the index orders the column values. Each column is
// self-delimiting, so a composite key is the concatenation of its columns
// and a secondary entry is index key || primary key.
//
//	NULL           0x00
//	non-NULL       0x01, then the value:
//	signed int     8 bytes big-endian with the sign bit flipped
//	unsigned int   8 bytes big-endian
//	float          IEEE bits, sign-flipped (negatives inverted)
//	decimal        sign class, exponent, digits (see appendDecimalKey)
//	string         binary collations: the bytes; others: the collation's
//	               rune weights (4 bytes each), trailing spaces removed for
//	               PAD SPACE collations; then escaped (0x00 -> 0x00 0xFF) and
//	               terminated by 0x00 0x01
//	time           seconds (signed, 8 bytes) then nanoseconds (4 bytes)
const (
	keyNull    byte = 0x00
	keyNotNull byte = 0x01
)

// keyColumn is one column of an index key.
type keyColumn struct {
	ord       int      // ordinal in the table schema
	typ       sql.Type // column type
	collation sql.CollationID
	binary    bool // string compared by bytes
	padSpace  bool
	prefix    int // prefix length in characters (0: whole value)
}

func newKeyColumn(ord int, typ sql.Type, prefix int) keyColumn {
	kc := keyColumn{ord: ord, typ: typ, prefix: prefix}
	if st, ok := typ.(sql.StringType); ok {
		kc.collation = st.Collation()
		kc.binary = kc.collation == sql.Collation_binary || strings.HasSuffix(kc.collation.Name(), "_bin")
		kc.padSpace = kc.collation.PadAttribute() == "PAD SPACE"
	} else {
		kc.binary = true
	}
	return kc
}

// keyable reports whether values of typ can be part of an index key.
func keyable(typ sql.Type) bool {
	switch {
	case types.IsJSON(typ), types.IsGeometry(typ):
		return false
	}
	return true
}

// appendKey appends the key encoding of v (already of the column's type).
func (kc *keyColumn) appendKey(b []byte, v interface{}) ([]byte, error) {
	if v == nil {
		return append(b, keyNull), nil
	}
	b = append(b, keyNotNull)
	switch x := v.(type) {
	case int8:
		return appendIntKey(b, int64(x)), nil
	case int16:
		return appendIntKey(b, int64(x)), nil
	case int32:
		return appendIntKey(b, int64(x)), nil
	case int64:
		return appendIntKey(b, x), nil
	case int:
		return appendIntKey(b, int64(x)), nil
	case uint8:
		return binary.BigEndian.AppendUint64(b, uint64(x)), nil
	case uint16:
		return binary.BigEndian.AppendUint64(b, uint64(x)), nil
	case uint32:
		return binary.BigEndian.AppendUint64(b, uint64(x)), nil
	case uint64:
		return binary.BigEndian.AppendUint64(b, x), nil
	case bool:
		if x {
			return appendIntKey(b, 1), nil
		}
		return appendIntKey(b, 0), nil
	case float32:
		return appendFloatKey(b, float64(x)), nil
	case float64:
		return appendFloatKey(b, x), nil
	case decimal.Decimal:
		return appendDecimalKey(b, x), nil
	case time.Time:
		b = appendIntKey(b, x.Unix())
		return binary.BigEndian.AppendUint32(b, uint32(x.Nanosecond())), nil
	case types.Timespan:
		return appendIntKey(b, int64(x)), nil
	case string:
		return kc.appendStringKey(b, x)
	case []byte:
		return kc.appendStringKey(b, string(x))
	}
	return nil, fmt.Errorf("lockstep cannot index a value of type %T", v)
}

func appendIntKey(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(v)^(1<<63))
}

func appendFloatKey(b []byte, f float64) []byte {
	if f == 0 {
		f = 0 // fold -0 into +0
	}
	u := math.Float64bits(f)
	if u&(1<<63) != 0 {
		u = ^u
	} else {
		u |= 1 << 63
	}
	return binary.BigEndian.AppendUint64(b, u)
}

// appendDecimalKey encodes d as: class byte (0x01 negative, 0x02 zero, 0x03
// positive), then for non-zero values the decimal exponent (position of the
// first significant digit, sign-flipped int32) and the significant digits
// terminated by 0x00; negatives have everything after the class inverted so
// larger magnitudes sort first.
func appendDecimalKey(b []byte, d decimal.Decimal) []byte {
	switch d.Sign() {
	case 0:
		return append(b, 0x02)
	case -1:
		b = append(b, 0x01)
		start := len(b)
		b = appendDecimalMagnitude(b, d.Neg())
		for i := start; i < len(b); i++ {
			b[i] = ^b[i]
		}
		return b
	}
	return appendDecimalMagnitude(append(b, 0x03), d)
}

func appendDecimalMagnitude(b []byte, d decimal.Decimal) []byte {
	digits := d.Coefficient().String()
	exp := int64(d.Exponent())
	// strip trailing zeros: they do not change the value.
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	adj := exp + int64(len(digits))
	b = binary.BigEndian.AppendUint32(b, uint32(int32(adj))^(1<<31))
	b = append(b, digits...)
	return append(b, 0x00)
}

func (kc *keyColumn) appendStringKey(b []byte, s string) ([]byte, error) {
	if kc.prefix > 0 && utf8.RuneCountInString(s) > kc.prefix {
		n := 0
		for i := range s {
			if n == kc.prefix {
				s = s[:i]
				break
			}
			n++
		}
	}
	if kc.padSpace {
		s = strings.TrimRight(s, " ")
	}
	if kc.binary {
		return appendEscaped(b, s), nil
	}
	sorter := kc.collation.Sorter()
	if sorter == nil {
		return appendEscaped(b, s), nil
	}
	var w [4]byte
	for _, r := range s {
		binary.BigEndian.PutUint32(w[:], uint32(sorter(r))^(1<<31))
		b = appendEscaped(b, string(w[:]))
		b = b[:len(b)-2] // drop the terminator: weights are one string
	}
	return append(b, 0x00, 0x01), nil
}

// appendEscaped writes s with 0x00 escaped as 0x00 0xFF, then 0x00 0x01.
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0 {
			b = append(b, 0x00, 0xFF)
		} else {
			b = append(b, c)
		}
	}
	return append(b, 0x00, 0x01)
}

// keyCodec encodes one index's key from a row of the table.
type keyCodec struct {
	cols []keyColumn
}

// encode appends the key of row. hasNull reports a NULL key column.
func (kc *keyCodec) encode(b []byte, row sql.Row) ([]byte, bool, error) {
	hasNull := false
	for i := range kc.cols {
		c := &kc.cols[i]
		v := row[c.ord]
		if v == nil {
			hasNull = true
		}
		var err error
		b, err = c.appendKey(b, v)
		if err != nil {
			return nil, false, err
		}
	}
	return b, hasNull, nil
}

// convertForKey converts a value from a range bound to the column's type.
// exact is false when the conversion changed the value (a bound of 1.5 on
// an INT column), in which case the caller must not use it as a tight bound.
func convertForKey(ctx context.Context, typ sql.Type, v interface{}) (interface{}, bool) {
	cv, inRange, err := typ.Convert(ctx, v)
	if err != nil || inRange != sql.InRange {
		return nil, false
	}
	if cmp, err := typ.Compare(ctx, cv, v); err != nil || cmp != 0 {
		return cv, false
	}
	return cv, true
}

// prefixEnd returns the smallest key greater than every key with prefix p,
// or nil if there is none.
func prefixEnd(p []byte) []byte {
	e := append([]byte(nil), p...)
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] < 0xFF {
			e[i]++
			return e[:i+1]
		}
	}
	return nil
}
