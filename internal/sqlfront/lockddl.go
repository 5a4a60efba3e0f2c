package sqlfront

import (
	"context"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"lockstep/internal/mdl"
)

// DDL and SHOW CREATE TABLE under LOCK TABLES (docs/mdl.md, "Under LOCK
// TABLES"), as MySQL 8 and MariaDB 10.11 check them:
//
//   - a statement that changes a table (ALTER TABLE in all its forms,
//     CREATE/DROP INDEX, TRUNCATE, DROP TABLE, CREATE/DROP TRIGGER, ADD
//     FOREIGN KEY, RENAME) needs a WRITE entry for it, under any alias:
//     1099 when it is locked READ only, 1100 when not locked;
//   - RENAME TABLE's sources likewise, or the product of an earlier pair
//     of the statement (MySQL 8.0.13's rule; MariaDB refuses RENAME TABLE
//     under LOCK TABLES with 1192);
//   - CREATE TABLE (not TEMPORARY) is 1100, naming the new table; its LIKE
//     source needs an entry (any mode), its SELECT the usual check;
//   - DROP TABLE's names are checked when it is parsed (lockedDDLParsed),
//     so DROP TABLE IF EXISTS of a table that does not exist is 1100;
//   - SHOW CREATE TABLE needs an entry for the table (any mode);
//     DESCRIBE, SHOW COLUMNS and SHOW INDEX need none;
//   - CREATE/DROP DATABASE and CREATE/DROP VIEW are 1192, as in MariaDB.
//
// After such a statement the locked set follows its tables
// (followLockedTables): a dropped table leaves it, and a renamed one stays
// locked under its new name (MySQL 8; MariaDB unlocks it).

// errLockedOrActive is ER_LOCK_OR_ACTIVE_TRANSACTION (1192).
func errLockedOrActive() error {
	return mysql.NewSQLError(mysql.ERLockOrActiveTransaction, "HY000", "Can't execute the given command because you have active locked tables or an active transaction")
}

// entryFor reports whether the set has an entry for key (any alias) and
// whether one of them is WRITE.
func (ls *lockedSet) entryFor(key mdl.Key) (found, write bool) {
	for _, e := range ls.entries {
		if e.key == key {
			found = true
			write = write || e.write
		}
	}
	return found, write
}

// needWrite is the error for changing table key (spelt name) under LOCK
// TABLES, nil if a WRITE entry has it.
func (ls *lockedSet) needWrite(key mdl.Key, name string) error {
	found, write := ls.entryFor(key)
	switch {
	case write:
		return nil
	case found:
		return errNotLockedForWrite(name)
	}
	return errNotLocked(name)
}

// checkDDL checks DDL statement (or SHOW CREATE TABLE) n against the
// session's locked tables.
func (s *Session) checkDDL(ctx *sql.Context, n sql.Node) error {
	ls := s.locked
	switch n := n.(type) {
	case *plan.Block: // an ALTER TABLE of several clauses
		for _, c := range n.Children() {
			if err := s.checkDDL(ctx, c); err != nil {
				return err
			}
		}
		return nil
	case *plan.CreateDB, *plan.DropDB, *plan.CreateView, *plan.DropView:
		return errLockedOrActive()
	case *plan.RenameTable:
		return ls.checkRename(ctx, n)
	case *plan.CreateTable:
		if !n.Temporary() {
			return errNotLocked(n.Name())
		}
		if sel := n.Select(); sel != nil {
			return ls.check(sel, s.viewsSeen)
		}
		return nil
	case *plan.ShowCreateTable:
		if _, t := aliasedTable(unwrapTable(n.Child)); t != nil && !t.entry.temp {
			if found, _ := ls.entryFor(mdlKey(t.db.name, t.meta.name)); !found {
				return errNotLocked(t.meta.name)
			}
		}
		return nil
	}
	p := mdlPlan{fe: s.fe, names: map[mdl.Key]string{}}
	p.walk(ctx, n, false)
	for _, r := range p.reqs {
		if r.Mode != mdl.Exclusive {
			continue // what a DDL statement only reads (a trigger's body, a parent)
		}
		if s.tempTable(r.Key.DB, r.Key.Table) != nil {
			continue
		}
		if err := ls.needWrite(r.Key, p.names[r.Key]); err != nil {
			return err
		}
	}
	return nil
}

// lockedDDLParsed checks, when the statement is parsed, the names of a
// DROP TABLE and the LIKE source of a CREATE TEMPORARY TABLE against the
// session's locked tables: go-mysql-server's plan keeps neither a table
// DROP TABLE IF EXISTS did not find nor the LIKE source.
func lockedDDLParsed(ctx context.Context, st *ast.DDL) error {
	sctx, s := parsingSession(ctx)
	if s == nil || s.locked == nil {
		return nil
	}
	cur := sctx.GetCurrentDatabase()
	switch {
	case st.Action == ast.DropStr && !st.Temporary && len(st.FromTables) > 0 && st.FromTables[0].Name.String() != "":
		for _, tn := range st.FromTables {
			db, name := qualifier(tn, cur), tn.Name.String()
			if db == "" || s.tempTable(db, name) != nil {
				continue
			}
			if err := s.locked.needWrite(mdlKey(db, name), name); err != nil {
				return err
			}
		}
	case st.Action == ast.CreateStr && st.OptLike != nil:
		for _, tn := range st.OptLike.LikeTables {
			db, name := qualifier(tn, cur), tn.Name.String()
			if db == "" || s.tempTable(db, name) != nil {
				continue
			}
			if found, _ := s.locked.entryFor(mdlKey(db, name)); !found {
				return errNotLocked(name)
			}
		}
	}
	return nil
}

// checkRename checks a RENAME TABLE (or ALTER TABLE ... RENAME): each
// source must be locked WRITE or be the product of an earlier pair.
func (ls *lockedSet) checkRename(ctx *sql.Context, n *plan.RenameTable) error {
	pairs := renamesOf(ctx, n)
	if pairs == nil && n.Db != nil {
		for i := range n.OldNames {
			if i < len(n.NewNames) {
				pairs = append(pairs, renamePair{fromDB: n.Db.Name(), from: n.OldNames[i], toDB: n.Db.Name(), to: n.NewNames[i]})
			}
		}
	}
	s, _ := ctx.Session.(*Session)
	made := map[mdl.Key]bool{}
	for _, r := range pairs {
		from, to := mdlKey(r.fromDB, r.from), mdlKey(r.toDB, r.to)
		switch {
		case made[from]:
			delete(made, from)
		case s != nil && s.tempTable(r.fromDB, r.from) != nil:
			continue // a temporary table needs no lock
		default:
			if err := ls.needWrite(from, r.from); err != nil {
				return err
			}
		}
		made[to] = true
	}
	return nil
}

// followLockedTables, at the end of a DDL statement run under LOCK
// TABLES, makes the locked set follow its tables: an entry whose table
// was dropped leaves the set (its metadata lock is given back), one whose
// table was renamed or moved is keyed by the new name and its lock moves
// there (taken while the statement's exclusive lock on the new name is
// still held, so no other session gets between). An alias that was the
// old name becomes the new one, as MySQL 8 keeps it.
func (s *Session) followLockedTables() {
	ls := s.locked
	if ls == nil || len(ls.entries) == 0 {
		return
	}
	kept := ls.entries[:0]
	moved := map[mdl.Key]mdl.Key{}
	gone := map[mdl.Key]bool{}
	for _, e := range ls.entries {
		if e.te == nil {
			kept = append(kept, e)
			continue
		}
		m := e.te.load()
		db := s.fe.provider.database(m.db)
		var cur *tableEntry
		if db != nil {
			db.mu.RLock()
			cur = db.tables[strings.ToLower(m.name)]
			db.mu.RUnlock()
		}
		if cur != e.te {
			gone[e.key] = true
			continue
		}
		if key := mdlKey(m.db, m.name); key != e.key {
			moved[e.key] = key
			if e.alias == e.key.Table {
				e.alias = key.Table
			}
			e.key = key
		}
		kept = append(kept, e)
	}
	ls.entries = kept
	if s.mdl == nil || (len(moved) == 0 && len(gone) == 0) {
		return
	}
	newKeys := map[mdl.Key]bool{}
	for _, k := range moved {
		newKeys[k] = true
	}
	var reqs []mdl.Request
	current := map[mdl.Key]bool{}
	for _, e := range ls.entries {
		current[e.key] = true
		if newKeys[e.key] {
			mode := mdl.SharedReadOnly
			if e.write {
				mode = mdl.SharedNoReadWrite
			}
			reqs = append(reqs, mdl.Request{Key: e.key, Mode: mode, Duration: mdl.Explicit})
		}
	}
	if len(reqs) > 0 {
		// The statement holds these names exclusively: no wait.
		_ = s.mdl.Acquire(context.Background(), reqs, time.Second)
	}
	for old := range moved {
		gone[old] = true
	}
	for old := range gone {
		if !current[old] { // a swap's name may be locked again
			s.mdl.ReleaseKey(old, mdl.Explicit)
		}
	}
}
