package sqlfront

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// TRUNCATE(X, D): X cut (toward zero, never rounded) to D decimal places,
// or to a multiple of 10^-D for a negative D. go-mysql-server has no such
// function (the differential tests found 1105 "function: 'truncate' not
// found"). The result keeps X's type as MySQL's does: an integer stays an
// integer, a DECIMAL a DECIMAL, a float a DOUBLE; a string is a DOUBLE.

type truncateFunc struct {
	expression.BinaryExpressionStub
	typ sql.Type // from the children, set once by newTruncate
}

var _ sql.FunctionExpression = (*truncateFunc)(nil)

func newTruncate(x, d sql.Expression) sql.Expression {
	return &truncateFunc{BinaryExpressionStub: expression.BinaryExpressionStub{LeftChild: x, RightChild: d}, typ: truncateType(x, d)}
}

func (t *truncateFunc) FunctionName() string { return "truncate" }
func (t *truncateFunc) Description() string {
	return "truncates X to D decimal places."
}
func (t *truncateFunc) String() string {
	return fmt.Sprintf("truncate(%s, %s)", t.LeftChild, t.RightChild)
}

func (t *truncateFunc) Type() sql.Type { return t.typ }

func truncateType(x, d sql.Expression) sql.Type {
	xt := x.Type()
	if dt, ok := xt.(sql.DecimalType); ok {
		// A constant D gives the result D decimals (DECIMAL(20,4) cut to
		// 2 places is DECIMAL(18,2)), as MySQL types it.
		if lit, ok := d.(*expression.Literal); ok {
			if v, _, err := types.Int64.Convert(sql.NewEmptyContext(), lit.Value()); err == nil {
				if d := v.(int64); d >= 0 && d < int64(dt.Scale()) {
					prec := int64(dt.Precision()) - int64(dt.Scale()) + d
					if out, err := types.CreateDecimalType(uint8(max(prec, 1)), uint8(d)); err == nil {
						return out
					}
				}
			}
		}
		return xt
	}
	if types.IsInteger(xt) {
		return xt
	}
	return types.Float64
}

func (t *truncateFunc) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(t, len(children), 2)
	}
	return newTruncate(children[0], children[1]), nil
}

func (t *truncateFunc) Eval(ctx *sql.Context, row sql.Row) (interface{}, error) {
	x, err := t.LeftChild.Eval(ctx, row)
	if err != nil || x == nil {
		return nil, err
	}
	d, err := t.RightChild.Eval(ctx, row)
	if err != nil || d == nil {
		return nil, err
	}
	dv, _, err := types.Int64.Convert(ctx, d)
	if err != nil {
		return nil, err
	}
	places := dv.(int64)
	places = max(min(places, types.DecimalTypeMaxScale), -types.DecimalTypeMaxPrecision)
	xv, _, err := types.MustCreateDecimalType(types.DecimalTypeMaxPrecision, types.DecimalTypeMaxScale).Convert(ctx, x)
	if err != nil {
		return nil, err
	}
	var cut decimal.Decimal
	if places >= 0 {
		cut = xv.(decimal.Decimal).Truncate(int32(places))
	} else {
		cut = xv.(decimal.Decimal).Shift(int32(places)).Truncate(0).Shift(int32(-places))
	}
	out, _, err := t.typ.Convert(ctx, cut)
	return out, err
}
