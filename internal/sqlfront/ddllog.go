package sqlfront

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// DDL and the log. A DDL statement is logged as its text, with the database
// it ran in, before its first change to the catalog: it then has a
// sequence number below every transaction that can see its effect, and
// recovery (and later a secondary) replays it by running the same text, as
// MySQL's binary log carries DDL. One statement is logged once however many
// catalog calls it makes. DDL statements are serialised (ddlMu, held from
// the statement's first catalog call to its end), so replaying them in log
// order creates tables with the same durable ids.
//
// Only what took effect belongs in the log. A catalog call first takes the
// latch (beginDDL), then checks what it can know without changing anything
// — the table exists, the index is not there — and only then logs the
// statement (logDDL): a statement refused by such a check is never logged.
// A statement that fails after it was logged (a unique index over
// duplicates, a foreign key refused after its CREATE TABLE made the table)
// has its changes undone at its end (ddlundo.go), and its end, still under
// the latch, logs a second record saying so: a DDL record whose text is
// only the mark FailedDDLMark, naming the first record's index. No other
// DDL record can come between the two (the latch), transactions can.
// Replay runs the statement when it meets it, as the primary did, keeps
// what it would undo, and undoes it when it meets the mark (it has usually
// failed again and undone itself by then, silently); a statement without a
// mark succeeded, or was still running at a crash (its outcome is then
// replay's), or was logged by a lockstep that logged failed statements
// (older logs, which still replay: a failure there is a note).

// DDLLogger makes a DDL statement durable before it changes anything. The
// server installs one once recovery is done; with none (recovery, tests)
// DDL is not logged.
type DDLLogger interface {
	// LogDDL logs a statement and returns its record's log index.
	LogDDL(database, query string, nextTableID uint64) (int64, error)
	// LogDDLFailed logs that the statement logged at index failed and
	// that what it changed was undone (a FailedDDLMark record), with the
	// next table id as it is after the statement. The statement has
	// failed already: the logger reports its own failure to log.
	LogDDLFailed(index int64, nextTableID uint64)
}

// SetDDLLogger installs the DDL logger (nil: none).
func (fe *Frontend) SetDDLLogger(l DDLLogger) {
	fe.ddlMu.Lock()
	fe.ddlLog = l
	fe.ddlMu.Unlock()
	if al, ok := l.(AccountsLogger); ok {
		fe.acct.logger.Store(&al)
	} else {
		fe.acct.logger.Store(nil)
	}
}

// ddlStatement is what the running statement of a session has to do with
// the DDL latch and the log.
type ddlStatement struct {
	held      bool  // it holds fe.ddlMu (beginDDL), until CommandEnd
	logged    int64 // the log index of its DDL record; 0: not logged
	committed bool  // go-mysql-server committed it: it succeeded
	// keepUndo: a replayed statement keeps the undo of its changes when
	// it succeeds (in doneUndo), for a failure mark that may follow.
	keepUndo bool
	doneUndo []func()
}

// beginDDL takes the DDL latch for the running statement, once per
// statement, and holds it until the statement ends (Session.CommandEnd),
// without logging anything: a catalog call takes it before it checks what
// it is about to change, so that no other DDL changes that meanwhile, and
// logs the statement (logDDL) only once the checks pass. With no logger
// installed (recovery, tests) it does nothing.
func (fe *Frontend) beginDDL(ctx *sql.Context) error {
	s, _ := ctx.Session.(*Session)
	if s != nil && s.ddl.held {
		return nil
	}
	fe.ddlWaiting.Add(1)
	fe.ddlMu.Lock()
	fe.ddlWaiting.Add(-1)
	if fe.ddlLog == nil || (s != nil && s.replaying) {
		fe.ddlMu.Unlock()
		return nil // nothing to log: no logger, or the statement is the log's
	}
	if s == nil || !isDDLText(ctx.Query()) {
		fe.ddlMu.Unlock()
		return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
			"This version of lockstep doesn't yet support 'DDL inside a stored program, trigger or prepared statement'")
	}
	if fe.readOnlyActive() { // readonly.go
		if err := fe.readOnlyError(ctx); err != nil {
			fe.ddlMu.Unlock()
			return err
		}
	}
	s.ddl = ddlStatement{held: true}
	return nil
}

// logDDL logs the running statement as DDL, once per statement, taking
// the DDL latch first if the statement does not hold it yet (beginDDL).
// A catalog call calls it after its checks and before its first change.
func (fe *Frontend) logDDL(ctx *sql.Context) error {
	if err := fe.beginDDL(ctx); err != nil {
		return err
	}
	s, _ := ctx.Session.(*Session)
	if s == nil || !s.ddl.held || s.ddl.logged != 0 {
		return nil // no logger, or logged already
	}
	text, err := loggedDDLText(ctx)
	if err != nil {
		return err
	}
	seq, err := fe.ddlLog.LogDDL(ctx.GetCurrentDatabase(), text, fe.store.NextTableID())
	if err != nil {
		return err
	}
	s.ddl.logged, s.ddl.committed = seq, false
	return nil
}

// endDDL ends the DDL part of s's running statement: if it was logged and
// did not commit (it failed, and Session.undoFailedDDL has undone what it
// changed), its failure is logged; then the DDL latch is released.
func (s *Session) endDDL() {
	if !s.ddl.held {
		return
	}
	fe := s.fe
	if s.ddl.logged != 0 && !s.ddl.committed && fe.ddlLog != nil {
		fe.ddlLog.LogDDLFailed(s.ddl.logged, fe.store.NextTableID())
	}
	s.ddl = ddlStatement{}
	fe.ddlMu.Unlock()
}

// failedDDLPrefix starts the text of the record that says a logged DDL
// statement failed: "/* lockstep: ddl failed at=INDEX */", a comment only
// (never a statement).
const failedDDLPrefix = "/* lockstep: ddl failed at="

// FailedDDLMark is the text of the record saying that the DDL statement
// logged at index failed and was undone.
func FailedDDLMark(index int64) string {
	return failedDDLPrefix + strconv.FormatInt(index, 10) + " */"
}

// FailedDDLIndex reports whether a DDL record's text is a failure mark,
// and the index of the statement it names.
func FailedDDLIndex(text string) (index int64, ok bool) {
	rest, found := strings.CutPrefix(text, failedDDLPrefix)
	if !found {
		return 0, false
	}
	digits, found := strings.CutSuffix(rest, " */")
	if !found {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// isDDLText reports whether q is itself a DDL statement (rather than, say,
// CALL of a procedure that runs one): its first keyword is one of CREATE,
// ALTER, DROP, RENAME or TRUNCATE.
func isDDLText(q string) bool {
	switch firstKeyword(q) {
	case "CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE":
		return true
	}
	return false
}

// firstKeyword returns the first word of a statement, upper-cased, after
// comments — MySQL's versioned comments /*!NNNNN ... */ count as their
// content, as mysqldump writes CREATE TRIGGER that way.
func firstKeyword(q string) string {
	for {
		q = strings.TrimLeft(q, " \t\r\n")
		switch {
		case strings.HasPrefix(q, "/*!"):
			q = strings.TrimLeft(q[3:], "0123456789")
			continue
		case strings.HasPrefix(q, "/*"):
			end := strings.Index(q, "*/")
			if end < 0 {
				return ""
			}
			q = q[end+2:]
			continue
		case strings.HasPrefix(q, "#"), strings.HasPrefix(q, "-- "):
			end := strings.IndexByte(q, '\n')
			if end < 0 {
				return ""
			}
			q = q[end+1:]
			continue
		}
		break
	}
	end := strings.IndexAny(q, " \t\r\n(/`;")
	if end < 0 {
		end = len(q)
	}
	return strings.ToUpper(q[:end])
}

// ReplayDDL runs a logged DDL statement during recovery. nextTableID is
// what the storage engine's next table id was when the statement first
// ran: replay in log order must reproduce it, or the durable ids in later
// records would name other tables. A statement that fails is reported
// (replayErr) but not fatal, and what it changed is undone as when it ran;
// whether the failure was expected is for the record after it to say (a
// failure mark: ReplayFailedDDL). A statement that succeeds keeps the undo
// of its changes until the next ReplayDDL, for such a mark.
func (fe *Frontend) ReplayDDL(database, query string, nextTableID uint64) (replayErr error, err error) {
	fe.replayUndo = nil
	if got := fe.store.NextTableID(); got != nextTableID {
		return nil, fmt.Errorf("replaying %q: next table id is %d, the log says %d", query, got, nextTableID)
	}
	ctx := fe.NewLocalContext(context.Background())
	if database != "" && fe.provider.HasDatabase(ctx, database) {
		ctx.SetCurrentDatabase(database)
	}
	query, err = replayText(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("replaying %q: %w", query, err)
	}
	s, _ := ctx.Session.(*Session)
	if s != nil {
		s.ddl.keepUndo = true
		s.replaying = true
	}
	var qerr error
	for {
		var iter sql.RowIter
		_, iter, _, qerr = fe.Engine.Query(ctx, query)
		if qerr == nil {
			_, qerr = sql.RowIterToRows(ctx, iter)
		}
		if !ReopenTables(qerr) { // mdl.go
			break
		}
	}
	if s != nil {
		// The statement's metadata locks end with it: recovery and a
		// secondary's applier do not end the session (as the protocol
		// layer's CommandEnd does), and a table whose DDL was replayed
		// stayed locked — every later statement on it waited.
		s.releaseMDL(0, true)
		if qerr != nil {
			s.undoFailedDDL() // as when it failed the first time (ddlundo.go)
		} else {
			fe.replayUndo = append(s.ddl.doneUndo, s.ddlUndo...)
		}
		s.ddlSucceeded()
		s.ddl = ddlStatement{}
		if blocked := s.replayBlocked; blocked != nil && qerr != nil {
			s.replayBlocked = nil
			fe.replayUndo = nil
			return nil, fmt.Errorf("replaying %q: %w", query, blocked)
		}
	}
	return qerr, nil
}

// ReplayFailedDDL applies a failure mark during recovery: the statement
// ReplayDDL ran last failed when it ran, and what it changed was undone
// (nextTableID is the next table id after it). If the statement failed at
// replay too, it has undone itself already; if it succeeded, its changes
// are undone now, as they were then. The next table id moves to the
// mark's if replay used fewer ids than the statement did.
func (fe *Frontend) ReplayFailedDDL(nextTableID uint64) error {
	undo := fe.replayUndo
	fe.replayUndo = nil
	for i := len(undo) - 1; i >= 0; i-- {
		undo[i]()
	}
	switch got := fe.store.NextTableID(); {
	case got < nextTableID:
		return fe.store.SetNextTableID(nextTableID)
	case got > nextTableID:
		return fmt.Errorf("after the failed DDL statement the next table id is %d, the log says %d", got, nextTableID)
	}
	return nil
}

// RecoverCounters sets, after recovery, the counters the data implies:
// each AUTO_INCREMENT counter moves past the column's largest value (it
// only ever rises: the counters checkpoints and commit records carry,
// restored before, keep it past values since deleted, as MySQL 8 does;
// docs/durability.md) and each hidden row-id counter past the largest row
// id.
func (fe *Frontend) RecoverCounters() error {
	ctx := fe.NewLocalContext(context.Background())
	for _, db := range fe.provider.AllDatabases(ctx) {
		d := db.(*Database)
		d.mu.RLock()
		entries := make([]*tableEntry, 0, len(d.tables))
		for _, te := range d.tables {
			entries = append(entries, te)
		}
		d.mu.RUnlock()
		for _, te := range entries {
			m := te.load()
			t := &Table{db: d, entry: te, meta: m}
			if m.autoIncCol >= 0 {
				if err := t.seedAutoIncrement(ctx, m.autoIncCol); err != nil {
					return fmt.Errorf("AUTO_INCREMENT of %s.%s: %w", d.name, m.name, err)
				}
			}
			if m.hidden {
				tx := fe.store.Begin(txn.ReadCommitted)
				err := tx.Scan(ctx, te.store, storage.PrimaryIndex, storage.Range{}, true, 0, func(pk, _ []byte) (bool, error) {
					if len(pk) == 8 {
						te.rowid.Store(binary.BigEndian.Uint64(pk) ^ (1 << 63))
					}
					return false, nil
				})
				tx.Rollback()
				if err != nil {
					return fmt.Errorf("row ids of %s.%s: %w", d.name, m.name, err)
				}
			}
		}
	}
	return nil
}
