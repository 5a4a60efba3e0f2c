package rowenc

import (
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
//
// The encoding follows the Go type of the value (what the SQL layer holds
// for the column's type); the column contributes only its collation and
// prefix length.
const (
	KeyNull    byte = 0x00 // a NULL column value: the whole column key
	KeyNotNull byte = 0x01 // precedes a non-NULL value's key
)

// KeyColumn encodes one column of an index key.
type KeyColumn struct {
	Ord       int // ordinal of the column in the row
	Prefix    int // prefix length in characters (0: the whole value)
	collation sql.CollationID
	binary    bool // strings compare by bytes
	padSpace  bool // trailing spaces do not count
	sorter    sql.CollationSorter
}

// NewKeyColumn returns the key encoder of column ord with collation coll
// (0 for a column that is not a string: its values compare by bytes) and
// a prefix length in characters (0: whole values). coll must be a valid
// collation id (see ValidCollation).
func NewKeyColumn(ord int, coll sql.CollationID, prefix int) KeyColumn {
	kc := KeyColumn{Ord: ord, Prefix: prefix, collation: coll, binary: true}
	if coll != sql.Collation_Unspecified {
		kc.binary = coll == sql.Collation_binary || strings.HasSuffix(coll.Name(), "_bin")
		kc.padSpace = coll.PadAttribute() == "PAD SPACE"
		kc.sorter = coll.Sorter()
	}
	return kc
}

// Collation returns the column's collation (0: not a string column).
func (kc *KeyColumn) Collation() sql.CollationID { return kc.collation }

// validCollations holds the ids go-mysql-server defines.
var validCollations = func() map[sql.CollationID]bool {
	m := map[sql.CollationID]bool{}
	it := sql.NewCollationsIterator()
	for c, ok := it.Next(); ok; c, ok = it.Next() {
		m[c.ID] = true
	}
	return m
}()

// ValidCollation reports whether id is 0 (no collation) or a collation
// go-mysql-server knows. Ids read from disk must pass it before use:
// go-mysql-server indexes a fixed table with them.
func ValidCollation(id sql.CollationID) bool {
	return id == sql.Collation_Unspecified || validCollations[id]
}

// AppendKey appends the key of row's columns cols to b. hasNull reports a
// NULL in a key column.
func AppendKey(b []byte, cols []KeyColumn, row sql.Row) (key []byte, hasNull bool, err error) {
	for i := range cols {
		c := &cols[i]
		if c.Ord >= len(row) {
			return nil, false, fmt.Errorf("key column %d: the row has %d columns", c.Ord, len(row))
		}
		v := row[c.Ord]
		if v == nil {
			hasNull = true
		}
		b, err = c.AppendKey(b, v)
		if err != nil {
			return nil, false, err
		}
	}
	return b, hasNull, nil
}

// AppendKey appends the key encoding of v (already of the column's type).
func (kc *KeyColumn) AppendKey(b []byte, v interface{}) ([]byte, error) {
	if v == nil {
		return append(b, KeyNull), nil
	}
	b = append(b, KeyNotNull)
	switch x := v.(type) {
	case int8:
		return AppendIntKey(b, int64(x)), nil
	case int16:
		return AppendIntKey(b, int64(x)), nil
	case int32:
		return AppendIntKey(b, int64(x)), nil
	case int64:
		return AppendIntKey(b, x), nil
	case int:
		return AppendIntKey(b, int64(x)), nil
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
			return AppendIntKey(b, 1), nil
		}
		return AppendIntKey(b, 0), nil
	case float32:
		return appendFloatKey(b, float64(x)), nil
	case float64:
		return appendFloatKey(b, x), nil
	case decimal.Decimal:
		return appendDecimalKey(b, x), nil
	case time.Time:
		b = AppendIntKey(b, x.Unix())
		return binary.BigEndian.AppendUint32(b, uint32(x.Nanosecond())), nil
	case types.Timespan:
		return AppendIntKey(b, int64(x)), nil
	case string:
		return kc.AppendStringKey(b, x), nil
	case []byte:
		return kc.AppendStringKey(b, string(x)), nil
	}
	return nil, fmt.Errorf("lockstep cannot index a value of type %T", v)
}

// AppendIntKey appends the 8-byte key of a signed integer (no NULL marker:
// primary keys of hidden row ids are this alone).
func AppendIntKey(b []byte, v int64) []byte {
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

// AppendStringKey appends the key of string s (without the NULL marker):
// cut to the prefix, trailing spaces removed under PAD SPACE, then the
// bytes (binary collations) or the collation's weights, escaped and
// terminated.
func (kc *KeyColumn) AppendStringKey(b []byte, s string) []byte {
	if kc.Prefix > 0 && utf8.RuneCountInString(s) > kc.Prefix {
		n := 0
		for i := range s {
			if n == kc.Prefix {
				s = s[:i]
				break
			}
			n++
		}
	}
	if kc.padSpace {
		s = strings.TrimRight(s, " ")
	}
	if kc.binary || kc.sorter == nil {
		return AppendEscaped(b, s)
	}
	var w [4]byte
	for _, r := range s {
		binary.BigEndian.PutUint32(w[:], uint32(kc.sorter(r))^(1<<31))
		b = AppendEscaped(b, string(w[:]))
		b = b[:len(b)-2] // drop the terminator: weights are one string
	}
	return append(b, 0x00, 0x01)
}

// AppendEscaped writes s with 0x00 escaped as 0x00 0xFF, then 0x00 0x01.
func AppendEscaped(b []byte, s string) []byte {
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

// ContentKey is a row's key in a table's hidden content index (tables
// without a primary key find a row by its values through it): the encoded
// row, escaped and terminated.
func ContentKey(row []byte) []byte { return AppendEscaped(nil, string(row)) }

// PrefixEnd returns the smallest key greater than every key with prefix p,
// or nil if there is none.
func PrefixEnd(p []byte) []byte {
	e := append([]byte(nil), p...)
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] < 0xFF {
			e[i]++
			return e[:i+1]
		}
	}
	return nil
}
