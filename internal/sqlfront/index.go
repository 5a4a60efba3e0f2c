package sqlfront

import (
	"bytes"
	"context"
	"sort"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/storage"
)

// index is the sql.Index the planner sees for the primary key or a
// secondary index.
type index struct {
	t       *tableMeta
	name    string
	pos     int // storage.PrimaryIndex or secondary index number
	unique  bool
	codec   keyCodec
	comment string
	exprs   []string // "table.column" per index column
}

func newIndex(m *tableMeta, name string, pos int, unique bool, codec keyCodec, comment string) *index {
	exprs := make([]string, len(codec.cols))
	for i, c := range codec.cols {
		exprs[i] = m.name + "." + m.schema.Schema[c.ord].Name
	}
	return &index{t: m, name: name, pos: pos, unique: unique, codec: codec, comment: comment, exprs: exprs}
}

var (
	_ sql.Index        = (*index)(nil)
	_ sql.OrderedIndex = (*index)(nil)
)

// Order: reads return rows in ascending index order, so the planner can
// drop a sort (ORDER BY ... LIMIT answered from the index). Index keys
// sort as the values do under each column's collation, NULLs first, as
// MySQL orders them (rowenc.TestKeyOrder); PartitionRows returns its ranges
// merged and in key order. A prefix column's key orders only the prefix,
// so an index with one gives no order.
func (ix *index) Order() sql.IndexOrder {
	for _, c := range ix.codec.cols {
		if c.prefix > 0 {
			return sql.IndexOrderNone
		}
	}
	return sql.IndexOrderAsc
}

// Reversible: storage cursors also walk backwards (ORDER BY ... DESC).
func (ix *index) Reversible() bool { return true }

func (ix *index) ID() string                            { return ix.name }
func (ix *index) Database() string                      { return ix.t.db }
func (ix *index) Table() string                         { return ix.t.name }
func (ix *index) Expressions() []string                 { return ix.exprs }
func (ix *index) IsUnique() bool                        { return ix.unique }
func (ix *index) IsSpatial() bool                       { return false }
func (ix *index) IsFullText() bool                      { return false }
func (ix *index) IsVector() bool                        { return false }
func (ix *index) Comment() string                       { return ix.comment }
func (ix *index) IndexType() string                     { return "BTREE" }
func (ix *index) IsGenerated() bool                     { return false }
func (ix *index) CanSupportOrderBy(sql.Expression) bool { return false }
func (ix *index) PrefixLengths() []uint16 {
	var out []uint16
	any := false
	for _, c := range ix.codec.cols {
		out = append(out, uint16(c.prefix))
		any = any || c.prefix > 0
	}
	if !any {
		return nil
	}
	return out
}

func (ix *index) ColumnExpressionTypes() []sql.ColumnExpressionType {
	out := make([]sql.ColumnExpressionType, len(ix.codec.cols))
	for i, c := range ix.codec.cols {
		out[i] = sql.ColumnExpressionType{
			Expression: ix.exprs[i],
			Type:       c.typ,
		}
	}
	return out
}

// CanSupport accepts every range: byteRange widens whatever it cannot map
// exactly, and filters above the lookup stay (PreciseMatch is false).
func (ix *index) CanSupport(*sql.Context, ...sql.Range) bool { return true }

// byteRange maps one range over the index columns to a byte range of
// encoded keys that contains every matching key. empty is true when the
// range can match nothing.
func (ix *index) byteRange(ctx context.Context, r sql.MySQLRange) (rng storage.Range, empty bool) {
	prefix := []byte{}
	for i, ce := range r {
		if i >= len(ix.codec.cols) {
			break
		}
		col := &ix.codec.cols[i]
		// A point (NULL or a value that converts exactly) extends the prefix.
		if _, ok := ce.LowerBound.(sql.BelowNull); ok {
			if _, ok := ce.UpperBound.(sql.AboveNull); ok {
				prefix = append(prefix, keyNull)
				continue
			}
		}
		if nullCut(ce.LowerBound) || nullCut(ce.UpperBound) {
			return storage.Range{}, true // a comparison with NULL matches nothing
		}
		if lo, ok := ce.LowerBound.(sql.Below); ok {
			if hi, ok := ce.UpperBound.(sql.Above); ok {
				if cmp, err := ce.Typ.Compare(ctx, lo.Key, hi.Key); err == nil && cmp == 0 {
					if v, exact := convertForKey(ctx, col.typ, lo.Key); exact {
						if k, err := col.appendKey(prefix, v); err == nil && col.prefix == 0 {
							prefix = k
							continue
						}
					}
				}
			}
		}
		lo, e1 := ix.lowerBound(ctx, prefix, col, ce.LowerBound)
		hi := ix.upperBound(ctx, prefix, col, ce.UpperBound)
		if e1 {
			return storage.Range{}, true
		}
		return storage.Range{Lo: lo, Hi: hi}, false
	}
	return storage.Range{Lo: prefix, Hi: prefixEnd(prefix)}, false
}

// nullCut reports a value bound whose value is NULL.
func nullCut(c sql.MySQLRangeCut) bool {
	switch x := c.(type) {
	case sql.Below:
		return x.Key == nil
	case sql.Above:
		return x.Key == nil
	}
	return false
}

// mergeRanges sorts byte ranges by their start and merges overlapping or
// touching ones, so a row is read once even when widened ranges overlap.
func mergeRanges(rs []storage.Range) []storage.Range {
	if len(rs) < 2 {
		return rs
	}
	sort.Slice(rs, func(i, j int) bool { return bytes.Compare(rs[i].Lo, rs[j].Lo) < 0 })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if last.Hi == nil || bytes.Compare(r.Lo, last.Hi) <= 0 {
			if last.Hi != nil && (r.Hi == nil || bytes.Compare(r.Hi, last.Hi) > 0) {
				last.Hi = r.Hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

func (ix *index) lowerBound(ctx context.Context, prefix []byte, col *keyColumn, cut sql.MySQLRangeCut) ([]byte, bool) {
	nonNull := append(append([]byte(nil), prefix...), keyNotNull)
	switch c := cut.(type) {
	case sql.BelowNull:
		return prefix, false
	case sql.AboveNull:
		return nonNull, false
	case sql.AboveAll:
		return nil, true
	case sql.Below:
		if v, exact := convertForKey(ctx, col.typ, c.Key); exact && col.prefix == 0 {
			if k, err := col.appendKey(append([]byte(nil), prefix...), v); err == nil {
				return k, false
			}
		}
		return nonNull, false
	case sql.Above:
		if v, exact := convertForKey(ctx, col.typ, c.Key); exact && col.prefix == 0 {
			if k, err := col.appendKey(append([]byte(nil), prefix...), v); err == nil {
				return prefixEnd(k), false
			}
		}
		return nonNull, false
	}
	return prefix, false
}

func (ix *index) upperBound(ctx context.Context, prefix []byte, col *keyColumn, cut sql.MySQLRangeCut) []byte {
	all := prefixEnd(prefix)
	switch c := cut.(type) {
	case sql.AboveAll:
		return all
	case sql.AboveNull:
		return append(append([]byte(nil), prefix...), keyNotNull)
	case sql.BelowNull:
		return append([]byte(nil), prefix...)
	case sql.Below:
		if v, exact := convertForKey(ctx, col.typ, c.Key); exact && col.prefix == 0 {
			if k, err := col.appendKey(append([]byte(nil), prefix...), v); err == nil {
				return k
			}
		}
		return all
	case sql.Above:
		if v, exact := convertForKey(ctx, col.typ, c.Key); exact && col.prefix == 0 {
			if k, err := col.appendKey(append([]byte(nil), prefix...), v); err == nil {
				return prefixEnd(k)
			}
		}
		return all
	}
	return all
}
