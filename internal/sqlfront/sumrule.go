package sqlfront

import (
	"math"
	"math/big"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/shopspring/decimal"
)

const sumDecimalRuleID analyzer.RuleId = 1<<20 + 10

// sumDecimalRule gives SUM over a DECIMAL column MySQL's result type.
// go-mysql-server sums DECIMAL values exactly (as decimals) but declares
// every SUM a DOUBLE, so the exact sum went out as a float: SUM over
// DECIMAL(10,2) showed 35.5 for MySQL's 35.50, and past 15 significant
// digits the float lost cents. MySQL's type for SUM(DECIMAL(M,D)) is
// DECIMAL(min(M+22, 65), D). The rule retypes the references to such a sum
// above the GroupBy that computes it; the value is the decimal the sum
// already is.
//
// SUM over integers: go-mysql-server sums them as floats (a DOUBLE, inexact
// past 2^53); MySQL's result is DECIMAL(digits+22, 0), exact. The rule
// first makes the SUM's argument a DECIMAL(digits, 0) (a CAST go-mysql-
// server sums exactly), then retypes it as above.
//
// AVG likewise: go-mysql-server averages DECIMALs exactly (to the
// argument's scale + 4) but declares a DOUBLE, and averages integers as
// floats; MySQL's AVG over DECIMAL(M,D) is DECIMAL(M+4, D+4), over an
// integer DECIMAL(digits+4, 4).
func sumDecimalRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if fe := frontendOf(ctx); fe != nil && fe.doubleIntAggs {
		return sumDecimalRetype(n, transform.SameTree)
	}
	n, same, err := transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		gb, ok := n.(*plan.GroupBy)
		if !ok {
			return n, transform.SameTree, nil
		}
		exprs := append([]sql.Expression(nil), gb.SelectedExprs...)
		changed := false
		for i, e := range exprs {
			agg, child, ok := exactAggregate(e)
			if !ok {
				continue
			}
			digits := intDigits(child.Type())
			if digits == 0 {
				continue
			}
			dt, err := types.CreateDecimalType(uint8(digits), 0)
			if err != nil {
				return nil, transform.SameTree, err
			}
			ns, err := agg.WithChildren(&intToDecimal{UnaryExpression: expression.UnaryExpression{Child: child}, typ: dt})
			if err != nil {
				return nil, transform.SameTree, err
			}
			exprs[i], changed = ns, true
		}
		if !changed {
			return n, transform.SameTree, nil
		}
		out, err := gb.WithExpressions(append(exprs, gb.GroupByExprs...)...)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return out, transform.NewTree, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	return sumDecimalRetype(n, same)
}

// sumDecimalRetype retypes the references to every SUM over a DECIMAL;
// same says whether n is the rule's input.
func sumDecimalRetype(n sql.Node, same transform.TreeIdentity) (sql.Node, transform.TreeIdentity, error) {
	sums := map[sql.ColumnId]sql.Type{}
	// A derived table's columns, by "alias.column": a sum the derived
	// table's own run of the rule retyped is still a DOUBLE in the
	// references to it from outside (a derived table joined to another
	// table showed 1.3 for 1.30).
	derived := map[string]sql.Type{}
	transform.Inspect(n, func(n sql.Node) bool {
		if sqa, ok := n.(*plan.SubqueryAlias); ok {
			for _, c := range sqa.Schema() {
				if _, ok := c.Type.(sql.DecimalType); ok {
					derived[strings.ToLower(sqa.Name()+"."+c.Name)] = c.Type
				}
			}
			return true
		}
		gb, ok := n.(*plan.GroupBy)
		if !ok {
			return true
		}
		for _, e := range gb.SelectedExprs {
			agg, child, ok := exactAggregate(e)
			if !ok {
				continue
			}
			dt, ok := child.Type().(sql.DecimalType)
			if !ok {
				continue
			}
			// MySQL: SUM adds 22 digits of precision; AVG adds 4 digits of
			// precision and of scale (div_precision_increment).
			prec, scale := min(int(dt.Precision())+22, 65), dt.Scale()
			if _, isAvg := agg.(*aggregation.Avg); isAvg {
				prec, scale = min(int(dt.Precision())+4, 65), min(dt.Scale()+4, 30)
			}
			t, err := types.CreateDecimalType(uint8(prec), scale)
			if err != nil {
				continue
			}
			sums[agg.(sql.IdExpression).Id()] = t
		}
		return true
	})
	if len(sums) == 0 && len(derived) == 0 {
		return n, same, nil
	}
	out, retyped, err := transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		gf, ok := e.(*expression.GetField)
		if !ok {
			return e, transform.SameTree, nil
		}
		t, ok := sums[gf.Id()]
		if !ok {
			t, ok = derived[strings.ToLower(gf.Table()+"."+gf.Name())]
		}
		if !ok || !types.IsFloat(gf.Type()) {
			return e, transform.SameTree, nil
		}
		nf := expression.NewGetFieldWithTable(gf.Index(), int(gf.TableId()), t, gf.Database(), gf.Table(), gf.Name(), gf.IsNullable())
		return nf.WithId(gf.Id()).(*expression.GetField), transform.NewTree, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	if same == transform.NewTree {
		retyped = transform.NewTree
	}
	return out, retyped, nil
}

// exactAggregate returns e and its argument if e is a SUM or an AVG (not a
// window function): the aggregates MySQL computes exactly, as DECIMALs,
// over exact arguments.
func exactAggregate(e sql.Expression) (sql.Expression, sql.Expression, bool) {
	switch a := e.(type) {
	case *aggregation.Sum:
		if a.Window() == nil {
			return a, a.Child, true
		}
	case *aggregation.Avg:
		if a.Window() == nil {
			return a, a.Child, true
		}
	}
	return nil, nil, false
}

// intDigits is the number of decimal digits an integer type's values can
// have (MySQL's precision for SUM over it is this + 22); 0 for other types.
func intDigits(t sql.Type) int {
	if !types.IsInteger(t) {
		return 0
	}
	switch t.Type() {
	case query.Type_INT8, query.Type_UINT8:
		return 3
	case query.Type_INT16, query.Type_UINT16:
		return 5
	case query.Type_INT24, query.Type_UINT24:
		return 8
	case query.Type_INT32, query.Type_UINT32:
		return 10
	case query.Type_INT64:
		return 19
	case query.Type_UINT64:
		return 20
	}
	return 0
}

// intToDecimal is an integer value as a DECIMAL(digits, 0) (go-mysql-
// server's CAST AS DECIMAL without a scale is DECIMAL(65,30)).
type intToDecimal struct {
	expression.UnaryExpression
	typ sql.DecimalType
}

var _ sql.Expression = (*intToDecimal)(nil)

func (e *intToDecimal) Type() sql.Type   { return e.typ }
func (e *intToDecimal) String() string   { return e.Child.String() }
func (e *intToDecimal) IsNullable() bool { return e.Child.IsNullable() }

func (e *intToDecimal) Eval(ctx *sql.Context, row sql.Row) (interface{}, error) {
	v, err := e.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	if d, ok := intAsDecimal(v); ok {
		return d, nil
	}
	d, _, err := e.typ.Convert(ctx, v)
	return d, err
}

// intAsDecimal is an integer value (any Go integer type, BIGINT UNSIGNED
// past 2^63-1 included; see intValue) as an exact decimal.
func intAsDecimal(v interface{}) (decimal.Decimal, bool) {
	neg, mag, _, ok := intValue(v)
	if !ok {
		return decimal.Decimal{}, false
	}
	if mag <= math.MaxInt64 {
		n := int64(mag)
		if neg {
			n = -n
		}
		return decimal.NewFromInt(n), true
	}
	b := new(big.Int).SetUint64(mag)
	if neg {
		b.Neg(b)
	}
	return decimal.NewFromBigInt(b, 0), true
}

func (e *intToDecimal) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(e, len(children), 1)
	}
	return &intToDecimal{UnaryExpression: expression.UnaryExpression{Child: children[0]}, typ: e.typ}, nil
}
