package rowenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// Row encoding. A stored row is one byte slice: for each column a tag byte
// naming the Go type the SQL layer uses for the value, then the value. Ints
// are zig-zag varints, strings and blobs length-prefixed, so a sysbench row
// (INT, INT, CHAR(120), CHAR(60)) costs its text plus a few bytes. Decoding
// gives back exactly the Go values that were encoded.
//
// The tag numbers are part of the durable format: never renumber them.
const (
	tagNull byte = iota
	tagInt8
	tagInt16
	tagInt32
	tagInt64
	tagUint8
	tagUint16
	tagUint32
	tagUint64
	tagFloat32
	tagFloat64
	tagString
	tagBytes
	tagDecimal
	tagTime
	tagJSON
	tagTimespan
	tagBool
)

// UnsupportedValueError reports a value the row format cannot store.
type UnsupportedValueError struct{ Value interface{} }

func (e UnsupportedValueError) Error() string {
	return fmt.Sprintf("lockstep storage cannot store a value of type %T", e.Value)
}

// ErrCorrupt is wrapped by every error of a row that does not decode.
var ErrCorrupt = errors.New("lockstep: corrupt stored row")

// EncodeRow appends the encoding of row to dst.
func EncodeRow(dst []byte, row sql.Row) ([]byte, error) {
	for _, v := range row {
		var err error
		dst, err = EncodeValue(dst, v)
		if err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// EncodeValue appends the encoding of one column value to b.
func EncodeValue(b []byte, v interface{}) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, tagNull), nil
	case int8:
		return binary.AppendVarint(append(b, tagInt8), int64(x)), nil
	case int16:
		return binary.AppendVarint(append(b, tagInt16), int64(x)), nil
	case int32:
		return binary.AppendVarint(append(b, tagInt32), int64(x)), nil
	case int64:
		return binary.AppendVarint(append(b, tagInt64), x), nil
	case int:
		return binary.AppendVarint(append(b, tagInt64), int64(x)), nil
	case uint8:
		return binary.AppendUvarint(append(b, tagUint8), uint64(x)), nil
	case uint16:
		return binary.AppendUvarint(append(b, tagUint16), uint64(x)), nil
	case uint32:
		return binary.AppendUvarint(append(b, tagUint32), uint64(x)), nil
	case uint64:
		return binary.AppendUvarint(append(b, tagUint64), x), nil
	case uint:
		return binary.AppendUvarint(append(b, tagUint64), uint64(x)), nil
	case float32:
		return binary.LittleEndian.AppendUint32(append(b, tagFloat32), math.Float32bits(x)), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, tagFloat64), math.Float64bits(x)), nil
	case string:
		b = binary.AppendUvarint(append(b, tagString), uint64(len(x)))
		return append(b, x...), nil
	case []byte:
		b = binary.AppendUvarint(append(b, tagBytes), uint64(len(x)))
		return append(b, x...), nil
	case bool:
		if x {
			return append(b, tagBool, 1), nil
		}
		return append(b, tagBool, 0), nil
	case decimal.Decimal:
		// coefficient and exponent, so the scale (trailing zeros) survives
		s := x.Coefficient().String()
		b = binary.AppendVarint(append(b, tagDecimal), int64(x.Exponent()))
		b = binary.AppendUvarint(b, uint64(len(s)))
		return append(b, s...), nil
	case time.Time:
		b = binary.AppendVarint(append(b, tagTime), x.Unix())
		return binary.AppendUvarint(b, uint64(x.Nanosecond())), nil
	case types.Timespan:
		return binary.AppendVarint(append(b, tagTimespan), int64(x)), nil
	case sql.JSONWrapper:
		js, err := types.MarshallJson(x)
		if err != nil {
			return nil, fmt.Errorf("encoding a JSON value: %w", err)
		}
		b = binary.AppendUvarint(append(b, tagJSON), uint64(len(js)))
		return append(b, js...), nil
	}
	return nil, UnsupportedValueError{v}
}

// DecodeRow decodes the first n columns of a row (a prefix is enough when
// only the leading columns are needed; bytes after them are not read).
func DecodeRow(b []byte, n int) (sql.Row, error) {
	row := make(sql.Row, n)
	for i := 0; i < n; i++ {
		v, rest, err := DecodeValue(b)
		if err != nil {
			return nil, fmt.Errorf("column %d: %w", i, err)
		}
		row[i] = v
		b = rest
	}
	return row, nil
}

// DecodeValue decodes one column value and returns the bytes after it.
func DecodeValue(b []byte) (interface{}, []byte, error) {
	if len(b) == 0 {
		return nil, nil, fmt.Errorf("%w: the row ends early", ErrCorrupt)
	}
	tag, b := b[0], b[1:]
	switch tag {
	case tagNull:
		return nil, b, nil
	case tagInt8, tagInt16, tagInt32, tagInt64, tagTimespan:
		v, rest, err := readVarint(b)
		if err != nil {
			return nil, nil, err
		}
		switch tag {
		case tagInt8:
			return int8(v), rest, nil
		case tagInt16:
			return int16(v), rest, nil
		case tagInt32:
			return int32(v), rest, nil
		case tagTimespan:
			return types.Timespan(v), rest, nil
		}
		return v, rest, nil
	case tagUint8, tagUint16, tagUint32, tagUint64:
		v, rest, err := readUvarint(b)
		if err != nil {
			return nil, nil, err
		}
		switch tag {
		case tagUint8:
			return uint8(v), rest, nil
		case tagUint16:
			return uint16(v), rest, nil
		case tagUint32:
			return uint32(v), rest, nil
		}
		return v, rest, nil
	case tagFloat32:
		if len(b) < 4 {
			return nil, nil, fmt.Errorf("%w: short FLOAT", ErrCorrupt)
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(b)), b[4:], nil
	case tagFloat64:
		if len(b) < 8 {
			return nil, nil, fmt.Errorf("%w: short DOUBLE", ErrCorrupt)
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:], nil
	case tagString:
		s, rest, err := readLen(b)
		if err != nil {
			return nil, nil, err
		}
		return string(s), rest, nil
	case tagBytes:
		s, rest, err := readLen(b)
		if err != nil {
			return nil, nil, err
		}
		out := make([]byte, len(s)) // empty, not nil: an empty BLOB is not NULL
		copy(out, s)
		return out, rest, nil
	case tagBool:
		if len(b) < 1 {
			return nil, nil, fmt.Errorf("%w: short BOOL", ErrCorrupt)
		}
		return b[0] != 0, b[1:], nil
	case tagDecimal:
		return decodeDecimal(b)
	case tagTime:
		sec, rest, err := readVarint(b)
		if err != nil {
			return nil, nil, err
		}
		ns, rest, err := readUvarint(rest)
		if err != nil {
			return nil, nil, err
		}
		return time.Unix(sec, int64(ns)).UTC(), rest, nil
	case tagJSON:
		s, rest, err := readLen(b)
		if err != nil {
			return nil, nil, err
		}
		return types.NewLazyJSONDocument(append([]byte(nil), s...)), rest, nil
	}
	return nil, nil, fmt.Errorf("%w: unknown value tag %d", ErrCorrupt, tag)
}

// SkipValue returns the bytes after the column value at the start of b,
// without decoding it.
func SkipValue(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: the row ends early", ErrCorrupt)
	}
	tag, b := b[0], b[1:]
	switch tag {
	case tagNull:
		return b, nil
	case tagInt8, tagInt16, tagInt32, tagInt64, tagTimespan:
		_, rest, err := readVarint(b)
		return rest, err
	case tagUint8, tagUint16, tagUint32, tagUint64:
		_, rest, err := readUvarint(b)
		return rest, err
	case tagFloat32, tagFloat64, tagBool:
		n := 1
		switch tag {
		case tagFloat32:
			n = 4
		case tagFloat64:
			n = 8
		}
		if len(b) < n {
			return nil, fmt.Errorf("%w: short value (tag %d)", ErrCorrupt, tag)
		}
		return b[n:], nil
	case tagString, tagBytes, tagJSON:
		_, rest, err := readLen(b)
		return rest, err
	case tagDecimal:
		_, rest, err := readVarint(b)
		if err != nil {
			return nil, err
		}
		_, rest, err = readLen(rest)
		return rest, err
	case tagTime:
		_, rest, err := readVarint(b)
		if err != nil {
			return nil, err
		}
		_, rest, err = readUvarint(rest)
		return rest, err
	}
	return nil, fmt.Errorf("%w: unknown value tag %d", ErrCorrupt, tag)
}

func decodeDecimal(b []byte) (interface{}, []byte, error) {
	exp, rest, err := readVarint(b)
	if err != nil {
		return nil, nil, err
	}
	s, rest, err := readLen(rest)
	if err != nil {
		return nil, nil, err
	}
	coef, ok := new(big.Int).SetString(string(s), 10)
	if !ok {
		return nil, nil, fmt.Errorf("%w: bad DECIMAL digits", ErrCorrupt)
	}
	return decimal.NewFromBigInt(coef, int32(exp)), rest, nil
}

func readUvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, fmt.Errorf("%w: bad varint", ErrCorrupt)
	}
	return v, b[n:], nil
}

func readVarint(b []byte) (int64, []byte, error) {
	v, n := binary.Varint(b)
	if n <= 0 {
		return 0, nil, fmt.Errorf("%w: bad varint", ErrCorrupt)
	}
	return v, b[n:], nil
}

func readLen(b []byte) ([]byte, []byte, error) {
	n, rest, err := readUvarint(b)
	if err != nil {
		return nil, nil, err
	}
	if uint64(len(rest)) < n {
		return nil, nil, fmt.Errorf("%w: length %d past the end", ErrCorrupt, n)
	}
	return rest[:n], rest[n:], nil
}
