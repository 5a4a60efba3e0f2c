package sqlfront

import (
	"context"
	"encoding/binary"
	"math"
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

// Point reads: SELECT cols FROM t WHERE pk1 = ? [AND pk2 = ? ...] [lock].

// recognisePointSelect returns a plan for sel if it is a point read by the
// whole primary key with parameter markers, or nil.
func (fe *Frontend) recognisePointSelect(ctx *sql.Context, query string, sel *ast.Select, fields []*querypb.Field) *fastPlan {
	if len(sel.From) == 0 {
		return nil
	}
	if _, isJoin := sel.From[0].(*ast.JoinTableExpr); isJoin || len(sel.From) == 2 {
		return fe.recogniseJoin(ctx, query, sel, fields)
	}
	if sel.With != nil || sel.Having != nil || sel.Window != nil ||
		sel.Into != nil || sel.Where == nil || sel.QueryOpts.SQLCalcFoundRows || len(sel.From) != 1 {
		return nil
	}
	var lock lockIntent
	switch sel.Lock {
	case "":
	case ast.ForUpdateStr:
		lock.mode = txn.LockX
	case ast.ShareModeStr:
		lock.mode = txn.LockS
	default:
		return nil
	}
	lock.policy = policyOf(query)
	te, ok := sel.From[0].(*ast.AliasedTableExpr)
	if !ok || te.Partitions != nil || te.Hints != nil || te.AsOf != nil || te.Lateral {
		return nil
	}
	tn, ok := te.Expr.(ast.TableName)
	if !ok {
		return nil
	}
	p := &fastPlan{query: query, lock: lock, fields: fields}
	qualifierOK := fe.resolveFastTable(ctx, p, tn, te.As)
	if qualifierOK == nil {
		return nil
	}
	m := p.meta
	if sel.GroupBy != nil {
		if recogniseGroupSum(ctx, sel, p, qualifierOK) {
			return p
		}
		return nil
	}

	// Output columns.
	for _, se := range sel.SelectExprs {
		switch x := se.(type) {
		case *ast.StarExpr:
			if !qualifierOK(x.TableName) {
				return nil
			}
			for i := range m.schema.Schema {
				p.cols = append(p.cols, i)
			}
		case *ast.AliasedExpr:
			col, ok := x.Expr.(*ast.ColName)
			if f, isFunc := x.Expr.(*ast.FuncExpr); isFunc && len(sel.SelectExprs) == 1 {
				// SUM(col) of an integer column over a key range;
				// COUNT(*), MIN(col), MAX(col) over an index prefix.
				if col, ok = sumArg(f); ok {
					p.sum = true
				} else if p.agg, col, ok = aggregateArg(f); ok && p.agg == aggCount {
					// COUNT(*), or COUNT(col) of a NOT NULL column (the
					// same count): the first key column stands in as the
					// plan's one output column (never decoded).
					if col != nil {
						ord := m.colIndex(col.Name.String())
						if !qualifierOK(col.Qualifier) || ord < 0 || m.schema.Schema[ord].Nullable {
							return nil
						}
					}
					col = &ast.ColName{Name: ast.NewColIdent(m.schema.Schema[m.pk.cols[0].ord].Name)}
				}
			}
			if !ok || !qualifierOK(col.Qualifier) {
				return nil
			}
			ord := m.colIndex(col.Name.String())
			if ord < 0 {
				return nil
			}
			p.cols = append(p.cols, ord)
		default:
			return nil
		}
	}
	if fields != nil && len(p.cols) != len(fields) {
		return nil // (nil: a text query's plan, whose fields are learned later)
	}
	for _, ord := range p.cols {
		p.maxOrd = max(p.maxOrd, ord)
	}

	if _, ok := sel.Where.Expr.(*ast.RangeCond); ok {
		if p.agg != 0 || !recogniseRange(sel, p, qualifierOK) {
			return nil
		}
		if p.sum && (len(p.rng.order) > 0 || p.rng.distinct || !types.IsInteger(m.schema.Schema[p.cols[0]].Type)) {
			return nil
		}
		if p.sum && fields != nil {
			if p.fields = sumFields(ctx, fields, m.schema.Schema[p.cols[0]].Type); p.fields == nil {
				return nil
			}
		}
		return p
	}
	if p.sum {
		// SUM(decimal_col) over an index prefix (fast_agg.go).
		p.sum, p.agg = false, aggSum
	}
	if p.agg != 0 {
		if sel.OrderBy != nil || sel.Limit != nil || sel.QueryOpts.Distinct || sel.Lock != "" || !recogniseAggregate(sel, p, qualifierOK) {
			return nil
		}
		if p.agg == aggSum && !p.sumPrefixFields(ctx) {
			return nil
		}
		return p
	}
	if sel.OrderBy == nil && sel.Limit == nil && !sel.QueryOpts.Distinct {
		if recogniseMultiPoint(sel.Where.Expr, p, qualifierOK, false) {
			return p
		}
		if p.params = keyParams(sel.Where.Expr, m, qualifierOK); p.params != nil {
			return p
		}
	}
	if recognisePrefix(sel, p, qualifierOK) {
		return p
	}
	return nil
}

// sumArg returns the column of SUM(col) (not DISTINCT, no window).
func sumArg(f *ast.FuncExpr) (*ast.ColName, bool) {
	if !strings.EqualFold(f.Name.String(), "sum") || f.Distinct || f.Over != nil || !f.Qualifier.IsEmpty() || len(f.Exprs) != 1 {
		return nil, false
	}
	ae, ok := f.Exprs[0].(*ast.AliasedExpr)
	if !ok {
		return nil, false
	}
	col, ok := ae.Expr.(*ast.ColName)
	return col, ok
}

// keyParams returns the bind variable names of a WHERE of the form
// pk1 = ? AND pk2 = ? ..., naming each primary key column once, in key
// order; nil when where has another shape.
func keyParams(where ast.Expr, m *tableMeta, qualifierOK func(ast.TableName) bool) []string {
	eqs := map[int]string{}
	if !collectKeyEqualities(where, m, qualifierOK, eqs) || len(eqs) != len(m.pk.cols) {
		return nil
	}
	params := make([]string, 0, len(m.pk.cols))
	for _, kc := range m.pk.cols {
		name, ok := eqs[kc.ord]
		if !ok || kc.prefix != 0 || !fastKeyType(kc.typ) {
			return nil
		}
		params = append(params, name)
	}
	return params
}

// resolveFastTable fills p's table (database, name, definition) and the
// session settings the plan depends on from the statement's table name tn
// (alias as, if any) and returns the check that a column qualifier names
// that table; nil when the fast path cannot use the table (missing, no
// declared primary key).
func (fe *Frontend) resolveFastTable(ctx *sql.Context, p *fastPlan, tn ast.TableName, as ast.TableIdent) func(ast.TableName) bool {
	return fe.resolveFastTableOf(ctx, p, tn, as, false)
}

// resolveFastTableOf is resolveFastTable; anyKey also accepts a table
// without a declared primary key (hidden row ids: INSERT only).
func (fe *Frontend) resolveFastTableOf(ctx *sql.Context, p *fastPlan, tn ast.TableName, as ast.TableIdent, anyKey bool) func(ast.TableName) bool {
	if !tn.SchemaQualifier.IsEmpty() {
		return nil
	}
	p.charset, p.clientCharset = ctx.GetCharacterSetResults(), ctx.GetCharacterSet()
	dbName := tn.DbQualifier.String()
	if dbName == "" {
		dbName = ctx.GetCurrentDatabase()
		p.curDB = dbName
		if dbName == "" {
			return nil
		}
	}
	p.dbKey, p.tableKey = strings.ToLower(dbName), strings.ToLower(tn.Name.String())
	entry := fe.lookupEntry(p.dbKey, p.tableKey)
	if entry == nil {
		return nil
	}
	m := entry.load()
	if !anyKey && (m.hidden || len(m.pk.cols) == 0) {
		return nil
	}
	p.meta = m
	alias := tn.Name.String()
	if !as.IsEmpty() {
		alias = as.String()
	}
	return func(q ast.TableName) bool {
		if q.IsEmpty() {
			return true
		}
		if !q.DbQualifier.IsEmpty() && !strings.EqualFold(q.DbQualifier.String(), dbName) {
			return false
		}
		return strings.EqualFold(q.Name.String(), alias)
	}
}

// collectKeyEqualities walks a conjunction of `column = ?` terms into eqs
// (column ordinal -> bind variable name). It fails on anything else, and
// on a column named twice.
func collectKeyEqualities(e ast.Expr, m *tableMeta, qualifierOK func(ast.TableName) bool, eqs map[int]string) bool {
	switch x := e.(type) {
	case *ast.AndExpr:
		return collectKeyEqualities(x.Left, m, qualifierOK, eqs) && collectKeyEqualities(x.Right, m, qualifierOK, eqs)
	case *ast.ParenExpr:
		return collectKeyEqualities(x.Expr, m, qualifierOK, eqs)
	case *ast.ComparisonExpr:
		if x.Operator != ast.EqualStr || x.Escape != nil {
			return false
		}
		col, ok := x.Left.(*ast.ColName)
		val, ok2 := x.Right.(*ast.SQLVal)
		if !ok || !ok2 {
			col, ok = x.Right.(*ast.ColName)
			val, ok2 = x.Left.(*ast.SQLVal)
		}
		if !ok || !ok2 || val.Type != ast.ValArg || !qualifierOK(col.Qualifier) {
			return false
		}
		ord := m.colIndex(col.Name.String())
		if ord < 0 {
			return false
		}
		if _, dup := eqs[ord]; dup {
			return false
		}
		eqs[ord] = strings.TrimPrefix(string(val.Val), ":")
		return true
	}
	return false
}

// fastKeyType reports the key column types the fast path binds values to:
// integers and non-binary strings.
func fastKeyType(t sql.Type) bool {
	if types.IsInteger(t) {
		return true
	}
	if types.IsText(t) {
		return true
	}
	return false
}

// lookupEntry returns the table entry of db.table (lower-cased), or nil.
func (fe *Frontend) lookupEntry(dbKey, tableKey string) *tableEntry {
	fe.provider.mu.RLock()
	db := fe.provider.dbs[dbKey]
	fe.provider.mu.RUnlock()
	if db == nil {
		return nil
	}
	db.mu.RLock()
	te := db.tables[tableKey]
	db.mu.RUnlock()
	return te
}

// appendBoundKey appends the key encoding of bound value bv for key column
// kc. ok is false when the fast path does not bind such a value (go-
// mysql-server must run the statement); none is true when no row can
// match (NULL, or an integer out of the column's range).
func appendBoundKey(b []byte, kc *keyColumn, bv *querypb.BindVariable) (out []byte, none, ok bool) {
	if bv == nil {
		return nil, false, false
	}
	if bv.Type == querypb.Type_NULL_TYPE {
		return b, true, true
	}
	if types.IsInteger(kc.typ) {
		if !sqltypes.IsIntegral(bv.Type) {
			return nil, false, false
		}
		var (
			neg bool
			n   int64  // the value when neg
			u   uint64 // the value when !neg
			err error
		)
		if sqltypes.IsUnsigned(bv.Type) {
			u, err = strconv.ParseUint(string(bv.Value), 10, 64)
		} else if n, err = strconv.ParseInt(string(bv.Value), 10, 64); n < 0 {
			neg = true
		} else {
			u = uint64(n)
		}
		if err != nil {
			return nil, false, false
		}
		if types.IsUnsigned(kc.typ) {
			if neg || u > unsignedMax(kc.typ) {
				return b, true, true
			}
			b = append(b, keyNotNull)
			return binary.BigEndian.AppendUint64(b, u), false, true
		}
		lo, hi := intRange(kc.typ)
		switch {
		case neg && n < lo, !neg && u > uint64(hi):
			return b, true, true
		case !neg:
			n = int64(u)
		}
		b = append(b, keyNotNull)
		return appendIntKey(b, n), false, true
	}
	// A string column compares a string value by the column's collation.
	// The protocol layer delivers every string parameter as VARBINARY,
	// whatever type the client declared, and go-mysql-server compares it
	// by the column's collation too; so does the fast path. (MySQL would
	// compare a parameter the client declared binary byte by byte.)
	switch bv.Type {
	case querypb.Type_VARBINARY, querypb.Type_VARCHAR, querypb.Type_CHAR, querypb.Type_TEXT:
	default:
		return nil, false, false
	}
	b = append(b, keyNotNull)
	out, err := kc.appendStringKey(b, string(bv.Value))
	if err != nil {
		return nil, false, false
	}
	return out, false, true
}

// intRange is the value range of a signed integer column type.
func intRange(t sql.Type) (lo, hi int64) {
	switch t.Type() {
	case sqltypes.Int8:
		return math.MinInt8, math.MaxInt8
	case sqltypes.Int16:
		return math.MinInt16, math.MaxInt16
	case sqltypes.Int24:
		return -1 << 23, 1<<23 - 1
	case sqltypes.Int32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// unsignedMax is the largest value of an unsigned integer column type.
func unsignedMax(t sql.Type) uint64 {
	switch t.Type() {
	case sqltypes.Uint8:
		return math.MaxUint8
	case sqltypes.Uint16:
		return math.MaxUint16
	case sqltypes.Uint24:
		return 1<<24 - 1
	case sqltypes.Uint32:
		return math.MaxUint32
	}
	return math.MaxUint64
}

// runFast executes a plan: the checks every shape shares, then the shape.
func (s *Session) runFast(ctx context.Context, p *fastPlan, bind map[string]*querypb.BindVariable) (*sqltypes.Result, bool, error) {
	if s.locked != nil {
		// Under LOCK TABLES the planned way checks the statement's
		// tables against the locked ones (lockcheck.go).
		return nil, false, nil
	}
	sctx := s.fastContext()
	if p.curDB != "" && !strings.EqualFold(sctx.GetCurrentDatabase(), p.curDB) {
		return nil, false, nil
	}
	if sctx.GetCharacterSetResults() != p.charset {
		return nil, false, nil
	}
	entry := s.fe.lookupEntry(p.dbKey, p.tableKey)
	if entry == nil || entry.load() != p.meta || s.hidesTable(p.dbKey, p.tableKey) {
		return nil, false, nil
	}
	if !s.fastAllowed(sctx, p) {
		return nil, false, nil
	}
	// Transaction state: autocommit outside BEGIN runs the read on its own;
	// inside BEGIN it joins the session's transaction. Autocommit off
	// without BEGIN is left to go-mysql-server (it opens the transaction).
	explicit := s.GetIgnoreAutoCommit()
	if !explicit && !s.autocommit() {
		return nil, false, nil
	}
	if explicit && s.GetTransaction() == nil {
		return nil, false, nil
	}
	if p.write != nil && sctx.GetCharacterSet() != p.clientCharset {
		return nil, false, nil
	}
	// The table's shared metadata lock (mdl.go): to the end of the
	// transaction, or of this statement in autocommit mode.
	if !explicit {
		defer s.releaseMDL(0, true)
	}
	if !s.lockFast(p.dbKey, p.tableKey, entry, p.write != nil) {
		return nil, false, nil
	}
	// From here the statement can be stopped (fast_stop.go): reads run
	// under its context; a write's rows are written under it.
	s.beginFast(p)
	defer s.endFast()
	if p.write != nil {
		return s.runWrite(ctx, p, entry, bind, explicit)
	}
	ctx = &s.stmt
	if p.rng != nil {
		return s.runRange(ctx, p, entry, bind, explicit)
	}
	if p.groupSum != nil {
		return s.runGroupSum(ctx, p, entry, bind, explicit)
	}
	if p.multi != nil {
		return s.runMultiPoint(ctx, p, entry, bind, explicit)
	}
	if p.join != nil {
		return s.runJoin(ctx, p, entry, bind, explicit)
	}
	if p.prefix != nil {
		return s.runPrefix(ctx, p, entry, bind, explicit)
	}
	return s.runPointSelect(ctx, p, entry, bind, explicit)
}

// runPointSelect executes a point read plan.
func (s *Session) runPointSelect(ctx context.Context, p *fastPlan, entry *tableEntry, bind map[string]*querypb.BindVariable, explicit bool) (*sqltypes.Result, bool, error) {
	out := new(pointResult)
	key, none, ok := p.boundKey(out.key[:0], p.params, bind, false)
	if !ok {
		return nil, false, nil
	}
	keys := out.keys[:0]
	if !none {
		keys = append(keys, key)
	}
	return s.readKeysInto(ctx, p, entry, keys, explicit, out)
}

// pointResult is a point read's result and the small buffers it needs
// (its key, the row, the row's values for up to two columns), allocated
// as one object per statement where they were four (240 bytes, as the
// four were). It is never reused:
// the handler writes the result to the client after the statement, and a
// locking read's key may stay with its gap lock to the end of the
// transaction.
type pointResult struct {
	res  sqltypes.Result
	rows [1][]sqltypes.Value
	vals [2]sqltypes.Value
	keys [1][]byte
	key  [32]byte
}

// readKeys reads the rows of primary keys (in key order, each once) under
// the plan's locking clause and returns them as the plan's result: point
// and multi-point reads.
func (s *Session) readKeys(ctx context.Context, p *fastPlan, entry *tableEntry, keys [][]byte, explicit bool) (*sqltypes.Result, bool, error) {
	return s.readKeysInto(ctx, p, entry, keys, explicit, nil)
}

// readKeysInto is readKeys with a point read's memory (nil: none).
func (s *Session) readKeysInto(ctx context.Context, p *fastPlan, entry *tableEntry, keys [][]byte, explicit bool, out *pointResult) (*sqltypes.Result, bool, error) {
	var res *sqltypes.Result
	if out != nil {
		res = &out.res
	}
	return s.runRead(p, res, explicit, len(keys) == 0, nil, func(sctx *sql.Context, tx *storage.Tx, mode txn.LockMode) ([][]sqltypes.Value, error) {
		var rows [][]sqltypes.Value
		w := p.newRowWriter(sctx)
		if out != nil && len(keys) == 1 {
			rows = out.rows[:0]
			w.slab = out.vals[:0]
		}
		for _, key := range keys {
			row, found, err := tx.Get(ctx, entry.store, key, mode)
			if err != nil {
				return nil, err
			}
			if !found {
				continue
			}
			vals, err := w.row(row)
			if err != nil {
				return nil, err
			}
			rows = append(rows, vals)
		}
		if len(rows) == 0 {
			return nil, nil
		}
		return rows, nil
	})
}

// runRead runs a fast SELECT: warnings cleared, read run in the
// statement's transaction with the plan's lock mode (skipped, touching no
// transaction, when skip says no row can match), the statement ended as
// the session's mode says, errors handled as go-mysql-server's path
// handles them, the SELECT's bookkeeping kept. empty is the one row of an
// aggregate over no rows (nil: no row). A read that returns
// errFastFallback hands the statement to go-mysql-server: it changed
// nothing. res is the result's memory (nil: a new one).
func (s *Session) runRead(p *fastPlan, res *sqltypes.Result, explicit, skip bool, empty []sqltypes.Value,
	read func(sctx *sql.Context, tx *storage.Tx, mode txn.LockMode) ([][]sqltypes.Value, error)) (*sqltypes.Result, bool, error) {
	sctx := s.fastContext()
	lock := p.lock
	if lock.mode == 0 && s.serial && explicit {
		lock.mode = txn.LockS // every read locks inside SERIALIZABLE, as go-mysql-server's do
	}
	s.ClearWarnings()
	if res == nil {
		res = new(sqltypes.Result)
	}
	res.Fields = p.fields
	if !skip {
		tx := s.fastStatementTx(explicit)
		tx.ReadPolicy = lock.policy
		var err error
		res.Rows, err = read(sctx, tx, lock.mode)
		s.endFastStatement(explicit, err)
		if err == errFastFallback {
			return nil, false, nil
		}
		if err != nil {
			return nil, true, s.handleTxError(sctx, err)
		}
	}
	if res.Rows == nil && empty != nil {
		res.Rows = [][]sqltypes.Value{empty}
	}
	s.selectDone(sctx, len(res.Rows))
	return res, true, nil
}

// selectDone keeps a fast SELECT's bookkeeping as go-mysql-server does:
// ROW_COUNT() -1, FOUND_ROWS(), Questions and Com_select.
func (s *Session) selectDone(sctx *sql.Context, rows int) {
	s.SetLastQueryInfoInt(sql.RowCount, -1)
	s.SetLastQueryInfoInt(sql.FoundRows, int64(rows))
	sql.IncrementStatusVariable(sctx, "Questions", 1)
	sql.IncrementStatusVariable(sctx, "Com_select", 1)
}

// boundKey appends the primary key the bind variables names (one per key
// column, in key order) give. ok is false when a bound value is not one the
// fast path binds, or, with noNegUnsigned, a negative value for an unsigned
// column; none is true when no row can match.
func (p *fastPlan) boundKey(b []byte, names []string, bind map[string]*querypb.BindVariable, noNegUnsigned bool) (key []byte, none, ok bool) {
	return p.boundKeyOf(b, names, bind, noNegUnsigned)
}

// boundKeyOf is boundKey for the primary key's first len(names) columns
// (a key prefix when names is shorter than the key).
func (p *fastPlan) boundKeyOf(b []byte, names []string, bind map[string]*querypb.BindVariable, noNegUnsigned bool) (key []byte, none, ok bool) {
	key = b
	for i := range names {
		kc, bv := &p.meta.pk.cols[i], bind[names[i]]
		if noNegUnsigned && negativeForUnsigned(kc, bv) {
			return nil, false, false
		}
		var n bool
		key, n, ok = appendBoundKey(key, kc, bv)
		if !ok {
			return nil, false, false
		}
		none = none || n
	}
	return key, none, true
}

// negativeForUnsigned reports a negative value bound for an unsigned key
// column. go-mysql-server mishandles it in ranges (no row for BETWEEN -5
// AND 1) and IN lists (-1 matches 2^64-1), where MySQL compares
// numerically; the fast path leaves such statements to it so both paths
// answer alike.
func negativeForUnsigned(kc *keyColumn, bv *querypb.BindVariable) bool {
	return bv != nil && types.IsUnsigned(kc.typ) && len(bv.Value) > 0 && bv.Value[0] == '-'
}

// fastStatementTx returns the storage transaction a fast statement runs
// in and starts the statement, as StartTransaction and storageTx do for
// go-mysql-server's statements: inside BEGIN the session's transaction; in
// autocommit mode a new one, at the isolation level the session variables
// say.
func (s *Session) fastStatementTx(explicit bool) *storage.Tx {
	ctx := s.fastContext()
	if explicit {
		if s.tx == nil || s.tx.Done() {
			s.tx = s.beginTx()
		}
	} else {
		if s.tx != nil && !s.tx.Done() {
			s.rollbackTx() // left over from a failed statement (see CommandEnd)
		}
		s.iso, s.serial = s.isolationFromVars(ctx)
		s.savepts = nil
		s.tx = s.beginTx()
	}
	s.lastPid = 0
	s.writers = 0
	s.tx.NewStatement()
	s.tx.LockWait = s.lockWait(ctx)
	return s.tx
}

// endFastStatement ends a fast statement as CommandEnd and go-mysql-
// server's autocommit do: an autocommit statement's transaction commits
// (or rolls back on error); inside BEGIN the statement ends.
func (s *Session) endFastStatement(explicit bool, err error) {
	if s.tx == nil || s.tx.Done() {
		return
	}
	if explicit {
		s.tx.EndStatement()
		return
	}
	if err != nil {
		s.rollbackTx()
		return
	}
	_ = s.commitTx(nil)
}
