package sqlfront

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// Hash joins that should be key lookups.
//
// With its default statistics go-mysql-server plans TPC-C's Stock-Level
// join — order lines of the last 20 orders joined to stock by
// (s_w_id = constant, s_i_id = ol_i_id) — as a hash join that reads every
// stock row of the warehouse (100,000) to build its table, for about 200
// probes: 4% of the transactions took 45% of the server's CPU. When the
// hash side is one range over a unique index whose leading columns the range
// fixes and whose one remaining column is the hash key, each probe names
// exactly one row: an index lookup per left row does the same work in
// proportion to the left side (MySQL's eq_ref). lookupJoinRule rewrites such
// an inner hash join into a lookup join; the right side's filter stays.

// lookupJoinRuleID names lookupJoinRule among the analyzer's rules.
const lookupJoinRuleID analyzer.RuleId = 1<<20 + 3

func lookupJoinRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		j, ok := n.(*plan.JoinNode)
		if !ok || j.Op != plan.JoinTypeHash {
			return n, transform.SameTree, nil
		}
		right, ok, err := eqRefLookup(ctx, j)
		if err != nil || !ok {
			return n, transform.SameTree, err
		}
		return plan.NewJoin(j.Left(), right, plan.JoinTypeLookup, j.Filter).WithScopeLen(j.ScopeLen), transform.NewTree, nil
	})
}

// eqRefLookup returns the right side of j as a lookup by the hash key, when
// that names one row of a unique index (see above).
func eqRefLookup(ctx *sql.Context, j *plan.JoinNode) (sql.Node, bool, error) {
	hl, ok := j.Right().(*plan.HashLookup)
	if !ok || hl.LeftProbeKey == nil {
		return nil, false, nil
	}
	a, ok := staticAccess(ctx, hl.Child)
	if !ok || !a.ix.unique {
		return nil, false, nil
	}
	ix, rng := a.ix, a.rng
	cols := ix.codec.cols
	fixed := fixedPrefix(ctx, rng)
	if fixed != len(cols)-1 {
		return nil, false, nil
	}
	// The hash key is the last index column (a plain column of the table).
	gf, ok := unwrapTuple(hl.RightEntryKey).(*expression.GetField)
	if !ok || cols[fixed].prefix != 0 || !strings.EqualFold(ix.t.schema.Schema[cols[fixed].ord].Name, gf.Name()) {
		return nil, false, nil
	}
	keys := make([]sql.Expression, 0, len(cols))
	nulls := make([]bool, len(cols))
	for i := 0; i < fixed; i++ {
		ce := rng[i]
		if ce.Type() == sql.RangeType_EqualNull {
			return nil, false, nil // IS NULL: not a key value
		}
		keys = append(keys, expression.NewLiteral(sql.GetMySQLRangeCutKey(ce.LowerBound), ce.Typ))
	}
	keys = append(keys, unwrapTuple(hl.LeftProbeKey))
	nita, err := plan.NewIndexedAccessForTableNode(ctx, a.ita.TableNode, plan.NewLookupBuilder(a.lookup.Index, keys, nulls))
	if err != nil {
		return nil, false, err
	}
	out, err := a.with(nita)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// unwrapTuple returns the one expression of a one-element tuple (how
// go-mysql-server writes a single hash key), or e.
func unwrapTuple(e sql.Expression) sql.Expression {
	if t, ok := e.(expression.Tuple); ok && len(t) == 1 {
		return t[0]
	}
	return e
}
