package sqlfront

import (
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// RENAME TABLE, within a database and between databases, as MySQL 8 runs
// it (renamedb.go notes the statement's pairs at parse time).
//
// The pairs run left to right, each seeing the ones before it (a swap
// through a temporary name works). All are checked first, against the
// catalog as the earlier pairs leave it (renameSim), in MySQL's order for
// each pair: the new name exists (1050), an unknown database (1049, the
// old name's first), the old name does not exist (1146); a view moved to
// another database (1450), a table with triggers moved to another
// database (1435, "Trigger in wrong schema"), a foreign key name the
// target database has (1826). Only when every pair passes is the statement
// logged and applied, so a RENAME TABLE changes all or nothing, as MySQL's
// atomic DDL does; go-mysql-server renamed pair by pair and kept the first
// renames when a later one failed.
//
// Moving a table between databases moves its catalog entry (the storage
// table, its rows, indexes and AUTO_INCREMENT counter go with it) and
// records the new database in its definition. Its foreign keys keep their
// parents: a parent in the old database is now named with that database
// (SHOW CREATE TABLE prints `old`.`parent`). The keys that reference the
// table, in any database, follow it to its new name, and generated key
// names (t_ibfk_N) follow the table's name, as in MySQL 8. Grants on the
// old name stay where they are (MySQL does not move table privileges).
// Every changed definition is a new tableMeta, so statements planned
// against the old one (a prepared statement, a fast-path plan) are planned
// again and find the old name gone (1146).

// renamesOf returns the pairs the running statement's parse noted for
// RENAME TABLE node n, or nil when n is not that statement's (a prepared
// RENAME executed later, an ALTER TABLE ... RENAME within one database).
func renamesOf(ctx *sql.Context, n *plan.RenameTable) []renamePair {
	s, ok := ctx.Session.(*Session)
	if !ok || len(s.renames) == 0 || len(s.renames) != len(n.OldNames) || len(n.NewNames) != len(n.OldNames) {
		return nil
	}
	for i, p := range s.renames {
		if !strings.EqualFold(p.from, n.OldNames[i]) || !strings.EqualFold(p.to, n.NewNames[i]) {
			return nil
		}
	}
	return s.renames
}

// renameStep is one checked pair: table te (or, when te is nil, view
// view) of from, named oldName, becomes newName in to.
type renameStep struct {
	from, to         *Database
	oldName, newName string
	te               *tableEntry
	view             string // the view's key in from
}

// renameTables runs a RENAME TABLE's pairs: all of them, or none.
func (fe *Frontend) renameTables(ctx *sql.Context, pairs []renamePair, alter bool) (sql.RowIter, error) {
	s, _ := ctx.Session.(*Session)
	if s != nil {
		// Temporary tables: the session's own, never logged (temptables.go).
		if handled, err := s.renameTemps(pairs); handled || err != nil {
			if err != nil {
				return nil, err
			}
			return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(0))), nil
		}
	}
	if err := fe.beginDDL(ctx); err != nil {
		return nil, err
	}
	sim := &renameSim{fe: fe, objs: map[renameKey]*renameObj{}}
	steps := make([]renameStep, 0, len(pairs))
	for _, p := range pairs {
		st, err := sim.rename(p, alter)
		if err != nil {
			return nil, err
		}
		steps = append(steps, st)
	}
	if err := fe.logDDL(ctx); err != nil {
		return nil, err
	}
	for _, st := range steps {
		fe.applyRename(st)
		if s != nil {
			back := renameStep{from: st.to, to: st.from, oldName: st.newName, newName: st.oldName, te: st.te, view: strings.ToLower(st.newName)}
			s.onFailedDDL(ctx, func() { fe.applyRename(back) })
		}
		if h := TestingRenameStep.Load(); h != nil {
			(*h)(st.from.name, st.oldName, st.newName)
		}
	}
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(0))), nil
}

// checkRenames runs renameTables' checks of pairs without applying them.
func (fe *Frontend) checkRenames(pairs []renamePair, alter bool) error {
	sim := &renameSim{fe: fe, objs: map[renameKey]*renameObj{}}
	for _, p := range pairs {
		if _, err := sim.rename(p, alter); err != nil {
			return err
		}
	}
	return nil
}

// alterMove runs an ALTER TABLE of several clauses (go-mysql-server's
// Block) that moves the table to another database as MySQL does: the
// move is checked first (1050, 1049, 1435, 1826: nothing changed when it
// cannot be made), the other clauses run, then the move. A clause that
// fails leaves the move undone; a failed statement's changes are taken
// back as for any DDL statement (ddlundo.go). nil, nil for another Block.
func (o execOverride) alterMove(ctx *sql.Context, n *plan.Block, row sql.Row) (sql.RowIter, error) {
	var move *plan.RenameTable
	var rest []sql.Node
	for _, c := range n.Children() {
		if r, ok := c.(*plan.RenameTable); ok && move == nil && renamesOf(ctx, r) != nil {
			move = r
			continue
		}
		rest = append(rest, c)
	}
	if move == nil {
		return nil, nil
	}
	s := ctx.Session.(*Session)
	if err := o.fe.beginDDL(ctx); err != nil { // held to the statement's end: nothing changes between
		return nil, err
	}
	if err := o.fe.checkRenames(s.renames, true); err != nil {
		return nil, err
	}
	var rows []sql.Row
	for _, c := range rest {
		iter, err := o.Build(ctx, c, row)
		if err == nil && iter == nil {
			iter, err = newExecOverride(o.fe, c).Build(ctx, c, row)
		}
		if err != nil {
			return nil, err
		}
		if rows, err = sql.RowIterToRows(ctx, iter); err != nil {
			return nil, err
		}
	}
	iter, err := o.fe.renameTables(ctx, s.renames, true)
	if err != nil {
		return nil, err
	}
	if _, err := sql.RowIterToRows(ctx, iter); err != nil {
		return nil, err
	}
	// As go-mysql-server's block: the OK result of the last clause (the
	// handler reads the block's schema after building it).
	n.SetSchema(types.OkResultSchema)
	return alterBlockIter{RowIter: sql.RowsToRowIter(rows...), node: rest[len(rest)-1]}, nil
}

// alterBlockIter is an ALTER block's result (plan.BlockRowIter): the
// handler answers with an OK packet.
type alterBlockIter struct {
	sql.RowIter
	node sql.Node
}

func (i alterBlockIter) RepresentingNode() sql.Node { return i.node }
func (i alterBlockIter) Schema() sql.Schema         { return types.OkResultSchema }

// renameKey is a name in a database, both lower-cased.
type renameKey struct{ db, name string }

func keyOf(d *Database, name string) renameKey {
	return renameKey{strings.ToLower(d.name), strings.ToLower(name)}
}

// renameObj is a table or view as the pairs checked so far leave it.
type renameObj struct {
	te       *tableEntry // nil for a view
	view     string      // a view's key in its original database
	db       *Database   // the database it is in now
	name     string      // its name now
	triggers bool        // a table with triggers
	fkNames  []string    // a table's foreign key names now
}

// renameSim is the catalog as the checked pairs leave it: objs overrides
// the catalog for the names a pair took (nil: the name is free now).
type renameSim struct {
	fe   *Frontend
	objs map[renameKey]*renameObj
}

// lookup finds name in d.
func (r *renameSim) lookup(d *Database, name string) *renameObj {
	k := keyOf(d, name)
	if o, ok := r.objs[k]; ok {
		return o
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if te, ok := d.tables[k.name]; ok {
		m := te.load()
		o := &renameObj{te: te, db: d, name: m.name}
		for i := range d.triggers {
			if strings.EqualFold(triggerOn(&d.triggers[i]), m.name) {
				o.triggers = true
			}
		}
		for _, fk := range m.fks {
			o.fkNames = append(o.fkNames, fk.name)
		}
		return o
	}
	if v, ok := d.views[k.name]; ok {
		return &renameObj{view: k.name, db: d, name: v.Name}
	}
	return nil
}

// fkNameTaken reports whether a table of d other than except declares a
// foreign key named name, as the checked pairs leave d.
func (r *renameSim) fkNameTaken(d *Database, name string, except *tableEntry) bool {
	dk := strings.ToLower(d.name)
	for _, te := range d.entries() {
		m := te.load()
		if _, moved := r.objs[keyOf(d, m.name)]; moved || te == except {
			continue
		}
		for _, fk := range m.fks {
			if strings.EqualFold(fk.name, name) {
				return true
			}
		}
	}
	for k, o := range r.objs {
		if k.db != dk || o == nil || o.te == nil || o.te == except {
			continue
		}
		for _, n := range o.fkNames {
			if strings.EqualFold(n, name) {
				return true
			}
		}
	}
	return false
}

// rename checks pair p against the catalog as the pairs before it leave
// it, in MySQL's order, and takes it into the simulation.
func (r *renameSim) rename(p renamePair, alter bool) (renameStep, error) {
	from, to := r.fe.provider.database(p.fromDB), r.fe.provider.database(p.toDB)
	if to != nil && r.lookup(to, p.to) != nil {
		return renameStep{}, mysql.NewSQLError(mysql.ERTableExists, "42S01", "Table '%s' already exists", p.to)
	}
	if from == nil {
		return renameStep{}, mysql.NewSQLError(mysql.ERBadDb, "42000", "Unknown database '%s'", p.fromDB)
	}
	if to == nil {
		return renameStep{}, mysql.NewSQLError(mysql.ERBadDb, "42000", "Unknown database '%s'", p.toDB)
	}
	o := r.lookup(from, p.from)
	if o == nil {
		return renameStep{}, mysql.NewSQLError(mysql.ERNoSuchTable, "42S02", "Table '%s.%s' doesn't exist", p.fromDB, p.from)
	}
	cross := from != to
	if o.te == nil {
		if alter {
			return renameStep{}, mysql.NewSQLError(1347, "HY000", "'%s.%s' is not BASE TABLE", p.fromDB, p.from)
		}
		if cross {
			return renameStep{}, hy000(1450, "Changing schema from '%s' to '%s' is not allowed.", p.fromDB, p.toDB)
		}
	}
	if o.te != nil && cross && o.triggers {
		return renameStep{}, hy000(1435, "Trigger in wrong schema")
	}
	moved := *o
	moved.db, moved.name = to, p.to
	if o.te != nil {
		moved.fkNames = make([]string, len(o.fkNames))
		for i, n := range o.fkNames {
			moved.fkNames[i] = generatedFKName(n, o.name, p.to)
			if !cross && strings.EqualFold(moved.fkNames[i], n) {
				continue // a name the database has for this table already
			}
			if r.fkNameTaken(to, moved.fkNames[i], o.te) {
				return renameStep{}, hy000(1826, "Duplicate foreign key constraint name '%s'", moved.fkNames[i])
			}
		}
	}
	r.objs[keyOf(from, p.from)] = nil
	r.objs[keyOf(to, p.to)] = &moved
	return renameStep{from: from, to: to, oldName: o.name, newName: p.to, te: o.te, view: strings.ToLower(o.name)}, nil
}

// generatedFKName is a foreign key's name after its table is renamed
// from oldTable to newTable: a name MySQL generated (oldTable_ibfk_N)
// follows the table's, as in MySQL 8.
func generatedFKName(name, oldTable, newTable string) string {
	prefix := oldTable + "_ibfk_"
	if len(name) > len(prefix) && strings.EqualFold(name[:len(prefix)], prefix) {
		return newTable + "_ibfk_" + name[len(prefix):]
	}
	return name
}

// applyRename performs a checked step. It holds the DDL latch (beginDDL)
// and the names' exclusive metadata locks, and cannot fail.
func (fe *Frontend) applyRename(st renameStep) {
	if st.te == nil {
		st.from.renameView(st.view, st.newName)
		fe.catalogChanged()
		return
	}
	oldDB, newDB := st.from.name, st.to.name
	unlock := lockDatabases(st.from, st.to)
	te := st.te
	te.ddl.Lock()
	m := te.load().clone()
	for i := range m.fks {
		fk := &m.fks[i]
		pdb := fk.parentDB
		if pdb == "" {
			pdb = oldDB
		}
		if strings.EqualFold(pdb, oldDB) && strings.EqualFold(fk.parent, st.oldName) {
			pdb, fk.parent = newDB, st.newName // self-referencing: it moves too
		}
		fk.parentDB = pdb
		if strings.EqualFold(pdb, newDB) {
			fk.parentDB = ""
		}
		fk.name = generatedFKName(fk.name, st.oldName, st.newName)
	}
	sortFKs(m.fks)
	m.name, m.db = st.newName, newDB
	for i := range m.schema.Schema {
		c := *m.schema.Schema[i]
		c.Source = st.newName
		m.schema.Schema[i] = &c
	}
	te.meta.Store(m)
	te.ddl.Unlock()
	delete(st.from.tables, strings.ToLower(st.oldName))
	st.to.tables[strings.ToLower(st.newName)] = te
	if st.from == st.to {
		st.from.moveTriggers(st.oldName, st.newName) // triggertable.go
	}
	unlock()
	fe.retargetChildren(te, oldDB, st.oldName, newDB, st.newName)
	fe.catalogChanged()
}

// lockDatabases write-locks a and b (once when they are one), in name
// order, and returns the unlock.
func lockDatabases(a, b *Database) func() {
	if a == b {
		a.mu.Lock()
		return a.mu.Unlock
	}
	if strings.ToLower(b.name) < strings.ToLower(a.name) {
		a, b = b, a
	}
	a.mu.Lock()
	b.mu.Lock()
	return func() {
		b.mu.Unlock()
		a.mu.Unlock()
	}
}

// retargetChildren makes the foreign keys that reference oldDB.oldName
// (declared by tables other than te, in any database) reference
// newDB.newName, as MySQL's keys follow their parent.
func (fe *Frontend) retargetChildren(te *tableEntry, oldDB, oldName, newDB, newName string) {
	if !fe.anyFK.Load() {
		return
	}
	for _, db := range fe.provider.AllDatabases(nil) {
		d, ok := db.(*Database)
		if !ok {
			continue
		}
		for _, child := range d.entries() {
			if child == te {
				continue
			}
			child.ddl.Lock()
			cur := child.load()
			var m *tableMeta
			for i, fk := range cur.fks {
				if !d.references(fk, oldDB, oldName) {
					continue
				}
				if m == nil {
					m = cur.clone()
				}
				m.fks[i].parent, m.fks[i].parentDB = newName, newDB
				if strings.EqualFold(newDB, d.name) {
					m.fks[i].parentDB = ""
				}
			}
			if m != nil {
				child.meta.Store(m)
			}
			child.ddl.Unlock()
		}
	}
}

// renameView renames view key of d to newName, its stored CREATE VIEW
// too (a checkpoint recreates the view from it).
func (d *Database) renameView(key, newName string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.views[key]
	if !ok {
		return
	}
	delete(d.views, key)
	v.Name = newName
	v.CreateViewStatement = renamedViewStatement(v.CreateViewStatement, newName)
	d.views[strings.ToLower(newName)] = v
}

// viewNameClause finds the name of a CREATE VIEW head.
var viewNameClause = regexp.MustCompile("(?is)\\bview\\s+((?:`(?:[^`]|``)+`|[\\w$]+)(?:\\s*\\.\\s*(?:`(?:[^`]|``)+`|[\\w$]+))?)")

// renamedViewStatement is CREATE VIEW text create with the view's name
// replaced by name (unqualified: the view stays in its database); create
// itself if its head is not found.
func renamedViewStatement(create, name string) string {
	head := create
	if st, err := ast.Parse(create); err == nil {
		if ddl, ok := st.(*ast.DDL); ok && ddl.SubStatementPositionStart > 0 && ddl.SubStatementPositionStart <= len(create) {
			head = create[:ddl.SubStatementPositionStart]
		}
	}
	m := viewNameClause.FindStringSubmatchIndex(head)
	if m == nil {
		return create
	}
	return create[:m[2]] + QuoteIdent(name) + create[m[3]:]
}
