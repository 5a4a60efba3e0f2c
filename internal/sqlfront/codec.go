package sqlfront

import (
	"context"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"lockstep/internal/storage"
	"lockstep/internal/storage/rowenc"
)

// Rows and keys are encoded by internal/storage/rowenc, so that storage
// can compute keys from a table's descriptor without the SQL layer. This
// file adapts it to the SQL layer: key columns carry the column's SQL type
// (range bounds are converted to it), and the short names below are what
// the rest of the package calls.

const (
	keyNull    = rowenc.KeyNull
	keyNotNull = rowenc.KeyNotNull
)

// encodeRow appends row's encoding to dst. With dst nil the result is a
// new slice of exactly the encoding's length: storage keeps the rows it is
// given for as long as they live, and a row grown by appends from nil kept
// the growth's spare capacity — 265 bytes of heap for sysbench's 190-byte
// rows (docs/benchmarks/notes.md, "Memory per row at 4 x 1M sysbench
// rows"). The encoding goes through a pooled scratch buffer, so this is
// one allocation where the growth took several.
func encodeRow(dst []byte, row sql.Row) ([]byte, error) {
	if dst != nil {
		return rowenc.EncodeRow(dst, row)
	}
	bp := encodeScratch.Get().(*[]byte)
	b, err := rowenc.EncodeRow((*bp)[:0], row)
	var out []byte
	if err == nil {
		out = make([]byte, len(b))
		copy(out, b)
	}
	if cap(b) <= maxScratch {
		*bp = b
		encodeScratch.Put(bp)
	}
	return out, err
}

// maxScratch bounds the scratch buffers encodeRow keeps in its pool.
const maxScratch = 64 << 10

var encodeScratch = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func decodeRow(b []byte, n int) (sql.Row, error) { return rowenc.DecodeRow(b, n) }

func appendIntKey(b []byte, v int64) []byte { return rowenc.AppendIntKey(b, v) }

func prefixEnd(p []byte) []byte { return rowenc.PrefixEnd(p) }

// keyColumn is one column of an index key: its storage encoding and its
// SQL type. ord and prefix repeat enc's, for the planner's use.
type keyColumn struct {
	ord    int      // ordinal in the table schema
	prefix int      // prefix length in characters (0: whole value)
	typ    sql.Type // column type
	enc    rowenc.KeyColumn
}

// newKeyColumn returns the key column of schema column ord of type typ
// with a prefix length in characters (0: whole values).
func newKeyColumn(ord int, typ sql.Type, prefix int) keyColumn {
	return keyColumn{ord: ord, prefix: prefix, typ: typ, enc: rowenc.NewKeyColumn(ord, keyCollation(typ), prefix)}
}

// keyCollation is the collation a column's key is built with: a string
// type's collation, 0 for every other type (its values compare by bytes).
func keyCollation(typ sql.Type) sql.CollationID {
	if st, ok := typ.(sql.StringType); ok {
		return st.Collation()
	}
	return sql.Collation_Unspecified
}

// appendKey appends the key encoding of v (already of the column's type).
func (kc *keyColumn) appendKey(b []byte, v interface{}) ([]byte, error) {
	return kc.enc.AppendKey(b, v)
}

// appendStringKey appends the key of string s without the NULL marker.
func (kc *keyColumn) appendStringKey(b []byte, s string) ([]byte, error) {
	return kc.enc.AppendStringKey(b, s), nil
}

// keyable reports whether values of typ can be part of an index key.
func keyable(typ sql.Type) bool {
	switch {
	case types.IsJSON(typ), types.IsGeometry(typ):
		return false
	}
	return true
}

// keyCodec encodes one index's key from a row of the table.
type keyCodec struct {
	cols []keyColumn
	enc  []rowenc.KeyColumn // cols' encoders
}

// add appends a key column.
func (kc *keyCodec) add(c keyColumn) {
	kc.cols = append(kc.cols, c)
	kc.enc = append(kc.enc, c.enc)
}

// parts returns the key's columns as descriptor key parts.
func (kc *keyCodec) parts() []storage.KeyPart {
	out := make([]storage.KeyPart, len(kc.cols))
	for i, c := range kc.cols {
		out[i] = storage.KeyPart{Column: c.ord, Prefix: c.prefix}
	}
	return out
}

// encode appends the key of row. hasNull reports a NULL key column.
func (kc *keyCodec) encode(b []byte, row sql.Row) ([]byte, bool, error) {
	return rowenc.AppendKey(b, kc.enc, row)
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
