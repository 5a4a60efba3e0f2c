package sqlfront

import (
	"context"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// Index prefix reads:
//
//	SELECT cols FROM t WHERE k1 = ? AND ... AND kn = ?
//	  [ORDER BY kn+1 [ASC|DESC], ...] [LIMIT n] [FOR UPDATE | LOCK IN SHARE MODE]
//
// where k1..kn are the leading columns of the primary key or of a secondary
// index (TPC-C's customer by last name, order lines of an order, a
// customer's last order, Delivery's oldest new order; a unique secondary
// key's point read). The rows are read from that index in its order —
// backwards for DESC —, so an ORDER BY over the columns that follow the
// fixed ones needs no sort and a LIMIT stops the read (a locking read locks
// only the rows it returns, as go-mysql-server does with the index order
// rules in sortrule.go).
//
// The index: the one whose leading columns the equalities fix furthest
// (the primary key first among equals), as go-mysql-server's plan with
// longerPrefixRule reads; with an ORDER BY, the first such index whose
// next columns are the ORDER BY's. Equalities on columns outside the
// chosen prefix, other conditions, ORDER BY on anything else, OFFSET and
// DISTINCT are left to go-mysql-server.

// prefixSpec is the index prefix part of a fastPlan.
type prefixSpec struct {
	idx     int       // storage index: storage.PrimaryIndex or a secondary index number
	codec   *keyCodec // that index's key columns
	params  []string  // bind variable names of the fixed leading columns, in key order
	reverse bool      // ORDER BY ... DESC: read the index backwards
	limit   string    // bind variable name of LIMIT (""; no LIMIT unless hasLimit)
	limitN  int64     // a literal LIMIT
	hasLim  bool
	res     []residual // conditions on columns outside every index (fast_residual.go)
}

// recognisePrefix fills p.prefix from sel's WHERE, ORDER BY and LIMIT;
// false when they do not have the shape above.
func recognisePrefix(sel *ast.Select, p *fastPlan, qualifierOK func(ast.TableName) bool) bool {
	if sel.QueryOpts.Distinct {
		return false
	}
	eqs, res, ok := splitWhere(sel.Where.Expr, p.meta, qualifierOK)
	if !ok {
		return false
	}
	order, desc, ok := orderColumns(sel, p.meta, qualifierOK, eqs)
	if !ok || !choosePrefixIndex(p, eqs, order, desc) {
		return false
	}
	p.prefix.res = res
	return recogniseLimit(sel, p.prefix)
}

// orderColumns returns the ORDER BY's columns that eqs does not fix, and
// their direction; ok is false for anything but plain columns of the
// table in one direction.
func orderColumns(sel *ast.Select, m *tableMeta, qualifierOK func(ast.TableName) bool, eqs map[int]string) (order []int, desc, ok bool) {
	for _, o := range sel.OrderBy {
		c, isCol := o.Expr.(*ast.ColName)
		if !isCol || !qualifierOK(c.Qualifier) || aliasNamed(sel, c.Name.String()) {
			return nil, false, false
		}
		ord := m.colIndex(c.Name.String())
		if ord < 0 {
			return nil, false, false
		}
		if _, fixed := eqs[ord]; fixed {
			continue // one value: no order to give
		}
		d := o.Direction == ast.DescScr
		if len(order) == 0 {
			desc = d
		} else if d != desc {
			return nil, false, false
		}
		order = append(order, ord)
	}
	return order, desc, true
}

// choosePrefixIndex sets p.prefix to a read of the index whose leading
// columns eqs fixes furthest (every equality among them; the primary key
// first among equals) and whose next columns are order; false when there
// is none.
func choosePrefixIndex(p *fastPlan, eqs map[int]string, order []int, desc bool) bool {
	m := p.meta
	spec := &prefixSpec{reverse: desc}
	best := -1
	try := func(idx int, codec *keyCodec) {
		n := fixedLeading(codec, eqs)
		if n != len(eqs) || n <= best || !orderFollows(codec, n, order) {
			return
		}
		best, spec.idx, spec.codec = n, idx, codec
	}
	try(storage.PrimaryIndex, &m.pk)
	for i := range m.indexes {
		try(i, &m.indexes[i].codec)
	}
	if best <= 0 {
		return false
	}
	for _, kc := range spec.codec.cols[:best] {
		spec.params = append(spec.params, eqs[kc.ord])
	}
	p.prefix = spec
	return true
}

// recogniseLimit fills spec's LIMIT from sel: none, a literal or a marker;
// false for an OFFSET or anything else.
func recogniseLimit(sel *ast.Select, spec *prefixSpec) bool {
	if sel.Limit != nil {
		if sel.Limit.Offset != nil {
			return false
		}
		switch v := sel.Limit.Rowcount.(type) {
		case *ast.SQLVal:
			switch v.Type {
			case ast.ValArg:
				spec.limit = strings.TrimPrefix(string(v.Val), ":")
			case ast.IntVal:
				n, err := strconv.ParseInt(string(v.Val), 10, 64)
				if err != nil || n < 0 {
					return false
				}
				spec.limitN = n
			default:
				return false
			}
		default:
			return false
		}
		spec.hasLim = true
	}
	return true
}

// fixedLeading returns how many of codec's leading columns eqs fixes with
// a value the fast path binds (whole-value key columns of fastKeyType).
func fixedLeading(codec *keyCodec, eqs map[int]string) int {
	n := 0
	for _, kc := range codec.cols {
		if _, ok := eqs[kc.ord]; !ok || kc.prefix != 0 || !fastKeyType(kc.typ) {
			break
		}
		n++
	}
	return n
}

// orderFollows reports whether ORDER BY columns order are codec's columns
// right after its first n, whole-value ones, so the index gives the order.
func orderFollows(codec *keyCodec, n int, order []int) bool {
	if n+len(order) > len(codec.cols) {
		return false
	}
	for i, ord := range order {
		kc := codec.cols[n+i]
		if kc.ord != ord || kc.prefix != 0 {
			return false
		}
	}
	return true
}

// aliasNamed reports whether a select expression has alias name (an ORDER
// BY name then means that expression, not the column).
func aliasNamed(sel *ast.Select, name string) bool {
	for _, se := range sel.SelectExprs {
		if ae, ok := se.(*ast.AliasedExpr); ok && !ae.As.IsEmpty() && strings.EqualFold(ae.As.String(), name) {
			return true
		}
	}
	return false
}

// runPrefix executes an index prefix read plan.
func (s *Session) runPrefix(ctx context.Context, p *fastPlan, entry *tableEntry, bind map[string]*querypb.BindVariable, explicit bool) (*sqltypes.Result, bool, error) {
	spec := p.prefix
	if p.agg != 0 && !p.aggFieldsMatch() {
		return nil, false, nil
	}
	limit := int64(-1)
	if spec.hasLim {
		limit = spec.limitN
		if spec.limit != "" {
			bv := bind[spec.limit]
			if bv == nil || !sqltypes.IsIntegral(bv.Type) {
				return nil, false, nil
			}
			n, err := strconv.ParseInt(string(bv.Value), 10, 64)
			if err != nil || n < 0 {
				return nil, false, nil
			}
			limit = n
		}
	}
	var keyBuf [64]byte
	lo := keyBuf[:0]
	none := false
	for i, name := range spec.params {
		kc, bv := &spec.codec.cols[i], bind[name]
		if negativeForUnsigned(kc, bv) {
			return nil, false, nil
		}
		var n, ok bool
		if lo, n, ok = appendBoundKey(lo, kc, bv); !ok {
			return nil, false, nil
		}
		none = none || n
	}
	filter, ok := bindResiduals(p.meta, spec.res, bind, p.lock.mode != 0 || s.serial)
	if !ok {
		return nil, false, nil
	}
	var empty []sqltypes.Value
	if p.agg != 0 {
		empty = []sqltypes.Value{p.agg.empty()}
	}
	return s.runRead(p, nil, explicit, none || limit == 0, empty, func(sctx *sql.Context, tx *storage.Tx, mode txn.LockMode) ([][]sqltypes.Value, error) {
		cur := tx.Cursor(sctx, entry.store, spec.idx, storage.Range{Lo: lo, Hi: prefixEnd(lo)}, spec.reverse, mode)
		defer cur.Close()
		if p.agg != 0 {
			return p.aggregate(sctx, cur, filter)
		}
		var rows [][]sqltypes.Value
		w := p.newRowWriter(sctx)
		for limit < 0 || int64(len(rows)) < limit {
			row, ok, err := filter.next(sctx, cur)
			if err != nil {
				return nil, err
			}
			if !ok {
				return rows, nil
			}
			vals, err := w.row(row)
			if err != nil {
				return nil, err
			}
			rows = append(rows, vals)
		}
		return rows, nil
	})
}
