package sqlfront

import (
	"context"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// Joins of two point reads by primary key:
//
//	SELECT col, ... FROM a, b          -- or a [INNER] JOIN b ON ...
//	  WHERE a.pk1 = ? AND ... AND b.pk1 = a.pkj | ? AND ...
//
// sysbench-tpcc's New-Order, `SELECT c_discount, c_last, c_credit, w_tax
// FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ?
// AND c_id = ?`: every primary key column of one table (the outer one) is
// equal to a marker, and every primary key column of the other is equal to
// a marker or to an outer primary key column of the same integer type. At
// most one row: the outer row read by its key, then the inner row by its
// key. The select list is plain columns of either table. Every condition
// must be one of those equalities; anything else — another condition, an
// expression, an aggregate, ORDER BY, LIMIT, DISTINCT, GROUP BY, a locking
// clause — goes to go-mysql-server.

// pointJoin is the point part of a joinSpec (its inner and innerKey say
// how the inner row's key is made).
type pointJoin struct {
	outerCols, innerCols *fastPlan // each side's output columns, for rowWriter
	outs                 []joinOut
}

// joinOut is one output column: its side and its position among that
// side's output columns.
type joinOut struct {
	inner bool
	pos   int
}

// plainColumns reports a select list of column references only.
func plainColumns(exprs ast.SelectExprs) bool {
	for _, se := range exprs {
		ae, ok := se.(*ast.AliasedExpr)
		if !ok {
			return false
		}
		if _, ok := ae.Expr.(*ast.ColName); !ok {
			return false
		}
	}
	return len(exprs) > 0
}

// recognisePointJoin returns the plan reading outer by its whole primary
// key and inner by its whole primary key, or nil.
func recognisePointJoin(sel *ast.Select, outer, inner joinSide, conds []ast.Expr) *fastPlan {
	om, im := outer.p.meta, inner.p.meta
	cmps, joinList, ok := splitJoinConds(conds, outer, inner)
	if !ok {
		return nil
	}
	eqs := [2]map[int]string{{}, {}} // per side: column ordinal -> marker
	for _, c := range cmps {
		if _, dup := eqs[c.col.side][c.col.ord]; dup || c.op != ast.EqualStr {
			return nil
		}
		eqs[c.col.side][c.col.ord] = c.param
	}
	joins := map[int]int{} // inner column ordinal -> outer column ordinal
	for _, j := range joinList {
		if _, dup := joins[j[1].ord]; dup {
			return nil
		}
		joins[j[1].ord] = j[0].ord
	}
	// The outer key: every column from a marker, and nothing else.
	p := outer.p
	if len(eqs[0]) != len(om.pk.cols) {
		return nil
	}
	outerKey := map[int]bool{}
	for _, kc := range om.pk.cols {
		name, ok := eqs[0][kc.ord]
		if !ok || kc.prefix != 0 || !fastKeyType(kc.typ) {
			return nil
		}
		p.params = append(p.params, name)
		outerKey[kc.ord] = true
	}
	// The inner key: every column from a marker or an outer key column of
	// the same integer type, and nothing else.
	if len(eqs[1])+len(joins) != len(im.pk.cols) {
		return nil
	}
	spec := &joinSpec{rangeOrd: -1}
	for _, kc := range im.pk.cols {
		if kc.prefix != 0 || !fastKeyType(kc.typ) {
			return nil
		}
		src := keySource{outerOrd: -1}
		name, byParam := eqs[1][kc.ord]
		oord, byJoin := joins[kc.ord]
		switch {
		case byParam && byJoin:
			return nil
		case byParam:
			src.param = name
		case byJoin:
			if !outerKey[oord] || !joinIntType(kc.typ) || !om.schema.Schema[oord].Type.Equals(kc.typ) {
				return nil
			}
			src.outerOrd = oord
			spec.outerN = max(spec.outerN, oord+1)
		default:
			return nil
		}
		spec.innerKey = append(spec.innerKey, src)
	}

	// The output columns.
	pj := &pointJoin{
		outerCols: &fastPlan{meta: om, charset: p.charset},
		innerCols: &fastPlan{meta: im, charset: inner.p.charset},
	}
	for _, se := range sel.SelectExprs {
		col := se.(*ast.AliasedExpr).Expr.(*ast.ColName) // plainColumns
		side, ord, ok := joinColumn(col, outer, inner)
		if !ok {
			return nil
		}
		sp := pj.outerCols
		if side == 1 {
			sp = pj.innerCols
		}
		pj.outs = append(pj.outs, joinOut{inner: side == 1, pos: len(sp.cols)})
		sp.cols = append(sp.cols, ord)
		sp.maxOrd = max(sp.maxOrd, ord)
	}
	if p.fields != nil && len(p.fields) != len(pj.outs) {
		return nil
	}
	spec.inner = joinTable{dbKey: inner.p.dbKey, tableKey: inner.p.tableKey, curDB: inner.p.curDB, meta: im}
	spec.point = pj
	p.join = spec
	p.cols = make([]int, len(pj.outs)) // the output's width (learn compares it); the columns are pj's
	return p
}

// runPointJoin executes a point join plan: the outer row by its key, then
// the inner row by the key taken from markers and the outer row.
func (s *Session) runPointJoin(ctx context.Context, p *fastPlan, entry, innerEntry *tableEntry, bind map[string]*querypb.BindVariable, explicit bool) (*sqltypes.Result, bool, error) {
	js, pj := p.join, p.join.point
	if len(p.fields) != len(pj.outs) {
		return nil, false, nil
	}
	var keyBuf [64]byte
	outerKey, none, ok := p.boundKey(keyBuf[:0], p.params, bind, true)
	if !ok {
		return nil, false, nil
	}
	innerParts, innerNone, ok := js.bindInnerParts(bind)
	if !ok {
		return nil, false, nil
	}
	none = none || innerNone
	return s.runRead(p, nil, explicit, none, nil, func(sctx *sql.Context, tx *storage.Tx, mode txn.LockMode) ([][]sqltypes.Value, error) {
		ostored, found, err := tx.Get(ctx, entry.store, outerKey, mode)
		if err != nil || !found {
			return nil, err
		}
		orow, err := decodeRow(ostored, js.outerN)
		if err != nil {
			return nil, err
		}
		innerKey, ok := js.innerKeyOf(nil, orow, innerParts)
		if !ok {
			return nil, nil
		}
		istored, found, err := tx.Get(ctx, innerEntry.store, innerKey, mode)
		if err != nil || !found {
			return nil, err
		}
		var ovals, ivals []sqltypes.Value
		if len(pj.outerCols.cols) > 0 {
			if ovals, err = pj.outerCols.newRowWriter(sctx).row(ostored); err != nil {
				return nil, err
			}
		}
		if len(pj.innerCols.cols) > 0 {
			if ivals, err = pj.innerCols.newRowWriter(sctx).row(istored); err != nil {
				return nil, err
			}
		}
		row := make([]sqltypes.Value, len(pj.outs))
		for i, o := range pj.outs {
			if o.inner {
				row[i] = ivals[o.pos]
			} else {
				row[i] = ovals[o.pos]
			}
		}
		return [][]sqltypes.Value{row}, nil
	})
}
