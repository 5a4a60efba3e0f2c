package server

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"lockstep/internal/sqlfront"
)

// handler wraps go-mysql-server's protocol handler. It gives errors MySQL's
// exact wording where go-mysql-server prefixes its own, and keeps the status
// flags of the handshake, OK and EOF packets as MySQL sends them; it is also
// the seam where a statement fast path will sit.
type handler struct {
	mysql.Handler
	fe   *sqlfront.Frontend
	stop *stopper // SHUTDOWN (shutdown.go); nil: refused

	// abandoned holds, by connection id, the long statement KILL made the
	// handler give up on while it was planned (*abandonedStmt), until the
	// connection's next command; nAbandoned counts them (longstmt.go).
	abandoned  sync.Map
	nAbandoned atomic.Int64
	// parsing holds, by connection id, the *wireConn of a connection
	// whose COM_STMT_PREPARE vitess is parsing (kill.go).
	parsing sync.Map
	// lat: statement latency by kind (stmtlatency.go).
	lat *stmtLatency
}

func wrapHandlerFor(fe *sqlfront.Frontend, stop *stopper, lat *stmtLatency) func(mysql.Handler) (mysql.Handler, error) {
	return func(h mysql.Handler) (mysql.Handler, error) {
		return &handler{Handler: h, fe: fe, stop: stop, lat: lat}, nil
	}
}

// NewConnection sets the status flags the handshake carries. MySQL sends
// SERVER_STATUS_AUTOCOMMIT there when @@global.autocommit is on; clients
// such as PyMySQL read it to decide whether they must send SET autocommit=0
// (without it, PyMySQL believed autocommit was already off and every
// statement of a "transaction" committed on its own).
func (h *handler) NewConnection(c *mysql.Conn) {
	h.Handler.NewConnection(c)
	h.resetFlags(c)
	if sc := wireConnOf(c.Conn); sc != nil {
		sc.hook = &execHook{h: h, vc: c}
	}
}

// hook returns connection c's execute hook (execproto.go), or nil.
func (h *handler) hook(c *mysql.Conn) *execHook {
	if sc := wireConnOf(c.Conn); sc != nil {
		x, _ := sc.hook.(*execHook)
		return x
	}
	return nil
}

// ComResetConnection (mysql_reset_connection) returns the session to its
// initial state: autocommit as the global value says, no transaction.
// go-mysql-server makes a connection's session at its first statement, and
// its reset read the session of a connection that had none yet (a reset
// as the first command: a nil dereference, a panic the protocol layer
// caught): the session is made first.
func (h *handler) ComResetConnection(c *mysql.Conn) error {
	h.settle(c) // longstmt.go
	if _, err := h.Handler.ParserOptionsForConnection(c); err != nil {
		return err
	}
	err := h.Handler.ComResetConnection(c)
	if err == nil {
		h.resetFlags(c)
	}
	return err
}

// resetFlags sets the flags of a new session: autocommit as this server's
// @@global.autocommit says (each server in a process has its own).
func (h *handler) resetFlags(c *mysql.Conn) {
	c.StatusFlags &^= mysql.ServerInTransaction
	if h.fe.GlobalAutocommit() {
		c.StatusFlags |= mysql.ServerStatusAutocommit
	} else {
		c.StatusFlags &^= mysql.ServerStatusAutocommit
	}
}

// syncInTrans sets SERVER_STATUS_IN_TRANS as MySQL does. go-mysql-server
// sets it whenever it holds a transaction object, which with autocommit off
// is after every statement, even SET autocommit=0; MySQL sets it only once
// a transaction is really open (BEGIN, or data touched with autocommit
// off). go-mysql-server has updated the flags before it hands a result to
// the callback, so this runs just before the packet is written, and once
// more after the command for the EOF packet that ends a result set.
func (h *handler) syncInTrans(c *mysql.Conn) {
	in, ok := h.fe.InTransaction(c.ConnectionID)
	if !ok {
		return
	}
	if in {
		c.StatusFlags |= mysql.ServerInTransaction
	} else {
		c.StatusFlags &^= mysql.ServerInTransaction
	}
}

// explain replaces go-mysql-server's placeholder tabular EXPLAIN row with
// the real table (sqlfront.Explain) when query is one EXPLAIN statement;
// otherwise (a multi-statement text, a prepared EXPLAIN) it keeps the
// placeholder, repaired.
func (h *handler) explain(c *mysql.Conn, query string, r *sqltypes.Result) {
	if !isExplainResult(r) {
		return
	}
	if oneStatement(query) {
		if rows := h.fe.Explain(c.ConnectionID, query); rows != nil {
			r.Rows = rows
			return
		}
	}
	fixExplainNulls(r)
}

// oneStatement reports whether query is one statement (no ';' but a
// trailing one): the EXPLAIN replacements answer only such texts.
func oneStatement(query string) bool {
	return !strings.Contains(strings.TrimRight(strings.TrimSpace(query), ";"), ";")
}

// isExplainResult reports go-mysql-server's tabular EXPLAIN result.
func isExplainResult(r *sqltypes.Result) bool {
	return len(r.Fields) == 12 && r.Fields[1].Name == "select_type" && r.Fields[9].Name == "rows"
}

// fixExplainNulls repairs go-mysql-server's placeholder tabular EXPLAIN
// row, which sends the text "NULL" in columns declared as integers (rows)
// and floats (filtered): clients that convert by the declared type (PyMySQL)
// failed on it and lost the connection. MySQL sends SQL NULLs there.
func fixExplainNulls(r *sqltypes.Result) {
	if !isExplainResult(r) {
		return
	}
	for _, row := range r.Rows {
		for i, v := range row {
			if !v.IsNull() && string(v.Raw()) == "NULL" {
				row[i] = sqltypes.NULL
			}
		}
	}
}

// queryText is a statement's text without the NUL bytes some clients send
// after it (MariaDB's mysqlslap counts the C string's terminator in the
// packet): MySQL and MariaDB end the statement there; go-mysql-server's
// parser read the NUL as a token (a syntax error at the end).
func queryText(q string) string { return strings.TrimRight(q, "\x00") }

func (h *handler) ComQuery(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) error {
	defer h.lat.done(query, h.lat.start()) // stmtlatency.go
	h.settle(c)                            // longstmt.go
	query = queryText(query)
	h.fe.BeginStatement(c.ConnectionID)
	if mayBeKill(query) {
		if sent, err := h.kill(ctx, c, query, cb); sent {
			return h.mysqlError(c, query, err) // kill.go
		}
	}
	if isShutdown(query) {
		return h.mysqlError(c, query, h.shutdown(ctx, c, cb)) // shutdown.go
	}
	if err := h.fe.BeforeStatement(ctx, c.ConnectionID); err != nil {
		return h.mysqlError(c, query, consistencyError(err)) // groupread.go
	}
	res, handled, err, learn := h.fe.FastQuery(ctx, c.ConnectionID, query)
	if handled {
		return h.fastResult(c, query, res, err, func(r *sqltypes.Result) error { return cb(r, false) })
	}
	rs := resultStream{c: c}  // resultbuf.go
	st := newStoppable(query) // longstmt.go
	abandoned, err := h.runStoppable(ctx, c, st, func(ctx context.Context) error {
		return h.reopening(ctx, c, func() error {
			return h.Handler.ComQuery(ctx, c, query, st.guard(h.gmsResults(c, query, &learn, &rs, cb)))
		})
	})
	if abandoned {
		return err
	}
	rs.end()
	if sent, serr := h.explainPlan(c, query, err, cb); sent {
		return serr
	}
	if sent, aerr := h.answerRefused(ctx, c, query, err, cb); sent {
		return aerr
	}
	h.syncInTrans(c)
	return h.mysqlError(c, query, err)
}

// gmsResults is the callback ComQuery and ComMultiQuery give
// go-mysql-server: each batch of a statement's results is fixed up as
// MySQL would send it (fixResult, explain), its fields taught to the fast
// path, the transaction flag synced, and sent through rs (resultbuf.go).
func (h *handler) gmsResults(c *mysql.Conn, query string, learn *func([]*querypb.Field), rs *resultStream, cb mysql.ResultSpoolFn) mysql.ResultSpoolFn {
	return func(r *sqltypes.Result, more bool) error {
		return rs.batch(func() error {
			h.fixResult(c, query, r)
			learnFields(learn, r)
			h.syncInTrans(c)
			h.explain(c, query, r)
			return h.sendOK(c, r, func() error { return cb(r, more) })
		})
	}
}

func (h *handler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (string, error) {
	defer h.lat.done(query, h.lat.start()) // stmtlatency.go: the kind of the statement it runs (the text's first)
	h.settle(c)                            // longstmt.go
	query = queryText(query)
	h.fe.BeginStatement(c.ConnectionID)
	if mayBeKill(query) {
		if sent, err := h.kill(ctx, c, query, cb); sent {
			return "", h.mysqlError(c, query, err) // kill.go
		}
	}
	if isShutdown(query) {
		return "", h.mysqlError(c, query, h.shutdown(ctx, c, cb)) // shutdown.go
	}
	if err := h.fe.BeforeStatement(ctx, c.ConnectionID); err != nil {
		return "", h.mysqlError(c, query, consistencyError(err)) // groupread.go
	}
	// The fast path takes single statements only (normaliseText refuses a
	// text with a second statement), so nothing remains after it.
	res, handled, err, learn := h.fe.FastQuery(ctx, c.ConnectionID, query)
	if handled {
		return "", h.fastResult(c, query, res, err, func(r *sqltypes.Result) error { return cb(r, false) })
	}
	rs := resultStream{c: c}  // resultbuf.go
	st := newStoppable(query) // longstmt.go
	var rest string
	abandoned, err := h.runStoppable(ctx, c, st, func(ctx context.Context) (err error) {
		return h.reopening(ctx, c, func() (err error) {
			rest, err = h.Handler.ComMultiQuery(ctx, c, query, st.guard(h.gmsResults(c, query, &learn, &rs, cb)))
			return err
		})
	})
	if abandoned {
		return "", err
	}
	rs.end()
	if sent, serr := h.explainPlan(c, query, err, cb); sent {
		return "", serr
	}
	if rest == "" {
		if sent, aerr := h.answerRefused(ctx, c, query, err, cb); sent {
			return "", aerr
		}
	}
	h.syncInTrans(c)
	return rest, h.mysqlError(c, query, err)
}

// explainPlan answers an EXPLAIN of a single-table UPDATE or DELETE by a
// whole key, which go-mysql-server planned and then refused to send
// ("max1Row iterator returned more than one row": its point-read marker
// expects one row). query must be one statement; sent reports whether it
// answered.
func (h *handler) explainPlan(c *mysql.Conn, query string, err error, cb mysql.ResultSpoolFn) (sent bool, _ error) {
	if !sqlfront.IsMax1RowExplain(query, err) || !oneStatement(query) {
		return false, nil
	}
	res, perr := h.fe.ExplainPlan(c.ConnectionID, query)
	if perr != nil {
		return false, nil
	}
	h.syncInTrans(c)
	return true, cb(res, false)
}

// answerRefused answers a single statement go-mysql-server refused with
// err when it is one lockstep answers itself (adminstmt.go), and reports
// whether it did; the error is the answer's, mapped as any statement's.
func (h *handler) answerRefused(ctx context.Context, c *mysql.Conn, query string, err error, cb mysql.ResultSpoolFn) (sent bool, _ error) {
	if err == nil {
		return false, nil
	}
	sent, aerr := h.adminStatement(ctx, c, query, err, cb)
	if !sent {
		return false, nil
	}
	h.syncInTrans(c)
	return true, h.mysqlError(c, query, aerr)
}

// fastResult sends a result the fast path produced, with the status flags
// set as for any statement.
func (h *handler) fastResult(c *mysql.Conn, query string, res *sqltypes.Result, err error, send func(*sqltypes.Result) error) error {
	if err == nil {
		h.syncInTrans(c)
		err = h.sendOK(c, res, func() error { return send(res) })
	}
	h.syncInTrans(c)
	return h.noteError(c, h.timedOut(c, mysqlError(query, err)))
}

// setStatement matches a SET statement (variables, NAMES, TRANSACTION ...),
// after any leading comments.
var setStatement = regexp.MustCompile(`(?is)^\s*(/\*.*?\*/\s*)*set\s`)

// fixResult makes a go-mysql-server text-protocol result MySQL's before it
// is sent: column definitions (sqlfront.FixFields) and no affected rows for
// a SET (go-mysql-server counted the row its Set node returns). The fast
// path takes no SET, so its results do not pass here.
func (h *handler) fixResult(c *mysql.Conn, query string, r *sqltypes.Result) {
	h.fe.FixFields(c.ConnectionID, r.Fields)
	if len(r.Fields) == 0 && r.RowsAffected != 0 && setStatement.MatchString(query) {
		r.RowsAffected = 0
	}
	h.fixTableStatus(c, query, r)
	h.fixAnalyzeTables(c, query, r)
	if len(r.Fields) == 0 && dropDatabase.MatchString(query) {
		if n, ok := h.fe.TakeDroppedTables(c.ConnectionID); ok {
			r.RowsAffected = uint64(n) // the tables it dropped, as MySQL counts (go-mysql-server: 1)
		}
	}
	if len(r.Fields) == 1 && r.Fields[0].Name == "Database" {
		nameDatabasesPattern(query, r)
	}
}

// nameDatabasesPattern: MySQL names SHOW DATABASES LIKE's column after the
// pattern, Database (d%).
func nameDatabasesPattern(query string, r *sqltypes.Result) {
	if m := showDatabasesLike.FindStringSubmatch(query); m != nil {
		r.Fields[0].Name = "Database (" + strings.ReplaceAll(m[1], "''", "'") + ")"
	}
}

var (
	dropDatabase      = regexp.MustCompile(`(?is)^\s*drop\s+(database|schema)\s`)
	showDatabasesLike = regexp.MustCompile(`(?is)^\s*show\s+(?:databases|schemas)\s+like\s+'((?:[^']|'')*)'\s*;?\s*$`)
)

// fixAnalyzeTables: ANALYZE TABLE names the table db.table, as the other
// table maintenance statements do (adminstmt.go); go-mysql-server names it
// alone.
func (h *handler) fixAnalyzeTables(c *mysql.Conn, query string, r *sqltypes.Result) {
	if len(r.Fields) != len(tableOpFields) || r.Fields[0].Name != "Table" || !analyzeStatement.MatchString(query) {
		return
	}
	ec := errContext{query: query, db: h.fe.CurrentDatabase(c.ConnectionID)}
	for _, row := range r.Rows {
		if name := row[0].ToString(); !strings.Contains(name, ".") {
			row[0] = sqltypes.NewVarChar(qualifiedTable(name, ec))
		}
	}
}

// fixTableStatus gives SHOW TABLE STATUS what go-mysql-server leaves out
// or gets wrong: the Auto_increment value (NULL) and InnoDB's row format
// (Dynamic, MySQL 8's default; it said Fixed).
func (h *handler) fixTableStatus(c *mysql.Conn, query string, r *sqltypes.Result) {
	if len(r.Fields) < 11 || r.Fields[3].Name != "Row_format" || r.Fields[10].Name != "Auto_increment" {
		return
	}
	m := showTableStatus.FindStringSubmatch(query)
	if m == nil {
		return
	}
	db := strings.ReplaceAll(strings.Trim(m[1], "`"), "``", "`")
	if db == "" {
		db = h.fe.CurrentDatabase(c.ConnectionID)
	}
	for _, row := range r.Rows {
		if len(row) < 11 {
			continue
		}
		row[3] = sqltypes.NewVarChar("Dynamic")
		if n, ok := h.fe.NextAutoIncrement(c.ConnectionID, db, row[0].ToString()); ok {
			if r.Fields[10].Type == querypb.Type_UINT64 {
				row[10] = sqltypes.NewUint64(n)
			} else {
				row[10] = sqltypes.NewInt64(int64(n))
			}
		}
	}
}

var showTableStatus = regexp.MustCompile("(?is)^\\s*show\\s+table\\s+status(?:\\s+(?:from|in)\\s+(`(?:[^`]|``)+`|[A-Za-z0-9_$]+))?")

var analyzeStatement = regexp.MustCompile(`(?is)^\s*analyze\s+(?:(?:no_write_to_binlog|local)\s+)?tables?\s`)

// learnFields hands the fields of go-mysql-server's first result set to
// the fast path's learn function (see sqlfront.FastQuery), once.
func learnFields(learn *func([]*querypb.Field), r *sqltypes.Result) {
	if *learn != nil && r.Fields != nil {
		(*learn)(r.Fields)
		*learn = nil
	}
}

func (h *handler) ComStmtExecute(ctx context.Context, c *mysql.Conn, p *mysql.PrepareData, cb func(*sqltypes.Result) error) error {
	defer h.lat.done(p.PrepareStmt, h.lat.start()) // stmtlatency.go
	h.settle(c)                                    // longstmt.go
	h.fe.BeginStatement(c.ConnectionID)
	if err := h.fe.BeforeStatement(ctx, c.ConnectionID); err != nil {
		return h.mysqlError(c, p.PrepareStmt, consistencyError(err)) // groupread.go
	}
	// skipFast: the execute hook (execproto.go) has run the plan on these
	// parameters and it declined them.
	if !h.hook(c).skipFast(p.StatementID) {
		if res, handled, err := h.fe.FastExecute(ctx, c.ConnectionID, p.StatementID, p.PrepareStmt, p.BindVars); handled {
			return h.fastResult(c, p.PrepareStmt, res, err, cb)
		}
	}
	rs := resultStream{c: c}          // resultbuf.go
	st := newStoppable(p.PrepareStmt) // longstmt.go: go-mysql-server plans it again
	send := st.guard(func(r *sqltypes.Result, _ bool) error {
		return rs.batch(func() error {
			h.fe.FixFields(c.ConnectionID, r.Fields)
			h.syncInTrans(c)
			fixExplainNulls(r)
			return cb(r)
		})
	})
	abandoned, err := h.runStoppable(ctx, c, st, func(ctx context.Context) error {
		return h.reopening(ctx, c, func() error { // sqlfront/mdl.go
			return h.Handler.ComStmtExecute(ctx, c, p, func(r *sqltypes.Result) error { return send(r, false) })
		})
	})
	if abandoned {
		return err
	}
	rs.end()
	h.syncInTrans(c)
	return h.mysqlError(c, p.PrepareStmt, err)
}

// mysqlError maps a statement's error as mysqlError does, foreign key
// errors first: sqlfront knows the keys MySQL's messages describe.
func (h *handler) mysqlError(c *mysql.Conn, query string, err error) error {
	return h.noteError(c, h.timedOut(c, h.mapError(c, query, err)))
}

// mapError is mysqlError without the diagnostics.
func (h *handler) mapError(c *mysql.Conn, query string, err error) error {
	if err == nil {
		return nil
	}
	db, row, col, val, colType := h.fe.ErrorContext(c.ConnectionID)
	ec := errContext{db: db, row: row, col: col, val: val, colType: colType}
	if c.Conn != nil {
		ec.host = sqlfront.ClientHost(c.RemoteAddr())
	}
	err = h.fe.LockedTablesError(c.ConnectionID, query, err) // sqlfront/lockcheck.go
	return mysqlErrorIn(query, ec, h.fe.ForeignKeyError(c.ConnectionID, query, err))
}

// noteError puts the error a statement fails with into the session's
// diagnostics (SHOW WARNINGS, SHOW ERRORS, @@error_count:
// sqlfront/diagnostics.go) and returns it.
func (h *handler) noteError(c *mysql.Conn, err error) error {
	var se *mysql.SQLError
	if errors.As(err, &se) {
		h.fe.NoteError(c.ConnectionID, se.Num, se.Message)
	}
	logStatementError(c.ConnectionID, err) // clientlog.go
	return err
}

func (h *handler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, p *mysql.PrepareData) ([]*querypb.Field, error) {
	h.settle(c) // longstmt.go
	query = queryText(query)
	h.fe.BeginStatement(c.ConnectionID)
	if orig := h.hook(c).original(query); orig != query {
		query, p.PrepareStmt = orig, orig // the client's text (execHook.rewrite)
	}
	h.parsing.Delete(c.ConnectionID)
	h.hook(c).takeParsing()
	if h.fe.EndPrepareParse(c.ConnectionID) { // KILL during vitess's parse (longstmt.go)
		delete(c.PrepareData, p.StatementID)
		return nil, h.noteError(c, errInterrupted())
	}
	st := newStoppable(query) // longstmt.go
	var f []*querypb.Field
	abandoned, err := h.runStoppable(ctx, c, st, func(ctx context.Context) error {
		return h.reopening(ctx, c, func() (err error) { // sqlfront/mdl.go
			f, err = h.Handler.ComPrepare(ctx, c, query, p)
			return err
		})
	})
	if err != nil {
		// vitess registered the statement before asking: a statement
		// that failed to prepare must have no id a later COM_STMT_EXECUTE
		// could run (MySQL gives it none; protoguard.go answers 1243).
		delete(c.PrepareData, p.StatementID)
	}
	if abandoned {
		return nil, err
	}
	if err == nil {
		h.fe.FixFields(c.ConnectionID, f)
		h.fe.FastPrepare(c.ConnectionID, p.StatementID, p.PrepareStmt, f)
	}
	h.syncInTrans(c)
	return f, h.mysqlError(c, query, err)
}

// ComInitDB (the mysql CLI's `use`, a connection's initial database) maps
// its error as a statement's: an unknown database is 1049 (42000) "Unknown
// database 'x'". The account must be allowed the database (1044): the
// catalog checks user databases, but go-mysql-server opens mysql to
// everyone (sqlfront/dbaccess.go). At the handshake the session does not
// exist yet: it is made first.
func (h *handler) ComInitDB(c *mysql.Conn, schemaName string) error {
	h.settle(c) // longstmt.go
	if _, err := h.Handler.ParserOptionsForConnection(c); err != nil {
		return h.mysqlError(c, "USE "+schemaName, err)
	}
	if err := h.fe.CheckDatabaseAccess(c.ConnectionID, schemaName); err != nil {
		return h.mysqlError(c, "USE "+schemaName, err)
	}
	return h.mysqlError(c, "USE "+schemaName, h.Handler.ComInitDB(c, schemaName))
}

// reopening runs a statement through go-mysql-server again while it fails
// because a table it found changed before it got the table's metadata lock
// (sqlfront/mdl.go): MySQL opens the tables again after such a wait. The
// statement did nothing before that failure; each round follows a DDL
// statement that changed one of its tables.
//
// A statement that failed to find a table by name while DDL ran (before
// it held its metadata locks: RetryAfterDDL) waits for that DDL and runs
// again, as a statement that asks for the table's lock in MySQL waits for
// the DDL and then opens the table by its name.
func (h *handler) reopening(ctx context.Context, c *mysql.Conn, run func() error) error {
	for {
		err := run()
		if err == nil {
			return nil
		}
		if !h.fe.TakeReopen(c.ConnectionID) && !h.fe.RetryAfterDDL(ctx, c.ConnectionID, err) {
			return err
		}
	}
}
