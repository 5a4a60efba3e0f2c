package sqlfront

import (
	"context"
	"errors"
	"lockstep/internal/mdl"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// Session is a client connection's state: go-mysql-server's BaseSession
// plus the current storage transaction.
type Session struct {
	*sql.BaseSession
	fe     *Frontend
	connID uint32 // 0 for local sessions
	// replaying: the session runs a DDL statement from the log (ReplayDDL):
	// it is not logged again and read-only modes do not apply to it.
	replaying bool
	// replayBlocked: the replayed statement gave up waiting for local
	// transactions (pkalter.go); ReplayDDL reports it as its own error,
	// not the statement's.
	replayBlocked error
	// mdl holds the session's metadata locks (mdl.go); nil until the first.
	mdl *mdl.Owner
	// reopen: the statement failed with errReopen (mdl.go).
	reopen bool
	// triggerCalls counts the procedures called from triggers being run:
	// their statements do not commit (routinedb.go).
	triggerCalls int
	// trigTables: while go-mysql-server plans a write's triggers, the
	// tables of the plan, whose triggers GetTriggers lists (nil: all);
	// trigSeen: the trigger lists the statement read, checked once it
	// holds its metadata locks (mdltriggers.go).
	trigTables map[string]bool
	trigSeen   []trigSeen
	// viewsSeen: the views the statement read, locked with its tables
	// (mdlviews.go).
	viewsSeen []viewSeen
	// viewBound: a view's stored CREATE VIEW was bound for the statement
	// (routinedb.go's viewDatabase; mdlviews.go's notDDL).
	viewBound bool
	// viewChecks: the CHECK OPTION conditions of a write through a view
	// (viewwrite.go), for this statement
	viewChecks []viewCheck
	// preparedViewChecks: the same, by the text of the statement parsed
	// (a prepared statement's EXECUTE is not parsed again)
	preparedViewChecks map[string][]viewCheck
	// routineViewChecks: those of the trigger body or routine statement
	// being planned (viewroutine.go); triggerRule: go-mysql-server's
	// trigger rule is running (its parses of CREATE TRIGGER texts are
	// rewritten)
	routineViewChecks []viewCheck
	triggerRule       int
	// ddlSeen: the count of DDL statements granted exclusive metadata
	// locks when the statement began (ddlBusy: not all ended); planned: the statement's plan began
	// to run (serverplan.go; mdl.go's RetryAfterDDL); holdsX: it holds an
	// exclusive metadata lock (counted in Frontend.ddlGranted).
	ddlSeen uint64
	ddlBusy bool // DDL held exclusive locks when the statement began
	planned bool
	holdsX  bool
	// locked: the tables of the session's LOCK TABLES, nil when none
	// (lockcheck.go); pendingLocked: those of a LOCK TABLES being run.
	locked, pendingLocked *lockedSet

	clientHost string // the host USER() names (userfunc.go); "" for local sessions

	// planning is the long statement being planned on a goroutine of its
	// own, nil when none (planning.go).
	planning atomic.Pointer[Planning]
	// preparing is a COM_STMT_PREPARE the protocol layer is parsing
	// before the handler sees it: 0 none, 1 being parsed, 2 killed
	// meanwhile (planning.go, BeginPrepareParse).
	preparing atomic.Uint32

	// droppedTables is one more than the number of tables the last DROP
	// DATABASE dropped; 0 when taken (TakeDroppedTables).
	droppedTables int

	// viewDB is set while a view's database stands in for a session
	// without one, during the binding of a statement reading the view;
	// viewLookupDB is the database whose view was last looked up
	// (routinedb.go).
	viewDB       bool
	viewLookupDB string
	// deleteDB is the current database a DELETE FROM db.t replaced for
	// the statement (deletedb.go); nil when none.
	deleteDB *string
	// renames are the pairs of the RENAME TABLE being run, qualified, as
	// its parse found them (renamedb.go); renameAlter: it is an ALTER
	// TABLE ... RENAME. Cleared at the command's end.
	renames     []renamePair
	renameAlter bool
	// genWarnings are the 1906 warnings of the INSERT being run
	// (genvalues.go).
	genWarnings []*sql.Warning

	tx       *storage.Tx // nil until the transaction first touches data
	iso      txn.Isolation
	serial   bool // SERIALIZABLE: plain reads in explicit transactions lock S
	readOnly bool
	lastPid  uint64 // statement whose ReadView is open (READ COMMITTED)
	savepts  []savepoint

	snapshotPid uint64 // START TRANSACTION WITH CONSISTENT SNAPSHOT in this statement

	writers  int        // open UPDATE/DELETE editors (locking statements)
	stmtPid  uint64     // statement the lock intent belongs to
	stmtLock lockIntent // how its reads lock
	textPid  uint64     // statement textLock was read for
	// rowsWritten counts the rows the running statement handed to the
	// table editors: a conversion error go-mysql-server raises before the
	// next one is at row rowsWritten + 1 (MySQL's "at row N").
	rowsWritten int
	// autoInc is what the running INSERT did with AUTO_INCREMENT values,
	// for its OK packet's insert id (insertid.go).
	autoInc autoIncState
	// insertRows counts the rows the running INSERT was given (its info
	// string's Records, insertinfo.go), by its convCheck iterator.
	insertRows uint64
	// conv names the column of the running statement's conversion
	// errors and warnings (errcolumn.go).
	conv     convState
	textLock lockIntent // the locking clause of its prepared text

	lastWarnings int64 // conditions raised by the previous statement (@@warning_count)
	lastErrors   int64 // of them errors (@@error_count)
	// cleared: the statement running has started its diagnostics
	// (ClearWarnings); BeginStatement resets it (diagnostics.go).
	cleared bool

	ddl ddlStatement // the running statement's DDL latch and log record (ddllog.go)

	// ddlUndo undoes what the DDL statement ddlUndoPid changed, should it
	// fail (ddlundo.go).
	ddlUndo    []func()
	ddlUndoPid uint64

	nextTx nextTxState // SET TRANSACTION for the next transaction only (settx.go)

	timer stmtTimer   // max_execution_time of the running statement (interrupt.go)
	stmt  stmtContext // the context of its fast-path statements (fast_stop.go)
	// orderText: whether statement pid's text orders its rows
	// (indexrule.go textOrdered).
	orderText struct {
		pid     uint64
		text    uintptr // the text's address and length
		n       int
		ordered bool
	}

	// createComment is the COMMENT of the CREATE TABLE being run, read
	// from its parse: go-mysql-server does not pass it on for a table
	// whose primary key is declared as a clause (catalog.go).
	createComment struct{ table, comment string }

	temps map[string]*tableEntry // TEMPORARY tables by tempKey (temptables.go)

	grants grantReload // a reload of the account tables (granttables.go)

	sessionFast // prepared statements the fast path runs (fast.go)
}

type savepoint struct {
	name string
	mark int
}

var (
	_ sql.TransactionSession    = (*Session)(nil)
	_ sql.LifecycleAwareSession = (*Session)(nil)
)

// Transaction is the sql.Transaction go-mysql-server tracks for a session.
type Transaction struct {
	readOnly bool
}

func (t *Transaction) String() string   { return "lockstep transaction" }
func (t *Transaction) IsReadOnly() bool { return t.readOnly }

// isolationFromVars reads @@transaction_isolation. READ UNCOMMITTED is
// served as READ COMMITTED (a snapshot never shows uncommitted data here);
// SERIALIZABLE is REPEATABLE READ whose plain reads inside an explicit
// transaction lock rows in share mode, as InnoDB does.
func (s *Session) isolationFromVars(ctx *sql.Context) (txn.Isolation, bool) {
	if level := s.nextTx.take(ctx.Pid()); level != "" {
		return isolationOf(level) // SET TRANSACTION without a scope (settx.go)
	}
	v, err := s.GetSessionVariable(ctx, "transaction_isolation")
	if err != nil {
		return txn.RepeatableRead, false
	}
	level, _ := v.(string) // an enum variable: always a string
	return isolationOf(level)
}

// isolationOf maps a transaction_isolation value to the storage level and
// the SERIALIZABLE flag.
func isolationOf(level string) (txn.Isolation, bool) {
	switch {
	case strings.EqualFold(level, "READ-COMMITTED"), strings.EqualFold(level, "READ-UNCOMMITTED"):
		return txn.ReadCommitted, false
	case strings.EqualFold(level, "SERIALIZABLE"):
		return txn.RepeatableRead, true
	}
	return txn.RepeatableRead, false
}

// StartTransaction begins a transaction. The storage transaction (and its
// ReadView) starts lazily at the first read or write, as in InnoDB, unless
// the statement asked for a consistent snapshot.
func (s *Session) StartTransaction(ctx *sql.Context, tc sql.TransactionCharacteristic) (sql.Transaction, error) {
	if s.triggerCalls > 0 && s.tx != nil && !s.tx.Done() {
		// A procedure's statement inside a trigger (routinedb.go): it runs
		// in the firing statement's transaction.
		return &Transaction{readOnly: s.readOnly}, nil
	}
	if s.tx != nil {
		// go-mysql-server commits before starting; be safe anyway.
		if err := s.commitTx(ctx); err != nil {
			return nil, err
		}
	}
	s.iso, s.serial = s.isolationFromVars(ctx)
	s.readOnly = tc == sql.ReadOnly
	s.savepts = nil
	if s.snapshotPid != 0 && s.snapshotPid == ctx.Pid() && s.iso == txn.RepeatableRead {
		s.storageTx(ctx).Trx().ReadView() // take the view now, not at the first read
	}
	return &Transaction{readOnly: s.readOnly}, nil
}

// storageTx returns the session's storage transaction, starting it if
// needed, and applies per-statement settings.
func (s *Session) storageTx(ctx *sql.Context) *storage.Tx {
	if s.tx == nil || s.tx.Done() {
		s.tx = s.beginTx()
		s.lastPid = 0
	}
	if pid := ctx.Pid(); pid != s.lastPid {
		if s.lastPid != 0 {
			s.tx.EndStatement()
		}
		s.lastPid = pid
		s.writers = 0
		s.tx.NewStatement()
		s.tx.LockWait = s.lockWait(ctx)
	}
	return s.tx
}

func (s *Session) lockWait(ctx *sql.Context) time.Duration {
	return s.secondsVar(ctx, "innodb_lock_wait_timeout", 50*time.Second)
}

// secondsVar reads a session variable holding a number of seconds; def
// when it is unset or of another type.
func (s *Session) secondsVar(ctx *sql.Context, name string, def time.Duration) time.Duration {
	v, err := s.GetSessionVariable(ctx, name)
	if err != nil {
		return def
	}
	switch n := v.(type) {
	case int64:
		return time.Duration(n) * time.Second
	case int:
		return time.Duration(n) * time.Second
	case uint64:
		return time.Duration(n) * time.Second
	}
	return def
}

func (s *Session) commitTx(ctx context.Context) error {
	tx := s.tx
	s.tx = nil
	s.savepts = nil
	if tx == nil || tx.Done() {
		return nil
	}
	return mapError(tx.Commit())
}

func (s *Session) CommitTransaction(ctx *sql.Context, _ sql.Transaction) error {
	if s.triggerCalls > 0 {
		return nil // a procedure's statement inside a trigger (routinedb.go)
	}
	s.ddlSucceeded()
	err := s.commitTx(ctx)
	s.releaseMDL(mdl.Transaction, false) // mdl.go
	if err != nil {
		// The transaction ended with its failed commit (rolled back, or
		// with an unknown outcome): as in MySQL, the session is no longer
		// in it, and the next statement runs in autocommit mode (if on).
		// go-mysql-server leaves its transaction open when COMMIT fails.
		ctx.SetIgnoreAutoCommit(false)
		ctx.SetTransaction(nil)
	}
	return err
}

func (s *Session) Rollback(ctx *sql.Context, _ sql.Transaction) error {
	s.rollbackTx()
	s.releaseMDL(mdl.Transaction, false) // mdl.go
	return nil
}

func (s *Session) rollbackTx() {
	if s.tx != nil {
		s.tx.Rollback()
	}
	s.tx = nil
	s.savepts = nil
}

func (s *Session) CreateSavepoint(ctx *sql.Context, _ sql.Transaction, name string) error {
	tx := s.storageTx(ctx)
	for i, sp := range s.savepts {
		if strings.EqualFold(sp.name, name) {
			s.savepts = append(s.savepts[:i], s.savepts[i+1:]...)
			break
		}
	}
	s.savepts = append(s.savepts, savepoint{name: name, mark: tx.Savepoint()})
	return nil
}

func (s *Session) findSavepoint(name string) int {
	for i := len(s.savepts) - 1; i >= 0; i-- {
		if strings.EqualFold(s.savepts[i].name, name) {
			return i
		}
	}
	return -1
}

func (s *Session) RollbackToSavepoint(ctx *sql.Context, _ sql.Transaction, name string) error {
	i := s.findSavepoint(name)
	if i < 0 {
		return sql.ErrSavepointDoesNotExist.New(name)
	}
	if s.tx != nil {
		s.tx.RollbackTo(s.savepts[i].mark)
	}
	s.savepts = s.savepts[:i+1]
	return nil
}

func (s *Session) ReleaseSavepoint(ctx *sql.Context, _ sql.Transaction, name string) error {
	i := s.findSavepoint(name)
	if i < 0 {
		return sql.ErrSavepointDoesNotExist.New(name)
	}
	s.savepts = s.savepts[:i]
	return nil
}

// CommandBegin implements sql.LifecycleAwareSession.
func (s *Session) CommandBegin() error {
	s.reopen = false
	s.trigSeen, s.viewsSeen, s.viewBound = s.trigSeen[:0], s.viewsSeen[:0], false
	s.viewChecks = s.viewChecks[:0]
	s.routineViewChecks, s.triggerRule = nil, 0
	if s.fe != nil {
		ended := s.fe.ddlEnded.Load() // first: ended <= granted
		s.ddlSeen, s.planned = s.fe.ddlGranted.Load(), false
		s.ddlBusy = ended != s.ddlSeen
	}
	s.rowsWritten = 0
	s.insertRows = 0 // the row numbers of this statement's messages
	s.conv.reset()
	return nil
}

// CommandEnd implements sql.LifecycleAwareSession. Under READ COMMITTED a
// statement's ReadView ends with it. In autocommit mode outside BEGIN, a
// transaction still open here belongs to a statement that failed (a
// successful one was committed by go-mysql-server): it is rolled back now,
// so its locks do not outlive the statement.
func (s *Session) CommandEnd() {
	s.endViewDatabase()
	s.endDeleteDatabase()
	s.renames, s.renameAlter = nil, false
	s.genWarnings = nil
	s.undoFailedDDL()
	s.endDDL()
	if s.locked != nil && (s.holdsX || !mdlEnabled) {
		s.followLockedTables() // lockddl.go: before the statement's locks go
	}
	s.finishNextTxSet()
	s.lastPid = 0
	open := s.tx != nil && !s.tx.Done()
	if !open && (s.mdl == nil || !s.mdl.Held()) {
		return // nothing to end: no autocommit lookup
	}
	inTxn := s.GetIgnoreAutoCommit() || !s.autocommit()
	// A statement's metadata locks end with it, a transaction's with it
	// (mdl.go).
	s.releaseMDL(mdl.Statement, !inTxn)
	if !open {
		return
	}
	if !inTxn {
		s.rollbackTx()
		return
	}
	s.tx.EndStatement()
}

func (s *Session) autocommit() bool {
	v, err := s.GetSessionVariable(nil, "autocommit")
	return err != nil || boolValue(v)
}

// boolValue reads a boolean system variable's value (ON when of an
// unexpected type: the variables read this way default to ON).
func boolValue(v any) bool {
	switch x := v.(type) {
	case int8:
		return x != 0
	case int64:
		return x != 0
	case int:
		return x != 0
	case bool:
		return x
	case string:
		return x == "1" || strings.EqualFold(x, "ON")
	}
	return true
}

// SessionEnd implements sql.LifecycleAwareSession: a client that goes away
// mid-transaction has the transaction rolled back and its locks released.
func (s *Session) SessionEnd() {
	s.endDDL()
	s.rollbackTx()
	s.releaseMDL(0, true)
	s.unlockTables() // mdl.go
	s.dropTemps()
	if s.connID != 0 {
		s.fe.sessions.remove(s.connID, s)
	}
}

// lockIntent is how a statement's reads lock rows: mode 0 (consistent
// reads), LockS or LockX, and what a read does on a row another
// transaction holds (wait, NOWAIT, SKIP LOCKED).
type lockIntent struct {
	mode   txn.LockMode
	policy storage.ReadPolicy
}

// setLockIntent records that the running statement's reads are locking.
func (s *Session) setLockIntent(ctx *sql.Context, in lockIntent) {
	if s.stmtPid != ctx.Pid() || in.mode > s.stmtLock.mode {
		s.stmtPid = ctx.Pid()
		s.stmtLock = in
	}
}

// beginLockingWrite starts an UPDATE or DELETE: its reads lock rows X and
// do not see the rows the statement itself writes (storage NewStatement).
func (s *Session) beginLockingWrite(ctx *sql.Context) {
	// storageTx first: the first call of a statement resets writers.
	tx := s.storageTx(ctx)
	s.setLockIntent(ctx, lockIntent{mode: txn.LockX})
	s.writers++
	tx.NewStatement()
}

// endLockingWrite ends it: later statements of the same query (a stored
// procedure's, say) read normally and see what it wrote.
func (s *Session) endLockingWrite() {
	if s.writers > 0 {
		s.writers--
	}
	if s.writers == 0 {
		s.stmtPid, s.stmtLock = 0, lockIntent{}
		if s.tx != nil && !s.tx.Done() {
			s.tx.NewStatement()
		}
	}
}

// lockIntent returns how the running statement's reads lock. A text query's
// intent was recorded when it was parsed; an executed prepared statement is
// not parsed again, so its intent is read from the session's own prepared
// statement.
func (s *Session) lockIntent(ctx *sql.Context) lockIntent {
	if s.stmtPid == ctx.Pid() {
		return s.stmtLock
	}
	if s.textPid != ctx.Pid() {
		// Once per statement: a join asks for every lookup it makes.
		s.textPid, s.textLock = ctx.Pid(), s.textIntent(ctx)
	}
	if in := s.textLock; in.mode != 0 {
		s.setLockIntent(ctx, in)
		return in
	}
	if s.serial && ctx.GetIgnoreAutoCommit() {
		return lockIntent{mode: txn.LockS}
	}
	return lockIntent{}
}

// textIntent is the locking clause of the running statement's prepared
// text (mode 0 when it has none or is not a prepared statement).
func (s *Session) textIntent(ctx *sql.Context) lockIntent {
	q := ctx.Query()
	if !mayLock(q) {
		return lockIntent{}
	}
	key := sql.RemoveSpaceAndDelimiter(q, ';')
	if stmt, ok := s.fe.Engine.PreparedDataCache.GetCachedStmt(s.ID(), key); ok {
		return intentOf(q, stmt)
	}
	return lockIntent{}
}

// handleTxError is called with every error from the storage layer. A
// deadlock rolls back the whole transaction and ends it, as MySQL does: the
// session is no longer in a transaction, so the next statement runs in
// autocommit mode (if on) rather than in a leftover BEGIN. Other errors roll
// back only the statement (done by the editors' DiscardChanges).
func (s *Session) handleTxError(ctx *sql.Context, err error) error {
	if errors.Is(err, txn.ErrDeadlock) {
		s.endOnDeadlock(ctx)
	}
	return mapError(err)
}

// endOnDeadlock ends the session's transaction, rolled back, after it was
// chosen as a deadlock's victim (row locks or metadata locks).
func (s *Session) endOnDeadlock(ctx *sql.Context) {
	s.rollbackTx()
	s.releaseMDL(mdl.Transaction, false)
	ctx.SetIgnoreAutoCommit(false)
	ctx.SetTransaction(nil)
}

// mapError turns storage and lock errors into MySQL errors.
func mapError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, txn.ErrDeadlock):
		return mysql.NewSQLError(mysql.ERLockDeadlock, mysql.SSLockDeadlock, "Deadlock found when trying to get lock; try restarting transaction")
	case errors.Is(err, txn.ErrLockWaitTimeout):
		return mysql.NewSQLError(mysql.ERLockWaitTimeout, "HY000", "Lock wait timeout exceeded; try restarting transaction")
	case errors.Is(err, storage.ErrLockNowait):
		return mysql.NewSQLError(3572, "HY000", "%s", storage.ErrLockNowait.Error())
	case errors.Is(err, storage.ErrTableChanged):
		return mysql.NewSQLError(1412, "HY000", "Table definition has changed, please retry transaction")
	case errors.Is(err, context.Canceled):
		return mysql.NewSQLError(mysql.ERQueryInterrupted, mysql.SSQueryInterrupted, "Query execution was interrupted")
	}
	return err
}
