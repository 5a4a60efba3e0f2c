package sqlfront

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/mdl"
)

// Under LOCK TABLES a session uses only the tables it locked (docs/mdl.md,
// "Under LOCK TABLES"), as MySQL and MariaDB do:
//
//   - each table a statement names must match a locked entry by database,
//     table and alias (the alias the statement gives it, or its name):
//     `LOCK TABLES t AS a READ` is used as `FROM t AS a`, never as `FROM t`;
//     else 1100 ER_TABLE_NOT_LOCKED, naming the alias;
//   - each entry serves one use per statement: `INSERT INTO t SELECT * FROM
//     t` needs t locked twice, under two aliases (1100 otherwise);
//   - a table the statement writes needs a WRITE entry: 1099
//     ER_TABLE_NOT_LOCKED_FOR_WRITE when it found only READ ones;
//   - a view must be locked itself (by name; any alias) or be under a
//     locked view; the tables under a locked view are locked implicitly
//     with the view's mode and may be used by any name (MariaDB 10.11);
//   - temporary tables, information_schema and performance_schema need no
//     lock, nor do the tables of the triggers and foreign keys a write
//     reaches; LOCK TABLES locked those implicitly (prelock.go), and the
//     statement may also name them, by their own names: to read them, and
//     to write those locked for a write (1099 otherwise).
//
// The check runs in mdlRule on the final plan, so it covers every
// statement go-mysql-server plans (text and prepared alike); the fast path
// declines every statement while the session has tables locked (runFast),
// so those go the planned way. DDL and SHOW CREATE TABLE: lockddl.go.

// lockedEntry is one item of LOCK TABLES: db.table AS alias.
type lockedEntry struct {
	key   mdl.Key
	alias string // lower case
	write bool
	te    *tableEntry // the table's catalog entry (followLockedTables)
}

// lockedSet is what the session's LOCK TABLES locked.
type lockedSet struct {
	entries []lockedEntry
	// implicit: the tables under the locked views (true: WRITE).
	implicit map[mdl.Key]bool
	// views: the locked views and the views under them.
	views map[mdl.Key]bool
	// pre: the tables locked implicitly for the triggers and foreign keys
	// of the tables it may write (prelock.go); used by their own names.
	pre map[mdl.Key]*preLock
}

// lockedSetOf collects a LOCK TABLES statement's entries; views are the
// views its planning read (the locked ones and those under them). With fe
// set, it adds what the tables locked WRITE lock implicitly (prelock.go).
func lockedSetOf(fe *Frontend, n *plan.LockTables, views []viewSeen) *lockedSet {
	ls := &lockedSet{implicit: map[mdl.Key]bool{}, views: map[mdl.Key]bool{}}
	for _, v := range views {
		ls.views[mdlKey(v.db.name, v.key)] = true
	}
	for _, l := range n.Locks {
		alias, t := aliasedTable(l.Table)
		if t != nil {
			if !t.entry.temp {
				ls.entries = append(ls.entries, lockedEntry{key: mdlKey(t.db.name, t.meta.name), alias: strings.ToLower(alias), write: l.Write, te: t.entry})
			}
			continue
		}
		// A view: the tables under it are locked with its mode.
		for _, t := range viewTables(l.Table) {
			key := mdlKey(t.db.name, t.meta.name)
			ls.implicit[key] = ls.implicit[key] || l.Write
		}
	}
	if fe == nil {
		return ls
	}
	written := map[mdl.Key]int{}
	for _, e := range ls.entries {
		if e.write {
			written[e.key] = evAll
		}
	}
	for key, w := range ls.implicit {
		if w {
			written[key] = evAll
		}
	}
	if len(written) == 0 {
		return ls
	}
	// A table also locked READ explicitly that a trigger (or a cascade)
	// writes keeps its READ entries (used under their alias, 1099 for a
	// write, as MariaDB 10.11 checks them) and may be written by its own
	// name: MySQL's "explicit read lock request converted to a write lock".
	ls.pre = fe.prelock(written)
	return ls
}

// aliasedTable is the lockstep table of a table reference (a table or an
// alias of one) and the name it goes by; nil for anything else.
func aliasedTable(n sql.Node) (string, *Table) {
	switch n := n.(type) {
	case *plan.TableAlias:
		if tn, ok := n.Child.(sql.TableNode); ok {
			return n.Name(), asLockstepTable(tn.UnderlyingTable())
		}
	case sql.TableNode:
		t := asLockstepTable(n.UnderlyingTable())
		if t != nil {
			return t.meta.name, t
		}
	}
	return "", nil
}

// viewTables lists the lockstep tables (not temporary) in a view's plan.
func viewTables(n sql.Node) []*Table {
	var out []*Table
	var visit func(n sql.Node)
	visit = func(n sql.Node) {
		transform.Inspect(n, func(n sql.Node) bool {
			if tn, ok := n.(sql.TableNode); ok {
				if t := asLockstepTable(tn.UnderlyingTable()); t != nil && !t.entry.temp {
					out = append(out, t)
				}
			}
			if ex, ok := n.(sql.Expressioner); ok {
				for _, e := range ex.Expressions() {
					transform.InspectExpr(e, func(e sql.Expression) bool {
						if sq, ok := e.(*plan.Subquery); ok {
							visit(sq.Query)
						}
						return false
					})
				}
			}
			return true
		})
	}
	visit(n)
	return out
}

// lockUse is one table reference of a statement.
type lockUse struct {
	key   mdl.Key
	name  string // the alias as written (the error names it)
	write bool
}

// lockUses collects a statement plan's table references.
type lockUses struct {
	uses []lockUse
}

func (u *lockUses) use(alias string, t *Table) {
	if t == nil || t.entry.temp {
		return
	}
	if alias == "" {
		alias = t.meta.name
	}
	u.uses = append(u.uses, lockUse{key: mdlKey(t.db.name, t.meta.name), name: alias})
}

// markWritten marks the first use from index from on that refers to key
// (or, with alias set, goes by alias) as a write.
func (u *lockUses) markWritten(from int, key mdl.Key, alias string) {
	for i := from; i < len(u.uses); i++ {
		x := &u.uses[i]
		if (alias != "" && strings.EqualFold(x.name, alias)) || (alias == "" && x.key == key) {
			x.write = true
			return
		}
	}
}

func (u *lockUses) walk(n sql.Node) {
	if n == nil {
		return
	}
	switch n := n.(type) {
	case *plan.TableAlias:
		if tn, ok := n.Child.(sql.TableNode); ok {
			u.use(n.Name(), asLockstepTable(tn.UnderlyingTable()))
			return
		}
	case sql.TableNode:
		u.use("", asLockstepTable(n.UnderlyingTable()))
		if _, ok := n.(*plan.ResolvedTable); ok {
			return
		}
	case *plan.TableCountLookup:
		u.use(n.Name(), asLockstepTable(n.Table()))
		return
	case *plan.TriggerExecutor:
		// The trigger's body: its tables are locked implicitly.
		u.walk(n.Left())
		return
	case *plan.InsertInto:
		from := len(u.uses)
		if _, t := aliasedTable(unwrapTable(n.Destination)); t != nil {
			u.use("", t)
			u.markWritten(from, mdlKey(t.db.name, t.meta.name), "")
		}
		u.walk(n.Source)
		return
	case *plan.Update:
		from := len(u.uses)
		u.walk(n.Child)
		if t := asLockstepTable(updatable(n.Child)); t != nil {
			u.markWritten(from, mdlKey(t.db.name, t.meta.name), "")
		}
		return
	case *plan.UpdateJoin:
		from := len(u.uses)
		u.walk(n.Child)
		for alias := range n.Updaters {
			u.markWritten(from, mdl.Key{}, alias)
		}
		return
	case *plan.DeleteFrom:
		from := len(u.uses)
		u.walk(n.Child)
		if n.HasExplicitTargets() {
			for _, target := range n.GetDeleteTargets() {
				if nm, ok := unwrapTable(target).(sql.Nameable); ok {
					u.markWritten(from, mdl.Key{}, nm.Name())
				}
			}
		} else if t, err := plan.GetDeletable(n.Child); err == nil {
			if lt := asLockstepTable(t); lt != nil {
				u.markWritten(from, mdlKey(lt.db.name, lt.meta.name), "")
			}
		}
		return
	}
	if ex, ok := n.(sql.Expressioner); ok {
		for _, e := range ex.Expressions() {
			transform.InspectExpr(e, func(e sql.Expression) bool {
				if sq, ok := e.(*plan.Subquery); ok {
					u.walk(sq.Query)
				}
				return false
			})
		}
	}
	for _, c := range n.Children() {
		u.walk(c)
	}
}

// updatable is an UPDATE's target table, nil if not found.
func updatable(n sql.Node) sql.Table {
	t, err := plan.GetUpdatable(n)
	if err != nil {
		return nil
	}
	return t
}

// unwrapTable goes down single-child wrappers (a foreign key handler, a
// trigger's wrapped node) to a table reference.
func unwrapTable(n sql.Node) sql.Node {
	for n != nil {
		switch n.(type) {
		case *plan.TableAlias, sql.TableNode:
			return n
		}
		if tr, ok := n.(*plan.TriggerExecutor); ok {
			n = tr.Left()
			continue
		}
		c := n.Children()
		if len(c) != 1 {
			return n
		}
		n = c[0]
	}
	return nil
}

// errNotLocked is ER_TABLE_NOT_LOCKED (1100).
func errNotLocked(name string) error {
	return mysql.NewSQLError(mysql.ERTableNotLocked, "HY000", "Table '%s' was not locked with LOCK TABLES", name)
}

// errNotLockedForWrite is ER_TABLE_NOT_LOCKED_FOR_WRITE (1099).
func errNotLockedForWrite(name string) error {
	return mysql.NewSQLError(mysql.ERTableNotLockedForWrite, "HY000", "Table '%s' was locked with a READ lock and can't be updated", name)
}

// lockTablesRule is mdlRule's LOCK TABLES part for a statement's own run
// (no scope): a LOCK TABLES statement notes what it locks (taken when it
// runs, buildLockTables); another statement of a session holding LOCK
// TABLES is checked against them: DDL and SHOW CREATE TABLE by checkDDL
// (lockddl.go), the others by their table references.
func (s *Session) lockTablesRule(ctx *sql.Context, n sql.Node) error {
	if lt, ok := n.(*plan.LockTables); ok {
		s.pendingLocked = lockedSetOf(s.fe, lt, s.viewsSeen)
		return nil
	}
	if s.locked == nil {
		return nil
	}
	switch n.(type) {
	case *plan.UnlockTables, *plan.DescribeQuery, *plan.ShowColumns, *plan.ShowIndexes:
		return nil // as in MySQL and MariaDB: any table
	case *plan.ShowCreateTable:
		return s.checkDDL(ctx, n)
	}
	if plan.IsDDLNode(n) {
		return s.checkDDL(ctx, n)
	}
	return s.locked.check(n, s.viewsSeen)
}

// check matches statement n's table references and views against the
// locked entries.
func (ls *lockedSet) check(n sql.Node, views []viewSeen) error {
	for _, v := range views {
		if !ls.views[mdlKey(v.db.name, v.key)] {
			return errNotLocked(v.key)
		}
	}
	var u lockUses
	u.walk(n)
	used := make([]bool, len(ls.entries))
	for _, x := range u.uses {
		best, readOnly := -1, false
		for i, e := range ls.entries {
			if used[i] || e.key != x.key || e.alias != strings.ToLower(x.name) {
				continue
			}
			if e.write != x.write && !e.write {
				readOnly = true // a READ entry for a write
				continue
			}
			if best < 0 || e.write == x.write {
				best = i
			}
		}
		if best >= 0 {
			used[best] = true
			continue
		}
		if w, ok := ls.implicit[x.key]; ok {
			if w || !x.write {
				continue // under a locked view
			}
			readOnly = true
		}
		if pl := ls.pre[x.key]; pl != nil && strings.ToLower(x.name) == x.key.Table {
			if pl.write || !x.write {
				continue // locked for a trigger or a foreign key, by its own name
			}
			readOnly = true
		}
		if readOnly {
			return errNotLockedForWrite(x.name)
		}
		return errNotLocked(x.name)
	}
	return nil
}

// LockedTablesError turns statement query's "table doesn't exist" (1146)
// into 1100 while connection connID holds LOCK TABLES: MySQL looks a name
// up among the locked tables first, so a name that is neither locked nor
// a table (`LOCK TABLES t AS a READ; SELECT * FROM a`) is "not locked".
// DESCRIBE, SHOW COLUMNS and SHOW INDEX need no lock and keep their 1146.
func (fe *Frontend) LockedTablesError(connID uint32, query string, err error) error {
	if err == nil || !tableNotFound(err) || describesTable(query) {
		return err
	}
	if s := fe.session(connID); s == nil || s.locked == nil {
		return err
	}
	if name := notFoundName(err); name != "" {
		return errNotLocked(name)
	}
	return err
}

// notFoundName is the table name of a "table not found" error, without
// its database.
func notFoundName(err error) string {
	msg := err.Error()
	var name string
	if i := strings.Index(msg, "table not found: "); i >= 0 {
		name = msg[i+len("table not found: "):]
	} else if i := strings.Index(msg, "Table '"); i >= 0 {
		name = msg[i+len("Table '"):]
		if j := strings.Index(name, "' doesn't exist"); j >= 0 {
			name = name[:j]
		}
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return strings.Trim(name, "`")
}

// describesTable reports whether query is DESCRIBE/DESC/EXPLAIN of a
// table, or SHOW [FULL|EXTENDED] COLUMNS/FIELDS/INDEX/INDEXES/KEYS.
func describesTable(query string) bool {
	w, rest := firstWord(strings.TrimSpace(query))
	switch strings.ToUpper(w) {
	case "DESC", "DESCRIBE", "EXPLAIN":
		next, _ := firstWord(strings.TrimSpace(rest))
		switch strings.ToUpper(next) {
		case "", "SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "WITH", "TABLE", "FORMAT", "ANALYZE", "EXTENDED", "PARTITIONS", "FOR":
			return false
		}
		return true
	case "SHOW":
		for {
			w, rest = firstWord(strings.TrimSpace(rest))
			switch strings.ToUpper(w) {
			case "FULL", "EXTENDED":
				continue
			case "COLUMNS", "FIELDS", "INDEX", "INDEXES", "KEYS":
				return true
			}
			return false
		}
	}
	return false
}
