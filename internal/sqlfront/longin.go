package sqlfront

import (
	"math"
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"

	"lockstep/internal/storage"
)

// Long IN lists on an index (sql.IndexSearchableTable).
//
// go-mysql-server turns `k IN (v1, ..., vn)` on an indexed column into n
// point ranges and then makes them disjoint with sql.RemoveOverlappingRanges,
// which checks every pair of the result (validateRangeCollection): O(n^2)
// comparisons through interface calls — a 20,000-value list took 11 s to
// plan, 100,000 values 306 s, all before a row was read.
//
// go-mysql-server asks a table that implements sql.IndexSearchable for
// its own lookup before it costs indexes itself (costedIndexScans, and
// addIndexScans for a table in a join). Table answers for a filter that
// holds an IN list of at least minLongIn constants on the first column of
// an index: the same point ranges go-mysql-server's range builder makes
// (sql.MySQLIndexBuilder.Equals converts the values to the column type,
// drops NULLs and fractions for an integer column), with equalities to
// constants on the index's following columns appended, sorted and made
// unique in O(n log n). The whole filter stays above the lookup
// (PreciseMatch is false), so the ranges only decide which rows are read.
// Anything else — shorter lists, lists of expressions, values that do not
// convert — is declined and costed by go-mysql-server as before.

// minLongIn is the shortest IN list Table.LookupForExpressions answers for.
const minLongIn = 100

var _ sql.IndexSearchableTable = (*Table)(nil)

// SkipIndexCosting: when LookupForExpressions declines, go-mysql-server
// costs the indexes itself.
func (t *Table) SkipIndexCosting() bool { return false }

// LookupForExpressions implements sql.IndexSearchable for long IN lists.
func (t *Table) LookupForExpressions(ctx *sql.Context, exprs ...sql.Expression) (sql.IndexLookup, *sql.FuncDepSet, sql.Expression, bool, error) {
	var best sql.IndexLookup
	found := false
	for _, e := range exprs {
		col, values := longInList(e)
		if values == nil {
			continue
		}
		ix := t.indexLedBy(col)
		if ix == nil {
			continue
		}
		lookup, ok := inListLookup(ctx, ix, values, exprs)
		if !ok {
			continue
		}
		if !found || lookup.Ranges.Len() < best.Ranges.Len() {
			best, found = lookup, true
		}
	}
	if !found {
		return sql.IndexLookup{}, nil, nil, false, nil
	}
	return best, &sql.FuncDepSet{}, expression.JoinAnd(exprs...), true, nil
}

// longInList returns the column and the values of e when e is `col IN
// (constants)` with at least minLongIn values; values is nil otherwise.
func longInList(e sql.Expression) (col string, values []interface{}) {
	var left, right sql.Expression
	switch x := e.(type) {
	case *expression.InTuple:
		left, right = x.Left(), x.Right()
	case *expression.HashInTuple:
		left, right = x.Left(), x.Right()
	default:
		return "", nil
	}
	gf, ok := left.(*expression.GetField)
	if !ok {
		return "", nil
	}
	tup, ok := right.(expression.Tuple)
	if !ok || len(tup) < minLongIn {
		return "", nil
	}
	values = make([]interface{}, len(tup))
	for i, el := range tup {
		lit, ok := el.(*expression.Literal)
		if !ok {
			return "", nil
		}
		values[i] = lit.Value()
	}
	return gf.Name(), values
}

// indexLedBy returns the index whose first column is col: the primary key
// first, then unique indexes, then the one with the fewest columns.
func (t *Table) indexLedBy(col string) *index {
	var best *index
	rank := func(ix *index) int {
		switch {
		case ix.pos == storage.PrimaryIndex:
			return 0
		case ix.unique:
			return 1
		}
		return 2
	}
	for _, si := range t.meta.indexList() {
		ix := si.(*index)
		if len(ix.codec.cols) == 0 {
			continue
		}
		if !strings.EqualFold(t.meta.schema.Schema[ix.codec.cols[0].ord].Name, col) {
			continue
		}
		if best == nil || rank(ix) < rank(best) || rank(ix) == rank(best) && len(ix.codec.cols) < len(best.codec.cols) {
			best = ix
		}
	}
	return best
}

// inListLookup builds ix's lookup for col IN (values), narrowed by the
// equalities with constants in exprs on the index's following columns.
// Each value becomes the point range go-mysql-server's range builder makes
// of it (sql.MySQLIndexBuilder.Equals): a fraction for an integer column
// and NULL match nothing, any other value is converted to the column's
// type (a string column's promoted), a value that does not convert makes
// the lookup go-mysql-server's. The points are sorted with the type's
// comparison and each kept once; the sort stops when ctx is cancelled.
func inListLookup(ctx *sql.Context, ix *index, values []interface{}, exprs []sql.Expression) (sql.IndexLookup, bool) {
	cets := ix.ColumnExpressionTypes()
	typeOf := func(i int) sql.Type {
		t := cets[i].Type
		if _, ok := t.(sql.StringType); ok {
			t = t.Promote()
		}
		return t
	}
	typ := typeOf(0)
	keys := make([]interface{}, 0, len(values))
	for _, v := range values {
		k, ok, err := pointKey(ctx, typ, v)
		if err != nil {
			return sql.IndexLookup{}, false
		}
		if ok {
			keys = append(keys, k)
		}
	}
	// The following columns: a constant each while there are equalities.
	var rest []sql.MySQLRangeColumnExpr
	for i := 1; i < len(ix.codec.cols); i++ {
		name := ix.t.schema.Schema[ix.codec.cols[i].ord].Name
		t := typeOf(i)
		v, found := constantEquality(name, exprs)
		if !found {
			for ; i < len(ix.codec.cols); i++ {
				rest = append(rest, sql.AllRangeColumnExpr(typeOf(i)))
			}
			break
		}
		k, ok, err := pointKey(ctx, t, v)
		if err != nil || !ok {
			return sql.IndexLookup{}, false
		}
		rest = append(rest, sql.ClosedRangeColumnExpr(k, k, t))
	}
	var cmpErr error
	checks := 0
	sort.Slice(keys, func(i, j int) bool {
		if cmpErr != nil {
			return false
		}
		if checks++; checks&4095 == 0 {
			if cmpErr = interrupted(ctx); cmpErr != nil {
				return false
			}
		}
		c, err := typ.Compare(ctx, keys[i], keys[j])
		if err != nil {
			cmpErr = err
		}
		return c < 0
	})
	if cmpErr != nil || len(keys) == 0 {
		return sql.IndexLookup{}, false
	}
	ranges := make(sql.MySQLRangeCollection, 0, len(keys))
	for i, k := range keys {
		if i > 0 {
			if c, err := typ.Compare(ctx, keys[i-1], k); err != nil || c == 0 {
				continue
			}
		}
		r := make(sql.MySQLRange, 0, 1+len(rest))
		r = append(r, sql.ClosedRangeColumnExpr(k, k, typ))
		ranges = append(ranges, append(r, rest...))
	}
	return sql.NewIndexLookup(ix, ranges, false, false, false, false), true
}

// pointKey converts v for a point range over a column of type typ, as
// sql.MySQLIndexBuilder.Equals does; ok is false when the point matches
// nothing (NULL, a fraction for an integer column).
func pointKey(ctx *sql.Context, typ sql.Type, v interface{}) (key interface{}, ok bool, err error) {
	if v == nil {
		return nil, false, nil
	}
	if t, isNum := typ.(sql.NumberType); isNum && !t.IsFloat() && !integral(v) {
		return nil, false, nil
	}
	k, _, err := typ.Convert(ctx, v)
	if err != nil {
		return nil, false, err
	}
	if k == nil {
		return nil, false, nil
	}
	return k, true, nil
}

// integral reports whether v has no fractional part, for the types
// go-mysql-server's range builder asks it of (floats and decimals).
func integral(v interface{}) bool {
	switch x := v.(type) {
	case float32:
		return float64(x) == math.Trunc(float64(x))
	case float64:
		return x == math.Trunc(x)
	case decimal.Decimal:
		return x.Equal(x.Truncate(0))
	}
	return true
}

// constantEquality returns v for a conjunct `col = v` (v a constant) in
// exprs.
func constantEquality(col string, exprs []sql.Expression) (interface{}, bool) {
	for _, e := range exprs {
		eq, ok := e.(*expression.Equals)
		if !ok {
			continue
		}
		l, r := eq.Left(), eq.Right()
		if _, ok := l.(*expression.GetField); !ok {
			l, r = r, l
		}
		gf, ok := l.(*expression.GetField)
		if !ok || !strings.EqualFold(gf.Name(), col) {
			continue
		}
		if lit, ok := r.(*expression.Literal); ok && lit.Value() != nil {
			return lit.Value(), true
		}
	}
	return nil, false
}
