package sqlfront

import (
	"math"
	"math/bits"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// Integer arithmetic with an unsigned operand. In MySQL, +, - and * of two
// integers are BIGINT UNSIGNED when either is unsigned, and a result
// outside 0..2^64-1 is error 1690 ("BIGINT UNSIGNED value is out of
// range"). go-mysql-server computed a signed and an unsigned operand as
// BIGINT: a value past 2^63-1 was clamped to it first and the sum wrapped,
// so `big + 1` for big = 18446744073709551610 gave -9223372036854775808
// and `big + 0` gave 9223372036854775807; two unsigned operands wrapped
// around 2^64 silently; and two signed BIGINTs wrapped around too.
// intArithRule replaces every integer +, - and * with intArith,
// which computes the exact result or fails as MySQL does.
//
// Negation of an unsigned integer likewise: go-mysql-server negated it in
// the signed type of its width, so -v of a TINYINT UNSIGNED 200 was 56 and
// of a BIGINT UNSIGNED 18446744073709551610 was 6. MySQL's -v is a BIGINT,
// and 1690 when v is past 2^63 (intNeg).

const intArithRuleID analyzer.RuleId = 1<<20 + 12

var intArithRule = exprRule(intArithExpr)

// exprRule is an analyzer rule that rewrites every expression of the plan
// with f.
func exprRule(f func(sql.Expression) (sql.Expression, transform.TreeIdentity, error)) analyzer.RuleFunc {
	return func(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		return transform.NodeExprs(n, f)
	}
}

// intArithExpr replaces an integer +, - or * by intArith. An operand
// whose type is deferred (a prepared statement's parameter) may be an
// integer: intArith decides by the values it gets.
func intArithExpr(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	if m, ok := e.(*expression.UnaryMinus); ok && types.IsUnsigned(m.Child.Type()) {
		return &intNeg{UnaryMinus: m}, transform.NewTree, nil
	}
	a, ok := e.(*expression.Arithmetic)
	if !ok {
		return e, transform.SameTree, nil
	}
	switch a.Op {
	case "+", "-", "*":
	default:
		return e, transform.SameTree, nil
	}
	lt, rt := a.Left().Type(), a.Right().Type()
	intOrParam := func(t sql.Type) bool { return types.IsInteger(t) || types.IsDeferredType(t) }
	if !intOrParam(lt) || !intOrParam(rt) || (types.IsDeferredType(lt) && types.IsDeferredType(rt)) {
		return e, transform.SameTree, nil
	}
	return &intArith{Arithmetic: a}, transform.NewTree, nil
}

// intArith is an integer +, - or *: BIGINT UNSIGNED when an operand is
// unsigned, BIGINT otherwise, and error 1690 when the exact result does
// not fit, as in MySQL. Values that are not integers (a parameter bound
// to a string or a float) are go-mysql-server's to compute.
type intArith struct {
	*expression.Arithmetic
}

func (a *intArith) unsignedType() bool {
	return types.IsUnsigned(a.Left().Type()) || types.IsUnsigned(a.Right().Type())
}

func (a *intArith) Type() sql.Type {
	lt, rt := a.Left().Type(), a.Right().Type()
	switch {
	case types.IsDeferredType(lt) || types.IsDeferredType(rt):
		return a.Arithmetic.Type()
	case a.unsignedType():
		return types.Uint64
	}
	return types.Int64
}

func (a *intArith) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	e, err := a.Arithmetic.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	if x, ok := e.(*expression.Arithmetic); ok {
		return &intArith{Arithmetic: x}, nil
	}
	return e, nil
}

func (a *intArith) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	lv, err := a.Left().Eval(ctx, row)
	if err != nil || lv == nil {
		return nil, err
	}
	rv, err := a.Right().Eval(ctx, row)
	if err != nil || rv == nil {
		return nil, err
	}
	ln, lm, lu, lok := intValue(lv)
	rn, rm, ru, rok := intValue(rv)
	if !lok || !rok {
		return a.Arithmetic.Eval(ctx, row) // a parameter bound to a non-integer
	}
	neg, mag, over := exactArith(a.Op, ln, lm, rn, rm)
	if a.unsignedType() || lu || ru {
		if over || neg {
			return nil, mysql.NewSQLError(1690, "22003", "BIGINT UNSIGNED value is out of range in '%s'", a.String())
		}
		return mag, nil
	}
	if over || (!neg && mag > math.MaxInt64) || (neg && mag > 1<<63) {
		return nil, mysql.NewSQLError(1690, "22003", "BIGINT value is out of range in '%s'", a.String())
	}
	if neg {
		return -int64(mag), nil // 1<<63 converts to math.MinInt64, its own negation
	}
	return int64(mag), nil
}

// exactArith computes l op r (op +, - or *) on sign-and-magnitude integers;
// over reports a magnitude past 2^64-1. A zero result is not negative.
func exactArith(op string, ln bool, lm uint64, rn bool, rm uint64) (neg bool, mag uint64, over bool) {
	if op == "*" {
		hi, lo := bits.Mul64(lm, rm)
		return ln != rn && lo != 0, lo, hi != 0
	}
	if op == "-" {
		rn = !rn
	}
	switch {
	case ln == rn:
		sum, carry := bits.Add64(lm, rm, 0)
		return ln && sum != 0, sum, carry != 0
	case lm >= rm:
		return ln && lm != rm, lm - rm, false
	default:
		return rn, rm - lm, false
	}
}

// intValue splits an integer value into its sign and magnitude; unsigned
// reports a Go unsigned type (a BIGINT UNSIGNED parameter past 2^63-1).
func intValue(v any) (neg bool, mag uint64, unsigned, ok bool) {
	var i int64
	switch x := v.(type) {
	case uint64:
		return false, x, true, true
	case uint32:
		return false, uint64(x), true, true
	case uint16:
		return false, uint64(x), true, true
	case uint8:
		return false, uint64(x), true, true
	case uint:
		return false, uint64(x), true, true
	case int64:
		i = x
	case int32:
		i = int64(x)
	case int16:
		i = int64(x)
	case int8:
		i = int64(x)
	case int:
		i = int64(x)
	case bool:
		if x {
			return false, 1, false, true
		}
		return false, 0, false, true
	default:
		return false, 0, false, false
	}
	if i < 0 {
		return true, uint64(-(i + 1)) + 1, false, true
	}
	return false, uint64(i), false, true
}

// intNeg is -v of an unsigned integer v: a BIGINT, error 1690 when v is
// past 2^63 (-2^63 is the last BIGINT).
type intNeg struct {
	*expression.UnaryMinus
}

func (n *intNeg) Type() sql.Type { return types.Int64 }

func (n *intNeg) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	e, err := n.UnaryMinus.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	if m, ok := e.(*expression.UnaryMinus); ok {
		return &intNeg{UnaryMinus: m}, nil
	}
	return e, nil
}

func (n *intNeg) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := n.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	neg, mag, _, ok := intValue(v)
	if !ok {
		return n.UnaryMinus.Eval(ctx, row)
	}
	if neg { // not from an unsigned column, but a value is a value
		if mag > math.MaxInt64 {
			return nil, mysql.NewSQLError(1690, "22003", "BIGINT value is out of range in '%s'", n.String())
		}
		return int64(mag), nil
	}
	if mag > 1<<63 {
		return nil, mysql.NewSQLError(1690, "22003", "BIGINT value is out of range in '%s'", n.String())
	}
	return -int64(mag), nil // 1<<63 converts to math.MinInt64, its own negation
}
