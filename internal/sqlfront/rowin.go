package sqlfront

import (
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Row constructor IN lists.
//
// go-mysql-server plans `(a, b) IN ((1, 2), (3, 4))` as a filter over a full
// table scan, and a locking read locks what it scans: the statement shapes
// TPC-C drivers send (`SELECT ... FROM stock WHERE (s_w_id, s_i_id) IN
// (...) FOR UPDATE`, `DELETE FROM new_order WHERE (no_w_id, no_d_id,
// no_o_id) IN (...)`) then read and lock whole tables. It does plan an OR
// of key equalities as a list of index point ranges. So the parser rewrites
// such an IN list (in WHERE and HAVING clauses and select lists) into the
// equivalent
//
//	(a = 1 AND b = 2) OR (a = 3 AND b = 4)
//
// MySQL defines a row comparison (a, b) = (x, y) as a = x AND b = y and
// `IN` as the OR of the comparisons, under the same three-valued logic, so
// the result is the same in every context, NULLs included. The rewrite
// applies only when every element on both sides is pure — columns,
// constants, parameter markers and operators over them, nothing that may
// give a different value or have an effect when evaluated more often (a
// function call, a subquery, a variable) — and to lists of at most
// maxRowInTuples rows.
//
// go-mysql-server's own row IN (kept for what is not rewritten) differs
// from MySQL: it finds (NULL, 'c') in a list holding (NULL, 'c'), and
// 3 in (2.5) (measured against MariaDB 10.11; TestRowInResults).

// maxRowInTuples bounds the rewrite: longer lists stay as they are.
const maxRowInTuples = 1000

// expandRowIn rewrites the row constructor IN lists of stmt's WHERE and
// HAVING clauses in place.
func expandRowIn(stmt ast.Statement) {
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *ast.Where:
			if x != nil && x.Expr != nil {
				x.Expr = rewriteRowIn(x.Expr)
			}
		case *ast.AliasedExpr: // a select list item
			if x != nil && x.Expr != nil {
				x.Expr = rewriteRowIn(x.Expr)
			}
		case *ast.Explain:
			// Not walkable: EXPLAIN must show the plan the statement gets.
			expandRowIn(x.Statement)
		}
		return true, nil
	}, stmt)
}

// rewriteRowIn rewrites e's row IN lists reachable through AND, OR, NOT,
// IS [NOT] TRUE/FALSE/NULL and parentheses.
func rewriteRowIn(e ast.Expr) ast.Expr {
	switch x := e.(type) {
	case *ast.AndExpr:
		x.Left, x.Right = rewriteRowIn(x.Left), rewriteRowIn(x.Right)
	case *ast.OrExpr:
		x.Left, x.Right = rewriteRowIn(x.Left), rewriteRowIn(x.Right)
	case *ast.ParenExpr:
		x.Expr = rewriteRowIn(x.Expr)
	case *ast.NotExpr:
		x.Expr = rewriteRowIn(x.Expr)
	case *ast.IsExpr:
		x.Expr = rewriteRowIn(x.Expr)
	case *ast.ComparisonExpr:
		if or := rowInAsOr(x); or != nil {
			return or
		}
	}
	return e
}

// rowInAsOr returns the OR of equalities equivalent to c, or nil when c is
// not a row IN list the rewrite applies to.
func rowInAsOr(c *ast.ComparisonExpr) ast.Expr {
	if c.Operator != ast.InStr {
		return nil
	}
	left, ok := c.Left.(ast.ValTuple)
	if !ok || len(left) < 2 {
		return nil
	}
	right, ok := c.Right.(ast.ValTuple)
	if !ok || len(right) == 0 || len(right) > maxRowInTuples {
		return nil
	}
	for _, l := range left {
		if !isPure(l) {
			return nil
		}
	}
	for _, r := range right {
		row, ok := r.(ast.ValTuple)
		if !ok || len(row) != len(left) {
			return nil
		}
		for _, v := range row {
			if !isPure(v) {
				return nil
			}
		}
	}
	var or ast.Expr
	for _, r := range right {
		row := r.(ast.ValTuple)
		var and ast.Expr
		for i, col := range left {
			eq := &ast.ComparisonExpr{Operator: ast.EqualStr, Left: col, Right: row[i]}
			if and == nil {
				and = eq
			} else {
				and = &ast.AndExpr{Left: and, Right: eq}
			}
		}
		and = &ast.ParenExpr{Expr: and}
		if or == nil {
			or = and
		} else {
			or = &ast.OrExpr{Left: or, Right: and}
		}
	}
	return &ast.ParenExpr{Expr: or}
}

// isPure reports a column, a literal, NULL, TRUE/FALSE, a parameter marker,
// or a unary or binary operator or parentheses over those.
func isPure(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.ColName, *ast.SQLVal, *ast.NullVal, ast.BoolVal:
		return true
	case *ast.UnaryExpr:
		return isPure(x.Expr)
	case *ast.ParenExpr:
		return isPure(x.Expr)
	case *ast.BinaryExpr:
		return isPure(x.Left) && isPure(x.Right)
	}
	return false
}

// mayHaveRowIn is a cheap filter on the query text: a row IN list needs a
// ')' followed by IN and '(' (any white space between).
func mayHaveRowIn(q string) bool {
	for i := 0; i < len(q); i++ {
		if q[i] != ')' {
			continue
		}
		j := skipSpace(q, i+1)
		if j+2 > len(q) || (q[j]|0x20) != 'i' || (q[j+1]|0x20) != 'n' {
			continue
		}
		if k := skipSpace(q, j+2); k < len(q) && q[k] == '(' {
			return true
		}
	}
	return false
}

func skipSpace(q string, i int) int {
	for i < len(q) && (q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r') {
		i++
	}
	return i
}
