package sqlfront

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// A correlated subquery over a join, driven by the outer row.
//
// go-mysql-server turns a correlated subquery's equalities with the outer
// row into an index lookup only when the subquery reads one table. Over a
// join it plans the join first (typically a merge join of two full scans,
// both sides already sorted on the join key) and leaves the equalities with
// the outer row in a filter above it: sysbench-tpcc's consistency checks
//
//	SELECT ... (SELECT sum(ol_amount) FROM orders STRAIGHT_JOIN order_line
//	            WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
//	              AND o_w_id = c.c_w_id AND o_d_id = c.c_d_id AND o_c_id = c.c_id)
//	FROM customer c WHERE c.c_w_id = ?
//
// read both tables whole once per customer (30,000 customers per
// warehouse) and never finished. MySQL reads the orders of the one customer
// through idx_orders (o_w_id, o_d_id, o_c_id, o_id) and their lines through
// order_line's primary key.
//
// outerLookupJoin does the same for a two-table inner join under a filter
// inside a correlated subquery: when the join's left side is a full scan
// of a table with an index whose leading columns the filter's equalities
// with the outer row (or constants) fix, and its right side a full scan of
// a table with an index whose leading columns the join's equalities with
// the left table fix, the left side becomes a lookup by the outer row's
// values and the join a lookup join into the right table's index. The
// filter and the join condition stay as they were, so the rows are the
// same; only the reading changes. Their order may change (a lookup join
// comes in the left index's order), so the rewrite is made only where
// the order is free (prefixWalk). Keys must have the column's type class
// (both integers, or the same type): the lookup converts a key to the
// column's type, and a conversion MySQL would compare differently (a
// string against a number) must not decide which rows are read.

// outerLookupJoin rewrites f (see above) when it can; corr names the
// outer row's columns.
func outerLookupJoin(ctx *sql.Context, f *plan.Filter, corr sql.ColSet) (sql.Node, bool, error) {
	j, ok := f.Child.(*plan.JoinNode)
	if !ok {
		return nil, false, nil
	}
	switch j.Op {
	case plan.JoinTypeInner, plan.JoinTypeMerge, plan.JoinTypeHash, plan.JoinTypeCross:
	default:
		return nil, false, nil
	}
	la, ok := scanOf(ctx, j.Left())
	if !ok {
		return nil, false, nil
	}
	right := j.Right()
	if hl, ok := right.(*plan.HashLookup); ok {
		right = hl.Child
	}
	ra, ok := scanOf(ctx, right)
	if !ok {
		return nil, false, nil
	}
	outer := func(e sql.Expression) bool { return correlatedValue(e, corr) }
	lkeys := keyEqualities(f.Expression, la, outer)
	lix, lk := longestKeyPrefix(la.meta, lkeys)
	if lix == nil {
		return nil, false, nil
	}
	fromLeft := func(e sql.Expression) bool {
		if gf, ok := e.(*expression.GetField); ok && la.names(gf.Table()) {
			return true
		}
		return correlatedValue(e, corr)
	}
	var cond sql.Expression = j.Filter
	if cond == nil {
		cond = f.Expression
	} else {
		cond = expression.NewAnd(j.Filter, f.Expression)
	}
	rkeys := keyEqualities(cond, ra, fromLeft)
	rix, rk := longestKeyPrefix(ra.meta, rkeys)
	if rix == nil {
		return nil, false, nil
	}
	left, err := la.lookupBy(ctx, lix, lk)
	if err != nil {
		return nil, false, err
	}
	rnode, err := ra.lookupBy(ctx, rix, rk)
	if err != nil {
		return nil, false, err
	}
	jf := j.Filter
	if jf == nil {
		jf = expression.NewLiteral(true, types.Boolean)
	}
	nj := plan.NewJoin(left, rnode, plan.JoinTypeLookup, jf).WithScopeLen(j.ScopeLen)
	out, err := f.WithChildren(nj)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// fullRange reports whether every column of r is unbounded: a full scan.
func fullRange(r sql.MySQLRange) bool {
	for _, ce := range r {
		if ce.Type() != sql.RangeType_All {
			return false
		}
	}
	return true
}

// tableScan is one side of the join: a full scan of a lockstep table (a
// plain table, or an index read over its whole range), under an optional
// alias and filter.
type tableScan struct {
	filter *plan.Filter
	alias  *plan.TableAlias
	table  sql.TableNode // what a lookup reads through
	meta   *tableMeta
	name   string // the name column references use: the alias or the table
}

// scanOf returns n as a tableScan, or false when it is something else.
func scanOf(ctx *sql.Context, n sql.Node) (*tableScan, bool) {
	if a, ok := staticAccess(ctx, n); ok {
		if !fullRange(a.rng) {
			return nil, false
		}
		return &tableScan{filter: a.filter, alias: a.alias, table: a.ita.TableNode, meta: a.ix.t, name: a.name}, true
	}
	s := &tableScan{}
	s.filter, s.alias, n = peelAccess(n)
	rt, ok := n.(*plan.ResolvedTable)
	if !ok {
		return nil, false
	}
	t, ok := rt.Table.(*Table)
	if !ok {
		return nil, false
	}
	s.table, s.meta, s.name = rt, t.meta, rt.Name()
	if s.alias != nil {
		s.name = s.alias.Name()
	}
	return s, true
}

// names reports whether name is the table's name or alias in the plan.
func (s *tableScan) names(name string) bool {
	return strings.EqualFold(name, s.name) || strings.EqualFold(name, s.meta.name)
}

// lookupBy returns the scan replaced by a lookup of ix by keys (one per
// leading column), under the same alias and filter.
func (s *tableScan) lookupBy(ctx *sql.Context, ix *index, keys []sql.Expression) (sql.Node, error) {
	n, err := plan.NewIndexedAccessForTableNode(ctx, s.table, plan.NewLookupBuilder(ix, keys, make([]bool, len(keys))))
	if err != nil {
		return nil, err
	}
	return rewrap(s.alias, s.filter, n)
}

// correlatedValue reports whether e is a value fixed for one run of the
// subquery: a column of the outer row, or a non-NULL literal.
func correlatedValue(e sql.Expression, corr sql.ColSet) bool {
	switch x := e.(type) {
	case *expression.GetField:
		return corr.Contains(sql.ColumnId(x.Id()))
	case *expression.Literal:
		return x.Value() != nil
	}
	return false
}

// keyEqualities returns column ordinal -> key expression for the conjuncts
// of e of the form column = value on a's table, where ok accepts the value
// and the value's type class is the column's (see above). Tuple equalities
// ((a, b) = (x, y), as a merge join writes its key) count column by column.
func keyEqualities(e sql.Expression, a *tableScan, ok func(sql.Expression) bool) map[int]sql.Expression {
	out := map[int]sql.Expression{}
	pair := func(l, r sql.Expression) {
		gf, isCol := l.(*expression.GetField)
		if !isCol || !a.names(gf.Table()) || !ok(r) {
			return
		}
		ord := a.meta.colIndex(gf.Name())
		if ord < 0 || !sameKeyClass(a.meta.schema.Schema[ord].Type, r.Type()) {
			return
		}
		if _, seen := out[ord]; !seen {
			out[ord] = r
		}
	}
	var walk func(sql.Expression)
	walk = func(e sql.Expression) {
		switch x := e.(type) {
		case *expression.And:
			walk(x.LeftChild)
			walk(x.RightChild)
		case *expression.Equals:
			lt, lok := x.Left().(expression.Tuple)
			rt, rok := x.Right().(expression.Tuple)
			if lok && rok && len(lt) == len(rt) {
				for i := range lt {
					pair(lt[i], rt[i])
					pair(rt[i], lt[i])
				}
				return
			}
			pair(x.Left(), x.Right())
			pair(x.Right(), x.Left())
		}
	}
	walk(e)
	return out
}

// sameKeyClass reports whether a key of type kt finds the rows equal to it
// in a column of type ct: both integers, or one type.
func sameKeyClass(ct, kt sql.Type) bool {
	if types.IsInteger(ct) && types.IsInteger(kt) {
		return true
	}
	return ct.Equals(kt)
}

// longestKeyPrefix returns the ordered index of t whose leading columns
// keys fix furthest (with equal lengths, a unique one), and the keys in
// index order; nil when no index's first column is fixed.
func longestKeyPrefix(t *tableMeta, keys map[int]sql.Expression) (*index, []sql.Expression) {
	if len(keys) == 0 {
		return nil, nil
	}
	best, bestLen := mostFixedIndex(t, nil, 0, func(c *keyColumn) bool {
		_, ok := keys[c.ord]
		return ok && c.prefix == 0
	})
	if best == nil {
		return nil, nil
	}
	out := make([]sql.Expression, bestLen)
	for i, c := range best.codec.cols[:bestLen] {
		out[i] = keys[c.ord]
	}
	return best, out
}
