package sqlfront

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

const sumDecimalRuleID analyzer.RuleId = 1<<20 + 10

// sumDecimalRule gives SUM over a DECIMAL column MySQL's result type.
// go-mysql-server sums DECIMAL values exactly (as decimals) but declares
// every SUM a DOUBLE, so the exact sum went out as a float: SUM over
// DECIMAL(10,2) showed 35.5 for MySQL's 35.50, and past 15 significant
// digits the float lost cents. MySQL's type for SUM(DECIMAL(M,D)) is
// DECIMAL(min(M+22, 65), D). The rule retypes the references to such a sum
// above the GroupBy that computes it; the value is the decimal the sum
// already is. SUM over integers stays as go-mysql-server has it (it sums
// them as floats; MySQL: DECIMAL — a known difference, docs/sqlfront.md).
func sumDecimalRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	sums := map[sql.ColumnId]sql.Type{}
	transform.Inspect(n, func(n sql.Node) bool {
		gb, ok := n.(*plan.GroupBy)
		if !ok {
			return true
		}
		for _, e := range gb.SelectedExprs {
			s, ok := e.(*aggregation.Sum)
			if !ok || s.Window() != nil {
				continue
			}
			dt, ok := s.Child.Type().(sql.DecimalType)
			if !ok {
				continue
			}
			prec := min(int(dt.Precision())+22, 65)
			t, err := types.CreateDecimalType(uint8(prec), dt.Scale())
			if err != nil {
				continue
			}
			sums[s.Id()] = t
		}
		return true
	})
	if len(sums) == 0 {
		return n, transform.SameTree, nil
	}
	return transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		gf, ok := e.(*expression.GetField)
		if !ok {
			return e, transform.SameTree, nil
		}
		t, ok := sums[gf.Id()]
		if !ok || !types.IsFloat(gf.Type()) {
			return e, transform.SameTree, nil
		}
		nf := expression.NewGetFieldWithTable(gf.Index(), int(gf.TableId()), t, gf.Database(), gf.Table(), gf.Name(), gf.IsNullable())
		return nf.WithId(gf.Id()).(*expression.GetField), transform.NewTree, nil
	})
}
