package sqlfront

import (
	"context"
	"encoding/binary"
	"fmt"
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
// the log call to the end of the statement), so replaying them in log order
// creates tables with the same durable ids.

// DDLLogger makes a DDL statement durable before it changes anything. The
// server installs one once recovery is done; with none (recovery, tests)
// DDL is not logged.
type DDLLogger interface {
	LogDDL(database, query string, nextTableID uint64) error
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

// logDDL logs the running statement as DDL, once per statement, and holds
// the DDL latch until the statement ends (Session.CommandEnd).
func (fe *Frontend) logDDL(ctx *sql.Context) error {
	s, _ := ctx.Session.(*Session)
	if s != nil && s.ddlHeld {
		return nil // this statement is logged already
	}
	fe.ddlWaiting.Add(1)
	fe.ddlMu.Lock()
	fe.ddlWaiting.Add(-1)
	if fe.ddlLog == nil {
		fe.ddlMu.Unlock()
		return nil
	}
	q := ctx.Query()
	if s == nil || !isDDLText(q) {
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
	text, err := loggedDDLText(ctx)
	if err == nil {
		err = fe.ddlLog.LogDDL(ctx.GetCurrentDatabase(), text, fe.store.NextTableID())
	}
	if err != nil {
		fe.ddlMu.Unlock()
		return err
	}
	s.ddlHeld = true
	return nil
}

// endDDL releases the DDL latch a statement of s took.
func (s *Session) endDDL() {
	if s.ddlHeld {
		s.ddlHeld = false
		s.fe.ddlMu.Unlock()
	}
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
// records would name other tables. A statement that fails again is
// reported but not fatal: it failed the same way when it was logged (DDL
// is logged before it is checked) and changed then what it changes now.
func (fe *Frontend) ReplayDDL(database, query string, nextTableID uint64) (replayErr error, err error) {
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
	_, iter, _, qerr := fe.Engine.Query(ctx, query)
	if qerr == nil {
		_, qerr = sql.RowIterToRows(ctx, iter)
	}
	if s, ok := ctx.Session.(*Session); ok {
		if qerr != nil {
			s.undoFailedDDL() // as when it failed the first time (ddlundo.go)
		}
		s.ddlSucceeded()
	}
	return qerr, nil
}

// RecoverCounters sets, after recovery, what the log does not carry: each
// AUTO_INCREMENT counter moves past the column's largest value and each
// hidden row-id counter past the largest row id (MySQL 5.7's rule at
// start-up; MySQL 8 also keeps a counter past values since deleted).
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
