package sqlfront

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/proto"

	"lockstep/internal/storage"
)

// Aggregates over an index prefix:
//
//	SELECT COUNT(*) | COUNT(col) | MIN(col) | MAX(col) FROM t WHERE k1 = ? AND ... AND kn = ?
//
// with k1..kn the leading columns of the primary key or a secondary index
// (fast_prefix.go), and for MIN and MAX col the index column right after
// them (or one of them). COUNT(*) counts the rows of the prefix, and so
// does COUNT(col) of a NOT NULL column (sysbench-tpcc's `SELECT count(c_id)
// ... WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?`); MIN reads
// the prefix forwards and MAX backwards, stopping at the first row whose
// col is not NULL — one row read where go-mysql-server reads the whole
// prefix. No ORDER BY, LIMIT, DISTINCT or locking clause (go-mysql-server
// runs those). MIN and MAX take integer, decimal, float and temporal
// columns only: for strings, values equal under a collation ('a', 'A')
// make "the" minimum depend on which row comes first, and the two paths
// read in different orders.

// aggKind is an aggregate a fast plan computes.
type aggKind uint8

const (
	aggCount aggKind = iota + 1 // COUNT(*)
	aggMin
	aggMax
	aggSum // SUM of a DECIMAL column
)

// aggregateArg recognises COUNT(*), COUNT(col), MIN(col) and MAX(col) (no
// DISTINCT, no window). col is nil for COUNT(*).
func aggregateArg(f *ast.FuncExpr) (kind aggKind, col *ast.ColName, ok bool) {
	if f.Distinct || f.Over != nil || !f.Qualifier.IsEmpty() || len(f.Exprs) != 1 {
		return 0, nil, false
	}
	switch name := f.Name.String(); {
	case strings.EqualFold(name, "count"):
		if st, isStar := f.Exprs[0].(*ast.StarExpr); isStar && st.TableName.IsEmpty() {
			return aggCount, nil, true
		}
		// COUNT(col): the caller takes it for a NOT NULL column only.
		if ae, isAliased := f.Exprs[0].(*ast.AliasedExpr); isAliased {
			if col, isCol := ae.Expr.(*ast.ColName); isCol {
				return aggCount, col, true
			}
		}
		return 0, nil, false
	case strings.EqualFold(name, "min"):
		kind = aggMin
	case strings.EqualFold(name, "max"):
		kind = aggMax
	default:
		return 0, nil, false
	}
	ae, isAliased := f.Exprs[0].(*ast.AliasedExpr)
	if !isAliased {
		return 0, nil, false
	}
	col, ok = ae.Expr.(*ast.ColName)
	return kind, col, ok
}

// recogniseAggregate fills p.prefix for an aggregate plan (p.agg, p.cols
// set); false when the WHERE or the column does not fit.
func recogniseAggregate(sel *ast.Select, p *fastPlan, qualifierOK func(ast.TableName) bool) bool {
	m := p.meta
	eqs, res, ok := splitWhere(sel.Where.Expr, m, qualifierOK)
	if !ok || (len(res) > 0 && p.agg != aggCount && p.agg != aggSum) {
		return false // MIN and MAX stop at the first row: no filter
	}
	var order []int
	if p.agg == aggSum {
		ct, isDec := m.schema.Schema[p.cols[0]].Type.(sql.DecimalType)
		if !isDec {
			return false
		}
		st, err := types.CreateDecimalType(min(ct.Precision()+22, types.DecimalTypeMaxPrecision), ct.Scale())
		if err != nil {
			return false
		}
		p.sumType = st
	} else if p.agg != aggCount {
		ord := p.cols[0]
		if !minMaxType(m.schema.Schema[ord].Type) {
			return false
		}
		if _, fixed := eqs[ord]; !fixed {
			order = []int{ord}
		}
	}
	if !choosePrefixIndex(p, eqs, order, p.agg == aggMax) {
		return false
	}
	p.prefix.res = res
	return true
}

// minMaxType reports the column types MIN and MAX take on the fast path.
func minMaxType(t sql.Type) bool {
	return types.IsInteger(t) || types.IsDecimal(t) || types.IsFloat(t) || types.IsTime(t)
}

// aggFieldsMatch reports whether the result metadata go-mysql-server gave
// the statement is what the fast path sends: BIGINT for COUNT(*), the
// column's own type for MIN and MAX.
func (p *fastPlan) aggFieldsMatch() bool {
	if len(p.fields) != 1 {
		return false
	}
	if p.agg == aggCount {
		return p.fields[0].Type == querypb.Type_INT64
	}
	if p.agg == aggSum {
		return p.fields[0].Type == querypb.Type_DECIMAL && p.fields[0].Decimals == uint32(p.sumType.Scale())
	}
	return p.fields[0].Type == p.meta.schema.Schema[p.cols[0]].Type.Type()
}

// empty is the aggregate of no rows: 0 for COUNT, NULL for MIN and MAX.
func (k aggKind) empty() sqltypes.Value {
	if k == aggCount {
		return sqltypes.NewInt64(0)
	}
	return sqltypes.NULL
}

// aggregate computes p.agg over the rows of cur: the one result row.
// A filter (COUNT only) decides which rows count.
func (p *fastPlan) aggregate(ctx *sql.Context, cur *storage.Cursor, filter *residualFilter) ([][]sqltypes.Value, error) {
	if p.agg == aggCount {
		var n int64
		for {
			_, ok, err := filter.next(ctx, cur)
			if err != nil {
				return nil, err
			}
			if !ok {
				return [][]sqltypes.Value{{sqltypes.NewInt64(n)}}, nil
			}
			n++
		}
	}
	if p.agg == aggSum {
		return p.sumRows(ctx, cur, filter)
	}
	ord := p.cols[0]
	for {
		_, stored, ok, err := cur.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return [][]sqltypes.Value{{sqltypes.NULL}}, nil
		}
		row, err := decodeRow(stored, ord+1)
		if err != nil {
			return nil, err
		}
		if row[ord] == nil {
			continue // MIN and MAX skip NULLs
		}
		v, err := p.meta.schema.Schema[ord].Type.SQL(ctx, nil, row[ord])
		if err != nil {
			return nil, err
		}
		return [][]sqltypes.Value{{v}}, nil
	}
}

// sumPrefixFields sets the result metadata of SUM(decimal_col) over a
// prefix: at PREPARE go-mysql-server describes every SUM as a DOUBLE, and
// the executed statement's metadata is sumrule.go's DECIMAL(min(M+22, 65),
// D), which the fast path sends (a text query's fields are learned from
// its first run and checked by aggFieldsMatch at each execution).
func (p *fastPlan) sumPrefixFields(ctx *sql.Context) bool {
	if p.fields == nil {
		return true
	}
	if len(p.fields) != 1 {
		return false
	}
	if p.fields[0].Type == querypb.Type_FLOAT64 {
		f := proto.Clone(p.fields[0]).(*querypb.Field)
		f.Type, f.Decimals, f.ColumnLength = querypb.Type_DECIMAL, uint32(p.sumType.Scale()), p.sumType.MaxTextResponseByteLength(ctx)
		p.fields = []*querypb.Field{f}
	}
	return p.aggFieldsMatch()
}

// sumRows sums the DECIMAL column of the rows of cur that pass filter:
// exact, NULLs skipped, NULL when no value was summed, rendered by the
// SUM's type as go-mysql-server renders it.
func (p *fastPlan) sumRows(ctx *sql.Context, cur *storage.Cursor, filter *residualFilter) ([][]sqltypes.Value, error) {
	ord := p.cols[0]
	var (
		sum      decimal.Decimal
		nonNulls bool
	)
	for {
		stored, ok, err := filter.next(ctx, cur)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		row, err := decodeRow(stored, ord+1)
		if err != nil {
			return nil, err
		}
		if row[ord] == nil {
			continue
		}
		d, err := decimalOf(row[ord])
		if err != nil {
			return nil, err
		}
		sum, nonNulls = sum.Add(d), true
	}
	if !nonNulls {
		return [][]sqltypes.Value{{sqltypes.NULL}}, nil
	}
	v, err := p.sumType.SQL(ctx, nil, sum)
	if err != nil {
		return nil, err
	}
	return [][]sqltypes.Value{{v}}, nil
}
