package sqlfront

import (
	"fmt"
	"math"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"
)

// The bitwise inversion operator, ~X.
//
// go-mysql-server parses ~X and then refuses it ("unsupported feature:
// unary operator: ~"); mysqltuner's first query is SELECT ~0. The parser
// hook rewrites each ~X into +bitNotName(X) — unary plus is a no-op the
// planner knows, and keeps the node's place in the tree, so no parent has
// to be found — and bitNotName is registered as a function. The column is
// still named as written (~0): go-mysql-server names columns from the
// statement's text.
//
// As in MySQL, X is taken as a 64-bit integer: a negative one in two's
// complement, a DECIMAL, a float or a string (read as a number) rounded
// to the nearest integer, and the result is a BIGINT UNSIGNED; ~NULL is
// NULL. (MySQL 8 inverts a binary string — a BINARY column or x'..'
// literal — byte by byte into a binary string; here it is read as a
// number, as MariaDB does.)

const bitNotName = "lockstep_bit_not"

// rewriteBitNot turns stmt's ~X operators into bitNotName calls in place.
func rewriteBitNot(stmt ast.Statement) {
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *ast.UnaryExpr:
			if x.Operator == ast.TildaStr {
				x.Operator = ast.PlusStr
				x.Expr = &ast.FuncExpr{Name: ast.NewColIdent(bitNotName), Exprs: ast.SelectExprs{&ast.AliasedExpr{Expr: x.Expr}}}
			}
		case *ast.Explain: // not walked into
			rewriteBitNot(x.Statement)
		}
		return true, nil
	}, stmt)
}

// mayHaveBitNot is a cheap filter: only a text with a tilde can hold one.
func mayHaveBitNot(q string) bool { return strings.IndexByte(q, '~') >= 0 }

type bitNot struct {
	expression.UnaryExpression
}

var _ sql.FunctionExpression = (*bitNot)(nil)

func newBitNot(x sql.Expression) sql.Expression {
	return &bitNot{UnaryExpression: expression.UnaryExpression{Child: x}}
}

func (b *bitNot) FunctionName() string { return bitNotName }
func (b *bitNot) Description() string  { return "inverts the bits of X (the ~ operator)." }
func (b *bitNot) String() string       { return fmt.Sprintf("~%s", b.Child) }
func (b *bitNot) Type() sql.Type       { return types.Uint64 }

func (b *bitNot) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(b, len(children), 1)
	}
	return newBitNot(children[0]), nil
}

func (b *bitNot) Eval(ctx *sql.Context, row sql.Row) (interface{}, error) {
	v, err := b.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	u, err := bitOperand(ctx, v)
	if err != nil {
		return nil, err
	}
	return ^u, nil
}

// bitOperand is v as the 64 bits a MySQL bit operation works on: an
// integer in two's complement (intValue, intarith.go), other numbers and
// strings rounded.
func bitOperand(ctx *sql.Context, v interface{}) (uint64, error) {
	if neg, mag, _, ok := intValue(v); ok {
		if neg {
			return -mag, nil // two's complement
		}
		return mag, nil
	}
	switch x := v.(type) {
	case float32:
		return floatBits(float64(x)), nil
	case float64:
		return floatBits(x), nil
	case decimal.Decimal:
		return decimalBits(x), nil
	}
	f, _, err := types.Float64.Convert(ctx, v)
	if err != nil {
		return 0, err
	}
	return floatBits(f.(float64)), nil
}

// floatBits rounds f to an integer (half away from zero), saturating at
// the ends of the signed and unsigned 64-bit ranges.
func floatBits(f float64) uint64 {
	f = math.Round(f)
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxUint64:
		return math.MaxUint64
	case f >= 0:
		return uint64(f)
	case f <= math.MinInt64:
		return 1 << 63
	}
	return uint64(int64(f))
}

var maxUint64Dec = decimal.RequireFromString("18446744073709551615")

// decimalBits is floatBits for a DECIMAL, exact over the whole range.
func decimalBits(d decimal.Decimal) uint64 {
	d = d.Round(0)
	switch {
	case d.GreaterThanOrEqual(maxUint64Dec):
		return math.MaxUint64
	case d.Sign() >= 0:
		return d.BigInt().Uint64()
	case d.LessThan(decimal.NewFromInt(math.MinInt64)):
		return 1 << 63
	}
	return uint64(d.IntPart())
}
