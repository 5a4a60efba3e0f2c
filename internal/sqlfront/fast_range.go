package sqlfront

import (
	"context"
	"slices"
	"strconv"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"google.golang.org/protobuf/proto"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// Primary key range reads:
//
//	SELECT [DISTINCT] cols FROM t WHERE pk BETWEEN ? AND ? [ORDER BY col [ASC|DESC], ...]
//
// for a table whose primary key is one integer column (sysbench's range
// statements). Rows are read in key order; ORDER BY on other columns sorts
// them with the column types' own comparison (collations included), stably,
// so ties keep key order; DISTINCT drops a row equal (by the same
// comparison) to the previous one in ORDER BY order, so it needs an ORDER BY
// over every output column.

// rangeSpec is the range part of a fastPlan.
type rangeSpec struct {
	lo, hi   string     // bind variable names of the bounds
	order    []orderKey // ORDER BY, output column positions
	distinct bool
}

type orderKey struct {
	pos  int // index into fastPlan.cols
	desc bool
}

// recogniseRange fills p.rng from sel's WHERE, DISTINCT and ORDER BY; it
// reports false when they do not have the shape above.
func recogniseRange(sel *ast.Select, p *fastPlan, qualifierOK func(ast.TableName) bool) bool {
	m := p.meta
	if len(m.pk.cols) != 1 || !types.IsInteger(m.pk.cols[0].typ) || sel.Limit != nil || sel.Lock != "" {
		return false
	}
	rc, ok := sel.Where.Expr.(*ast.RangeCond)
	if !ok || rc.Operator != ast.BetweenStr {
		return false
	}
	col, ok := rc.Left.(*ast.ColName)
	if !ok || !qualifierOK(col.Qualifier) || m.colIndex(col.Name.String()) != m.pk.cols[0].ord {
		return false
	}
	from, ok1 := paramName(rc.From)
	to, ok2 := paramName(rc.To)
	if !ok1 || !ok2 {
		return false
	}
	spec := &rangeSpec{
		lo:       from,
		hi:       to,
		distinct: sel.QueryOpts.Distinct,
	}
	for _, o := range sel.OrderBy {
		c, ok := o.Expr.(*ast.ColName)
		if !ok || !qualifierOK(c.Qualifier) || aliasNamed(sel, c.Name.String()) {
			return false
		}
		ord := m.colIndex(c.Name.String())
		pos := -1
		for i, oc := range p.cols {
			if oc == ord {
				pos = i
				break
			}
		}
		typ := m.schema.Schema[ord].Type
		if pos < 0 || types.IsJSON(typ) {
			return false
		}
		// DISTINCT compares strings under their collation on both paths
		// (collation_plan.go fixed go-mysql-server's).
		spec.order = append(spec.order, orderKey{pos: pos, desc: o.Direction == ast.DescScr})
	}
	if spec.distinct {
		// Equal rows must be adjacent: the ORDER BY covers every output
		// column.
		covered := make([]bool, len(p.cols))
		for _, o := range spec.order {
			covered[o.pos] = true
		}
		for _, c := range covered {
			if !c {
				return false
			}
		}
	}
	p.rng = spec
	return true
}

// boundKey returns the key of an integer bound for the primary key column,
// clamped to the column's range; empty is true when the bound excludes
// every row (NULL; a lower bound above the column's maximum, an upper bound
// below its minimum). ok is false for a value the fast path does not bind.
func boundKey(b []byte, kc *keyColumn, bv *querypb.BindVariable, upper bool) (key []byte, empty, ok bool) {
	if bv == nil {
		return nil, false, false
	}
	if bv.Type == querypb.Type_NULL_TYPE {
		return nil, true, true
	}
	if negativeForUnsigned(kc, bv) {
		return nil, false, false
	}
	k, none, ok := appendBoundKey(b, kc, bv)
	if !ok {
		return nil, false, false
	}
	if !none {
		return k, false, true
	}
	// Out of the column's range: either every row or none is on this side.
	neg := len(bv.Value) > 0 && bv.Value[0] == '-'
	switch {
	case upper && neg, !upper && !neg:
		return nil, true, true
	}
	return nil, false, true // unbounded on this side
}

// runRange executes a range plan.
func (s *Session) runRange(ctx context.Context, p *fastPlan, entry *tableEntry, bind map[string]*querypb.BindVariable, explicit bool) (*sqltypes.Result, bool, error) {
	kc := &p.meta.pk.cols[0]
	mem := new(rangeResult)
	lo, emptyLo, ok := boundKey(mem.lo[:0], kc, bind[p.rng.lo], false)
	if !ok {
		return nil, false, nil
	}
	hi, emptyHi, ok := boundKey(mem.hi[:0], kc, bind[p.rng.hi], true)
	if !ok {
		return nil, false, nil
	}
	if hi != nil {
		hi = append(hi, 0) // inclusive: just past the key
	}
	if p.sum && (len(p.fields) != 1 || p.fields[0].Type != querypb.Type_DECIMAL) {
		return nil, false, nil // the result must be MySQL's DECIMAL (sumFields); any other is go-mysql-server's
	}
	var empty []sqltypes.Value
	if p.sum {
		mem.vals[0] = sqltypes.NULL // an empty range sums to NULL
		empty = mem.vals[:1:1]
	}
	skip := emptyLo || emptyHi || (lo != nil && hi != nil && string(lo) >= string(hi))
	return s.runRead(p, &mem.res, explicit, skip, empty, func(sctx *sql.Context, tx *storage.Tx, mode txn.LockMode) ([][]sqltypes.Value, error) {
		rng := storage.Range{Lo: lo, Hi: hi}
		if p.sum {
			return sumRange(sctx, tx, entry.store, p, rng, mode, mem)
		}
		if p.rng.directOrder(p) {
			rows, err := scanRangeDirect(sctx, tx, entry.store, p, rng, mode, rangeWidth(bind[p.rng.lo], bind[p.rng.hi]), &mem.cur)
			if err != nil {
				return nil, err
			}
			return p.rng.finishDirect(sctx, p, rows)
		}
		rows, err := scanRange(sctx, tx, entry.store, p, rng, mode)
		if err == nil {
			rows, err = p.rng.finish(sctx, p, rows)
		}
		if err != nil {
			return nil, err
		}
		return p.encodeRows(sctx, rows)
	})
}

// rangeResult is a range read's result and what the statement needs once
// besides its rows: its bounds' keys, its cursor, a SUM's row and text —
// one allocation per statement where they were up to eight. It is never
// reused: the handler writes the result to the client after the
// statement, and the rows point into the SUM's text.
type rangeResult struct {
	res    sqltypes.Result
	cur    storage.Cursor
	lo, hi [16]byte
	rows   [1][]sqltypes.Value
	vals   [1]sqltypes.Value
	text   [24]byte
}

// rangeWidth is hi - lo + 1 for two integer bounds, clamped to [0, 1024];
// 0 when either is not an integer.
func rangeWidth(lo, hi *querypb.BindVariable) int {
	if lo == nil || hi == nil || !sqltypes.IsIntegral(lo.Type) || !sqltypes.IsIntegral(hi.Type) {
		return 0
	}
	l, err1 := strconv.ParseInt(string(lo.Value), 10, 64)
	h, err2 := strconv.ParseInt(string(hi.Value), 10, 64)
	if err1 != nil || err2 != nil || h < l {
		return 0
	}
	if h-l >= 1024 {
		return 1024
	}
	return int(h-l) + 1
}

// sumFields is the metadata of a SUM plan's result: MySQL's DECIMAL
// (digits + 22, 0) for SUM over an integer column of type t, as sumrule.go
// types it. The metadata PREPARE gives says DOUBLE (go-mysql-server
// describes the plan before the rule runs), so the field is derived from
// it. nil: not a shape the fast path sums.
func sumFields(ctx *sql.Context, fields []*querypb.Field, t sql.Type) []*querypb.Field {
	if len(fields) != 1 {
		return nil
	}
	switch fields[0].Type {
	case querypb.Type_DECIMAL:
		return fields
	case querypb.Type_FLOAT64:
	default:
		return nil
	}
	digits := intDigits(t)
	if digits == 0 {
		return nil
	}
	dt, err := types.CreateDecimalType(uint8(digits+22), 0)
	if err != nil {
		return nil
	}
	f := proto.Clone(fields[0]).(*querypb.Field)
	f.Type, f.Decimals, f.ColumnLength = querypb.Type_DECIMAL, 0, dt.MaxTextResponseByteLength(ctx)
	return []*querypb.Field{f}
}

// scanRange reads the rows of rng in key order as the plan's output values.
func scanRange(ctx *sql.Context, tx *storage.Tx, t *storage.Table, p *fastPlan, rng storage.Range, mode txn.LockMode) ([]sql.Row, error) {
	cur := tx.Cursor(ctx, t, storage.PrimaryIndex, rng, false, mode)
	defer cur.Close()
	var out []sql.Row
	for {
		_, stored, ok, err := cur.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		row, err := decodeRow(stored, p.maxOrd+1)
		if err != nil {
			return nil, err
		}
		vals := make(sql.Row, len(p.cols))
		for i, ord := range p.cols {
			vals[i] = row[ord]
		}
		out = append(out, vals)
	}
}

// finish applies ORDER BY and DISTINCT.
func (r *rangeSpec) finish(ctx *sql.Context, p *fastPlan, rows []sql.Row) ([]sql.Row, error) {
	return orderRows(r, rows, func(a, b sql.Row, pos int) (int, error) {
		switch x, y := a[pos], b[pos]; {
		case x == nil && y == nil:
			return 0, nil
		case x == nil:
			return -1, nil // NULL first in ascending order, as MySQL sorts
		case y == nil:
			return 1, nil
		default:
			return p.meta.schema.Schema[p.cols[pos]].Type.Compare(ctx, x, y)
		}
	})
}

// orderRows sorts rows stably by r's ORDER BY and, with DISTINCT, drops a
// row equal to the one before it; cmp compares the output column at pos
// of two rows in ascending order (NULL first). The first error cmp
// returns is returned, the rows sorted as well as they could be.
func orderRows[R any](r *rangeSpec, rows []R, cmp func(a, b R, pos int) (int, error)) ([]R, error) {
	if len(r.order) == 0 || len(rows) < 2 {
		return rows, nil
	}
	var cmpErr error
	compare := func(a, b R) int {
		for _, o := range r.order {
			c, err := cmp(a, b, o.pos)
			if err != nil && cmpErr == nil {
				cmpErr = err
			}
			if c != 0 {
				if o.desc {
					return -c
				}
				return c
			}
		}
		return 0
	}
	// A generic stable sort: sort.SliceStable's reflection-based swapper
	// took a third of an ORDER BY c over 100 sysbench rows.
	slices.SortStableFunc(rows, compare)
	if r.distinct {
		kept := rows[:1]
		for _, row := range rows[1:] {
			if compare(kept[len(kept)-1], row) != 0 {
				kept = append(kept, row)
			}
		}
		rows = kept
	}
	return rows, cmpErr
}

// encodeRows converts output values to protocol values.
func (p *fastPlan) encodeRows(ctx *sql.Context, rows []sql.Row) ([][]sqltypes.Value, error) {
	out := make([][]sqltypes.Value, len(rows))
	for i, row := range rows {
		vals := make([]sqltypes.Value, len(row))
		for j, v := range row {
			if v == nil {
				vals[j] = sqltypes.NULL
				continue
			}
			var err error
			vals[j], err = p.meta.schema.Schema[p.cols[j]].Type.SQL(ctx, nil, v)
			if err != nil {
				return nil, err
			}
		}
		out[i] = vals
	}
	return out, nil
}
