package sqlfront

import (
	"context"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"lockstep/internal/storage"
)

// Residual filters: conditions of a prefix read (fast_prefix.go) or an
// aggregate over one (fast_agg.go) that the index does not answer —
// sysbench-tpcc's Stock-Level, `SELECT count(*) FROM stock WHERE s_w_id = ?
// AND s_i_id = ? AND s_quantity < ?`, a whole-key read and a comparison on a
// column outside the key.
//
// A residual is `col op ?` (op one of =, <, <=, >, >=; either side may be
// the marker) on an integer or DECIMAL column that no index of the table
// contains, so go-mysql-server cannot read it as an index range either: it
// reads the same prefix and filters each row. The fast path evaluates the
// filter with go-mysql-server's own comparison expression over a GetField
// of the column's type and a literal typed as go-mysql-server's planner
// types the bound value (vitess ExprFromValue, planbuilder ConvertVal: an
// integer as the smallest of TINYINT .. BIGINT UNSIGNED that holds it, a
// number with a point as DECIMAL(p, s)), so the comparison — its type
// conversions, rounding and NULL — is go-mysql-server's. A bound value of
// another kind (a string, a double, a decimal with an exponent) hands the
// statement to go-mysql-server, and so does NULL in a locking read (no row
// matches, but which rows get locked would depend on whether its planner
// folds the condition away).

// residual is one filter term: column ord compared by op with bind
// variable param (the column on the left).
type residual struct {
	ord   int
	op    string
	param string
}

// residualOps are the comparison operators a residual takes.
func residualOp(op string) bool {
	switch op {
	case ast.EqualStr, ast.LessThanStr, ast.LessEqualStr, ast.GreaterThanStr, ast.GreaterEqualStr:
		return true
	}
	return false
}

// splitWhere walks a conjunction into equalities with markers on indexed
// columns (eqs: column ordinal -> bind variable name) and residual
// comparisons on columns no index contains. ok is false for any other term,
// a column named twice by equalities, or a residual on a column type the
// fast path does not filter.
func splitWhere(where ast.Expr, m *tableMeta, qualifierOK func(ast.TableName) bool) (eqs map[int]string, res []residual, ok bool) {
	eqs = map[int]string{}
	for _, c := range conjuncts(where, nil) {
		x, isCmp := c.(*ast.ComparisonExpr)
		if !isCmp || x.Escape != nil || !residualOp(x.Operator) {
			return nil, nil, false
		}
		col, isCol := x.Left.(*ast.ColName)
		other, op := x.Right, x.Operator
		if !isCol {
			col, isCol = x.Right.(*ast.ColName)
			other, op = x.Left, flipOp(op)
		}
		name, isParam := paramName(other)
		if !isCol || !isParam || !qualifierOK(col.Qualifier) {
			return nil, nil, false
		}
		ord := m.colIndex(col.Name.String())
		if ord < 0 {
			return nil, nil, false
		}
		if m.indexed(ord) {
			if _, dup := eqs[ord]; dup || op != ast.EqualStr {
				return nil, nil, false
			}
			eqs[ord] = name
			continue
		}
		if !residualType(m.schema.Schema[ord].Type) {
			return nil, nil, false
		}
		res = append(res, residual{ord: ord, op: op, param: name})
	}
	return eqs, res, true
}

// residualType reports the column types a residual filters: integers and
// DECIMAL.
func residualType(t sql.Type) bool {
	return types.IsInteger(t) || types.IsDecimal(t)
}

// indexed reports whether column ord is part of the primary key or of a
// secondary index.
func (m *tableMeta) indexed(ord int) bool {
	if m.isPKColumn(ord) {
		return true
	}
	for i := range m.indexes {
		for _, kc := range m.indexes[i].codec.cols {
			if kc.ord == ord {
				return true
			}
		}
	}
	return false
}

// residualFilter is a plan's residuals bound to one execution's values.
type residualFilter struct {
	exprs []sql.Expression
	n     int // columns to decode
}

// bindResiduals builds the comparisons of res with the bound values; ok is
// false when a value is not one the fast path compares, or is NULL while
// locking reads.
func bindResiduals(m *tableMeta, res []residual, bind map[string]*querypb.BindVariable, locking bool) (*residualFilter, bool) {
	if len(res) == 0 {
		return nil, true
	}
	f := &residualFilter{exprs: make([]sql.Expression, 0, len(res))}
	for _, r := range res {
		lit, ok := boundLiteral(bind[r.param])
		if !ok || (locking && lit.Value() == nil) {
			return nil, false
		}
		col := m.schema.Schema[r.ord]
		gf := expression.NewGetField(r.ord, col.Type, col.Name, col.Nullable)
		var e sql.Expression
		switch r.op {
		case ast.EqualStr:
			e = expression.NewEquals(gf, lit)
		case ast.LessThanStr:
			e = expression.NewLessThan(gf, lit)
		case ast.LessEqualStr:
			e = expression.NewLessThanOrEqual(gf, lit)
		case ast.GreaterThanStr:
			e = expression.NewGreaterThan(gf, lit)
		default:
			e = expression.NewGreaterThanOrEqual(gf, lit)
		}
		f.exprs = append(f.exprs, e)
		f.n = max(f.n, r.ord+1)
	}
	return f, true
}

// boundLiteral returns the literal go-mysql-server's planner makes of a
// bound integer or plain decimal value (or NULL); ok is false for any
// other value.
func boundLiteral(bv *querypb.BindVariable) (*expression.Literal, bool) {
	if bv == nil {
		return nil, false
	}
	switch {
	case bv.Type == querypb.Type_NULL_TYPE:
		return expression.NewLiteral(nil, types.Null), true
	case sqltypes.IsIntegral(bv.Type):
		return intLiteral(string(bv.Value))
	case bv.Type == querypb.Type_DECIMAL:
		s := string(bv.Value)
		if strings.ContainsAny(s, "eE") {
			return nil, false // a DOUBLE to the planner
		}
		if strings.Count(s, ".") != 1 {
			return intLiteral(s)
		}
		p, sc := expression.GetDecimalPrecisionAndScale(strings.ToLower(s))
		dt, err := types.CreateDecimalType(p, sc)
		if err != nil {
			return nil, false
		}
		d, _, err := dt.Convert(context.Background(), s)
		if err != nil {
			return nil, false
		}
		return expression.NewLiteral(d, dt), true
	}
	return nil, false
}

// intLiteral types an integer's text as go-mysql-server's planner does:
// the first of TINYINT, TINYINT UNSIGNED, SMALLINT, ..., BIGINT UNSIGNED
// that holds it.
func intLiteral(s string) (*expression.Literal, bool) {
	if n, err := strconv.ParseInt(s, 10, 8); err == nil {
		return expression.NewLiteral(int8(n), types.Int8), true
	}
	if n, err := strconv.ParseUint(s, 10, 8); err == nil {
		return expression.NewLiteral(uint8(n), types.Uint8), true
	}
	if n, err := strconv.ParseInt(s, 10, 16); err == nil {
		return expression.NewLiteral(int16(n), types.Int16), true
	}
	if n, err := strconv.ParseUint(s, 10, 16); err == nil {
		return expression.NewLiteral(uint16(n), types.Uint16), true
	}
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		return expression.NewLiteral(int32(n), types.Int32), true
	}
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return expression.NewLiteral(uint32(n), types.Uint32), true
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return expression.NewLiteral(n, types.Int64), true
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return expression.NewLiteral(n, types.Uint64), true
	}
	return nil, false
}

// next returns the next row of cur that passes f — every row when f is
// nil — with ok false at the end.
func (f *residualFilter) next(ctx *sql.Context, cur *storage.Cursor) (stored []byte, ok bool, err error) {
	for {
		_, stored, ok, err := cur.Next()
		if err != nil || !ok || f == nil {
			return stored, ok, err
		}
		pass, err := f.passes(ctx, stored)
		if err != nil {
			return nil, false, err
		}
		if pass {
			return stored, true, nil
		}
	}
}

// passes decodes a stored row's leading columns and evaluates the filter
// on them: true when every comparison is true (NULL is not). An error or a
// warning from the evaluation hands the statement to go-mysql-server.
func (f *residualFilter) passes(ctx *sql.Context, stored []byte) (bool, error) {
	row, err := decodeRow(stored, f.n)
	if err != nil {
		return false, err
	}
	before := ctx.Session.WarningCount()
	for _, e := range f.exprs {
		v, err := e.Eval(ctx, row)
		if err != nil || ctx.Session.WarningCount() != before {
			return false, errFastFallback
		}
		if v != true {
			return false, nil
		}
	}
	return true, nil
}
