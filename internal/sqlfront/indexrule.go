package sqlfront

import (
	"strings"
	"unsafe"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// A longer equality prefix.
//
// With its default (uniform) statistics go-mysql-server rates a primary key
// prefix and a longer secondary index prefix the same and then prefers the
// unique key: TPC-C's `WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?`
// read the district's 3,000 customers through the primary key (c_w_id,
// c_d_id, c_id) and filtered them, although idx_customer_name (c_w_id,
// c_d_id, c_last, c_first) names the few rows directly (47% of the server's
// CPU in a TPC-C run, with the sort after it). longerPrefixRule switches an
// index access to another index when the filter above it fixes, by equality
// with constants, a longer leading part of that index that includes every
// column the current access fixes: the new access reads a subset of the
// rows the old one read, so it is never worse. The filter stays.

// longerPrefixRuleID names longerPrefixRule among the analyzer's rules.
const longerPrefixRuleID analyzer.RuleId = 1<<20 + 4

func longerPrefixRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !orderFree(ctx, n) {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		if _, ok := n.(*plan.Filter); !ok {
			return n, transform.SameTree, nil
		}
		a, ok := staticAccess(ctx, n)
		if !ok {
			return n, transform.SameTree, nil
		}
		nf, ok, err := longerPrefixAccess(ctx, a)
		if err != nil || !ok {
			return n, transform.SameTree, err
		}
		return nf, transform.NewTree, nil
	})
}

// longerPrefixAccess returns the filtered access over the index the filter
// fixes the longest prefix of, when that is better than a's (see above).
func longerPrefixAccess(ctx *sql.Context, a *indexAccess) (sql.Node, bool, error) {
	cur := a.ix
	fixed := fixedPrefix(ctx, a.rng)
	for _, ce := range a.rng[fixed:] {
		if ce.Type() != sql.RangeType_All {
			return nil, false, nil // the access also narrows a later column: keep it
		}
	}
	if cur.unique && fixed == len(cur.codec.cols) {
		return nil, false, nil // one row at most already
	}
	eqs := constantEqualities(a.filter.Expression, cur.t, a.name)
	if len(eqs) <= fixed {
		return nil, false, nil
	}
	for _, c := range cur.codec.cols[:fixed] {
		if _, ok := eqs[c.ord]; !ok {
			return nil, false, nil // the access fixes a column the filter does not: leave it
		}
	}
	var best *index
	bestLen := fixed
	for _, si := range cur.t.indexList() {
		ix, ok := si.(*index)
		if !ok || ix == cur || ix.Order() == sql.IndexOrderNone {
			continue
		}
		n := 0
		for _, c := range ix.codec.cols {
			if _, ok := eqs[c.ord]; !ok {
				break
			}
			n++
		}
		if n <= bestLen {
			continue
		}
		covers := true // every column the current access fixes is in the prefix
		for _, c := range cur.codec.cols[:fixed] {
			in := false
			for _, d := range ix.codec.cols[:n] {
				in = in || d.ord == c.ord
			}
			covers = covers && in
		}
		if covers {
			best, bestLen = ix, n
		}
	}
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

// orderFree reports whether changing the index of n's one table access
// cannot change a result: a single-table plan (no join, subquery or union)
// where nothing relies on the order rows arrive in — no operator that needs
// sorted input — and either a sort above orders them anyway or the
// statement asks for no order at all. (go-mysql-server drops a sort when
// the index it chose gives the order; another index would not.)
func orderFree(ctx *sql.Context, n sql.Node) bool {
	tables, sorted, unsafe := 0, false, false
	transform.Inspect(n, func(n sql.Node) bool {
		switch n.(type) {
		case *plan.IndexedTableAccess, *plan.ResolvedTable:
			tables++
		case *plan.Sort, *plan.TopN:
			sorted = true
		case *plan.JoinNode, *plan.SubqueryAlias, *plan.SetOp, *plan.OrderedDistinct, *plan.GroupBy, *plan.Window, *plan.Distinct, *plan.RecursiveCte:
			unsafe = true
		}
		return true
	})
	if tables != 1 || unsafe {
		return false
	}
	if sorted {
		return true
	}
	return !textOrdered(ctx)
}

// textOrdered reports whether the statement's text says ORDER BY, GROUP BY
// or DISTINCT. The rule runs once per union branch and subquery, so the
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
	ordered := strings.Contains(l, "order by") || strings.Contains(l, "group by") || strings.Contains(l, "distinct")
	if ok {
		s.orderText.pid, s.orderText.text, s.orderText.n, s.orderText.ordered = ctx.Pid(), text, len(q), ordered
	}
	return ordered
}
