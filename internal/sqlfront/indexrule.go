package sqlfront

import (
	"strings"
	"unsafe"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// The index with the longest equality prefix.
//
// With its default (uniform) statistics go-mysql-server rates every index
// whose leading columns the WHERE fixes alike — the estimated rows come out
// the same — and then prefers a unique key, even one whose fixed prefix is
// shorter: TPC-C's `WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?` read
// the district's 3,000 customers through the primary key (c_w_id, c_d_id,
// c_id) and filtered them, although idx_customer_name (c_w_id, c_d_id,
// c_last, c_first) names the few rows directly. longerPrefixRule corrects
// each such choice: it switches a filtered static index access to the
// index whose leading columns the filter's equalities with constants fix
// furthest — with equal prefixes, to a unique index those equalities fix
// entirely — as MySQL and MariaDB choose. The filter stays (lockstep's
// indexes are not precise matches), so any index whose range holds the
// filter's rows gives the same rows.
//
// What may not change is an order something relies on. The rule walks the
// plan from the top and knows, at each node, whether the order of that
// node's rows matters: at the top it does when the statement says ORDER BY
// (go-mysql-server has by then dropped the sorts its index choice answers,
// so the text is all that tells); a
// sort makes its input's order free; an aggregate without GROUP BY whose
// value no order changes (COUNT, COUNT(DISTINCT), MIN and MAX of
// non-strings, SUM and AVG of exact numbers) makes its input free, and so
// does one with a GROUP BY of columns the WHERE fixes (one group); a merge
// join, an ordered DISTINCT, a window or a recursive CTE need their
// input's order; LIMIT keeps the order free only when the statement asks
// for none. (The rule once only looked at single-table plans with no
// GROUP BY, DISTINCT or join, so `SELECT count(c_id) ... c_last = ?` —
// an aggregate — kept the primary key, 22 ms against 0.45 ms for the same
// WHERE with ORDER BY.)

// longerPrefixRuleID names longerPrefixRule among the analyzer's rules.
const longerPrefixRuleID analyzer.RuleId = 1<<20 + 4

func longerPrefixRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, scope *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	w := prefixWalk{ctx: ctx, rootFree: !textOrdered(ctx)}
	if !scope.IsEmpty() {
		w.corr = scope.Correlated()
	}
	return w.node(n, w.rootFree)
}

// prefixWalk carries the statement-wide facts of one run of the rule.
type prefixWalk struct {
	ctx      *sql.Context
	rootFree bool       // the statement asks for no order
	corr     sql.ColSet // in a correlated subquery: the outer row's columns
}

// node rewrites the accesses under n; free says the order of n's rows
// does not matter.
func (w *prefixWalk) node(n sql.Node, free bool) (sql.Node, transform.TreeIdentity, error) {
	if f, ok := n.(*plan.Filter); ok && free {
		if !w.corr.Empty() {
			nf, ok, err := outerLookupJoin(w.ctx, f, w.corr)
			if err != nil {
				return n, transform.SameTree, err
			}
			if ok {
				return nf, transform.NewTree, nil
			}
		}
		if a, ok := staticAccess(w.ctx, f); ok {
			nf, ok, err := longerPrefixAccess(w.ctx, a)
			if err != nil || !ok {
				return n, transform.SameTree, err
			}
			return nf, transform.NewTree, nil
		}
	}
	children := n.Children()
	if len(children) == 0 {
		return n, transform.SameTree, nil
	}
	cfree := w.childFree(n, free)
	var out []sql.Node
	for i, c := range children {
		nc, same, err := w.node(c, cfree)
		if err != nil {
			return n, transform.SameTree, err
		}
		if same == transform.NewTree {
			if out == nil {
				out = append([]sql.Node(nil), children...)
			}
			out[i] = nc
		}
	}
	if out == nil {
		return n, transform.SameTree, nil
	}
	nn, err := n.WithChildren(out...)
	if err != nil {
		return n, transform.SameTree, err
	}
	return nn, transform.NewTree, nil
}

// childFree reports whether the order of the rows n's children produce
// does not matter, given whether the order of n's own rows does (free).
func (w *prefixWalk) childFree(n sql.Node, free bool) bool {
	switch x := n.(type) {
	case *plan.Sort, *plan.TopN:
		return true
	case *plan.GroupBy:
		if !orderInsensitive(x.SelectedExprs, x.GroupByExprs) {
			return false
		}
		// One group, whatever the order (no GROUP BY, or one that only
		// names columns the WHERE fixes); or groups whose order is free.
		return free || len(x.GroupByExprs) == 0 || constantGroups(x.GroupByExprs, x.Child)
	case *plan.Distinct:
		// Rows equal under a collation ('a', 'A'): the first one seen is
		// the one kept.
		return free && !hasStringColumn(x.Schema())
	case *plan.Limit, *plan.Offset:
		return free && w.rootFree
	case *plan.JoinNode:
		return free && !x.Op.IsMerge()
	case *plan.OrderedDistinct, *plan.Window, *plan.RecursiveCte:
		return false
	}
	return free
}

// orderInsensitive reports whether an aggregation's values are the same
// whatever order its rows arrive in: every aggregate one whose value no
// order changes, and plain columns only among the grouping expressions
// and not strings (a group of 'a' and 'A' shows the first one seen).
func orderInsensitive(selected, grouping []sql.Expression) bool {
	grouped := func(gf *expression.GetField) bool {
		for _, g := range grouping {
			if gg, ok := g.(*expression.GetField); ok && strings.EqualFold(gg.Name(), gf.Name()) && strings.EqualFold(gg.Table(), gf.Table()) {
				return !types.IsText(gf.Type())
			}
		}
		return false
	}
	var ok func(e sql.Expression) bool
	ok = func(e sql.Expression) bool {
		switch x := e.(type) {
		case *aggregation.Count, *aggregation.CountDistinct:
			return true
		case *aggregation.Min:
			return !types.IsText(x.Child.Type())
		case *aggregation.Max:
			return !types.IsText(x.Child.Type())
		case *aggregation.Sum:
			return !types.IsFloat(x.Child.Type())
		case *aggregation.Avg:
			return !types.IsFloat(x.Child.Type())
		case sql.Aggregation:
			return false // GROUP_CONCAT, JSON_ARRAYAGG, ANY_VALUE, ...
		case *expression.GetField:
			return grouped(x)
		}
		for _, c := range e.Children() {
			if !ok(c) {
				return false
			}
		}
		return true
	}
	for _, e := range selected {
		if !ok(e) {
			return false
		}
	}
	return true
}

// constantGroups reports whether every grouping expression is a column the
// filter under a GroupBy (child) fixes by equality with a constant: one
// group at most.
func constantGroups(grouping []sql.Expression, child sql.Node) bool {
	f, ok := child.(*plan.Filter)
	if !ok {
		return false
	}
	fixed := map[string]bool{}
	var walk func(e sql.Expression)
	walk = func(e sql.Expression) {
		switch x := e.(type) {
		case *expression.And:
			walk(x.LeftChild)
			walk(x.RightChild)
		case *expression.Equals:
			gf, ok := x.Left().(*expression.GetField)
			lit, ok2 := x.Right().(*expression.Literal)
			if !ok || !ok2 {
				gf, ok = x.Right().(*expression.GetField)
				lit, ok2 = x.Left().(*expression.Literal)
			}
			if ok && ok2 && lit.Value() != nil {
				fixed[strings.ToLower(gf.Table()+"."+gf.Name())] = true
			}
		}
	}
	walk(f.Expression)
	for _, g := range grouping {
		gf, ok := g.(*expression.GetField)
		if !ok || !fixed[strings.ToLower(gf.Table()+"."+gf.Name())] {
			return false
		}
	}
	return true
}

// hasStringColumn reports whether a schema has a string column.
func hasStringColumn(sch sql.Schema) bool {
	for _, c := range sch {
		if types.IsText(c.Type) {
			return true
		}
	}
	return false
}

// longerPrefixAccess returns the filtered access over the index whose
// leading columns the filter's equalities fix furthest, when that is
// better than a's (see above).
func longerPrefixAccess(ctx *sql.Context, a *indexAccess) (sql.Node, bool, error) {
	cur := a.ix
	fixed := fixedPrefix(ctx, a.rng)
	if cur.unique && fixed == len(cur.codec.cols) {
		return nil, false, nil // one row at most already
	}
	eqs := constantEqualities(a.filter.Expression, cur.t, a.name)
	if len(eqs) == 0 {
		return nil, false, nil
	}
	best, bestLen := mostFixedIndex(cur.t, cur, fixed, func(c *keyColumn) bool {
		_, ok := eqs[c.ord]
		return ok
	})
	if best == nil {
		return nil, false, nil
	}
	b := sql.NewMySQLIndexBuilder(best)
	for i, c := range best.codec.cols[:bestLen] {
		b = b.Equals(ctx, strings.ToLower(best.exprs[i]), eqs[c.ord])
	}
	nl, err := b.Build(ctx)
	if err != nil {
		return nil, false, nil
	}
	out, err := a.withStatic(ctx, nl)
	if err != nil {
		return nil, false, nil
	}
	return out, true, nil
}

// mostFixedIndex returns the ordered index of m, other than skip, whose
// leading columns fixed accepts furthest, and how many it accepts, when
// that beats atLeast columns: longer wins; with equal lengths, a unique
// index fixed entirely (one row) wins over one that is not. nil when none
// beats it.
func mostFixedIndex(m *tableMeta, skip *index, atLeast int, fixed func(c *keyColumn) bool) (*index, int) {
	best, bestLen, bestUnique := (*index)(nil), atLeast, false
	for _, si := range m.indexList() {
		ix, ok := si.(*index)
		if !ok || ix == skip || ix.Order() == sql.IndexOrderNone {
			continue
		}
		n := 0
		for i := range ix.codec.cols {
			if !fixed(&ix.codec.cols[i]) {
				break
			}
			n++
		}
		unique := ix.unique && n == len(ix.codec.cols)
		if n > bestLen || n == bestLen && n > 0 && unique && !bestUnique {
			best, bestLen, bestUnique = ix, n, unique
		}
	}
	return best, bestLen
}

// constantEqualities returns column ordinal -> value for the conjuncts of
// e of the form column = non-NULL constant on the table m describes (named
// by its name or alias).
func constantEqualities(e sql.Expression, m *tableMeta, alias string) map[int]interface{} {
	out := map[int]interface{}{}
	var walk func(sql.Expression)
	walk = func(e sql.Expression) {
		switch x := e.(type) {
		case *expression.And:
			walk(x.LeftChild)
			walk(x.RightChild)
		case *expression.Equals:
			gf, ok := x.Left().(*expression.GetField)
			lit, ok2 := x.Right().(*expression.Literal)
			if !ok || !ok2 {
				gf, ok = x.Right().(*expression.GetField)
				lit, ok2 = x.Left().(*expression.Literal)
			}
			if !ok || !ok2 || lit.Value() == nil || !(strings.EqualFold(gf.Table(), m.name) || strings.EqualFold(gf.Table(), alias)) {
				return
			}
			if ord := m.colIndex(gf.Name()); ord >= 0 {
				out[ord] = lit.Value()
			}
		}
	}
	walk(e)
	return out
}

// textOrdered reports whether the statement's text says ORDER BY (GROUP BY
// and DISTINCT promise no order: their groups and rows come in the order
// first seen, which follows whatever index was read). The rule runs once per union branch and subquery, so the
// answer is kept on the session for the statement (reading a 100 KB text
// for each of 5,000 union branches was quadratic).
func textOrdered(ctx *sql.Context) bool {
	q := ctx.Query()
	text := uintptr(unsafe.Pointer(unsafe.StringData(q))) // not kept alive
	s, ok := ctx.Session.(*Session)
	if ok && s.orderText.pid == ctx.Pid() && s.orderText.text == text && s.orderText.n == len(q) {
		return s.orderText.ordered
	}
	l := strings.ToLower(q)
	ordered := strings.Contains(l, "order by")
	if ok {
		s.orderText.pid, s.orderText.text, s.orderText.n, s.orderText.ordered = ctx.Pid(), text, len(q), ordered
	}
	return ordered
}
