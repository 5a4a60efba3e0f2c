package sqlfront

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"

	"lockstep/internal/storage"
	"lockstep/internal/storage/rowenc"
	"lockstep/internal/txn"
)

// Writes on the fast path:
//
//	UPDATE t SET col = ? | col = col + ? | col = col - ? [, ...] WHERE <keys>
//	DELETE FROM t WHERE <keys>
//	INSERT INTO t [(cols)] VALUES (?, ...) [, (?, ...) ...]
//	  [ON DUPLICATE KEY UPDATE col = VALUES(c) | ? | col ± ? | col ± VALUES(c) [, ...]]
//	REPLACE INTO t [(cols)] VALUES (?, ...) [, (?, ...) ...]
//
// where <keys> is pk1 = ? [AND ...] naming the whole primary key, or an IN
// list over it — pk IN (?, ...), (pk1, pk2, ...) IN ((?, ?, ...), ...) —
// which may also name only the key's leading columns, each item then
// meaning every row under that key prefix (TPC-C's Delivery). Rows are
// locked and changed in key order, each once (a literal may stand where a
// marker does). Parity with go-mysql-server
// is kept by construction: every value goes through the column type's own
// Convert, as go-mysql-server's INSERT and UPDATE do, and anything that is
// not plainly in range — a conversion error or an out-of-range value, a
// NULL for a NOT NULL column, a duplicate key, a value whose type is not the
// column's kind (an integer for an integer column, a string for a string
// column), an AUTO_INCREMENT value to generate, a non-literal default —
// undoes what the statement did and hands the statement to go-mysql-server,
// which then gives MySQL's error or warning. Tables with triggers, generated
// columns or ON UPDATE columns, and tables that declare a foreign key or
// that one references (fkWriteBlocked), are always left to go-mysql-server.

// writeKind is the kind of a write plan.
type writeKind uint8

const (
	writeUpdate writeKind = iota + 1
	writeDelete
	writeInsert
)

// writeSpec is the write part of a fastPlan.
type writeSpec struct {
	kind writeKind
	sets []assignment // UPDATE
	// INSERT: the column ordinal of each VALUES position, the rows, and
	// the columns left to their defaults.
	cols    []int
	rows    [][]valueSource
	omitted []int
	// autoOmitted: the AUTO_INCREMENT column is not listed, so every row
	// takes a generated value (fastInsert).
	autoOmitted bool
	// upsert is what an INSERT does with a row whose primary key exists
	// (fast_upsert.go): fail (upsertNone), update it (ON DUPLICATE KEY
	// UPDATE, with onDup), or replace it (REPLACE).
	upsert upsertKind
	onDup  []assignment
}

// valueSource is a value in the statement: a bind variable or a literal.
type valueSource struct {
	param string      // bind variable name; "" for a literal
	lit   interface{} // the literal (int64, uint64, string or nil)
	now   bool        // NOW() (UPDATE SET, INSERT VALUES): the statement's time
}

// assignment is one `col = v` or `col = col ± v` of an UPDATE.
type assignment struct {
	ord   int
	src   valueSource
	delta bool // col = col + v
	minus bool // col = col - v
	// ON DUPLICATE KEY UPDATE: with fromRow the value is VALUES(c), c
	// the column of ordinal rowOrd (of the row the statement would have
	// inserted), not src.
	fromRow bool
	rowOrd  int
}

// mayBeFastWrite is the cheap text filter for writes.
func mayBeFastWrite(q string) bool {
	q = strings.TrimLeft(q, " \t\r\n")
	return len(q) > 7 && (strings.EqualFold(q[:6], "update") || strings.EqualFold(q[:6], "delete") || strings.EqualFold(q[:6], "insert") ||
		strings.EqualFold(q[:7], "replace"))
}

// writableMeta reports whether the fast path may write a table of this
// definition: no generated columns, no ON UPDATE expressions, no CHECK
// constraints (go-mysql-server evaluates them).
func writableMeta(m *tableMeta) bool {
	if len(m.checks) > 0 {
		return false
	}
	for _, c := range m.schema.Schema {
		if c.Generated != nil || c.OnUpdate != nil {
			return false
		}
	}
	return true
}

// valueSourceOf returns the source of a value expression: a marker, an
// integer, decimal or string literal, or NULL. A decimal literal (digits
// with a point, no exponent: 10.500000, which sysbench-tpcc's Payment and
// Delivery write) is an exact decimal, as go-mysql-server's planner makes
// it; one with an exponent is a DOUBLE there and stays with it.
func valueSourceOf(e ast.Expr) (valueSource, bool) {
	switch x := e.(type) {
	case *ast.NullVal:
		return valueSource{}, true
	case *ast.SQLVal:
		switch x.Type {
		case ast.ValArg:
			return valueSource{param: strings.TrimPrefix(string(x.Val), ":")}, true
		case ast.IntVal:
			if n, err := strconv.ParseInt(string(x.Val), 10, 64); err == nil {
				return valueSource{lit: n}, true
			}
			if u, err := strconv.ParseUint(string(x.Val), 10, 64); err == nil {
				return valueSource{lit: u}, true
			}
		case ast.StrVal:
			return valueSource{lit: string(x.Val)}, true
		case ast.FloatVal:
			if bytes.IndexAny(x.Val, "eE") < 0 {
				if d, err := decimal.NewFromString(string(x.Val)); err == nil {
					return valueSource{lit: d}, true
				}
			}
		}
	}
	return valueSource{}, false
}

// singleTable returns the table name of a one-table FROM/UPDATE list.
func singleTable(tes ast.TableExprs) (ast.TableName, ast.TableIdent, bool) {
	if len(tes) != 1 {
		return ast.TableName{}, ast.TableIdent{}, false
	}
	te, ok := tes[0].(*ast.AliasedTableExpr)
	if !ok || te.Partitions != nil || te.Hints != nil || te.AsOf != nil || te.Lateral {
		return ast.TableName{}, ast.TableIdent{}, false
	}
	tn, ok := te.Expr.(ast.TableName)
	return tn, te.As, ok
}

// recogniseUpdate returns a plan for an UPDATE by the whole primary key.
func (fe *Frontend) recogniseUpdate(ctx *sql.Context, query string, u *ast.Update) *fastPlan {
	if u.With != nil || u.Ignore != "" || u.OrderBy != nil || u.Limit != nil || u.Where == nil || len(u.Returning) > 0 {
		return nil
	}
	tn, as, ok := singleTable(u.TableExprs)
	if !ok {
		return nil
	}
	p := &fastPlan{query: query, write: &writeSpec{kind: writeUpdate}}
	qualifierOK := fe.resolveFastTable(ctx, p, tn, as)
	if qualifierOK == nil || !writableMeta(p.meta) {
		return nil
	}
	m := p.meta
	if p.write.sets = recogniseAssignments(m, u.Exprs, qualifierOK, false); p.write.sets == nil {
		return nil
	}
	if p.params = keyParams(u.Where.Expr, m, qualifierOK); p.params == nil && !recogniseMultiPoint(u.Where.Expr, p, qualifierOK, true) &&
		!recogniseKeyPrefix(u.Where.Expr, p, qualifierOK) {
		return nil
	}
	return p
}

// recogniseKeyPrefix fills p.multi with one item from a WHERE of
// equalities with markers naming the primary key's leading columns (not
// all of them): an UPDATE or DELETE of every row under that key prefix
// (sysbench-tpcc's Delivery, `UPDATE order_line SET ol_delivery_d = NOW()
// WHERE ol_o_id = ? AND ol_d_id = ? AND ol_w_id = ?`). It is then the
// one-item IN list over leading key columns the writes already take:
// the rows are locked and written in key order, as go-mysql-server's
// UPDATE reads the same prefix range.
func recogniseKeyPrefix(where ast.Expr, p *fastPlan, qualifierOK func(ast.TableName) bool) bool {
	m := p.meta
	eqs := map[int]string{}
	if !collectKeyEqualities(where, m, qualifierOK, eqs) || len(eqs) == 0 || len(eqs) >= len(m.pk.cols) {
		return false
	}
	names := make([]string, 0, len(eqs))
	for _, kc := range m.pk.cols[:len(eqs)] {
		name, ok := eqs[kc.ord]
		if !ok || kc.prefix != 0 || !fastKeyType(kc.typ) {
			return false
		}
		names = append(names, name)
	}
	p.multi, p.multiPrefix = [][]string{names}, true
	return true
}

// isNow reports NOW() without a precision (CURRENT_TIMESTAMP and NOW(n)
// are left to go-mysql-server).
func isNow(e ast.Expr) bool {
	f, ok := e.(*ast.FuncExpr)
	return ok && strings.EqualFold(f.Name.String(), "now") && f.Qualifier.IsEmpty() && len(f.Exprs) == 0 && !f.Distinct && f.Over == nil
}

// nowColumn reports whether the fast path stores NOW() into col: DATETIME
// and TIMESTAMP columns only (a DATE column truncates it, a string or
// number column converts it; go-mysql-server does those).
func nowColumn(col *sql.Column) bool {
	tt := col.Type.Type()
	return !col.AutoIncrement && (tt == sqltypes.Datetime || tt == sqltypes.Timestamp)
}

// nowValue is NOW() as go-mysql-server evaluates it for a statement that
// starts now: its own Now function over a query time taken at the
// statement's start (go-mysql-server's handler takes it when it creates
// the query's context), in the session's time zone, whole seconds.
func nowValue(sctx *sql.Context) (interface{}, error) {
	sctx.SetQueryTime(sql.Now())
	now, err := function.NewNow()
	if err != nil {
		return nil, errFastFallback
	}
	v, err := now.Eval(sctx, nil)
	if err != nil {
		return nil, errFastFallback
	}
	return v, nil
}

// recogniseAssignments returns the assignments of an UPDATE's SET list or
// (values true) of an ON DUPLICATE KEY UPDATE list, or nil for a form the
// fast path does not take. Each is `col = v` or `col = col ± v`, v a
// marker or a literal — or with values VALUES(c), the column c of the row
// the statement would have inserted —, at most once per column and never
// on a key column; ± only on the columns deltaColumn takes, never with a
// NULL literal.
func recogniseAssignments(m *tableMeta, list ast.AssignmentExprs, qualifierOK func(ast.TableName) bool, values bool) []assignment {
	out := make([]assignment, 0, len(list))
	seen := map[int]bool{}
	sch := m.schema.Schema
	for _, a := range list {
		if !qualifierOK(a.Name.Qualifier) {
			return nil
		}
		ord := m.colIndex(a.Name.Name.String())
		if ord < 0 || seen[ord] || m.isPKColumn(ord) {
			return nil
		}
		seen[ord] = true
		as := assignment{ord: ord}
		e := a.Expr
		if b, ok := e.(*ast.BinaryExpr); ok {
			col, ok := b.Left.(*ast.ColName)
			if !ok || (b.Operator != ast.PlusStr && b.Operator != ast.MinusStr) || !qualifierOK(col.Qualifier) ||
				m.colIndex(col.Name.String()) != ord || !deltaColumn(m.schema.Schema[ord].Type) {
				return nil
			}
			as.delta, as.minus = true, b.Operator == ast.MinusStr
			e = b.Right
		}
		if vf, ok := e.(*ast.ValuesFuncExpr); ok && values {
			if vf.Name == nil || !qualifierOK(vf.Name.Qualifier) {
				return nil
			}
			if as.rowOrd = m.colIndex(vf.Name.Name.String()); as.rowOrd < 0 {
				return nil
			}
			as.fromRow = true
		} else if !values && !as.delta && isNow(e) {
			if !nowColumn(sch[ord]) {
				return nil
			}
			as.src.now = true
		} else if as.src, ok = valueSourceOf(e); !ok || (as.delta && as.src.param == "" && as.src.lit == nil) {
			return nil
		}
		out = append(out, as)
	}
	return out
}

// recogniseDelete returns a plan for a DELETE by the whole primary key.
func (fe *Frontend) recogniseDelete(ctx *sql.Context, query string, d *ast.Delete) *fastPlan {
	if d.With != nil || d.Targets != nil || d.Partitions != nil || d.OrderBy != nil || d.Limit != nil ||
		d.Where == nil || len(d.Returning) > 0 {
		return nil
	}
	tn, as, ok := singleTable(d.TableExprs)
	if !ok {
		return nil
	}
	p := &fastPlan{query: query, write: &writeSpec{kind: writeDelete}}
	qualifierOK := fe.resolveFastTable(ctx, p, tn, as)
	if qualifierOK == nil || !writableMeta(p.meta) {
		return nil
	}
	if p.params = keyParams(d.Where.Expr, p.meta, qualifierOK); p.params == nil && !recogniseMultiPoint(d.Where.Expr, p, qualifierOK, true) &&
		!recogniseKeyPrefix(d.Where.Expr, p, qualifierOK) {
		return nil
	}
	return p
}

// recogniseInsert returns a plan for INSERT ... VALUES of markers and
// literals.
func (fe *Frontend) recogniseInsert(ctx *sql.Context, query string, ins *ast.Insert) *fastPlan {
	if ins.Ignore != "" || ins.With != nil || ins.Partitions != nil || len(ins.Returning) > 0 {
		return nil
	}
	upsert := upsertNone
	switch {
	case ins.Action == ast.ReplaceStr && len(ins.OnDup) == 0:
		upsert = upsertReplace
	case ins.Action != ast.InsertStr:
		return nil
	case len(ins.OnDup) > 0:
		upsert = upsertUpdate
	}
	vals, ok := ins.Rows.(*ast.AliasedValues)
	if !ok || !vals.As.IsEmpty() || len(vals.Columns) > 0 || len(vals.Values) == 0 {
		return nil
	}
	p := &fastPlan{query: query, write: &writeSpec{kind: writeInsert, upsert: upsert}}
	qualifierOK := fe.resolveFastTableOf(ctx, p, ins.Table, ast.TableIdent{}, true)
	if qualifierOK == nil || !writableMeta(p.meta) {
		return nil
	}
	if upsert != upsertNone && !upsertable(p.meta) {
		return nil
	}
	if upsert == upsertUpdate {
		if p.write.onDup = recogniseAssignments(p.meta, ast.AssignmentExprs(ins.OnDup), qualifierOK, true); p.write.onDup == nil {
			return nil
		}
	}
	m, w := p.meta, p.write
	listed := make([]bool, len(m.schema.Schema))
	if len(ins.Columns) == 0 {
		for i := range m.schema.Schema {
			w.cols = append(w.cols, i)
			listed[i] = true
		}
	}
	for _, c := range ins.Columns {
		ord := m.colIndex(c.String())
		if ord < 0 || listed[ord] {
			return nil
		}
		listed[ord] = true
		w.cols = append(w.cols, ord)
	}
	for ord, col := range m.schema.Schema {
		if listed[ord] {
			continue
		}
		// An omitted column takes its default: NULL or a literal; an
		// omitted AUTO_INCREMENT column a generated value (a plain
		// INSERT only). An expression default or a NOT NULL column
		// without one is left to go-mysql-server.
		if col.AutoIncrement {
			if upsert != upsertNone {
				return nil
			}
			w.autoOmitted = true
			continue
		}
		if (col.Default == nil && !col.Nullable) || (col.Default != nil && !col.Default.IsLiteral()) {
			return nil
		}
		w.omitted = append(w.omitted, ord)
	}
	for _, tuple := range vals.Values {
		if len(tuple) != len(w.cols) {
			return nil
		}
		row := make([]valueSource, len(tuple))
		for i, e := range tuple {
			if isNow(e) && nowColumn(m.schema.Schema[w.cols[i]]) {
				row[i].now = true
				continue
			}
			if row[i], ok = valueSourceOf(e); !ok {
				return nil
			}
		}
		w.rows = append(w.rows, row)
	}
	return p
}

// isPKColumn reports whether column ord is part of the primary key.
func (m *tableMeta) isPKColumn(ord int) bool {
	for _, kc := range m.pk.cols {
		if kc.ord == ord {
			return true
		}
	}
	return false
}

// errFastFallback is an internal signal: undo the statement and let go-
// mysql-server run it.
var errFastFallback = errors.New("lockstep: fast path falls back")

// sourceValue returns the Go value go-mysql-server would evaluate src to
// (as its bind variable conversion does), checked to be of the kind col
// takes without coercion; errFastFallback otherwise.
func sourceValue(src valueSource, bind map[string]*querypb.BindVariable, col *sql.Column) (interface{}, error) {
	v, err := bindValue(src, bind)
	if err != nil {
		return nil, err
	}
	if !valueKindFits(col.Type, v) && !exactDecimalText(col.Type, v) {
		return nil, errFastFallback
	}
	return v, nil
}

// exactDecimalText reports whether v is a string (or bytes) holding a plain
// decimal literal — an optional sign, digits, an optional point and
// fraction, nothing else — that a DECIMAL column of type t stores exactly:
// no more fraction digits than its scale, no more integer digits than its
// precision leaves. Such a value converts without rounding, truncation or
// warning, in MySQL and in go-mysql-server alike (drivers send DECIMAL
// parameters as strings: TPC-C's amounts). Anything else falls back.
func exactDecimalText(t sql.Type, v interface{}) bool {
	dt, ok := t.(sql.DecimalType)
	if !ok {
		return false
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x) // short: no escape analysis worry on the hot path
	default:
		return false
	}
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	intDigits, fracDigits, seenPoint := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if seenPoint {
				fracDigits++
			} else if intDigits > 0 || c != '0' {
				intDigits++ // leading zeros do not count
			}
		case c == '.' && !seenPoint:
			seenPoint = true
		default:
			return false
		}
	}
	if len(s) == 0 || s == "." || (seenPoint && fracDigits == 0) || (!seenPoint && len(s) == 0) {
		return false
	}
	if s[0] == '.' {
		return false // ".5": MySQL takes it; keep it with go-mysql-server
	}
	scale := int(dt.Scale())
	return fracDigits <= scale && intDigits <= int(dt.Precision())-scale
}

// bindValue returns the Go value go-mysql-server's bind conversion makes of
// src, or errFastFallback for a parameter type the fast path leaves alone.
func bindValue(src valueSource, bind map[string]*querypb.BindVariable) (interface{}, error) {
	v := src.lit
	if src.param != "" {
		bv := bind[src.param]
		if bv == nil {
			return nil, errFastFallback
		}
		switch {
		case bv.Type == querypb.Type_NULL_TYPE:
			v = nil
		case sqltypes.IsSigned(bv.Type):
			n, err := strconv.ParseInt(string(bv.Value), 10, 64)
			if err != nil {
				return nil, errFastFallback
			}
			v = n
		case sqltypes.IsUnsigned(bv.Type):
			u, err := strconv.ParseUint(string(bv.Value), 10, 64)
			if err != nil {
				return nil, errFastFallback
			}
			v = u
		case bv.Type == querypb.Type_VARBINARY || bv.Type == querypb.Type_BINARY || bv.Type == querypb.Type_BLOB:
			v = bv.Value
		case bv.Type == querypb.Type_VARCHAR || bv.Type == querypb.Type_CHAR || bv.Type == querypb.Type_TEXT:
			v = string(bv.Value)
		case bv.Type == querypb.Type_FLOAT64 || bv.Type == querypb.Type_FLOAT32:
			f, err := strconv.ParseFloat(string(bv.Value), 64)
			if err != nil {
				return nil, errFastFallback
			}
			v = f
		case bv.Type == querypb.Type_DECIMAL:
			d, _, err := types.InternalDecimalType.Convert(context.Background(), string(bv.Value))
			if err != nil {
				return nil, errFastFallback
			}
			v = d
		case bv.Type == querypb.Type_DATETIME || bv.Type == querypb.Type_TIMESTAMP || bv.Type == querypb.Type_DATE:
			precision := 6
			if bv.Type == querypb.Type_DATE {
				precision = 0
			}
			t, err := types.CreateDatetimeType(bv.Type, precision)
			if err != nil {
				return nil, errFastFallback
			}
			if v, _, err = t.Convert(context.Background(), string(bv.Value)); err != nil {
				return nil, errFastFallback
			}
		default:
			return nil, errFastFallback
		}
	}
	return v, nil
}

// valueKindFits reports whether a value of v's kind goes into a column of
// type t without a cross-kind coercion: integers into integer and numeric
// columns, floats and decimals into numeric ones, strings into string
// columns (and date and time columns, which parse them), times into date
// and time columns. NULL goes anywhere (nullability is checked later).
func valueKindFits(t sql.Type, v interface{}) bool {
	numeric := types.IsDecimal(t) || types.IsFloat(t)
	switch v.(type) {
	case nil:
		return true
	case int64, uint64:
		return types.IsInteger(t) || numeric
	case float64, decimal.Decimal:
		return numeric
	case string, []byte:
		return (types.IsText(t) && !types.IsEnum(t) && !types.IsSet(t)) || types.IsTime(t)
	case time.Time:
		return types.IsTime(t)
	}
	return false
}

// convertForColumn converts v to col's type as go-mysql-server's INSERT
// does; anything but a clean in-range conversion falls back.
func convertForColumn(ctx *sql.Context, col *sql.Column, v interface{}) (interface{}, error) {
	if v == nil {
		if !col.Nullable {
			return nil, errFastFallback
		}
		return nil, nil
	}
	if !integerFits(col.Type, v) {
		return nil, errFastFallback
	}
	c, inRange, err := col.Type.Convert(ctx, v)
	if err != nil || inRange != sql.InRange || roundedDecimal(col.Type, v, c) {
		return nil, errFastFallback
	}
	return c, nil
}

// roundedDecimal reports whether converting the number v into a DECIMAL
// column rounded it (c, the stored value, differs): go-mysql-server's
// INSERT warns then (1265 Data truncated), so such a write is left to it.
func roundedDecimal(t sql.Type, v, c interface{}) bool {
	if !types.IsDecimal(t) {
		return false
	}
	cd, ok := c.(decimal.Decimal)
	if !ok {
		return false
	}
	switch x := v.(type) {
	case decimal.Decimal:
		return !x.Equal(cd)
	case float64:
		return !decimal.NewFromFloat(x).Equal(cd)
	}
	return false
}

// integerFits reports whether an int64 or uint64 value is within an
// integer column's range (go-mysql-server's conversions do not flag every
// out-of-range case themselves); other values pass.
func integerFits(t sql.Type, v interface{}) bool {
	if !types.IsInteger(t) {
		return true
	}
	switch x := v.(type) {
	case int64:
		if types.IsUnsigned(t) {
			return x >= 0 && uint64(x) <= unsignedMax(t)
		}
		lo, hi := intRange(t)
		return x >= lo && x <= hi
	case uint64:
		if types.IsUnsigned(t) {
			return x <= unsignedMax(t)
		}
		_, hi := intRange(t)
		return x <= uint64(hi)
	}
	return true
}

// asInt64 returns an integer column value or delta as int64.
func asInt64(v interface{}) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

// fastWriteBlocked reports whether the table's database has triggers
// (the fast path does not run them). Until a trigger has ever been created
// it costs one atomic load: no catalog lookup on every write.
func (fe *Frontend) fastWriteBlocked(dbKey string) bool {
	if !fe.anyTrigger.Load() {
		return false
	}
	fe.provider.mu.RLock()
	db := fe.provider.dbs[dbKey]
	fe.provider.mu.RUnlock()
	if db == nil {
		return true
	}
	db.mu.RLock()
	n := len(db.triggers)
	db.mu.RUnlock()
	return n > 0
}

// writeKey is a one-row write's key and the slice naming it.
type writeKey struct {
	one [1][]byte
	key [32]byte
}

// runWrite executes a write plan. handled false means go-mysql-server must
// run the statement; nothing the fast path did remains.
func (s *Session) runWrite(ctx context.Context, p *fastPlan, entry *tableEntry, bind map[string]*querypb.BindVariable, explicit bool) (*sqltypes.Result, bool, error) {
	if (explicit && s.readOnly) || s.fe.readOnlyActive() || s.fe.fastWriteBlocked(p.dbKey) || s.fe.fkWriteBlocked(entry) {
		return nil, false, nil
	}
	sctx := s.fastContext()
	var targets [][]byte // the keys (or key prefixes) an UPDATE or DELETE names
	if p.write.kind != writeInsert {
		if p.multi != nil {
			var ok bool
			if targets, ok = p.multiKeys(bind); !ok {
				return nil, false, nil
			}
		} else {
			// The key escapes (locks, the undo log), so it and the slice
			// holding it are one allocation, not three.
			wk := new(writeKey)
			key, none, ok := p.boundKey(wk.key[:0], p.params, bind, false)
			if !ok {
				return nil, false, nil
			}
			if targets = wk.one[:0]; !none {
				targets = append(targets, key)
			}
		}
	}
	s.ClearWarnings()
	tx := s.fastStatementTx(explicit)
	mark := tx.Savepoint()
	var (
		res *sqltypes.Result
		err error
	)
	// The rows are written under the statement's context (KILL QUERY
	// stops the statement there, fast_stop.go); the commit is not stopped.
	work := &s.stmt
	switch p.write.kind {
	case writeUpdate:
		res, err = s.fastUpdate(work, sctx, p, entry, tx, targets, bind)
	case writeDelete:
		res, err = s.fastDelete(work, p, entry, tx, targets)
	default:
		res, err = s.fastInsert(work, sctx, p, entry, tx, bind)
	}
	if err == nil {
		s.stmt.end()
	}
	if err == errFastFallback || errors.Is(err, storage.ErrTableChanged) || isDuplicate(err) {
		// Undo the statement; go-mysql-server runs it from the start.
		if explicit {
			tx.RollbackTo(mark)
			tx.EndStatement()
		} else {
			s.rollbackTx()
		}
		return nil, false, nil
	}
	if err != nil {
		if explicit {
			// A lock wait timeout ends the statement only (MySQL's
			// innodb_rollback_on_timeout=OFF); a deadlock ends the
			// transaction (handleTxError).
			if !tx.Done() {
				tx.RollbackTo(mark)
				tx.EndStatement()
			}
		} else {
			s.rollbackTx()
		}
		return nil, true, s.handleTxError(sctx, err)
	}
	if explicit {
		tx.EndStatement()
	} else if err := s.commitTx(ctx); err != nil {
		return nil, true, err
	}
	s.SetLastQueryInfoInt(sql.RowCount, int64(res.RowsAffected))
	sql.IncrementStatusVariable(sctx, "Questions", 1)
	return res, true, nil
}

func isDuplicate(err error) bool {
	var dup *storage.DuplicateKeyError
	return err != nil && errors.As(err, &dup)
}

// fastUpdate changes the row the key names, as go-mysql-server's UPDATE
// does: a locking read, the new row from the assignments, no write when
// the row compares equal; affected rows are the changed ones (the matched
// ones with CLIENT_FOUND_ROWS).
func (s *Session) fastUpdate(ctx context.Context, sctx *sql.Context, p *fastPlan, entry *tableEntry, tx *storage.Tx, targets [][]byte, bind map[string]*querypb.BindVariable) (*sqltypes.Result, error) {
	m := p.meta
	sch := m.schema.Schema
	// Values first: a statement that would fall back touches nothing.
	vals, err := assignmentValues(sctx, sch, p.write.sets, bind)
	if err != nil {
		return nil, err
	}
	matched, changed := 0, 0
	err = p.eachTarget(ctx, tx, entry, targets, func(key, stored []byte) error {
		matched++
		ch, err := changeStored(ctx, sctx, tx, entry, m, p.write.sets, vals, key, stored, nil)
		if ch {
			changed++
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	affected := changed
	if s.clientFoundRows() {
		affected = matched
	}
	s.SetLastQueryInfoInt(sql.FoundRows, int64(matched))
	sql.IncrementStatusVariable(sctx, "Com_update", 1)
	return &sqltypes.Result{
		RowsAffected: uint64(affected),
		Info:         "Rows matched: " + strconv.Itoa(matched) + "  Changed: " + strconv.Itoa(changed) + "  Warnings: 0",
	}, nil
}

// assignmentValues converts the assignments' bound values once per
// statement (VALUES(c) ones are the row's, left nil): the operand of a
// col ± v as bound (the arithmetic decides its type; NULL falls back), any
// other value through its column's conversion.
func assignmentValues(sctx *sql.Context, sch sql.Schema, sets []assignment, bind map[string]*querypb.BindVariable) ([]interface{}, error) {
	vals := make([]interface{}, len(sets))
	for i, a := range sets {
		if a.fromRow {
			continue
		}
		var v interface{}
		var err error
		if a.src.now {
			if v, err = nowValue(sctx); err == nil {
				v, err = convertForColumn(sctx, sch[a.ord], v)
			}
		} else if a.delta {
			if v, err = bindValue(a.src, bind); err == nil && v == nil {
				err = errFastFallback
			}
		} else if v, err = sourceValue(a.src, bind, sch[a.ord]); err == nil {
			v, err = convertForColumn(sctx, sch[a.ord], v)
		}
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// changeStored applies the assignments, left to right (each sees the ones
// before it), to the row stored at key and writes the result unless it
// is the same: unchanged means the same stored bytes, as MySQL compares
// records ('two' -> 'TWO' is a change under a case-insensitive collation
// too). vals are assignmentValues'; row is the row the statement would
// have inserted (VALUES(c)), nil for an UPDATE.
func changeStored(ctx context.Context, sctx *sql.Context, tx *storage.Tx, entry *tableEntry, m *tableMeta, sets []assignment, vals []interface{}, key, stored []byte, row sql.Row) (changed bool, err error) {
	sch := m.schema.Schema
	// Only the assigned columns are decoded and encoded; the others are
	// copied as stored. ords/news hold the assigned columns' latest values
	// (a column assigned twice is listed once: later assignments see and
	// replace the earlier value).
	var ordsA [8]int
	var newsA [8]interface{}
	ords, news := ordsA[:0], newsA[:0]
	var offsA [33]int
	offs, err := columnOffsets(offsA[:0], stored, len(sch))
	if err != nil {
		return false, err
	}
	for i, a := range sets {
		v := vals[i]
		if a.fromRow {
			v = row[a.rowOrd]
		}
		at := slices.Index(ords, a.ord)
		switch {
		case a.delta && v == nil:
			return false, errFastFallback
		case a.delta:
			var cur interface{}
			if at >= 0 {
				cur = news[at]
			} else {
				if cur, _, err = rowenc.DecodeValue(stored[offs[a.ord]:offs[a.ord+1]]); err != nil {
					return false, err
				}
			}
			v, err = applyDelta(sctx, sch[a.ord], cur, v, a.minus)
		case a.fromRow:
			v, err = convertForColumn(sctx, sch[a.ord], v)
		}
		if err != nil {
			return false, err
		}
		if at >= 0 {
			news[at] = v
		} else {
			ords, news = append(ords, a.ord), append(news, v)
		}
	}
	enc := make([]byte, 0, len(stored)+16)
	from := 0 // stored bytes from here on are not copied yet
	for c := 0; c < len(sch); c++ {
		at := slices.Index(ords, c)
		if at < 0 {
			continue
		}
		enc = append(enc, stored[from:offs[c]]...)
		if enc, err = rowenc.EncodeValue(enc, news[at]); err != nil {
			return false, errFastFallback
		}
		from = offs[c+1]
	}
	enc = append(enc, stored[from:]...)
	if string(enc) == string(stored) {
		return false, nil
	}
	return true, tx.Update(ctx, entry.store, m.version, key, key, enc)
}

// columnOffsets appends to dst where each of the n columns of a stored row
// starts, and then where the last one ends.
func columnOffsets(dst []int, stored []byte, n int) ([]int, error) {
	rest := stored
	for c := 0; c < n; c++ {
		dst = append(dst, len(stored)-len(rest))
		var err error
		if rest, err = rowenc.SkipValue(rest); err != nil {
			return nil, fmt.Errorf("column %d: %w", c, err)
		}
	}
	return append(dst, len(stored)-len(rest)), nil
}

// clientFoundRows reports CLIENT_FOUND_ROWS: affected rows count the rows
// matched, not only the ones changed.
func (s *Session) clientFoundRows() bool {
	return s.Client().Capabilities&mysql.CapabilityClientFoundRows != 0
}

// applyDelta computes col ± d for an integer column as go-mysql-server
// does (64-bit arithmetic, then the column's conversion); NULL stays NULL.
func applyDelta(ctx *sql.Context, col *sql.Column, cur, d interface{}, minus bool) (interface{}, error) {
	if cur == nil {
		return convertForColumn(ctx, col, nil)
	}
	if !types.IsInteger(col.Type) {
		return arithmeticDelta(ctx, col, cur, d, minus)
	}
	a, ok1 := asInt64(cur)
	b, ok2 := asInt64(d)
	if !ok1 || !ok2 {
		return nil, errFastFallback
	}
	var r int64
	if minus {
		r = a - b
		if (b > 0 && r > a) || (b < 0 && r < a) {
			return nil, errFastFallback
		}
	} else {
		r = a + b
		if (b > 0 && r < a) || (b < 0 && r > a) {
			return nil, errFastFallback
		}
	}
	return convertForColumn(ctx, col, r)
}

// deltaColumn reports the column types `col = col ± v` is taken for:
// integers (computed here) and DECIMAL, FLOAT and DOUBLE (computed by
// go-mysql-server's own arithmetic, arithmeticDelta).
func deltaColumn(t sql.Type) bool {
	return types.IsInteger(t) || types.IsDecimal(t) || types.IsFloat(t)
}

// arithmeticDelta computes col ± v for a DECIMAL or floating-point column
// with go-mysql-server's Plus/Minus over literals typed as its planner types
// the column and the bound value, so the result (DECIMAL + string is
// DOUBLE there, for one) is its result; then the column's conversion. An
// evaluation that warns (a string that is not a number) falls back.
// TestFastPathWritesSameResults's w_money and TPC-C's consistency checks
// (W_YTD = sum(H_AMOUNT)) catch a wrong type here.
func arithmeticDelta(ctx *sql.Context, col *sql.Column, cur, d interface{}, minus bool) (interface{}, error) {
	var dt sql.Type
	switch x := d.(type) {
	case int64:
		dt = types.Int64
	case uint64:
		dt = types.Uint64
	case float64:
		dt = types.Float64
	case decimal.Decimal:
		dt = types.InternalDecimalType
	case []byte:
		// The protocol layer hands every quoted parameter (and a text
		// query's string literal) to go-mysql-server's planner as a string
		// of the session's collation (vitess ExprFromValue, planbuilder
		// ConvertVal), not as bytes: a binary operand is summed as its
		// bytes, not its digits.
		d, dt = string(x), types.CreateLongText(ctx.GetCollation())
	case string:
		dt = types.CreateLongText(ctx.GetCollation())
	default:
		return nil, errFastFallback
	}
	l, r := expression.NewLiteral(cur, col.Type), expression.NewLiteral(d, dt)
	var e sql.Expression = expression.NewPlus(l, r)
	if minus {
		e = expression.NewMinus(l, r)
	}
	before := ctx.Session.WarningCount()
	v, err := e.Eval(ctx, nil)
	if err != nil || ctx.Session.WarningCount() != before {
		return nil, errFastFallback
	}
	return convertForColumn(ctx, col, v)
}

// fastDelete deletes the rows the targets name.
func (s *Session) fastDelete(ctx context.Context, p *fastPlan, entry *tableEntry, tx *storage.Tx, targets [][]byte) (*sqltypes.Result, error) {
	affected := 0
	err := p.eachTarget(ctx, tx, entry, targets, func(key, _ []byte) error {
		affected++
		return tx.Delete(ctx, entry.store, p.meta.version, key)
	})
	if err != nil {
		return nil, err
	}
	sql.IncrementStatusVariable(s.fastContext(), "Com_delete", 1)
	return &sqltypes.Result{RowsAffected: uint64(affected)}, nil
}

// eachTarget calls fn with the primary key and stored row of each row the
// targets name, in key order, each locked exclusively first: a target is a
// whole key, or with p.multiPrefix a key prefix naming every row under it
// (as go-mysql-server reads the ranges of the same list).
func (p *fastPlan) eachTarget(ctx context.Context, tx *storage.Tx, entry *tableEntry, targets [][]byte, fn func(key, stored []byte) error) error {
	for _, t := range targets {
		if !p.multiPrefix {
			stored, found, err := tx.Get(ctx, entry.store, t, txn.LockX)
			if err != nil {
				return err
			}
			if found {
				if err := fn(t, stored); err != nil {
					return err
				}
			}
			continue
		}
		cur := tx.Cursor(ctx, entry.store, storage.PrimaryIndex, storage.Range{Lo: t, Hi: prefixEnd(t)}, false, txn.LockX)
		for {
			key, stored, ok, err := cur.Next()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			if err := fn(key, stored); err != nil {
				return err
			}
		}
	}
	return nil
}

// fastInsert inserts the statement's rows. An explicit AUTO_INCREMENT value
// moves the table's counter past it, as go-mysql-server does; the OK
// packet's insert id is the first row's AUTO_INCREMENT value.
func (s *Session) fastInsert(ctx context.Context, sctx *sql.Context, p *fastPlan, entry *tableEntry, tx *storage.Tx, bind map[string]*querypb.BindVariable) (*sqltypes.Result, error) {
	m, w := p.meta, p.write
	sch := m.schema.Schema
	var defaults sql.Row
	if len(w.omitted) > 0 {
		defaults = make(sql.Row, len(sch))
		for _, ord := range w.omitted {
			col := sch[ord]
			var v interface{}
			if col.Default != nil {
				var err error
				if v, err = col.Default.Eval(sctx, nil); err != nil {
					return nil, errFastFallback
				}
			}
			c, err := convertForColumn(sctx, col, v)
			if err != nil {
				return nil, err
			}
			defaults[ord] = c
		}
	}
	onDup, err := assignmentValues(sctx, sch, w.onDup, bind)
	if err != nil {
		return nil, err
	}
	// Values first, every row: a statement that falls back has used no
	// AUTO_INCREMENT value. Then the counter, row by row in order, so that
	// an explicit value moves it before the next row's generated one.
	rows := make([]sql.Row, len(w.rows))
	var auto []autoIncUse // a table with an AUTO_INCREMENT column only
	if m.autoIncCol >= 0 {
		auto = make([]autoIncUse, len(w.rows))
	}
	// NOW() is one value for the whole statement, as in MySQL: taken at
	// the first use, shared by every row and column.
	var now interface{}
	for r, src := range w.rows {
		row := make(sql.Row, len(sch))
		copy(row, defaults)
		if w.autoOmitted {
			auto[r].generate = true
		}
		for i, ord := range w.cols {
			col := sch[ord]
			if col.AutoIncrement {
				use, err := autoIncValue(sctx, src[i], bind, col, w.upsert)
				if err != nil {
					return nil, err
				}
				auto[r] = use
				continue
			}
			var v interface{}
			var err error
			if src[i].now {
				if now == nil {
					if now, err = nowValue(sctx); err != nil {
						return nil, err
					}
				}
				v = now
			} else if v, err = sourceValue(src[i], bind, col); err != nil {
				return nil, err
			}
			if v, err = convertForColumn(sctx, col, v); err != nil {
				return nil, err
			}
			row[ord] = v
		}
		rows[r] = row
	}
	insertID, generated, err := assignAutoInc(sctx, m, entry, rows, auto)
	if err != nil {
		return nil, err
	}
	affected := 0
	for _, row := range rows {
		pk, err := m.pkOf(entry, row, true)
		if err != nil {
			return nil, errFastFallback
		}
		enc, err := encodeRow(nil, row) // storage keeps it
		if err != nil {
			return nil, errFastFallback
		}
		if w.upsert != upsertNone {
			n, err := s.upsertRow(ctx, sctx, p, entry, tx, pk, enc, row, onDup)
			if err != nil {
				return nil, err
			}
			affected += n
			continue
		}
		if err := tx.Insert(ctx, entry.store, m.version, pk, enc); err != nil {
			if generated != 0 {
				// Not a fallback: go-mysql-server would use up new
				// values for the same error (fast_autoinc.go).
				if dupErr := duplicateError(m, err, row); dupErr != err {
					err = sql.CastSQLError(dupErr)
				}
			}
			return nil, err
		}
		affected++
	}
	if generated != 0 {
		s.SetLastQueryInfoInt(sql.LastInsertId, int64(generated))
	}
	mode := infoPlain
	if w.upsert == upsertReplace {
		sql.IncrementStatusVariable(sctx, "Com_replace", 1)
		mode = infoReplace
	} else {
		sql.IncrementStatusVariable(sctx, "Com_insert", 1)
	}
	res := &sqltypes.Result{RowsAffected: uint64(affected), InsertID: insertID}
	if len(w.rows) > 1 && w.upsert != upsertUpdate { // as insertInfoModeOf says
		res.Info = mode.text(uint64(len(w.rows)), res.RowsAffected, 0)
	}
	return res, nil
}
