package sqlfront

import (
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Long UNION chains.
//
// The parser builds `S1 UNION ALL S2 UNION ALL ... Sn` as a left-deep
// tree: a chain of n-1 set operations. go-mysql-server computes a set
// operation's schema from its children each time it is asked (SetOp.Schema
// recurses down the chain), its planner merges the two sides' schemas at
// every level, and its analyzer re-analyses each union's left side — the
// whole chain below it — through every rule, one of which asks every union
// below for its schema: planning took O(n^2) time in the planner and
// O(n^3) in the analyzer (500 SELECTs: 16.7 s; 5,000: over 7 minutes).
//
// UNION is associative, so the parser hook rebuilds a long chain as a
// balanced tree of the same operands in the same order: depth log n, and
// planning cost O(n log^2 n). MySQL's rule for mixing the two kinds is
// kept: a UNION DISTINCT removes duplicates from everything to its left,
// so the operands up to the last DISTINCT form one DISTINCT union (every
// node of its subtree DISTINCT), and the ALL unions after it take that as
// their first operand.
//
// Only chains of at least minBalancedUnion operands are rebuilt, so short
// unions are planned exactly as before. go-mysql-server gives a union's
// columns the type it derives pairwise, level by level (converting both
// sides when they differ); the balanced tree derives the same final type
// but groups the intermediate conversions differently, which can matter
// only when operands of one chain have different column types.
// INTERSECT and EXCEPT chains, a recursive CTE's own union (go-mysql-server
// splits it into its anchor and recursive parts) and unions with their own
// ORDER BY, LIMIT, INTO or locking clause inside the chain are left as
// they are.

// minBalancedUnion is the shortest chain (in operands) the hook rebuilds.
const minBalancedUnion = 32

// balanceUnions rebuilds stmt's long UNION chains in place.
func balanceUnions(stmt ast.Statement) {
	skip := map[*ast.SetOp]bool{} // the unions of recursive CTEs
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *ast.With:
			if x != nil && x.Recursive {
				for _, cte := range x.Ctes {
					if cte == nil || cte.AliasedTableExpr == nil {
						continue
					}
					// go-mysql-server splits the union's left spine into
					// its anchor and recursive parts: it stays a chain.
					if sq, ok := cte.AliasedTableExpr.Expr.(*ast.Subquery); ok {
						u, _ := sq.Select.(*ast.SetOp)
						for u != nil {
							skip[u] = true
							u, _ = u.Left.(*ast.SetOp)
						}
					}
				}
			}
		case *ast.SetOp:
			if x != nil && !skip[x] {
				balanceUnion(x)
			}
		case *ast.Explain:
			balanceUnions(x.Statement) // not walkable
		}
		return true, nil
	}, stmt)
}

// isUnion reports whether typ is a UNION, and whether it is UNION ALL.
func isUnion(typ string) (union, all bool) {
	switch typ {
	case ast.UnionStr, ast.UnionDistinctStr:
		return true, false
	case ast.UnionAllStr:
		return true, true
	}
	return false, false
}

// plainSetOp reports whether u carries nothing but its operands and type:
// an inner node of a chain the rebuild may regroup.
func plainSetOp(u *ast.SetOp) bool {
	return len(u.OrderBy) == 0 && u.With == nil && u.Limit == nil && u.Lock == "" && u.Into == nil
}

// balanceUnion rebuilds the chain of unions whose top is top, in place
// (top keeps its identity, ORDER BY, LIMIT and the rest).
func balanceUnion(top *ast.SetOp) {
	if ok, _ := isUnion(top.Type); !ok {
		return
	}
	// Collect the operands left to right, and each operation's type
	// (ops[i] joins operands[i+1] to what precedes it).
	var rev []ast.SelectStatement
	var revOps []string
	cur := top
	for {
		rev = append(rev, cur.Right)
		revOps = append(revOps, cur.Type)
		l, ok := cur.Left.(*ast.SetOp)
		if !ok || !plainSetOp(l) {
			rev = append(rev, cur.Left)
			break
		}
		if u, _ := isUnion(l.Type); !u {
			rev = append(rev, cur.Left)
			break
		}
		cur = l
	}
	if len(rev) < minBalancedUnion {
		return
	}
	n := len(rev)
	operands := make([]ast.SelectStatement, n)
	ops := make([]string, n-1)
	for i := range rev {
		operands[i] = rev[n-1-i]
	}
	for i := range revOps {
		ops[i] = revOps[n-2-i]
	}
	lastDistinct := -1 // index into ops
	for i, op := range ops {
		if _, all := isUnion(op); !all {
			lastDistinct = i
		}
	}
	var root *ast.SetOp
	if lastDistinct < 0 {
		root = balancedSetOp(operands, ast.UnionAllStr)
	} else {
		// operands[0..lastDistinct+1] form one DISTINCT union.
		d := operands[:lastDistinct+2]
		var head ast.SelectStatement = balancedSetOp(d, ops[lastDistinct])
		rest := operands[lastDistinct+2:]
		if len(rest) == 0 {
			root = head.(*ast.SetOp)
		} else {
			root = balancedSetOp(append([]ast.SelectStatement{head}, rest...), ast.UnionAllStr)
		}
	}
	top.Type, top.Left, top.Right = root.Type, root.Left, root.Right
}

// balancedSetOp joins operands (at least two) with typ into a tree of
// depth log2(len(operands)), in their order.
func balancedSetOp(operands []ast.SelectStatement, typ string) *ast.SetOp {
	mid := len(operands) / 2
	side := func(o []ast.SelectStatement) ast.SelectStatement {
		if len(o) == 1 {
			return o[0]
		}
		return balancedSetOp(o, typ)
	}
	return &ast.SetOp{Type: typ, Left: side(operands[:mid]), Right: side(operands[mid:])}
}

// mayHaveUnion is a cheap filter for texts that may hold a long union.
func mayHaveUnion(q string) bool {
	return len(q) > minBalancedUnion*12 && containsFold(q, "union")
}
