package sqlfront

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// Result column definitions of numbers and dates, as MySQL sends them
// (issue 30: `SELECT 1/0` was sent NOT NULL with collation 255, and the
// mysql CLI laid its table out wrong).
//
//   - A numeric, temporal, YEAR or BIT column has the binary collation (63)
//     and BINARY_FLAG, whatever the connection's character set;
//     go-mysql-server gave them the connection's (binaryFields).
//   - Division, DIV and MOD return NULL for a zero divisor, so their
//     result column is nullable; go-mysql-server marked it NOT NULL when
//     both operands were (nullableDivRule wraps them in the projection
//     that makes the result).

const binaryCollation = 63

// binaryFields sets the binary collation and flag of non-string fields.
func binaryFields(fields []*querypb.Field) {
	for _, f := range fields {
		switch f.Type {
		case querypb.Type_INT8, querypb.Type_UINT8, querypb.Type_INT16, querypb.Type_UINT16,
			querypb.Type_INT24, querypb.Type_UINT24, querypb.Type_INT32, querypb.Type_UINT32,
			querypb.Type_INT64, querypb.Type_UINT64, querypb.Type_FLOAT32, querypb.Type_FLOAT64,
			querypb.Type_DECIMAL, querypb.Type_YEAR, querypb.Type_BIT,
			querypb.Type_DATE, querypb.Type_TIME, querypb.Type_DATETIME, querypb.Type_TIMESTAMP:
			f.Charset = binaryCollation
			if f.Flags == 0 {
				// The protocol layer sends the type's own flags (UNSIGNED
				// for YEAR and BIT, ...) only when the field has none.
				_, def := sqltypes.TypeToMySQL(f.Type)
				f.Flags = uint32(def)
			}
			f.Flags |= uint32(querypb.MySqlFlag_BINARY_FLAG)
		}
	}
}

const nullableDivRuleID analyzer.RuleId = 1<<20 + 20

// nullableDivRule marks division, DIV and MOD in the result's projection
// nullable.
func nullableDivRule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	out, err := wrapTopProjection(n)
	if err != nil || out == nil {
		return n, transform.SameTree, err
	}
	return out, transform.NewTree, nil
}

// wrapTopProjection returns n with its topmost projection's divisions
// wrapped, or nil when nothing changed. It goes down through nodes with
// one child only: below a join the projection does not make the result.
func wrapTopProjection(n sql.Node) (sql.Node, error) {
	if p, ok := n.(*plan.Project); ok {
		exprs := make([]sql.Expression, len(p.Projections))
		changed := false
		for i, e := range p.Projections {
			exprs[i] = e
			// The whole projected expression is wrapped, not the division
			// inside it: go-mysql-server works out a division's scale from
			// the divisions around it.
			target := e
			alias, isAlias := e.(*expression.Alias)
			if isAlias {
				target = alias.Child
			}
			if target.IsNullable() || !hasDivision(target) {
				continue
			}
			var wrapped sql.Expression = &nullableResult{UnaryExpression: expression.UnaryExpression{Child: target}}
			if isAlias {
				out, err := alias.WithChildren(wrapped)
				if err != nil {
					return nil, err
				}
				wrapped = out
			}
			exprs[i], changed = wrapped, true
		}
		if !changed {
			return nil, nil
		}
		return p.WithExpressions(exprs...)
	}
	ch := n.Children()
	if len(ch) != 1 {
		return nil, nil
	}
	c, err := wrapTopProjection(ch[0])
	if err != nil || c == nil {
		return nil, err
	}
	return n.WithChildren(c)
}

// nullableResult is its child, nullable.
type nullableResult struct {
	expression.UnaryExpression
}

var _ sql.Expression = (*nullableResult)(nil)
var _ sql.CollationCoercible = (*nullableResult)(nil)

func (e *nullableResult) Type() sql.Type   { return e.Child.Type() }
func (e *nullableResult) IsNullable() bool { return true }
func (e *nullableResult) String() string   { return e.Child.String() }
func (e *nullableResult) DebugString() string {
	return fmt.Sprintf("nullable(%s)", sql.DebugString(e.Child))
}

func (e *nullableResult) Eval(ctx *sql.Context, row sql.Row) (interface{}, error) {
	return e.Child.Eval(ctx, row)
}

func (e *nullableResult) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(e, len(children), 1)
	}
	return &nullableResult{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}

func (e *nullableResult) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	if cc, ok := e.Child.(sql.CollationCoercible); ok {
		return cc.CollationCoercibility(ctx)
	}
	return sql.Collation_binary, 5
}

// decimalRounding adds MySQL's Note 1265 for each value of an inserted row
// that a DECIMAL column rounds (9.99 into DECIMAL(10,0) stores 10: "Data
// truncated for column 'x' at row N"); go-mysql-server rounded silently.
func decimalRounding(ctx *sql.Context, dest sql.Schema, vals sql.Row, row uint64) {
	for i, col := range dest {
		if i >= len(vals) || vals[i] == nil || !types.IsDecimal(col.Type) {
			continue
		}
		var d decimal.Decimal
		switch v := vals[i].(type) {
		case decimal.Decimal:
			d = v
		case float64:
			d = decimal.NewFromFloat(v)
		case float32:
			d = decimal.NewFromFloat32(v)
		case string:
			var err error
			if d, err = decimal.NewFromString(v); err != nil {
				continue
			}
		default:
			continue
		}
		scale := int32(col.Type.(sql.DecimalType).Scale())
		if d.Exponent() >= -scale || d.Equal(d.Round(scale)) {
			continue
		}
		w := &sql.Warning{Level: "Note", Code: 1265,
			Message: fmt.Sprintf("Data truncated for column '%s' at row %d", col.Name, row)}
		if s, ok := ctx.Session.(*Session); ok {
			s.BaseSession.Warn(w) // a Note: Session.Warn would raise 1265 to a Warning
		} else {
			ctx.Session.Warn(w)
		}
	}
}

// hasDivision reports whether e computes a division, DIV or MOD.
func hasDivision(e sql.Expression) bool {
	return transform.InspectExpr(e, func(e sql.Expression) bool {
		switch e.(type) {
		case *expression.Div, *expression.IntDiv, *expression.Mod:
			return true
		}
		return false
	})
}
