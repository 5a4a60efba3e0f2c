package sqlfront

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// ORDER BY from an index whose leading columns are fixed by equality.
//
// go-mysql-server drops a sort only when the ORDER BY columns are a prefix
// of an index's columns. OLTP statements fix the leading columns and order
// by the next one — TPC-C's `SELECT no_o_id FROM new_order WHERE no_w_id = ?
// AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE` and `... ORDER BY
// o_id DESC LIMIT 1` — so it read, sorted (and, FOR UPDATE, locked) every
// row of the district to return one. Within one range whose first k
// columns are single values, the index order is the order of the columns
// after them, so the sort can go, and a descending one becomes a backward
// scan. Only lockstep indexes that declare an order qualify, and only a
// single range (several ranges fixing different values would interleave).

// idxSortRuleID names idxSortRule among the analyzer's rules.
const idxSortRuleID analyzer.RuleId = 1<<20 + 1

// idxSortRule replaces Sort over a filter and an index access that gives
// the order by the access, read forwards or backwards.
func idxSortRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		s, ok := n.(*plan.Sort)
		if !ok {
			return n, transform.SameTree, nil
		}
		out, ok, err := sortFromIndex(ctx, s)
		if err != nil || !ok {
			return n, transform.SameTree, err
		}
		return out, transform.NewTree, nil
	})
}

// sortFromIndex returns s's child with the index access set to read in
// s's order, when the access gives that order.
func sortFromIndex(ctx *sql.Context, s *plan.Sort) (sql.Node, bool, error) {
	a, ok := staticAccess(ctx, s.Child)
	if !ok || a.ix.Order() == sql.IndexOrderNone {
		return nil, false, nil
	}
	desc, ok := sortMatchesIndex(s.SortFields, a.ix, fixedPrefix(ctx, a.rng), a.name)
	if !ok {
		return nil, false, nil
	}
	l := a.lookup
	out, err := a.withStatic(ctx, sql.NewIndexLookup(l.Index, l.Ranges.(sql.MySQLRangeCollection), l.IsPointLookup, l.IsEmptyRange, l.IsSpatialLookup, desc))
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// sortMatchesIndex reports whether sort fields, all in one direction, name
// the index's columns after the first fixed ones, in order (a fixed column
// may appear anywhere: it has one value); desc is the direction.
func sortMatchesIndex(sfs sql.SortFields, ix *index, fixed int, name string) (desc bool, ok bool) {
	if len(sfs) == 0 {
		return false, false
	}
	desc = sfs[0].Order == sql.Descending
	cols := ix.codec.cols
	next := fixed
	for _, sf := range sfs {
		if (sf.Order == sql.Descending) != desc {
			return false, false
		}
		gf, ok := sf.Column.(*expression.GetField)
		if !ok || !(strings.EqualFold(gf.Table(), name) || strings.EqualFold(gf.Table(), ix.t.name)) {
			return false, false
		}
		pos := -1
		for i, c := range cols {
			if strings.EqualFold(ix.t.schema.Schema[c.ord].Name, gf.Name()) {
				pos = i
				break
			}
		}
		switch {
		case pos >= 0 && pos < fixed:
		case pos == next:
			next++
		default:
			return false, false
		}
	}
	return desc, true
}

// explainRowsRuleID names explainRowsRule among the analyzer's rules.
const explainRowsRuleID analyzer.RuleId = 1<<20 + 2

// explainRowsRule: the plan of EXPLAIN is several rows even when the query
// it describes returns at most one. go-mysql-server marks a point read as
// "at most one row" while analysing it and then, for EXPLAIN PLAN of such
// a query, failed with "result max1Row iterator returned more than one row".
func explainRowsRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qFlags != nil && ctx != nil && isExplainText(ctx.Query()) {
		// go-mysql-server analyses only the described query, so the rule
		// sees that and not the EXPLAIN: tell them apart by the text.
		qFlags.Unset(sql.QFlagMax1Row)
	}
	return n, transform.SameTree, nil
}

// isExplainText reports whether a statement is EXPLAIN / DESCRIBE / DESC of
// a query.
func isExplainText(q string) bool {
	switch firstKeyword(q) {
	case "EXPLAIN", "DESCRIBE", "DESC":
		return true
	}
	return false
}
