package sqlfront

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"lockstep/internal/stat"
)

// The fast path.
//
// go-mysql-server spends about 30 µs and 450 allocations planning and
// running a primary-key point read; lockstep's storage needs under 1 µs of
// it. The fast path runs the statement shapes OLTP clients send most
// directly against storage, inside the session's transaction, and leaves
// everything else to go-mysql-server unchanged.
//
// A shape is recognised once, when a statement is prepared (FastPrepare),
// after go-mysql-server prepared it too: the plan keeps go-mysql-server's
// result metadata, so both paths describe the result identically. At
// EXECUTE (FastExecute) the plan runs if nothing it depends on changed —
// the table's definition, the current database, character_set_results,
// the fast path switch — and the bound values have types whose comparison
// with the key columns needs no coercion (an integer for an integer
// column, a string for a string column); otherwise go-mysql-server runs
// the statement as if the plan did not exist.
//
// Recognised today, with parameter markers, in autocommit mode or inside
// BEGIN ... COMMIT: SELECT of columns by equality on every primary key
// column, optionally FOR UPDATE / LOCK IN SHARE MODE (fast_point.go); and
// SELECT [DISTINCT] of columns by a BETWEEN range of a one-column integer
// primary key, optionally ORDER BY output columns (fast_range.go); and the
// others docs/fastpath.md lists — index prefixes, IN lists, aggregates,
// writes by key, INSERT, upserts (fast_upsert.go), transaction control.

// fastVar is the global variable that turns the fast path on and off.
const fastVar = "lockstep_fast_path"

// fastProtoVar switches the server's own COM_STMT_EXECUTE handling for
// statements with a plan (internal/server/execproto.go); OFF leaves every
// execute to the protocol layer (vitess), so both are measured in one run.
const fastProtoVar = "lockstep_fast_protocol"

// maxFastPlans bounds the plans a session keeps. Statement ids are never
// reused on a connection; a plan of a closed statement is found stale by
// its text and dropped when the map is full.
const maxFastPlans = 256

// fastPlan is a recognised prepared statement.
type fastPlan struct {
	query    string
	dbKey    string // lower-cased database name
	tableKey string // lower-cased table name
	curDB    string // current database at PREPARE when the table was unqualified, else ""
	meta     *tableMeta
	cols     []int      // ordinals of the output columns
	params   []string   // bind variable name per primary key column, in key order
	lock     lockIntent // the statement's locking clause
	fields   []*querypb.Field
	charset  sql.CharacterSetID // character_set_results at PREPARE
	// clientCharset is character_set_client at PREPARE (writes: how
	// string values are read).
	clientCharset sql.CharacterSetID
	maxOrd        int             // highest ordinal decoded
	rng           *rangeSpec      // a range read; nil for a point read
	write         *writeSpec      // a write; nil for a read
	txctl         txControl       // BEGIN, COMMIT or ROLLBACK (no table)
	sum           bool            // SELECT SUM(col) over a key range: one output value
	multi         [][]string      // WHERE pk IN (...): bind names per key, in key column order
	multiPrefix   bool            // multi names leading key columns only (writes: each item a key range)
	prefix        *prefixSpec     // equalities on an index's leading columns (fast_prefix.go)
	agg           aggKind         // COUNT(*), MIN, MAX or SUM over an index prefix (fast_agg.go)
	sumType       sql.DecimalType // agg == aggSum: the SUM's result type
	join          *joinSpec       // a counting join by primary key (fast_join.go); the prefix reads its outer table
	groupSum      *groupSumSpec   // SUM grouped by a key column over p.multi (fast_groupsum.go)
	direct        []directKind    // how each output column is written (fast_direct.go); set at first use
	// The account's privileges for the plan, as of accounts version
	// privVersion (accounts.go fastAllowed).
	privChecked bool
	privOK      bool
	privVersion uint64
}

// fastCounters are the fast path's counters (SHOW STATUS Lockstep_fast_path_*).
type fastCounters struct {
	plans     atomic.Int64 // statements recognised at PREPARE
	hits      atomic.Int64 // executions the fast path ran
	fallbacks atomic.Int64 // executions of a recognised statement left to go-mysql-server
	textHits  atomic.Int64 // hits that were text queries
	misses    atomic.Int64 // executions and text queries with no plan (shape not recognised)
	off       atomic.Bool  // lockstep_fast_path = OFF on this server

	protoOff    atomic.Bool  // lockstep_fast_protocol = OFF on this server
	protoExecs  atomic.Int64 // executes the server parsed and answered itself
	protoPassed atomic.Int64 // executes of a planned statement it left to the protocol layer
}

// fastStatus adds the fast path's counters to m.
func (fe *Frontend) fastStatus(m map[string]int64) {
	m["Lockstep_fast_path_plans"] = fe.fast.plans.Load()
	m["Lockstep_fast_path_hits"] = fe.fast.hits.Load()
	m["Lockstep_fast_path_fallbacks"] = fe.fast.fallbacks.Load()
	m["Lockstep_fast_path_text_hits"] = fe.fast.textHits.Load()
	m["Lockstep_fast_path_misses"] = fe.fast.misses.Load()
	m["Lockstep_fast_protocol_executes"] = fe.fast.protoExecs.Load()
	m["Lockstep_fast_protocol_passed"] = fe.fast.protoPassed.Load()
}

// FastStmt is a prepared statement's fast-path plan with its session, as
// FastPlanned finds it; Run executes it.
type FastStmt struct {
	s *Session
	p *fastPlan
}

// plan finds the plan of statement stmtID of connection connID, text query
// (when it has none, the FastStmt still names the session, if any).
func (fe *Frontend) plan(connID, stmtID uint32, query string) (FastStmt, bool) {
	s := fe.session(connID)
	if s == nil {
		return FastStmt{}, false
	}
	s.fastMu.Lock()
	p := s.fastPlans[stmtID]
	s.fastMu.Unlock()
	if p == nil || p.query != query {
		return FastStmt{s: s}, false
	}
	return FastStmt{s: s, p: p}, true
}

// FastPlanned returns the plan of statement stmtID of connection connID,
// text query, when it has one and the server answers its executes itself
// (lockstep_fast_path and lockstep_fast_protocol both ON).
func (fe *Frontend) FastPlanned(connID, stmtID uint32, query string) (FastStmt, bool) {
	if !fe.fastOn() || fe.fast.protoOff.Load() {
		return FastStmt{}, false
	}
	return fe.plan(connID, stmtID, query)
}

// CountProtocol counts an execute of a planned statement the server
// answered itself (handled) or passed on to the protocol layer.
func (fe *Frontend) CountProtocol(handled bool) {
	if handled {
		stat.Inc(&fe.fast.protoExecs)
	} else {
		stat.Inc(&fe.fast.protoPassed)
	}
}

// countFast counts an execution of a recognised statement.
func (fe *Frontend) countFast(handled, text bool) {
	if !handled {
		stat.Inc(&fe.fast.fallbacks)
		return
	}
	stat.Inc(&fe.fast.hits)
	if text {
		stat.Inc(&fe.fast.textHits)
	}
}

// fastOn reports this server's lockstep_fast_path.
func (fe *Frontend) fastOn() bool { return !fe.fast.off.Load() }

// fastVariable defines lockstep_fast_path: a global variable whose value is
// per server (servervars.go); setting it flips the server's switch.
func fastVariable() sql.SystemVariable {
	return switchVariable(fastVar, func(fe *Frontend) *atomic.Bool { return &fe.fast.off })
}

// fastProtoVariable defines lockstep_fast_protocol (see fastProtoVar).
func fastProtoVariable() sql.SystemVariable {
	return switchVariable(fastProtoVar, func(fe *Frontend) *atomic.Bool { return &fe.fast.protoOff })
}

// switchVariable defines a global ON/OFF variable, per server, default ON,
// whose value is kept inverted in the flag off returns.
func switchVariable(name string, off func(*Frontend) *atomic.Bool) sql.SystemVariable {
	return perServer(&sql.MysqlSystemVariable{
		Name:    name,
		Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Global),
		Dynamic: true,
		Type:    types.NewSystemBoolType(name),
		Default: int8(1),
		NotifyChanged: func(ctx *sql.Context, scope sql.SystemVariableScope, v sql.SystemVarValue) error {
			fe := frontendOf(ctx)
			if fe == nil || !scope.IsGlobalOnly() {
				return nil
			}
			on, err := sql.ConvertToBool(ctx, v.Val)
			if err != nil {
				return err
			}
			off(fe).Store(!on)
			return nil
		},
	})
}

// session returns the session of connection connID, or nil.
func (fe *Frontend) session(connID uint32) *Session { return fe.sessions.get(connID) }

// FastPrepare is called after go-mysql-server prepared query as statement
// stmtID of connection connID, with the result fields it returned. It
// keeps a plan if the fast path can run the statement.
func (fe *Frontend) FastPrepare(connID, stmtID uint32, query string, fields []*querypb.Field) {
	s := fe.session(connID)
	if s == nil {
		return
	}
	ctx := s.fastContext()
	var p *fastPlan
	if c := txControlOf(query); c != 0 {
		p = &fastPlan{query: query, txctl: c}
	} else if p = fe.recognise(ctx, query, fields); p == nil {
		return
	}
	s.fastMu.Lock()
	if s.fastPlans == nil {
		s.fastPlans = map[uint32]*fastPlan{}
	}
	if len(s.fastPlans) >= maxFastPlans {
		clear(s.fastPlans)
	}
	s.fastPlans[stmtID] = p
	s.fastMu.Unlock()
	stat.Inc(&fe.fast.plans)
}

// fastContext is the session's context for value conversions on the fast
// path (built once: a session runs one statement at a time).
func (s *Session) fastContext() *sql.Context {
	if s.fastCtx == nil {
		s.fastCtx = sql.NewContext(&s.stmt, sql.WithSession(s)) // fast_stop.go
	}
	return s.fastCtx
}

// recognise returns a plan for query, or nil.
func (fe *Frontend) recognise(ctx *sql.Context, query string, fields []*querypb.Field) *fastPlan {
	if !mayBeFast(query) || containsFold(query, "max_execution_time") {
		return nil // the hint is go-mysql-server's to read (fast_stop.go)
	}
	stmt, err := ast.ParseWithOptions(ctx, parserText(query), sql.LoadSqlMode(ctx).ParserOptions())
	if err != nil {
		return nil
	}
	switch st := stmt.(type) {
	case *ast.Select:
		return fe.recognisePointSelect(ctx, query, st, fields)
	case *ast.Update:
		return fe.recogniseUpdate(ctx, query, st)
	case *ast.Delete:
		return fe.recogniseDelete(ctx, query, st)
	case *ast.Insert:
		return fe.recogniseInsert(ctx, query, st)
	}
	return nil
}

// mayBeFast is a cheap filter on the text: SELECT, UPDATE, DELETE, INSERT.
func mayBeFast(q string) bool {
	if mayBeFastWrite(q) {
		return true
	}
	q = strings.TrimLeft(q, " \t\r\n(")
	return len(q) > 6 && strings.EqualFold(q[:6], "select")
}

// sessionFast is the per-session part of the fast path.
type sessionFast struct {
	fastMu    sync.Mutex
	fastPlans map[uint32]*fastPlan
	fastCtx   *sql.Context
	// textPlans maps a normalised text query to its plan, or to nil when
	// the text is not a fast shape. Used only by the connection's own
	// goroutine.
	textPlans map[string]*fastPlan
}

// FastExecute runs statement stmtID of connection connID with its bound
// values if the fast path can. handled is false when go-mysql-server must
// run it (then nothing was done).
func (fe *Frontend) FastExecute(ctx context.Context, connID, stmtID uint32, query string, bind map[string]*querypb.BindVariable) (res *sqltypes.Result, handled bool, err error) {
	st, ok := fe.plan(connID, stmtID, query)
	switch {
	case st.s == nil:
		return nil, false, nil
	case !ok:
		if fe.fastOn() {
			stat.Inc(&fe.fast.misses)
		}
		return nil, false, nil
	case !fe.fastOn():
		stat.Inc(&fe.fast.fallbacks)
		return nil, false, nil
	}
	return fe.Run(ctx, st, bind)
}

// Run executes a planned statement with its bound values, as FastExecute
// does once it has found the plan.
func (fe *Frontend) Run(ctx context.Context, st FastStmt, bind map[string]*querypb.BindVariable) (res *sqltypes.Result, handled bool, err error) {
	if st.p.txctl != 0 {
		res, handled, err = st.s.runTxControl(st.p.txctl)
	} else {
		res, handled, err = st.s.runFast(ctx, st.p, bind)
	}
	if handled {
		stat.Inc(&fe.fast.hits)
	} else {
		stat.Inc(&fe.fast.fallbacks)
	}
	return res, handled, err
}

// FastQuery runs text query of connection connID on the fast path if its
// normalised text has a plan whose result metadata is known. When it
// returns handled false with a learn function, go-mysql-server must run the
// query and learn must be called with the fields of its result, so the
// next query of the same shape runs on the fast path.
func (fe *Frontend) FastQuery(ctx context.Context, connID uint32, query string) (res *sqltypes.Result, handled bool, err error, learn func([]*querypb.Field)) {
	if !fe.fastOn() {
		return nil, false, nil, nil
	}
	if c := txControlOf(query); c != 0 {
		s := fe.session(connID)
		if s == nil {
			return nil, false, nil, nil
		}
		res, handled, err = s.runTxControl(c)
		fe.countFast(handled, true)
		return res, handled, err, nil
	}
	if !mayBeFast(query) {
		stat.Inc(&fe.fast.misses)
		return nil, false, nil, nil
	}
	s := fe.session(connID)
	if s == nil {
		return nil, false, nil, nil
	}
	norm, binds, ok := normaliseText(query)
	if !ok {
		stat.Inc(&fe.fast.misses)
		return nil, false, nil, nil
	}
	p, known := s.textPlans[norm]
	if !known {
		if s.textPlans == nil || len(s.textPlans) >= maxTextPlans {
			s.textPlans = map[string]*fastPlan{}
		}
		p = fe.recognise(s.fastContext(), norm, nil)
		s.textPlans[norm] = p
		if p != nil {
			stat.Inc(&fe.fast.plans)
		}
	}
	if p == nil {
		stat.Inc(&fe.fast.misses)
		return nil, false, nil, nil
	}
	if p.fields == nil && p.write == nil {
		return nil, false, nil, func(fields []*querypb.Field) {
			if len(fields) == len(p.cols) {
				p.fields = fields
			}
		}
	}
	bind := make(map[string]*querypb.BindVariable, len(binds))
	for i, b := range binds {
		bind["v"+strconv.Itoa(i+1)] = b
	}
	res, handled, err = s.runFast(ctx, p, bind)
	if handled {
		stat.Inc(&fe.fast.hits)
		stat.Inc(&fe.fast.textHits)
	} else {
		stat.Inc(&fe.fast.fallbacks)
	}
	return res, handled, err, nil
}

// paramName returns the bind variable name of a marker.
func paramName(e ast.Expr) (string, bool) {
	v, ok := e.(*ast.SQLVal)
	if !ok || v.Type != ast.ValArg {
		return "", false
	}
	return strings.TrimPrefix(string(v.Val), ":"), true
}
