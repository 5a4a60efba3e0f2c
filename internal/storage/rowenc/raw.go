package rowenc

import "fmt"

// RawKind is what NextRaw found at the start of a stored column value.
type RawKind uint8

const (
	// RawOther is any value NextRaw does not read: decode it with
	// DecodeValue from the same bytes.
	RawOther RawKind = iota
	RawNull
	RawInt    // a signed integer (tags int8…int64)
	RawUint   // an unsigned integer (tags uint8…uint64)
	RawString // a string's bytes (tag string; not []byte, JSON or DECIMAL)
)

// NextRaw reads the column value at the start of b without making a Go
// value of it: a string's bytes (a sub-slice of b, not copied: it is as
// immutable as the stored row it points into) or an integer (a signed one
// as its two's complement bits). rest is the bytes after the value; for
// RawOther the value is not read and rest is nil.
func NextRaw(b []byte) (kind RawKind, s []byte, n uint64, rest []byte, err error) {
	if len(b) == 0 {
		return RawOther, nil, 0, nil, fmt.Errorf("%w: the row ends early", ErrCorrupt)
	}
	switch b[0] {
	case tagNull:
		return RawNull, nil, 0, b[1:], nil
	case tagInt8, tagInt16, tagInt32, tagInt64:
		v, rest, err := readVarint(b[1:])
		return RawInt, nil, uint64(v), rest, err
	case tagUint8, tagUint16, tagUint32, tagUint64:
		v, rest, err := readUvarint(b[1:])
		return RawUint, nil, v, rest, err
	case tagString:
		s, rest, err := readLen(b[1:])
		return RawString, s, 0, rest, err
	}
	return RawOther, nil, 0, nil, nil
}
