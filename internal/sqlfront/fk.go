package sqlfront

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// Foreign keys. A table's FOREIGN KEY constraints are part of its
// definition (tableMeta.fks): DDL that adds, drops or renames one is logged
// as its text like any DDL, and SHOW CREATE TABLE prints them, so
// checkpoints and recovery recreate them. go-mysql-server does the rest
// through sql.ForeignKeyTable: it validates definitions, creates the index
// a key needs, and enforces the keys in INSERT, UPDATE, DELETE and REPLACE
// with its foreign key editors (RESTRICT / NO ACTION, CASCADE, SET NULL),
// which call the editors below. Cascaded changes are writes of the same
// storage transaction, so they commit, roll back and reach the log with
// the statement that caused them.
//
// InnoDB checks a key with locking reads: the parent row a child row needs
// is share-locked (a concurrent DELETE of the parent waits, and then finds
// the child), and the child rows of a parent being deleted or updated are
// found with current reads that see what the statement itself has already
// changed (a cascade that already removed them). The lookups below read the
// same way, whatever the statement's isolation level or own lock intent.
//
// Every key is reported resolved: go-mysql-server would otherwise check
// every row of the child table at the first write after a restart (keys are
// recreated with foreign_key_checks=0) and refuse writes to a table holding
// rows loaded with foreign_key_checks=0, which MySQL accepts.

// foreignKey is one FOREIGN KEY constraint a table declares.
type foreignKey struct {
	name       string
	cols       []string
	parentDB   string // "" : the declaring table's database
	parent     string
	parentCols []string
	onUpdate   sql.ForeignKeyReferentialAction
	onDelete   sql.ForeignKeyReferentialAction
}

var _ sql.ForeignKeyTable = (*Table)(nil)

// storedFK turns go-mysql-server's definition into the stored one.
func (d *Database) storedFK(fk sql.ForeignKeyConstraint) foreignKey {
	pdb := fk.ParentDatabase
	if strings.EqualFold(pdb, d.name) {
		pdb = ""
	}
	return foreignKey{
		name:       fk.Name,
		cols:       append([]string(nil), fk.Columns...),
		parentDB:   pdb,
		parent:     fk.ParentTable,
		parentCols: append([]string(nil), fk.ParentColumns...),
		onUpdate:   fk.OnUpdate,
		onDelete:   fk.OnDelete,
	}
}

// constraint is fk, declared by table m of d, as go-mysql-server sees it
// (fresh slices: callers edit them in place).
func (d *Database) constraint(m *tableMeta, fk foreignKey) sql.ForeignKeyConstraint {
	pdb := fk.parentDB
	if pdb == "" {
		pdb = d.name
	}
	parent := fk.parent
	if strings.EqualFold(pdb, d.name) && strings.EqualFold(parent, m.name) {
		parent = m.name // self-referencing: the table's own spelling
	}
	return sql.ForeignKeyConstraint{
		Name:           fk.name,
		Database:       d.name,
		Table:          m.name,
		Columns:        append([]string(nil), fk.cols...),
		ParentDatabase: pdb,
		ParentTable:    parent,
		ParentColumns:  append([]string(nil), fk.parentCols...),
		OnUpdate:       fk.onUpdate,
		OnDelete:       fk.onDelete,
		IsResolved:     true,
	}
}

// references reports whether fk, declared in d, names table table of
// database db as its parent.
func (d *Database) references(fk foreignKey, db, table string) bool {
	pdb := fk.parentDB
	if pdb == "" {
		pdb = d.name
	}
	return strings.EqualFold(pdb, db) && strings.EqualFold(fk.parent, table)
}

// fkNameTaken reports whether a table of d other than except declares a
// foreign key named name (MySQL's names are unique per database).
func (d *Database) fkNameTaken(name string, except *tableEntry) bool {
	for _, te := range d.entries() {
		if te == except {
			continue
		}
		for _, fk := range te.load().fks {
			if strings.EqualFold(fk.name, name) {
				return true
			}
		}
	}
	return false
}

// entries returns the database's tables.
func (d *Database) entries() []*tableEntry {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]*tableEntry, 0, len(d.tables))
	for _, te := range d.tables {
		out = append(out, te)
	}
	return out
}

func (t *Table) GetDeclaredForeignKeys(ctx *sql.Context) ([]sql.ForeignKeyConstraint, error) {
	m := t.entry.load()
	if len(m.fks) == 0 {
		return nil, nil
	}
	out := make([]sql.ForeignKeyConstraint, len(m.fks))
	for i, fk := range m.fks {
		out[i] = t.db.constraint(m, fk)
	}
	return out, nil
}

func (t *Table) GetReferencedForeignKeys(ctx *sql.Context) ([]sql.ForeignKeyConstraint, error) {
	fe := t.db.fe
	if !fe.anyFK.Load() {
		return nil, nil // no table has ever declared one: the common case
	}
	name := t.entry.load().name
	var out []sql.ForeignKeyConstraint
	for _, db := range fe.provider.AllDatabases(ctx) {
		d := db.(*Database)
		for _, te := range d.entries() {
			cm := te.load()
			for _, fk := range cm.fks {
				if d.references(fk, t.db.name, name) {
					out = append(out, d.constraint(cm, fk))
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Database != out[j].Database {
			return out[i].Database < out[j].Database
		}
		if out[i].Table != out[j].Table {
			return out[i].Table < out[j].Table
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func (t *Table) AddForeignKey(ctx *sql.Context, fk sql.ForeignKeyConstraint) error {
	if fk.OnDelete == sql.ForeignKeyReferentialAction_SetDefault || fk.OnUpdate == sql.ForeignKeyReferentialAction_SetDefault {
		return sql.ErrForeignKeySetDefault.New() // InnoDB refuses SET DEFAULT
	}
	if err := t.logDDLChecked(ctx, func() error { return t.checkNewFK(fk.Name) }); err != nil {
		return err
	}
	if t.db.fkNameTaken(fk.Name, nil) {
		return sql.ErrForeignKeyDuplicateName.New(fk.Name)
	}
	t.db.fe.anyFK.Store(true)
	return t.editFKs(func(m *tableMeta) error {
		m.fks = append(m.fks, t.db.storedFK(fk))
		sortFKs(m.fks)
		return nil
	})
}

func (t *Table) DropForeignKey(ctx *sql.Context, fkName string) error {
	if err := t.logDDLChecked(ctx, func() error { return t.checkFK(fkName) }); err != nil {
		return err
	}
	return t.editFKs(func(m *tableMeta) error {
		for i, fk := range m.fks {
			if strings.EqualFold(fk.name, fkName) {
				m.fks = append(m.fks[:i:i], m.fks[i+1:]...)
				return nil
			}
		}
		return sql.ErrForeignKeyNotFound.New(fkName, m.name)
	})
}

// UpdateForeignKey replaces a definition: go-mysql-server calls it when a
// table or column the key names is renamed (a DDL statement, logged) and
// to mark a key resolved (during any statement; keys here always are, and
// that changes nothing).
func (t *Table) UpdateForeignKey(ctx *sql.Context, fkName string, fk sql.ForeignKeyConstraint) error {
	if isDDLText(ctx.Query()) {
		if err := t.logDDL(ctx); err != nil {
			return err
		}
	}
	if !strings.EqualFold(fkName, fk.Name) && t.db.fkNameTaken(fk.Name, t.entry) {
		return sql.ErrForeignKeyDuplicateName.New(fk.Name)
	}
	return t.editFKs(func(m *tableMeta) error {
		for i, old := range m.fks {
			if strings.EqualFold(old.name, fkName) {
				m.fks[i] = t.db.storedFK(fk)
				sortFKs(m.fks)
				return nil
			}
		}
		return sql.ErrForeignKeyNotFound.New(fkName, m.name)
	})
}

// editFKs publishes a copy of the definition changed by edit.
func (t *Table) editFKs(edit func(*tableMeta) error) error {
	te := t.entry
	te.ddl.Lock()
	defer te.ddl.Unlock()
	m := te.load().clone()
	if err := edit(m); err != nil {
		return err
	}
	te.meta.Store(m)
	t.meta = m
	t.db.fe.catalogChanged()
	return nil
}

// sortFKs orders keys by name, as SHOW CREATE TABLE lists them in MySQL.
func sortFKs(fks []foreignKey) {
	sort.SliceStable(fks, func(i, j int) bool { return fks[i].name < fks[j].name })
}

// CreateIndexForForeignKey adds the index a key needs when the table has
// none (InnoDB names it after the constraint, or after the first column
// when the constraint is unnamed): an ordinary index, shown by SHOW CREATE
// TABLE and SHOW INDEX.
// The key is added after its index: if adding it fails, the index goes.
func (t *Table) CreateIndexForForeignKey(ctx *sql.Context, def sql.IndexDef) error {
	if err := t.CreateIndex(ctx, def); err != nil {
		return err
	}
	if s, ok := ctx.Session.(*Session); ok {
		te := t.entry
		s.onFailedDDL(ctx, func() { dropIndexByName(te, def.Name) })
	}
	return nil
}

// dropIndexByName removes an index a failed statement created.
func dropIndexByName(te *tableEntry, name string) {
	te.ddl.Lock()
	defer te.ddl.Unlock()
	old := te.load()
	i := old.indexByName(name)
	if i < 0 || te.store.DropIndex(i) != nil {
		return
	}
	m := old.clone()
	m.indexes = append(m.indexes[:i:i], m.indexes[i+1:]...)
	m.version = te.store.Version()
	te.meta.Store(m)
}

func (t *Table) GetForeignKeyEditor(ctx *sql.Context) sql.ForeignKeyEditor {
	return &fkEditor{editor: t.editor(ctx)}
}

// fkEditor is a table's editor inside go-mysql-server's foreign key
// machinery: the target of the statement, or a table a cascade changes or
// a check reads.
type fkEditor struct {
	*editor
}

var _ sql.ForeignKeyEditor = (*fkEditor)(nil)

func (e *fkEditor) IndexedAccess(ctx *sql.Context, lookup sql.IndexLookup) sql.IndexedTable {
	return &fkLookup{Table: e.t}
}

func (e *fkEditor) GetIndexes(ctx *sql.Context) ([]sql.Index, error) { return e.t.GetIndexes(ctx) }
func (e *fkEditor) PreciseMatch() bool                               { return false }

// beginLocking makes the editor the target of an UPDATE or DELETE, as
// Table.Updater and Deleter do for tables without foreign keys: the
// statement's reads lock rows X.
func (e *fkEditor) beginLocking(ctx *sql.Context) {
	if e.s == nil || (e.locking && !e.closed) {
		return
	}
	e.closed = false
	e.locking = true
	e.s.beginLockingWrite(ctx)
}

// fkLookup is a table read by a foreign key check or action: an index
// lookup whose rows are read with share locks, seeing the statement's own
// changes (see the top of the file).
type fkLookup struct {
	*Table
}

var (
	_ sql.IndexedTable     = (*fkLookup)(nil)
	_ sql.ReferenceChecker = (*fkLookup)(nil)
)

func (l *fkLookup) LookupPartitions(ctx *sql.Context, lookup sql.IndexLookup) (sql.PartitionIter, error) {
	lk := lookup
	return &onePartition{p: &partition{lookup: &lk}}, nil
}

// SetReferenceCheck implements sql.ReferenceChecker: the lookup only asks
// whether a parent row exists. Rows are decoded anyway.
func (l *fkLookup) SetReferenceCheck() error { return nil }

func (l *fkLookup) PartitionRows(ctx *sql.Context, p sql.Partition) (sql.RowIter, error) {
	it, err := l.Table.partitionRows(ctx, p)
	if err != nil {
		return nil, err
	}
	it.fk = true
	return it, nil
}

// lockFKTargets marks the foreign-key editors an UPDATE or DELETE writes
// through as its targets (go-mysql-server then never asks the table for
// its Updater or Deleter).
func lockFKTargets(ctx *sql.Context, n sql.Node) {
	visit := func(c sql.Node) bool {
		if h, ok := c.(*plan.ForeignKeyHandler); ok {
			if e, ok := h.Editor.Editor.(*fkEditor); ok {
				e.beginLocking(ctx)
			}
		}
		return true
	}
	transform.Inspect(n, visit)
	if d, ok := n.(*plan.DeleteFrom); ok {
		for _, target := range d.GetDeleteTargets() {
			transform.Inspect(target, visit)
		}
	}
}

// fkWriteBlocked reports whether writes to the table must run through
// go-mysql-server's foreign key machinery, because the table declares a
// foreign key or another table's key references it. The fast path
// (fast_write.go) must leave such writes to go-mysql-server.
func (fe *Frontend) fkWriteBlocked(te *tableEntry) bool {
	if !fe.anyFK.Load() {
		return false
	}
	m := te.load()
	if len(m.fks) > 0 {
		return true
	}
	return fe.fkParents()[fkTableKey(m.db, m.name)]
}

// fkParentSet is the set of tables some foreign key references, as of
// catalog generation gen.
type fkParentSet struct {
	gen uint64
	set map[string]bool
}

func fkTableKey(db, table string) string {
	return strings.ToLower(db) + "\x00" + strings.ToLower(table)
}

// fkParents returns the tables foreign keys reference (lower-cased
// database and table name, see fkTableKey), rebuilt after catalog changes.
func (fe *Frontend) fkParents() map[string]bool {
	gen := fe.fkGen.Load()
	if c := fe.fkParentCache.Load(); c != nil && c.gen == gen {
		return c.set
	}
	set := map[string]bool{}
	for _, d := range fe.provider.databases() {
		for _, te := range d.entries() {
			for _, fk := range te.load().fks {
				pdb := fk.parentDB
				if pdb == "" {
					pdb = d.name
				}
				set[fkTableKey(pdb, fk.parent)] = true
			}
		}
	}
	fe.fkParentCache.Store(&fkParentSet{gen: gen, set: set})
	return set
}

// catalogChanged invalidates what is derived from the foreign keys of the
// catalog; called after a change of keys, or of the tables that hold them.
func (fe *Frontend) catalogChanged() { fe.fkGen.Add(1) }

// mysqlCreateTable rewrites the FOREIGN KEY clauses go-mysql-server put in
// create (SHOW CREATE TABLE output for table m of d) as MySQL prints them:
// columns separated by ", ", and the parent's database named when it is
// not the table's own (go-mysql-server prints the table name alone, so a
// dump or a checkpoint would recreate the key against a table of the
// child's database).
func (d *Database) mysqlCreateTable(m *tableMeta, create string) string {
	if m.pkHasPrefix() {
		names := make([]string, len(m.pk.cols))
		mine := make([]string, len(m.pk.cols))
		for i, c := range m.pk.cols {
			names[i] = m.schema.Schema[c.ord].Name
			mine[i] = sql.QuoteIdentifier(names[i])
			if c.prefix > 0 {
				mine[i] += fmt.Sprintf("(%d)", c.prefix)
			}
		}
		create = strings.Replace(create, sql.GenerateCreateTablePrimaryKeyDefinition(names),
			"  PRIMARY KEY ("+strings.Join(mine, ",")+")", 1)
	}
	for _, fk := range m.fks {
		c := d.constraint(m, fk)
		gms := sql.GenerateCreateTableForiegnKeyDefinition(c.Name, c.Columns, c.ParentTable, c.ParentColumns,
			shownAction(c.OnDelete), shownAction(c.OnUpdate))
		parent := sql.QuoteIdentifier(c.ParentTable)
		if fk.parentDB != "" {
			parent = sql.QuoteIdentifier(c.ParentDatabase) + "." + parent
		}
		mine := fmt.Sprintf("  CONSTRAINT %s FOREIGN KEY (%s) REFERENCES %s (%s)", sql.QuoteIdentifier(c.Name),
			quoteList(c.Columns), parent, quoteList(c.ParentColumns))
		if a := shownAction(c.OnDelete); a != "" {
			mine += " ON DELETE " + a
		}
		if a := shownAction(c.OnUpdate); a != "" {
			mine += " ON UPDATE " + a
		}
		create = strings.Replace(create, gms, mine, 1)
	}
	return create
}

func quoteList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = sql.QuoteIdentifier(n)
	}
	return strings.Join(out, ", ")
}

// asTable unwraps go-mysql-server's table wrappers around a lockstep table.
func asTable(st sql.Table) *Table {
	t, _ := underlying(st).(*Table)
	return t
}

// underlying is st without go-mysql-server's wrappers (ProcessTable, ...).
func underlying(st sql.Table) sql.Table {
	for {
		w, ok := st.(sql.TableWrapper)
		if !ok {
			return st
		}
		st = w.Underlying()
	}
}

// rewriteCreateTable runs go-mysql-server's SHOW CREATE TABLE n and
// rewrites the CREATE TABLE text of its row with fix.
func rewriteCreateTable(ctx *sql.Context, n *plan.ShowCreateTable, row sql.Row, fix func(string) string) (sql.RowIter, error) {
	iter, err := rowexec.DefaultBuilder.Build(ctx, n, row)
	if err != nil {
		return nil, err
	}
	rows, err := sql.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if len(r) > 1 {
			if s, ok := r[1].(string); ok {
				r[1] = fix(s)
			}
		}
	}
	return sql.RowsToRowIter(rows...), nil
}

// showCreateTable runs SHOW CREATE TABLE of a table with foreign keys or
// a primary key on column prefixes (nil, nil for anything else:
// go-mysql-server runs it), its key clauses printed as MySQL prints them.
func showCreateTable(ctx *sql.Context, n *plan.ShowCreateTable, row sql.Row) (sql.RowIter, error) {
	if n.IsView {
		return nil, nil
	}
	var t *Table
	var other *plan.ResolvedTable
	transform.Inspect(n.Child, func(c sql.Node) bool {
		if rt, ok := c.(*plan.ResolvedTable); ok {
			if t = asTable(rt.Table); t == nil {
				other = rt
			}
		}
		return t == nil && other == nil
	})
	if other != nil {
		return showCreateMySQLTable(ctx, n, other, row) // mysqlschema.go
	}
	if t == nil {
		return nil, nil
	}
	m := t.entry.load()
	if len(m.fks) == 0 && !m.pkHasPrefix() {
		return nil, nil
	}
	return rewriteCreateTable(ctx, n, row, func(s string) string { return t.db.mysqlCreateTable(m, s) })
}

// shownAction is a referential action as SHOW CREATE TABLE prints it
// ("" when none was given).
func shownAction(a sql.ForeignKeyReferentialAction) string {
	if a == sql.ForeignKeyReferentialAction_DefaultAction {
		return ""
	}
	return string(a)
}
