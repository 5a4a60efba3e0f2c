package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
)

// The descriptor's binary encoding (all integers uvarints, strings a
// uvarint length then the bytes):
//
//	version      1 byte (descFormat)
//	columns      count, then per column: name, kind (1 byte), flags
//	             (1 byte: 1 unsigned, 2 nullable), collation id, type text
//	primary key  count, then per part: column ordinal, prefix length
//	indexes      count, then per index: name, flags (1 byte: 1 unique,
//	             2 content), part count, parts as for the primary key
//
// A reader refuses versions it does not know; a new field means a new
// version.
const descFormat = 1

const (
	colUnsigned = 1 << iota
	colNullable
)

const (
	ixUnique = 1 << iota
	ixContent
)

// Marshal appends d's encoding to b.
func (d *TableDesc) Marshal(b []byte) []byte {
	b = append(b, descFormat)
	b = binary.AppendUvarint(b, uint64(len(d.Columns)))
	for _, c := range d.Columns {
		b = appendStr(b, c.Name)
		var flags byte
		if c.Unsigned {
			flags |= colUnsigned
		}
		if c.Nullable {
			flags |= colNullable
		}
		b = append(b, byte(c.Kind), flags)
		b = binary.AppendUvarint(b, uint64(c.Collation))
		b = appendStr(b, c.Type)
	}
	b = appendParts(b, d.PrimaryKey)
	b = binary.AppendUvarint(b, uint64(len(d.Indexes)))
	for _, ix := range d.Indexes {
		b = appendStr(b, ix.Name)
		var flags byte
		if ix.Unique {
			flags |= ixUnique
		}
		if ix.Content {
			flags |= ixContent
		}
		b = append(b, flags)
		b = appendParts(b, ix.Parts)
	}
	return b
}

func appendStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendParts(b []byte, parts []KeyPart) []byte {
	b = binary.AppendUvarint(b, uint64(len(parts)))
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(p.Column))
		b = binary.AppendUvarint(b, uint64(p.Prefix))
	}
	return b
}

// UnmarshalTableDesc decodes and validates a descriptor Marshal wrote. Bad
// input is an error wrapping ErrBadDesc, never a panic.
func UnmarshalTableDesc(b []byte) (*TableDesc, error) {
	r := descReader{b: b}
	if v := r.byte1(); r.err == nil && v != descFormat {
		return nil, fmt.Errorf("%w: format version %d (this binary reads %d)", ErrBadDesc, v, descFormat)
	}
	d := &TableDesc{}
	n := r.count(MaxColumns)
	for i := 0; i < n && r.err == nil; i++ {
		c := ColumnDesc{Name: r.str()}
		c.Kind = Kind(r.byte1())
		flags := r.byte1()
		c.Unsigned, c.Nullable = flags&colUnsigned != 0, flags&colNullable != 0
		if flags&^(colUnsigned|colNullable) != 0 {
			r.fail("unknown column flags")
		}
		c.Collation = sql.CollationID(r.uint(1<<16 - 1))
		c.Type = r.str()
		d.Columns = append(d.Columns, c)
	}
	d.PrimaryKey = r.parts()
	n = r.count(MaxIndexes)
	for i := 0; i < n && r.err == nil; i++ {
		ix := IndexDesc{Name: r.str()}
		flags := r.byte1()
		ix.Unique, ix.Content = flags&ixUnique != 0, flags&ixContent != 0
		if flags&^(ixUnique|ixContent) != 0 {
			r.fail("unknown index flags")
		}
		ix.Parts = r.parts()
		d.Indexes = append(d.Indexes, ix)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail(fmt.Sprintf("%d trailing bytes", len(r.b)))
	}
	if r.err != nil {
		return nil, r.err
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// descReader reads the encoding; the first error sticks and later reads
// return zero values.
type descReader struct {
	b   []byte
	err error
}

func (r *descReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrBadDesc, what)
	}
	r.b = nil
}

func (r *descReader) byte1() byte {
	if r.err != nil || len(r.b) == 0 {
		r.fail("truncated")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// uint reads a uvarint no larger than limit.
func (r *descReader) uint(limit uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n != uvarintLen(v) {
		r.fail("bad varint") // malformed, or not minimal: one value, one encoding
		return 0
	}
	r.b = r.b[n:]
	if v > limit {
		r.fail(fmt.Sprintf("value %d above %d", v, limit))
		return 0
	}
	return v
}

// count reads an element count no larger than limit (nor than the bytes
// left, each element taking at least one: garbage cannot make it allocate).
func (r *descReader) count(limit int) int {
	return int(r.uint(uint64(min(limit, len(r.b)))))
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

func (r *descReader) str() string {
	n := r.uint(maxNameBytes)
	if r.err != nil {
		return ""
	}
	if uint64(len(r.b)) < n {
		r.fail("string past the end")
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *descReader) parts() []KeyPart {
	n := r.count(MaxKeyParts)
	var out []KeyPart
	for i := 0; i < n && r.err == nil; i++ {
		col := r.uint(MaxColumns)
		prefix := r.uint(1 << 24)
		out = append(out, KeyPart{Column: int(col), Prefix: int(prefix)})
	}
	return out
}
