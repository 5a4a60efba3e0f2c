package sqlfront

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/mdl"
	"lockstep/internal/stat"
)

// Metadata locks (internal/mdl) as MySQL takes them, at the one point every
// statement go-mysql-server runs passes after it found its tables: the
// last analyzer rule (mdlRule).
//
//   - A statement takes a shared lock on every table of its plan (reads,
//     writes, the tables of the triggers that fire, subqueries, views'
//     tables), held to the end of its transaction (of the statement in
//     autocommit mode): Session.CommitTransaction, Rollback, CommandEnd,
//     SessionEnd release them.
//   - A DDL statement takes an exclusive lock on the tables it changes
//     (and on the names it creates or renames to), for the statement; the
//     tables it only reads (CREATE TABLE ... LIKE/SELECT, a view's query,
//     a trigger's body) are shared.
//   - All of a statement's locks are asked for at once: it waits (the
//     process list says "Waiting for table metadata lock") for at most
//     lock_wait_timeout (1205), until KILL (1317), or fails with 1213 when
//     the wait would close a cycle.
//   - The tables were found by name before the wait. A table whose
//     definition or name changed meanwhile (a DDL ran while the statement
//     waited, or between its planning and its lock) is stale: the rule
//     fails with errReopen and the protocol handler plans the statement
//     again from its text (ReopenTables), finding the tables by name anew,
//     as MySQL opens them again after an MDL wait.
//
// Temporary tables (a session's own) take no metadata lock. The fast path
// (fast*.go) takes the same shared lock for the one table it reads or
// writes (lockFast).

// errReopen: a table the statement found changed before it got the lock;
// plan the statement again.
var errReopen = errors.New("a table changed while the statement waited for its metadata lock; plan it again")

// ReopenTables reports whether err asks the caller to plan the statement
// again (the statement did nothing yet).
func ReopenTables(err error) bool { return errors.Is(err, errReopen) }

// TakeReopen reports whether connection connID's last statement failed
// with errReopen (go-mysql-server's handler turns errors into SQL errors,
// so the protocol layer asks the session), and forgets it.
func (fe *Frontend) TakeReopen(connID uint32) bool {
	s := fe.session(connID)
	if s == nil || !s.reopen {
		return false
	}
	s.reopen = false
	return true
}

const mdlRuleID analyzer.RuleId = 1<<20 + 41

var mdlRuleOnce sync.Once

// registerMDLRule appends mdlRule to go-mysql-server's after-all rules, a
// list every analyzer shares and the only one its simple INSERT, UPDATE and
// DELETE batches run after their own (so a post-analysis rule would not
// see those). Before the first analyzer is built: a builder copies the
// list.
func registerMDLRule() {
	mdlRuleOnce.Do(func() {
		analyzer.OnceAfterAll = append(analyzer.OnceAfterAll, analyzer.Rule{Id: mdlRuleID, Apply: mdlRule})
	})
}

// mdlOwner is the session's side of the metadata lock table.
func (s *Session) mdlOwner() *mdl.Owner {
	if s.mdl == nil {
		s.mdl = s.fe.mdl.NewOwner(uint64(s.connID))
	}
	return s.mdl
}

// releaseMDL gives back the session's metadata locks of duration d (those
// of the statement and of the transaction when all; LOCK TABLES' stay to
// unlockTables).
func (s *Session) releaseMDL(d mdl.Duration, all bool) {
	if s.mdl == nil {
		return
	}
	if all {
		s.mdl.ReleaseEnded()
	} else {
		s.mdl.Release(d)
	}
	if s.holdsX && (all || d == mdl.Statement) {
		s.holdsX = false
		s.fe.endedDDL()
	}
}

// endedDDL counts a DDL statement's end and wakes RetryAfterDDL's waiters.
func (fe *Frontend) endedDDL() {
	fe.ddlEnded.Add(1)
	fe.ddlEndMu.Lock()
	if fe.ddlEndCh != nil {
		close(fe.ddlEndCh)
		fe.ddlEndCh = nil
	}
	fe.ddlEndMu.Unlock()
}

// waitDDLEnded waits until target DDL statements ended, ctx ends or the
// deadline passes, and reports whether they ended.
func (fe *Frontend) waitDDLEnded(ctx context.Context, target uint64, timeout time.Duration) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		fe.ddlEndMu.Lock()
		if fe.ddlEnded.Load() >= target {
			fe.ddlEndMu.Unlock()
			return true
		}
		if fe.ddlEndCh == nil {
			fe.ddlEndCh = make(chan struct{})
		}
		ch := fe.ddlEndCh
		fe.ddlEndMu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		case <-timer.C:
			return false
		}
	}
}

// unlockTables gives back the session's LOCK TABLES locks (UNLOCK
// TABLES, a new LOCK TABLES, the session's end).
func (s *Session) unlockTables() {
	s.locked = nil
	if s.mdl != nil {
		s.mdl.Release(mdl.Explicit)
	}
}

// lockWaitTimeout is the session's lock_wait_timeout.
func (s *Session) lockWaitTimeout(ctx *sql.Context) time.Duration {
	return s.secondsVar(ctx, "lock_wait_timeout", 31536000*time.Second)
}

// replayMDLWait bounds a replayed DDL statement's wait for local sessions
// (an applier never waits without bound on them).
var replayMDLWait = 50 * time.Second

// mdlUse is one table of the plan, as found.
type mdlUse struct {
	t    *Table
	mode mdl.Mode
}

// mdlPlan collects a plan's metadata lock requests.
type mdlPlan struct {
	fe    *Frontend
	names map[mdl.Key]string // when set: each key's table as spelt (lockddl.go)
	reqs  []mdl.Request
	uses  []mdlUse
	index map[mdl.Key]int
	// explicit: every lock is LOCK TABLES' (held to UNLOCK TABLES), the
	// shared ones of its triggers' tables too.
	explicit bool
	// fkRelated: the foreign key relatives of the tables a RENAME or DROP
	// TABLE changes (exclusive; not checked against LOCK TABLES).
	fkRelated []mdl.Key
}

func (p *mdlPlan) add(key mdl.Key, mode mdl.Mode) {
	d := mdl.Transaction
	switch {
	case mode == mdl.Exclusive:
		d = mdl.Statement
	case p.explicit, mode == mdl.SharedReadOnly, mode == mdl.SharedNoReadWrite:
		d = mdl.Explicit // LOCK TABLES
	}
	if i, ok := p.index[key]; ok {
		// The key's requests: the first, and a second when their modes
		// do not include each other (mdl.Mode.Includes: MySQL holds two
		// tickets for LOCK TABLES t READ of a table a trigger writes).
		for j := i; j < len(p.reqs); j++ {
			r := &p.reqs[j]
			switch {
			case r.Key != key:
			case r.Mode.Includes(mode):
				return
			case mode.Includes(r.Mode):
				r.Mode, r.Duration = mode, d
				return
			}
		}
		p.reqs = append(p.reqs, mdl.Request{Key: key, Mode: mode, Duration: d})
		return
	}
	if p.index == nil {
		p.index = map[mdl.Key]int{}
	}
	p.index[key] = len(p.reqs)
	p.reqs = append(p.reqs, mdl.Request{Key: key, Mode: mode, Duration: d})
}

func mdlKey(db, table string) mdl.Key {
	return mdl.Key{DB: strings.ToLower(db), Table: strings.ToLower(table)}
}

// table adds a table of the plan.
func (p *mdlPlan) table(st sql.Table, mode mdl.Mode) {
	t := asLockstepTable(st)
	if t == nil || t.entry.temp {
		return
	}
	key := mdlKey(t.db.name, t.meta.name)
	p.add(key, mode)
	if p.names != nil {
		p.names[key] = t.meta.name
	}
	p.uses = append(p.uses, mdlUse{t: t, mode: mode})
}

// asLockstepTable unwraps a plan's table to lockstep's, nil for another
// kind (information_schema, performance_schema, the grant tables).
func asLockstepTable(st sql.Table) *Table {
	if st == nil {
		return nil
	}
	switch t := underlying(st).(type) {
	case *Table:
		return t
	case interface{ lockstepTable() *Table }:
		return t.lockstepTable()
	}
	return nil
}

func (t *Table) lockstepTable() *Table { return t }

// written adds a table the statement writes (SHARED_WRITE): its read
// lock, if the walk added one, becomes a write lock.
func (p *mdlPlan) written(st sql.Table) {
	if t := asLockstepTable(st); t != nil && !t.entry.temp {
		p.add(mdlKey(t.db.name, t.meta.name), mdl.SharedWrite)
	}
}

// writtenEditor adds the table behind a write's editor (a multi-table
// UPDATE's updaters).
func (p *mdlPlan) writtenEditor(e any) {
	var ed *editor
	switch e := e.(type) {
	case *editor:
		ed = e
	case *fkEditor:
		ed = e.editor
	}
	if ed != nil && ed.t != nil {
		p.written(ed.t)
	}
}

// viewMode is the metadata lock mode of view key read by statement n:
// shared, or for LOCK TABLES (the views it names and those under them)
// SHARED_READ_ONLY, SHARED_NO_READ_WRITE for a view it names WRITE.
func viewMode(n sql.Node, key string) mdl.Mode {
	lt, ok := n.(*plan.LockTables)
	if !ok {
		return mdl.Shared
	}
	mode := mdl.SharedReadOnly
	for _, l := range lt.Locks {
		if sq, ok := l.Table.(*plan.SubqueryAlias); ok && l.Write && strings.EqualFold(sq.Name(), key) {
			mode = mdl.SharedNoReadWrite
		}
	}
	return mode
}

// tableOf is the table of a LOCK TABLES item (a table, or an alias of it).
func tableOf(n sql.Node) sql.Table {
	for n != nil {
		if tn, ok := n.(sql.TableNode); ok {
			return tn.UnderlyingTable()
		}
		c := n.Children()
		if len(c) != 1 {
			return nil
		}
		n = c[0]
	}
	return nil
}

// walk collects n's tables: exclusive when ddl (a DDL node changes them),
// shared otherwise (reads, writes, the sources of a DDL statement).
func (p *mdlPlan) walk(ctx *sql.Context, n sql.Node, ddl bool) {
	if n == nil {
		return
	}
	read := func(c sql.Node) { p.walk(ctx, c, false) }
	change := func(c sql.Node) { p.walk(ctx, c, true) }
	named := func(db, table string, mode mdl.Mode) {
		if db == "" {
			db = ctx.GetCurrentDatabase()
		}
		if db != "" && table != "" {
			p.add(mdlKey(db, table), mode)
			if p.names != nil {
				p.names[mdlKey(db, table)] = table
			}
		}
	}
	mode := mdl.Shared
	if ddl {
		mode = mdl.Exclusive
	}
	switch n := n.(type) {
	case sql.TableNode: // ResolvedTable, IndexedTableAccess (a leaf)
		p.table(n.UnderlyingTable(), mode)
		if _, ok := n.(*plan.ResolvedTable); ok {
			return
		}
	case *plan.TableCountLookup: // COUNT(*) from the table's statistics
		p.table(n.Table(), mode)
		return
	}
	switch n := n.(type) {
	case *plan.AddColumn:
		change(n.Table)
	case *plan.DropColumn:
		change(n.Table)
	case *plan.RenameColumn:
		change(n.Table)
	case *plan.ModifyColumn:
		change(n.Table)
	case *plan.AlterIndex:
		change(n.Table)
	case *plan.AlterPK:
		change(n.Table)
	case *plan.AlterAutoIncrement:
		change(n.Table)
	case *plan.AlterDefaultSet:
		change(n.Table)
	case *plan.AlterDefaultDrop:
		change(n.Table)
	case *plan.AlterTableCollation:
		change(n.Table)
	case *plan.CreateCheck:
		change(n.Table)
	case *plan.DropCheck:
		change(n.Table)
	case *plan.CreateIndex:
		change(n.Table)
	case *plan.DropConstraint, *plan.Truncate:
		for _, c := range n.Children() {
			change(c)
		}
		return
	case *plan.DropTable:
		for _, c := range n.Tables {
			change(c)
			if t := tableOf(c); t != nil {
				if lt := asLockstepTable(t); lt != nil && !lt.entry.temp {
					p.related(lt.db.name, lt.meta.name)
				}
			}
		}
		return
	case *plan.LockTables:
		// LOCK TABLES ... READ / WRITE, held to UNLOCK TABLES.
		for _, l := range n.Locks {
			mode := mdl.SharedReadOnly
			if l.Write {
				mode = mdl.SharedNoReadWrite
			}
			if t := tableOf(l.Table); t != nil {
				p.table(t, mode)
				continue
			}
			for _, t := range viewTables(l.Table) { // a view's tables
				p.table(t, mode)
			}
		}
		return
	case *plan.DropDB:
		// Every table and view of the database, exclusive, as MySQL
		// drops them: it waits for the transactions that used them.
		if db := p.fe.provider.database(n.DbName); db != nil {
			db.mu.RLock()
			for key := range db.tables {
				named(db.name, key, mdl.Exclusive)
			}
			for key := range db.views {
				named(db.name, key, mdl.Exclusive)
			}
			db.mu.RUnlock()
		}
		return
	case *plan.InsertInto:
		if t := tableOf(n.Destination); t != nil {
			p.written(t)
		}
	case *plan.Update:
		if t, err := plan.GetUpdatable(n.Child); err == nil {
			p.written(t)
		}
	case *plan.UpdateJoin:
		for _, u := range n.Updaters {
			p.writtenEditor(u)
		}
	case *plan.CreateForeignKey:
		if fk := n.FkDef; fk != nil {
			named(fk.Database, fk.Table, mdl.Exclusive)
			named(fk.ParentDatabase, fk.ParentTable, mdl.Shared)
		}
		return
	case *plan.DropForeignKey:
		named(n.Database(), n.Table, mdl.Exclusive)
		return
	case *plan.RenameTable:
		if pairs := renamesOf(ctx, n); pairs != nil {
			// Every old and new name, in its own database (renamedb.go).
			for _, r := range pairs {
				named(r.fromDB, r.from, mdl.Exclusive)
				named(r.toDB, r.to, mdl.Exclusive)
				p.related(r.fromDB, r.from)
			}
		} else if db := n.Db; db != nil {
			for i := range n.OldNames {
				named(db.Name(), n.OldNames[i], mdl.Exclusive)
				p.related(db.Name(), n.OldNames[i])
				if i < len(n.NewNames) {
					named(db.Name(), n.NewNames[i], mdl.Exclusive)
				}
			}
		}
	case *plan.CreateTable:
		if !n.Temporary() && n.Database() != nil {
			named(n.Database().Name(), n.Name(), mdl.Exclusive)
		}
		for _, c := range n.Children() {
			read(c)
		}
		return
	case *plan.CreateTrigger:
		change(n.Table)
		read(n.Body)
		return
	case *plan.DropTrigger:
		if db := lockstepDB(n.Database()); db != nil {
			if table := db.triggerTable(ctx, n.TriggerName); table != "" {
				named(db.name, table, mdl.Exclusive)
			}
		}
		return
	case *plan.CreateView:
		if n.Database() != nil {
			named(n.Database().Name(), n.Name, mdl.Exclusive)
		}
		if n.Definition != nil {
			read(n.Definition)
		}
		return
	case *plan.DropView:
		for _, c := range n.Children() {
			if v, ok := c.(*plan.SingleDropView); ok && v.Database() != nil {
				named(v.Database().Name(), v.ViewName, mdl.Exclusive)
			}
		}
		return
	case *plan.ForeignKeyHandler:
		// The tables a write's foreign keys check (parents) or change
		// (children, by cascades), as MySQL locks them; then the written
		// table (its child).
		p.foreignKeys(n.Editor, map[*plan.ForeignKeyEditor]bool{})
		for _, u := range n.AllUpdaters {
			p.fkTable(u, mdl.SharedWrite)
		}
	case *plan.DeleteFrom:
		// A DELETE of several tables keeps its targets (with their
		// foreign key handlers) beside its children.
		if n.HasExplicitTargets() {
			for _, target := range n.GetDeleteTargets() {
				p.walk(ctx, target, ddl)
				if t, err := plan.GetDeletable(target); err == nil {
					p.written(t)
				}
			}
		} else if t, err := plan.GetDeletable(n.Child); err == nil {
			p.written(t)
		}
	}
	if ex, ok := n.(sql.Expressioner); ok {
		for _, e := range ex.Expressions() {
			transform.InspectExpr(e, func(e sql.Expression) bool {
				if sq, ok := e.(*plan.Subquery); ok {
					read(sq.Query)
				}
				return false
			})
		}
	}
	for _, c := range n.Children() {
		p.walk(ctx, c, ddl)
	}
}

// related notes the foreign key relatives of table db.name, which a
// RENAME or DROP TABLE locks exclusively, as MySQL 8 does (their keys'
// definitions name it): its parents and the tables whose keys reference
// it.
func (p *mdlPlan) related(db, name string) {
	if p.fe == nil || !p.fe.anyFK.Load() {
		return
	}
	parents, children := p.fe.fkRelatives(db, name)
	p.fkRelated = append(p.fkRelated, parents...)
	for _, c := range children {
		p.fkRelated = append(p.fkRelated, c.key)
	}
}

// foreignKeys adds the tables of a foreign key editor: the parents its
// references check, the children its referential actions reach, and
// theirs in turn.
func (p *mdlPlan) foreignKeys(e *plan.ForeignKeyEditor, seen map[*plan.ForeignKeyEditor]bool) {
	if e == nil || seen[e] {
		return
	}
	seen[e] = true
	p.fkTable(e.Editor, mdl.SharedWrite)
	for _, ref := range e.References {
		if ref == nil {
			continue
		}
		if fk := ref.ForeignKey; fk.ParentDatabase != "" {
			p.add(mdlKey(fk.ParentDatabase, fk.ParentTable), mdl.SharedRead)
		}
		p.fkTable(ref.RowMapper.Updater, mdl.SharedRead)
	}
	for _, act := range e.RefActions {
		// A referential action changes the child's rows (SET NULL,
		// CASCADE) or only checks them (RESTRICT, NO ACTION): MySQL
		// takes SHARED_WRITE on a child a cascade can change.
		mode := mdl.SharedRead
		if fk := act.ForeignKey; !fk.OnDelete.IsEquivalentToRestrict() || !fk.OnUpdate.IsEquivalentToRestrict() {
			mode = mdl.SharedWrite
		}
		if fk := act.ForeignKey; fk.Database != "" {
			p.add(mdlKey(fk.Database, fk.Table), mode)
		}
		if act.RowMapper != nil {
			p.fkTable(act.RowMapper.Updater, mode)
		}
		p.foreignKeys(act.Editor, seen)
	}
}

// fkTable adds the table behind a foreign key editor (found when the
// statement was planned: checked like the plan's tables).
func (p *mdlPlan) fkTable(e sql.ForeignKeyEditor, mode mdl.Mode) {
	if fe, ok := e.(*fkEditor); ok && fe.editor != nil && fe.editor.t != nil {
		p.table(fe.editor.t, mode)
	}
}

// mdlRule takes the statement's metadata locks (the last analyzer rule).
//
// It also runs at the end of the analyses go-mysql-server nests in a
// statement's (a trigger's body, with a scope; an INSERT's source): those
// take their part's locks early, and the statement's own run takes them
// all. The trigger lists the statement read (mdltriggers.go) are checked
// and forgotten by the statement's own run (no scope).
func mdlRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, scope *plan.Scope, _ analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	s, ok := ctx.Session.(*Session)
	if ok && scope == nil {
		// LOCK TABLES' entries, or the check against them (lockcheck.go).
		if err := s.lockTablesRule(ctx, n); err != nil {
			return nil, transform.SameTree, err
		}
	}
	if !mdlEnabled || !ok || s.fe == nil || s.fe.mdl == nil || (s.connID == 0 && !s.replaying) {
		// Local sessions (checkpoints, EXPLAIN's helpers, bench checksums)
		// run outside the protocol's statement cycle, which releases
		// locks; a replayed DDL statement locks, and ReplayDDL releases.
		return n, transform.SameTree, nil
	}
	if scope == nil {
		s.notDDL(n, qFlags) // mdlviews.go
		if _, ok := n.(*plan.LockTables); ok {
			s.unlockTables() // LOCK TABLES first gives back the tables locked before
		}
	}
	_, lockTables := n.(*plan.LockTables)
	p := mdlPlan{fe: s.fe, explicit: lockTables}
	p.walk(ctx, n, false)
	for _, v := range s.viewsSeen { // the views the statement read
		p.add(mdlKey(v.db.name, v.key), viewMode(n, v.key))
	}
	for _, k := range p.fkRelated { // RENAME, DROP TABLE
		p.add(k, mdl.Exclusive)
	}
	if lockTables && scope == nil && s.pendingLocked != nil {
		// What the tables locked WRITE lock implicitly (prelock.go).
		for k, pl := range s.pendingLocked.pre {
			for _, m := range pl.modes {
				p.add(k, m)
			}
		}
	}
	if scope == nil {
		defer func() { s.trigSeen, s.viewsSeen = s.trigSeen[:0], s.viewsSeen[:0] }()
	}
	if len(p.reqs) == 0 {
		return n, transform.SameTree, nil
	}
	if err := s.lockMDL(ctx, p.reqs); err != nil {
		return nil, transform.SameTree, err
	}
	reopen := s.triggersChanged() || s.viewsChanged()
	for _, u := range p.uses {
		reopen = reopen || u.t.stale()
	}
	if reopen {
		stat.Inc(&s.fe.mdlReplans)
		s.reopen = true
		s.trigSeen, s.viewsSeen = s.trigSeen[:0], s.viewsSeen[:0]
		return nil, transform.SameTree, errReopen
	}
	return n, transform.SameTree, nil
}

// RetryAfterDDL reports whether connection connID's statement, which
// failed with err, should be planned again: it failed with 1146 while
// being planned — before it ran (execOverride.Build) — and DDL ran
// meanwhile (a RENAME of several tables renames them one after another: a
// statement planned in between does not find the name). It waits (for at
// most lock_wait_timeout) for the DDL statements running now to end, as a
// statement asking for the table's metadata lock would in MySQL, and then
// finds the tables by name again. The wait ends when the last of those
// DDL statements gives its exclusive locks back (endedDDL wakes it).
//
// Only 1146: the name is missing, so there is no table whose metadata
// lock the statement could wait for; a statement that found its tables
// waits for their locks in mdlRule instead.
func (fe *Frontend) RetryAfterDDL(ctx context.Context, connID uint32, err error) bool {
	s := fe.session(connID)
	if s == nil || s.planned || !tableNotFound(err) {
		return false
	}
	target := fe.ddlGranted.Load()
	if target == s.ddlSeen && !s.ddlBusy {
		return false // no DDL ran with the statement: the table is missing
	}
	timeout := s.lockWaitTimeout(sql.NewContext(ctx, sql.WithSession(s)))
	fe.ddlWaiters.Store(uint64(connID), true) // the process list's state
	defer fe.ddlWaiters.Delete(uint64(connID))
	if !fe.waitDDLEnded(ctx, target, timeout) {
		return false
	}
	stat.Inc(&fe.mdlReplans)
	return true
}

// tableNotFound reports whether err is "Table doesn't exist" (1146).
func tableNotFound(err error) bool {
	if sql.ErrTableNotFound.Is(err) {
		return true
	}
	var se *mysql.SQLError
	return errors.As(err, &se) && se.Num == mysql.ERNoSuchTable
}

// lockMDL asks for reqs and maps a failed wait to the client's error.
func (s *Session) lockMDL(ctx *sql.Context, reqs []mdl.Request) error {
	timeout := s.lockWaitTimeout(ctx)
	if s.replaying && timeout > replayMDLWait {
		timeout = replayMDLWait
	}
	err := s.mdlOwner().Acquire(ctx, reqs, timeout)
	switch {
	case err == nil:
		if !s.holdsX {
			for _, r := range reqs {
				if r.Mode == mdl.Exclusive {
					s.holdsX = true
					s.fe.ddlGranted.Add(1)
					break
				}
			}
		}
		return nil
	case errors.Is(err, mdl.ErrLockWaitTimeout):
		if s.replaying {
			s.replayBlocked = fmt.Errorf("%w (local sessions held the metadata lock of a table the statement changes for %v)", err, timeout)
		}
		return mysql.NewSQLError(mysql.ERLockWaitTimeout, "HY000", "Lock wait timeout exceeded; try restarting transaction")
	case errors.Is(err, mdl.ErrDeadlock):
		// As for a row lock deadlock, the transaction ends, rolled back.
		s.endOnDeadlock(ctx)
		return mysql.NewSQLError(mysql.ERLockDeadlock, mysql.SSLockDeadlock, "Deadlock found when trying to get lock; try restarting transaction")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return mapError(context.Canceled)
	}
	return err
}

// stale reports whether t, as the plan found it, is no longer the table of
// its name: dropped, renamed, or its definition changed.
func (t *Table) stale() bool {
	te := t.entry
	if te.load() != t.meta {
		return true
	}
	t.db.mu.RLock()
	cur := t.db.tables[strings.ToLower(t.meta.name)]
	t.db.mu.RUnlock()
	return cur != te
}

// MetadataLockWaiting returns the connections waiting for a metadata lock
// now (the process list's state).
func (fe *Frontend) MetadataLockWaiting() []uint64 {
	if fe.mdl == nil {
		return nil
	}
	return fe.mdl.Waiting()
}

// MetadataLockStats returns the metadata lock table's counters.
func (fe *Frontend) MetadataLockStats() mdl.Stats {
	if fe.mdl == nil {
		return mdl.Stats{}
	}
	return fe.mdl.Stats()
}

// mdlStateWaiting is the process list's state of a connection waiting for
// a metadata lock, as MySQL names it.
const mdlStateWaiting = "Waiting for table metadata lock"

// mdlStates sets the State column (the seventh, in SHOW PROCESSLIST and
// information_schema.PROCESSLIST alike) of the connections waiting for a
// metadata lock.
func (fe *Frontend) mdlStates(iter sql.RowIter) sql.RowIter {
	ids := fe.MetadataLockWaiting()
	fe.ddlWaiters.Range(func(id, _ any) bool {
		ids = append(ids, id.(uint64))
		return true
	})
	if len(ids) == 0 {
		return iter
	}
	waiting := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		waiting[id] = true
	}
	return &mdlStateRows{RowIter: iter, waiting: waiting}
}

type mdlStateRows struct {
	sql.RowIter
	waiting map[uint64]bool
}

func (m *mdlStateRows) Next(ctx *sql.Context) (sql.Row, error) {
	r, err := m.RowIter.Next(ctx)
	if err != nil || len(r) < 7 {
		return r, err
	}
	var id uint64
	switch v := r[0].(type) {
	case int64:
		id = uint64(v)
	case uint64:
		id = v
	case uint32:
		id = uint64(v)
	}
	if m.waiting[id] {
		r = append(sql.Row(nil), r...)
		r[6] = mdlStateWaiting
	}
	return r, nil
}

// lockFast takes the shared metadata lock of a fast-path statement's table
// entry (found as dbKey.tableKey, lower case) if it is free, and reports
// whether the entry is still the table of that name once locked. false
// sends the statement the planned way, which waits for the lock.
func (s *Session) lockFast(dbKey, tableKey string, entry *tableEntry, write bool) bool {
	if !mdlEnabled || s.fe.mdl == nil {
		return true
	}
	meta := entry.load()
	mode := mdl.SharedRead
	if write {
		mode = mdl.SharedWrite
	}
	if !s.mdlOwner().TryShared(mdl.Key{DB: dbKey, Table: tableKey}, mode, mdl.Transaction) {
		return false
	}
	return s.fe.lookupEntry(dbKey, tableKey) == entry && entry.load() == meta
}

// databases returns the catalog's databases, in no order (a snapshot:
// the provider's lock is not held while the caller reads them).
func (p *provider) databases() []*Database {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]*Database, 0, len(p.dbs))
	for _, d := range p.dbs {
		out = append(out, d)
	}
	return out
}

// database returns the database named name (folded), nil if none.
func (p *provider) database(name string) *Database {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.dbs[strings.ToLower(name)]
}

// lockstepDB is db as lockstep's (nil if it is another kind).
func lockstepDB(db sql.Database) *Database {
	if p, ok := db.(mysql_db.PrivilegedDatabase); ok {
		db = p.Unwrap()
	}
	d, _ := db.(*Database)
	return d
}
