package sqlfront

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Constants through equalities (MySQL's equality propagation).
//
// sysbench-tpcc's consistency checks join by warehouse and fix it once:
// `FROM district1, warehouse1 WHERE d_w_id = w_id AND w_id = 1`.
// go-mysql-server pushes `w_id = 1` to warehouse1 only; district1, with
// nothing of its own, is read whole — every warehouse's districts — where
// MySQL and MariaDB derive `d_w_id = 1` and read one warehouse's by the
// primary key. constPropRule derives the same: in a WHERE condition, a
// column equal to another column that is equal to a constant is equal to
// that constant, and the derived equality is added to the condition, where
// go-mysql-server's pushdown and index choice take it like a written one.
//
// Sound for any join: the derived conjunct holds for every row the WHERE
// condition keeps. The equalities an inner join's ON condition states are
// used as well (they hold for every row such a join produces); an outer
// join's are not. Only integer columns and integer constants take part:
// integer comparison is exact, so equality is transitive across them,
// where comparisons mixing strings, collations, decimals or floating point
// convert and are not.

// constPropRuleID names constPropRule among the analyzer's rules.
const constPropRuleID analyzer.RuleId = 1<<20 + 60

func constPropRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		conds := expression.SplitConjunction(f.Expression)
		extra := impliedConstants(conds, innerJoinConds(f.Child))
		if len(extra) == 0 {
			return n, transform.SameTree, nil
		}
		return plan.NewFilter(expression.JoinAnd(append(conds, extra...)...), f.Child), transform.NewTree, nil
	})
}

// innerJoinConds collects the conjuncts of the ON conditions of the inner
// joins at the top of n (through inner joins only).
func innerJoinConds(n sql.Node) []sql.Expression {
	j, ok := n.(*plan.JoinNode)
	if !ok || !j.Op.IsInner() {
		return nil
	}
	var out []sql.Expression
	if j.Filter != nil {
		out = expression.SplitConjunction(j.Filter)
	}
	out = append(out, innerJoinConds(j.Left())...)
	return append(out, innerJoinConds(j.Right())...)
}

// intColumn returns e as an integer column reference.
func intColumn(e sql.Expression) (*expression.GetField, bool) {
	gf, ok := e.(*expression.GetField)
	if !ok || !types.IsInteger(gf.Type()) {
		return nil, false
	}
	return gf, true
}

// intConstant returns e as an integer literal (not NULL).
func intConstant(e sql.Expression) (*expression.Literal, bool) {
	l, ok := e.(*expression.Literal)
	if !ok || l.Value() == nil || !types.IsInteger(l.Type()) {
		return nil, false
	}
	return l, true
}

func columnKey(gf *expression.GetField) string {
	return strings.ToLower(gf.Table()) + "." + strings.ToLower(gf.Name())
}

// impliedConstants returns `column = constant` conjuncts that where (the
// WHERE condition's conjuncts) and on (inner joins' ON conjuncts) imply
// and where does not state.
func impliedConstants(where, on []sql.Expression) []sql.Expression {
	type pair struct{ a, b *expression.GetField }
	var pairs []pair
	consts := map[string]*expression.Literal{}
	note := func(e sql.Expression, fromWhere bool) {
		eq, ok := e.(*expression.Equals)
		if !ok {
			return
		}
		l, r := eq.Left(), eq.Right()
		if a, ok := intColumn(l); ok {
			if b, ok := intColumn(r); ok {
				pairs = append(pairs, pair{a, b})
				return
			}
			if c, ok := intConstant(r); ok && fromWhere {
				consts[columnKey(a)] = c
			}
			return
		}
		if c, ok := intConstant(l); ok && fromWhere {
			if b, ok := intColumn(r); ok {
				consts[columnKey(b)] = c
			}
		}
	}
	for _, e := range where {
		note(e, true)
	}
	if len(consts) == 0 || (len(pairs) == 0 && len(on) == 0) {
		return nil
	}
	for _, e := range on {
		note(e, false)
	}
	if len(pairs) == 0 {
		return nil
	}
	// Spread the constants along the equalities until nothing changes
	// (a chain a = b, b = c, c = 1 takes as many rounds as links).
	var out []sql.Expression
	for changed := true; changed; {
		changed = false
		for _, p := range pairs {
			ka, kb := columnKey(p.a), columnKey(p.b)
			ca, okA := consts[ka]
			cb, okB := consts[kb]
			switch {
			case okA && !okB:
				consts[kb] = ca
				out = append(out, expression.NewEquals(p.b, ca))
				changed = true
			case okB && !okA:
				consts[ka] = cb
				out = append(out, expression.NewEquals(p.a, cb))
				changed = true
			}
		}
	}
	return out
}
