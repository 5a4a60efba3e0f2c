package sqlfront

import (
	"context"
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/proto"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// Sums grouped by a key column over an IN list:
//
//	SELECT g, SUM(c) FROM t WHERE (k1, ..., kn) IN ((?, ...), ...) GROUP BY g
//
// where the list names the primary key or its leading columns
// (fast_multi.go), g is one of those columns and an integer, and c is a
// DECIMAL or integer column — TPC-C's Delivery, `SELECT ol_d_id,
// SUM(ol_amount) FROM order_line WHERE (ol_w_id, ol_d_id, ol_o_id) IN (...)
// GROUP BY ol_d_id`. The select list may name the two in either order.
//
// The rows are read in key order, each list item once, as for the other
// IN-list reads; the groups come out in the order their first row was
// read, as go-mysql-server's grouping emits them. SUM is exact, NULLs
// skipped, NULL for a group of NULLs, and typed as MySQL types it and
// sumrule.go makes go-mysql-server type it: DECIMAL(min(M+22, 65), D) over
// DECIMAL(M, D), DECIMAL(digits+22, 0) over an integer; the value is
// rendered by that type, as go-mysql-server renders it.

// groupSumSpec is the grouping part of a fastPlan (p.multi holds the list).
type groupSumSpec struct {
	gOrd, cOrd int      // grouped and summed columns
	gPos       int      // output position of the grouped column (0 or 1)
	sumType    sql.Type // the SUM's result type
}

// recogniseGroupSum fills p for the shape above; false when sel does not
// have it.
func recogniseGroupSum(ctx *sql.Context, sel *ast.Select, p *fastPlan, qualifierOK func(ast.TableName) bool) bool {
	m := p.meta
	if sel.Having != nil || sel.OrderBy != nil || sel.Limit != nil || sel.QueryOpts.Distinct || sel.Lock != "" ||
		len(sel.GroupBy) != 1 || len(sel.SelectExprs) != 2 {
		return false
	}
	gcol, ok := sel.GroupBy[0].(*ast.ColName)
	if !ok || !qualifierOK(gcol.Qualifier) || aliasNamed(sel, gcol.Name.String()) {
		return false
	}
	spec := &groupSumSpec{gOrd: m.colIndex(gcol.Name.String()), cOrd: -1, gPos: -1}
	if spec.gOrd < 0 || !types.IsInteger(m.schema.Schema[spec.gOrd].Type) {
		return false
	}
	for i, se := range sel.SelectExprs {
		ae, ok := se.(*ast.AliasedExpr)
		if !ok {
			return false
		}
		switch x := ae.Expr.(type) {
		case *ast.ColName:
			if !qualifierOK(x.Qualifier) || m.colIndex(x.Name.String()) != spec.gOrd || spec.gPos >= 0 {
				return false
			}
			spec.gPos = i
		case *ast.FuncExpr:
			col, ok := sumArg(x)
			if !ok || !qualifierOK(col.Qualifier) || spec.cOrd >= 0 {
				return false
			}
			if spec.cOrd = m.colIndex(col.Name.String()); spec.cOrd < 0 {
				return false
			}
		default:
			return false
		}
	}
	if spec.gPos < 0 || spec.cOrd < 0 {
		return false
	}
	ct := m.schema.Schema[spec.cOrd].Type
	var err error
	switch {
	case types.IsDecimal(ct):
		dt := ct.(sql.DecimalType)
		spec.sumType, err = types.CreateDecimalType(min(dt.Precision()+22, types.DecimalTypeMaxPrecision), dt.Scale())
	case intDigits(ct) > 0:
		spec.sumType, err = types.CreateDecimalType(uint8(intDigits(ct)+22), 0)
	default:
		return false
	}
	if err != nil {
		return false
	}
	if sel.Where == nil || !recogniseMultiPoint(sel.Where.Expr, p, qualifierOK, true) {
		return false
	}
	listed := false
	for _, kc := range m.pk.cols[:len(p.multi[0])] {
		listed = listed || kc.ord == spec.gOrd
	}
	if !listed {
		return false // a group could then span list items
	}
	p.groupSum = spec
	p.cols = []int{spec.gOrd, spec.cOrd}
	if spec.gPos == 1 {
		p.cols = []int{spec.cOrd, spec.gOrd}
	}
	if p.fields == nil {
		return true // a text query's plan: fields learned from its first run
	}
	// At PREPARE go-mysql-server describes every SUM as a DOUBLE; the
	// executed statement's metadata is sumrule.go's DECIMAL, which the
	// fast path sends.
	if len(p.fields) == 2 && p.fields[1-spec.gPos].Type == querypb.Type_FLOAT64 {
		f := proto.Clone(p.fields[1-spec.gPos]).(*querypb.Field)
		dt := spec.sumType.(sql.DecimalType)
		f.Type, f.Decimals, f.ColumnLength = querypb.Type_DECIMAL, uint32(dt.Scale()), dt.MaxTextResponseByteLength(ctx)
		p.fields = slices.Clone(p.fields)
		p.fields[1-spec.gPos] = f
	}
	return spec.fieldsMatch(p.fields, m)
}

// fieldsMatch reports whether go-mysql-server's result metadata is what the
// fast path sends: the grouped column's type and the SUM's DECIMAL.
func (g *groupSumSpec) fieldsMatch(fields []*querypb.Field, m *tableMeta) bool {
	if len(fields) != 2 {
		return false
	}
	sf, gf := fields[1-g.gPos], fields[g.gPos]
	dt := g.sumType.(sql.DecimalType)
	return gf.Type == m.schema.Schema[g.gOrd].Type.Type() && sf.Type == querypb.Type_DECIMAL && sf.Decimals == uint32(dt.Scale())
}

// sumGroup is one group being summed.
type sumGroup struct {
	g        interface{} // the grouped column's value (the first row's)
	neg      bool        // its sign and magnitude, for equality
	mag      uint64
	sum      decimal.Decimal
	nonNulls bool
}

// runGroupSum executes a grouped sum plan.
func (s *Session) runGroupSum(ctx context.Context, p *fastPlan, entry *tableEntry, bind map[string]*querypb.BindVariable, explicit bool) (*sqltypes.Result, bool, error) {
	g := p.groupSum
	if !g.fieldsMatch(p.fields, p.meta) {
		return nil, false, nil
	}
	keys, ok := p.multiKeys(bind)
	if !ok {
		return nil, false, nil
	}
	return s.runRead(p, nil, explicit, len(keys) == 0, nil, func(sctx *sql.Context, tx *storage.Tx, mode txn.LockMode) ([][]sqltypes.Value, error) {
		groups, err := g.sum(sctx, tx, entry, keys, mode)
		if err != nil {
			return nil, err
		}
		return g.rows(sctx, p.meta, groups)
	})
}

// sum reads the rows of every key (or key prefix) and sums them by group,
// groups in the order their first row was read.
func (g *groupSumSpec) sum(ctx *sql.Context, tx *storage.Tx, entry *tableEntry, keys [][]byte, mode txn.LockMode) ([]sumGroup, error) {
	var groups []sumGroup
	n := max(g.gOrd, g.cOrd) + 1
	for _, key := range keys {
		cur := tx.Cursor(ctx, entry.store, storage.PrimaryIndex, storage.Range{Lo: key, Hi: prefixEnd(key)}, false, mode) // read to its end: it closes itself
		for {
			_, stored, ok, err := cur.Next()
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			row, err := decodeRow(stored, n)
			if err != nil {
				return nil, err
			}
			neg, mag, _, isInt := intValue(row[g.gOrd])
			if !isInt {
				return nil, errFastFallback // (a key column is never NULL)
			}
			i := 0
			for i < len(groups) && (groups[i].neg != neg || groups[i].mag != mag) {
				i++
			}
			if i == len(groups) {
				groups = append(groups, sumGroup{g: row[g.gOrd], neg: neg, mag: mag})
			}
			v := row[g.cOrd]
			if v == nil {
				continue
			}
			d, err := decimalOf(v)
			if err != nil {
				return nil, err
			}
			groups[i].sum = groups[i].sum.Add(d)
			groups[i].nonNulls = true
		}
	}
	return groups, nil
}

// decimalOf is a decoded DECIMAL or integer column value as a decimal.
func decimalOf(v interface{}) (decimal.Decimal, error) {
	if d, ok := v.(decimal.Decimal); ok {
		return d, nil
	}
	if d, ok := intAsDecimal(v); ok {
		return d, nil
	}
	return decimal.Decimal{}, errFastFallback
}

// rows renders the groups as result rows.
func (g *groupSumSpec) rows(ctx *sql.Context, m *tableMeta, groups []sumGroup) ([][]sqltypes.Value, error) {
	out := make([][]sqltypes.Value, 0, len(groups))
	for _, gr := range groups {
		gv, err := m.schema.Schema[g.gOrd].Type.SQL(ctx, nil, gr.g)
		if err != nil {
			return nil, err
		}
		sv := sqltypes.NULL
		if gr.nonNulls {
			if sv, err = g.sumType.SQL(ctx, nil, gr.sum); err != nil {
				return nil, err
			}
		}
		row := []sqltypes.Value{gv, sv}
		if g.gPos == 1 {
			row[0], row[1] = sv, gv
		}
		out = append(out, row)
	}
	return out, nil
}
