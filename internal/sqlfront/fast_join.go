package sqlfront

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// Counting joins by primary key:
//
//	SELECT COUNT(*) | COUNT(col) | COUNT(DISTINCT col)
//	  FROM a, b            -- or a [INNER] JOIN b ON ...
//	  WHERE a.k1 = ? AND ... AND a.kn = ? [AND a.kn+1 >= ? AND a.kn+1 < ? ...]
//	    AND b.pk1 = a.x | ? AND ... [AND col op ? ...]
//
// TPC-C's Stock-Level (the distinct items of a district's last 20 orders
// whose stock is below a threshold): the outer table is read by an index
// whose leading columns the equalities fix (optionally narrowed by a range
// on the next column), and for each of its rows the inner table's row is
// read by its whole primary key, taken from parameters and outer columns.
// Every other condition is a comparison of an integer column with an
// integer parameter (=, <, <=, >, >=, BETWEEN), evaluated on the decoded
// rows. go-mysql-server plans the same statement as a lookup join; its
// cost per outer row was an iterator built, a cursor opened and all of the
// inner row's columns decoded.
//
// Kept to integers where both paths compare alike: filter and join columns
// are signed integers or unsigned ones of at most 32 bits (go-mysql-server
// compares BIGINT UNSIGNED values above 2^63-1 differently from MySQL, and
// the paths must agree), the two columns of a join condition have the same
// type, parameters are integers (anything else falls back; NULL matches
// nothing). No GROUP BY, ORDER BY, LIMIT, DISTINCT or locking clause.

// joinSpec is the join part of a fastPlan. The plan's own table (p.meta,
// read through p.prefix) is the outer table.
type joinSpec struct {
	inner    joinTable
	innerKey []keySource // per inner primary key column, in key order
	filters  []intFilter
	rangeOrd int // outer column after the prefix that filters bound, or -1
	count    countKind
	countIn  bool // the counted column is the inner table's
	countOrd int
	outerN   int        // outer columns decoded
	innerN   int        // inner columns decoded
	point    *pointJoin // a join of two point reads (fast_joinpoint.go): no count
}

// joinTable is the inner table of a join plan, checked at EXECUTE as the
// plan's own table is.
type joinTable struct {
	dbKey, tableKey string
	curDB           string // current database at PREPARE when unqualified
	meta            *tableMeta
}

// keySource gives one inner primary key column its value: a bind variable,
// or an outer column (param "").
type keySource struct {
	param    string
	outerOrd int
}

// intFilter is `column op ?` on the outer or the inner table.
type intFilter struct {
	inner bool
	ord   int
	op    string // =, <, <=, >, >=
	param string
}

type countKind uint8

const (
	countStar     countKind = iota + 1 // COUNT(*)
	countCol                           // COUNT(col): non-NULL values
	countDistinct                      // COUNT(DISTINCT col)
)

// joinSide is one table of a join being recognised.
type joinSide struct {
	p           *fastPlan // resolved into p.meta, p.dbKey, ...
	qualifierOK func(ast.TableName) bool
}

// recogniseJoin returns a plan for a counting join, or nil.
func (fe *Frontend) recogniseJoin(ctx *sql.Context, query string, sel *ast.Select, fields []*querypb.Field) *fastPlan {
	if sel.With != nil || sel.GroupBy != nil || sel.Having != nil || sel.Window != nil || sel.Into != nil ||
		sel.QueryOpts.SQLCalcFoundRows || sel.QueryOpts.Distinct || sel.OrderBy != nil || sel.Limit != nil ||
		sel.Lock != "" {
		return nil
	}
	point := plainColumns(sel.SelectExprs) // a join of two point reads (fast_joinpoint.go)
	if !point && len(sel.SelectExprs) != 1 {
		return nil
	}
	left, right, on, ok := joinTables(sel.From)
	if !ok {
		return nil
	}
	var sides [2]joinSide
	for i, te := range []*ast.AliasedTableExpr{left, right} {
		if te.Partitions != nil || te.Hints != nil || te.AsOf != nil || te.Lateral {
			return nil
		}
		tn, isName := te.Expr.(ast.TableName)
		if !isName {
			return nil
		}
		sides[i].p = &fastPlan{query: query, fields: fields}
		if sides[i].qualifierOK = fe.resolveFastTable(ctx, sides[i].p, tn, te.As); sides[i].qualifierOK == nil {
			return nil
		}
	}
	if strings.EqualFold(aliasOf(left), aliasOf(right)) {
		return nil // MySQL: 1066 Not unique table/alias
	}
	var conds []ast.Expr
	if sel.Where != nil {
		conds = conjuncts(sel.Where.Expr, conds)
	}
	if on != nil {
		conds = conjuncts(on, conds)
	}
	if conds == nil {
		return nil
	}
	// Either table may be the outer one: the first order that fits.
	for _, outer := range []int{0, 1} {
		if point {
			if p := recognisePointJoin(sel, sides[outer], sides[1-outer], conds); p != nil {
				return p
			}
			// recognisePointJoin may have filled the side's params.
			sides[outer].p.params = nil
			continue
		}
		if p := recogniseJoinOrder(sel, sides[outer], sides[1-outer], conds); p != nil {
			return p
		}
	}
	return nil
}

// joinTables returns the two tables of a comma join or an inner join, and
// the ON condition if any.
func joinTables(from ast.TableExprs) (left, right *ast.AliasedTableExpr, on ast.Expr, ok bool) {
	switch len(from) {
	case 2:
		left, ok = from[0].(*ast.AliasedTableExpr)
		if !ok {
			return nil, nil, nil, false
		}
		right, ok = from[1].(*ast.AliasedTableExpr)
		return left, right, nil, ok
	case 1:
		j, isJoin := from[0].(*ast.JoinTableExpr)
		if !isJoin || j.Join != ast.JoinStr || j.Condition.Using != nil {
			return nil, nil, nil, false
		}
		left, ok = j.LeftExpr.(*ast.AliasedTableExpr)
		if !ok {
			return nil, nil, nil, false
		}
		right, ok = j.RightExpr.(*ast.AliasedTableExpr)
		return left, right, j.Condition.On, ok
	}
	return nil, nil, nil, false
}

// aliasOf is the name a table expression's columns are qualified with.
func aliasOf(te *ast.AliasedTableExpr) string {
	if !te.As.IsEmpty() {
		return te.As.String()
	}
	return te.Expr.(ast.TableName).Name.String()
}

// conjuncts appends the terms of a conjunction to out.
func conjuncts(e ast.Expr, out []ast.Expr) []ast.Expr {
	switch x := e.(type) {
	case *ast.AndExpr:
		return conjuncts(x.Right, conjuncts(x.Left, out))
	case *ast.ParenExpr:
		return conjuncts(x.Expr, out)
	}
	return append(out, e)
}

// joinColumn resolves a column reference: which side (0 outer, 1 inner)
// and its ordinal; ok is false for an unknown or ambiguous column.
func joinColumn(c *ast.ColName, outer, inner joinSide) (side, ord int, ok bool) {
	found := 0
	for i, js := range []joinSide{outer, inner} {
		if !js.qualifierOK(c.Qualifier) {
			continue
		}
		if o := js.p.meta.colIndex(c.Name.String()); o >= 0 {
			side, ord = i, o
			found++
		}
	}
	return side, ord, found == 1
}

// joinIntType reports the column types joins and filters compare on the
// fast path: integers that fit an int64.
func joinIntType(t sql.Type) bool {
	return types.IsInteger(t) && t.Type() != sqltypes.Uint64
}

// flipOp is op with its operands swapped (? < col is col > ?).
func flipOp(op string) string {
	switch op {
	case ast.LessThanStr:
		return ast.GreaterThanStr
	case ast.LessEqualStr:
		return ast.GreaterEqualStr
	case ast.GreaterThanStr:
		return ast.LessThanStr
	case ast.GreaterEqualStr:
		return ast.LessEqualStr
	}
	return op
}

// joinColRef names a column of a join: side 0 is the outer table, 1 the
// inner one; ord the column's ordinal.
type joinColRef struct{ side, ord int }

// joinCmp is `column op marker` in a join's WHERE.
type joinCmp struct {
	col   joinColRef
	op    string
	param string
}

// splitJoinConds reads a join's conjuncts: comparisons of a column of
// either table with a marker (=, <, <=, >, >=; BETWEEN as >= and <=), and
// equalities between an outer and an inner column ([outer, inner]). ok is
// false for any other conjunct.
func splitJoinConds(conds []ast.Expr, outer, inner joinSide) (cmps []joinCmp, joins [][2]joinColRef, ok bool) {
	for _, c := range conds {
		switch x := c.(type) {
		case *ast.ComparisonExpr:
			if x.Escape != nil {
				return nil, nil, false
			}
			switch x.Operator {
			case ast.EqualStr, ast.LessThanStr, ast.LessEqualStr, ast.GreaterThanStr, ast.GreaterEqualStr:
			default:
				return nil, nil, false
			}
			lc, lIsCol := x.Left.(*ast.ColName)
			rc, rIsCol := x.Right.(*ast.ColName)
			switch {
			case lIsCol && rIsCol:
				ls, lo, ok1 := joinColumn(lc, outer, inner)
				rs, ro, ok2 := joinColumn(rc, outer, inner)
				if !ok1 || !ok2 || ls == rs || x.Operator != ast.EqualStr {
					return nil, nil, false
				}
				if ls == 1 {
					lo, ro = ro, lo
				}
				joins = append(joins, [2]joinColRef{{0, lo}, {1, ro}})
			case lIsCol || rIsCol:
				col, other, op := lc, x.Right, x.Operator
				if rIsCol {
					col, other, op = rc, x.Left, flipOp(op)
				}
				name, ok := paramName(other)
				if !ok {
					return nil, nil, false
				}
				side, ord, ok := joinColumn(col, outer, inner)
				if !ok {
					return nil, nil, false
				}
				cmps = append(cmps, joinCmp{joinColRef{side, ord}, op, name})
			default:
				return nil, nil, false
			}
		case *ast.RangeCond:
			col, isCol := x.Left.(*ast.ColName)
			from, ok1 := paramName(x.From)
			to, ok2 := paramName(x.To)
			if x.Operator != ast.BetweenStr || !isCol || !ok1 || !ok2 {
				return nil, nil, false
			}
			side, ord, ok := joinColumn(col, outer, inner)
			if !ok {
				return nil, nil, false
			}
			cmps = append(cmps, joinCmp{joinColRef{side, ord}, ast.GreaterEqualStr, from}, joinCmp{joinColRef{side, ord}, ast.LessEqualStr, to})
		default:
			return nil, nil, false
		}
	}
	return cmps, joins, true
}

// bindInnerParts encodes the inner key columns bound by markers (nil for
// those taken from the outer row); none is true when no inner row can
// match, ok false for a value the fast path does not bind.
func (js *joinSpec) bindInnerParts(bind map[string]*querypb.BindVariable) (parts [][]byte, none, ok bool) {
	parts = make([][]byte, len(js.innerKey))
	for i, src := range js.innerKey {
		if src.param == "" {
			continue
		}
		kc, bv := &js.inner.meta.pk.cols[i], bind[src.param]
		if negativeForUnsigned(kc, bv) {
			return nil, false, false
		}
		var n bool
		if parts[i], n, ok = appendBoundKey(nil, kc, bv); !ok {
			return nil, false, false
		}
		none = none || n
	}
	return parts, none, true
}

// recogniseJoinOrder returns the plan with outer read by an index prefix
// and inner by primary key, or nil.
func recogniseJoinOrder(sel *ast.Select, outer, inner joinSide, conds []ast.Expr) *fastPlan {
	om, im := outer.p.meta, inner.p.meta
	cmps, joins, ok := splitJoinConds(conds, outer, inner)
	if !ok {
		return nil
	}
	metaOf := func(side int) *tableMeta {
		if side == 0 {
			return om
		}
		return im
	}

	spec := &joinSpec{rangeOrd: -1}
	// The inner row: every primary key column from a parameter or an
	// outer column of the same integer type.
	for _, kc := range im.pk.cols {
		if kc.prefix != 0 || !fastKeyType(kc.typ) {
			return nil
		}
		src := keySource{outerOrd: -1}
		for i, c := range cmps {
			if c.col.side == 1 && c.col.ord == kc.ord && c.op == ast.EqualStr && c.param != "" {
				src.param = c.param
				cmps[i].param = "" // consumed
				break
			}
		}
		if src.param == "" {
			for _, j := range joins {
				if j[1].ord == kc.ord {
					ot := om.schema.Schema[j[0].ord].Type
					if !joinIntType(kc.typ) || !ot.Equals(kc.typ) {
						return nil
					}
					src.outerOrd = j[0].ord
					break
				}
			}
		}
		if src.param == "" && src.outerOrd < 0 {
			return nil
		}
		spec.innerKey = append(spec.innerKey, src)
	}
	// Every join condition must be what an inner key column is read by.
	for _, j := range joins {
		carried := false
		for i, kc := range im.pk.cols {
			src := spec.innerKey[i]
			carried = carried || (kc.ord == j[1].ord && src.param == "" && src.outerOrd == j[0].ord)
		}
		if !carried {
			return nil
		}
	}
	// The outer read: an index whose leading columns equalities fix.
	eqs := map[int]string{}
	for _, c := range cmps {
		if c.col.side == 0 && c.op == ast.EqualStr && c.param != "" {
			if _, dup := eqs[c.col.ord]; !dup {
				eqs[c.col.ord] = c.param
			}
		}
	}
	p := outer.p
	p.prefix = &prefixSpec{}
	best, bestRange := 0, false
	try := func(idx int, codec *keyCodec) {
		n := fixedLeading(codec, eqs)
		if n == 0 {
			return
		}
		rng := false
		if n < len(codec.cols) && codec.cols[n].prefix == 0 && joinIntType(codec.cols[n].typ) {
			next := codec.cols[n].ord
			for _, c := range cmps {
				rng = rng || (c.col.side == 0 && c.col.ord == next && c.op != ast.EqualStr)
			}
		}
		if n > best || (n == best && rng && !bestRange) {
			best, bestRange = n, rng
			p.prefix.idx, p.prefix.codec = idx, codec
		}
	}
	try(storage.PrimaryIndex, &om.pk)
	for i := range om.indexes {
		try(i, &om.indexes[i].codec)
	}
	if best == 0 {
		return nil
	}
	for _, kc := range p.prefix.codec.cols[:best] {
		p.prefix.params = append(p.prefix.params, eqs[kc.ord])
	}
	if bestRange {
		spec.rangeOrd = p.prefix.codec.cols[best].ord
	}
	prefixed := map[int]bool{}
	for _, kc := range p.prefix.codec.cols[:best] {
		prefixed[kc.ord] = true
	}
	// Every other comparison is a filter on integers.
	for _, c := range cmps {
		if c.param == "" {
			continue // an inner key column
		}
		if c.col.side == 0 && c.op == ast.EqualStr && prefixed[c.col.ord] && eqs[c.col.ord] == c.param {
			continue // the prefix itself
		}
		if !joinIntType(metaOf(c.col.side).schema.Schema[c.col.ord].Type) {
			return nil
		}
		spec.filters = append(spec.filters, intFilter{inner: c.col.side == 1, ord: c.col.ord, op: c.op, param: c.param})
	}

	// The aggregate.
	ae, ok := sel.SelectExprs[0].(*ast.AliasedExpr)
	if !ok {
		return nil
	}
	f, ok := ae.Expr.(*ast.FuncExpr)
	if !ok || !strings.EqualFold(f.Name.String(), "count") || f.Over != nil || !f.Qualifier.IsEmpty() || len(f.Exprs) != 1 {
		return nil
	}
	switch x := f.Exprs[0].(type) {
	case *ast.StarExpr:
		if f.Distinct || !x.TableName.IsEmpty() {
			return nil
		}
		spec.count = countStar
	case *ast.AliasedExpr:
		e := x.Expr
		for {
			pe, isParen := e.(*ast.ParenExpr)
			if !isParen {
				break
			}
			e = pe.Expr // COUNT(DISTINCT (s_i_id)): sysbench-tpcc's Stock-Level
		}
		col, isCol := e.(*ast.ColName)
		if !isCol {
			return nil
		}
		side, ord, ok := joinColumn(col, outer, inner)
		if !ok {
			return nil
		}
		spec.count, spec.countIn, spec.countOrd = countCol, side == 1, ord
		if f.Distinct {
			if !joinIntType(metaOf(side).schema.Schema[ord].Type) {
				return nil
			}
			spec.count = countDistinct
		}
	default:
		return nil
	}
	if p.fields != nil && (len(p.fields) != 1 || p.fields[0].Type != querypb.Type_INT64) {
		return nil
	}

	// Columns to decode.
	need := func(inner bool, ord int) {
		if inner {
			spec.innerN = max(spec.innerN, ord+1)
		} else {
			spec.outerN = max(spec.outerN, ord+1)
		}
	}
	for _, src := range spec.innerKey {
		if src.param == "" {
			need(false, src.outerOrd)
		}
	}
	for _, fl := range spec.filters {
		need(fl.inner, fl.ord)
	}
	if spec.count != countStar {
		need(spec.countIn, spec.countOrd)
	}
	spec.inner = joinTable{dbKey: inner.p.dbKey, tableKey: inner.p.tableKey, curDB: inner.p.curDB, meta: im}
	p.join = spec
	p.cols = []int{0} // one output value (the count)
	return p
}

// joinParam is a filter's bound value.
type joinParam struct {
	v    int64
	null bool
}

// bindFilters reads the filters' parameters; ok is false when one is not
// an integer the fast path compares (go-mysql-server runs the statement).
func (js *joinSpec) bindFilters(bind map[string]*querypb.BindVariable, out []joinParam) ([]joinParam, bool) {
	for _, fl := range js.filters {
		bv := bind[fl.param]
		if bv == nil {
			return nil, false
		}
		if bv.Type == querypb.Type_NULL_TYPE {
			out = append(out, joinParam{null: true})
			continue
		}
		if !sqltypes.IsIntegral(bv.Type) {
			return nil, false
		}
		n, err := strconv.ParseInt(string(bv.Value), 10, 64)
		if err != nil {
			return nil, false // an unsigned value past 2^63-1
		}
		out = append(out, joinParam{v: n})
	}
	return out, true
}

// int64Of returns a decoded integer column value as an int64 (joinIntType
// columns all fit); ok is false for NULL.
func int64Of(v interface{}) (int64, bool) {
	neg, mag, _, ok := intValue(v)
	switch {
	case !ok, !neg && mag > math.MaxInt64:
		return 0, false
	case neg:
		return int64(-mag), true
	}
	return int64(mag), true
}

// holds evaluates `v op p`.
func holds(v int64, op string, p int64) bool {
	switch op {
	case ast.EqualStr:
		return v == p
	case ast.LessThanStr:
		return v < p
	case ast.LessEqualStr:
		return v <= p
	case ast.GreaterThanStr:
		return v > p
	default:
		return v >= p
	}
}

// passes reports whether row (of the outer or inner table) satisfies the
// filters on that table.
func (js *joinSpec) passes(inner bool, row sql.Row, params []joinParam) bool {
	for i, fl := range js.filters {
		if fl.inner != inner {
			continue
		}
		v, ok := int64Of(row[fl.ord])
		if !ok || !holds(v, fl.op, params[i].v) {
			return false
		}
	}
	return true
}

// appendIntColumnKey appends the key encoding of integer v for key column
// kc; ok is false when v is outside the column's range (no row has it).
func appendIntColumnKey(b []byte, kc *keyColumn, v int64) ([]byte, bool) {
	if types.IsUnsigned(kc.typ) {
		if v < 0 || uint64(v) > unsignedMax(kc.typ) {
			return b, false
		}
		return binary.BigEndian.AppendUint64(append(b, keyNotNull), uint64(v)), true
	}
	lo, hi := intRange(kc.typ)
	if v < lo || v > hi {
		return b, false
	}
	return appendIntKey(append(b, keyNotNull), v), true
}

// narrow returns the outer read's range: the prefix lo, narrowed by the
// filters on the column after it where their values are in its range (the
// filters still decide each row).
func (js *joinSpec) narrow(spec *prefixSpec, prefix []byte, params []joinParam) storage.Range {
	rng := storage.Range{Lo: prefix, Hi: prefixEnd(prefix)}
	if js.rangeOrd < 0 {
		return rng
	}
	kc := &spec.codec.cols[len(spec.params)]
	for i, fl := range js.filters {
		if fl.inner || fl.ord != js.rangeOrd || fl.op == ast.EqualStr {
			continue
		}
		k, ok := appendIntColumnKey(slices.Clip(prefix), kc, params[i].v)
		if !ok {
			continue
		}
		switch fl.op {
		case ast.GreaterEqualStr:
			if string(k) > string(rng.Lo) {
				rng.Lo = k
			}
		case ast.GreaterThanStr:
			if k = prefixEnd(k); string(k) > string(rng.Lo) {
				rng.Lo = k
			}
		case ast.LessThanStr:
			if string(k) < string(rng.Hi) {
				rng.Hi = k
			}
		case ast.LessEqualStr:
			if k = prefixEnd(k); string(k) < string(rng.Hi) {
				rng.Hi = k
			}
		}
	}
	return rng
}

// runJoin executes a counting join plan.
func (s *Session) runJoin(ctx context.Context, p *fastPlan, entry *tableEntry, bind map[string]*querypb.BindVariable, explicit bool) (*sqltypes.Result, bool, error) {
	js, spec := p.join, p.prefix
	sctx := s.fastContext()
	in := js.inner
	if in.curDB != "" && !strings.EqualFold(sctx.GetCurrentDatabase(), in.curDB) {
		return nil, false, nil
	}
	innerEntry := s.fe.lookupEntry(in.dbKey, in.tableKey)
	if innerEntry == nil || innerEntry.load() != in.meta || s.hidesTable(in.dbKey, in.tableKey) {
		return nil, false, nil
	}
	if !s.lockFast(in.dbKey, in.tableKey, innerEntry, false) { // mdl.go
		return nil, false, nil
	}
	if js.point != nil {
		return s.runPointJoin(ctx, p, entry, innerEntry, bind, explicit)
	}
	if len(p.fields) != 1 || p.fields[0].Type != querypb.Type_INT64 {
		return nil, false, nil
	}
	var paramBuf [8]joinParam
	params, ok := js.bindFilters(bind, paramBuf[:0])
	if !ok {
		return nil, false, nil
	}
	none := false
	for _, pr := range params {
		none = none || pr.null
	}
	var keyBuf [64]byte
	lo := keyBuf[:0]
	for i, name := range spec.params {
		kc, bv := &spec.codec.cols[i], bind[name]
		if negativeForUnsigned(kc, bv) {
			return nil, false, nil
		}
		var n bool
		if lo, n, ok = appendBoundKey(lo, kc, bv); !ok {
			return nil, false, nil
		}
		none = none || n
	}
	// The inner key's parameter parts, bound once.
	innerParts, innerNone, ok := js.bindInnerParts(bind)
	if !ok {
		return nil, false, nil
	}
	none = none || innerNone
	return s.runRead(p, nil, explicit, none, []sqltypes.Value{sqltypes.NewInt64(0)}, func(sctx *sql.Context, tx *storage.Tx, mode txn.LockMode) ([][]sqltypes.Value, error) {
		count, err := js.countRows(sctx, tx, entry.store, spec.idx, js.narrow(spec, lo, params), innerEntry.store, innerParts, params, mode)
		return [][]sqltypes.Value{{sqltypes.NewInt64(count)}}, err
	})
}

// countRows reads range rng of the outer table's index idx, looks each
// passing row's inner row up and counts.
func (js *joinSpec) countRows(ctx *sql.Context, tx *storage.Tx, outer *storage.Table, idx int, rng storage.Range,
	inner *storage.Table, innerParts [][]byte, params []joinParam, mode txn.LockMode) (int64, error) {
	cur := tx.Cursor(ctx, outer, idx, rng, false, mode)
	defer cur.Close()
	var (
		n        int64
		distinct []int64
		key      []byte
	)
	for {
		_, stored, ok, err := cur.Next()
		if err != nil || !ok {
			if js.count == countDistinct {
				slices.Sort(distinct)
				n = int64(len(slices.Compact(distinct)))
			}
			return n, err
		}
		orow, err := decodeRow(stored, js.outerN)
		if err != nil {
			return 0, err
		}
		if !js.passes(false, orow, params) {
			continue
		}
		if key, ok = js.innerKeyOf(key[:0], orow, innerParts); !ok {
			continue
		}
		istored, found, err := tx.Get(ctx, inner, key, mode)
		if err != nil {
			return 0, err
		}
		if !found {
			continue
		}
		irow, err := decodeRow(istored, js.innerN)
		if err != nil {
			return 0, err
		}
		if !js.passes(true, irow, params) {
			continue
		}
		row := orow
		if js.countIn {
			row = irow
		}
		switch {
		case js.count == countStar:
			n++
		case row[js.countOrd] == nil: // COUNT(col) skips NULLs
		case js.count == countCol:
			n++
		default:
			v, _ := int64Of(row[js.countOrd])
			distinct = append(distinct, v)
		}
	}
}

// innerKeyOf appends to key the inner primary key for outer row orow (the
// parameter parts bound in innerParts); ok is false when no inner row can
// match (a NULL, or a value outside the key column's range).
func (js *joinSpec) innerKeyOf(key []byte, orow sql.Row, innerParts [][]byte) ([]byte, bool) {
	ipk := js.inner.meta.pk.cols
	for i, src := range js.innerKey {
		if src.param != "" {
			key = append(key, innerParts[i]...)
			continue
		}
		v, ok := int64Of(orow[src.outerOrd])
		if !ok {
			return key, false
		}
		if key, ok = appendIntColumnKey(key, &ipk[i], v); !ok {
			return key, false
		}
	}
	return key, true
}
