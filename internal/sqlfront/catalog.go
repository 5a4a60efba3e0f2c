package sqlfront

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
)

// provider is the sql.DatabaseProvider: the set of user databases.
type provider struct {
	fe  *Frontend
	mu  sync.RWMutex
	dbs map[string]*Database
}

var _ sql.MutableDatabaseProvider = (*provider)(nil)

func (p *provider) Database(ctx *sql.Context, name string) (sql.Database, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if db, ok := p.dbs[strings.ToLower(name)]; ok {
		return db, nil
	}
	if name == logTablesDB {
		return logTablesDatabase{}, nil // mysqlschema.go
	}
	if strings.EqualFold(name, perfSchemaName) {
		return perfSchemaDB{fe: p.fe}, nil // perfschema.go
	}
	return nil, sql.ErrDatabaseNotFound.New(name)
}

func (p *provider) HasDatabase(ctx *sql.Context, name string) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	_, ok := p.dbs[strings.ToLower(name)]
	return ok
}

func (p *provider) AllDatabases(ctx *sql.Context) []sql.Database {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]sql.Database, 0, len(p.dbs))
	for _, db := range p.dbs {
		out = append(out, db)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// A catalog call takes the DDL latch (beginDDL), checks what it can know
// will fail, and logs the statement (logDDL) only then: a statement that
// fails such a check is not in the log (ddllog.go).

func (p *provider) CreateDatabase(ctx *sql.Context, name string) error {
	if err := p.fe.beginDDL(ctx); err != nil {
		return err
	}
	if p.HasDatabase(ctx, name) || strings.EqualFold(name, perfSchemaName) {
		return sql.ErrDatabaseExists.New(name)
	}
	if err := p.fe.logDDL(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	key := strings.ToLower(name)
	if _, ok := p.dbs[key]; ok {
		return sql.ErrDatabaseExists.New(name)
	}
	p.dbs[key] = &Database{fe: p.fe, name: name, tables: map[string]*tableEntry{}, collation: sql.Collation_Default}
	return nil
}

func (p *provider) DropDatabase(ctx *sql.Context, name string) error {
	if err := p.fe.beginDDL(ctx); err != nil {
		return err
	}
	if !p.HasDatabase(ctx, name) {
		return sql.ErrDatabaseNotFound.New(name)
	}
	if err := p.fe.logDDL(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	key := strings.ToLower(name)
	db, ok := p.dbs[key]
	if !ok {
		p.mu.Unlock()
		return sql.ErrDatabaseNotFound.New(name)
	}
	delete(p.dbs, key)
	p.mu.Unlock()
	db.mu.Lock()
	defer db.mu.Unlock()
	if s, ok := ctx.Session.(*Session); ok {
		s.droppedTables = len(db.tables) + 1 // MySQL's affected-row count (TakeDroppedTables)
	}
	for _, te := range db.tables {
		te.store.Drop()
	}
	db.tables = map[string]*tableEntry{}
	p.fe.catalogChanged()
	return nil
}

// Database is one schema: a set of tables.
type Database struct {
	fe        *Frontend
	name      string
	mu        sync.RWMutex
	tables    map[string]*tableEntry
	views     map[string]sql.ViewDefinition
	triggers  []sql.TriggerDefinition
	trigGen   uint64 // counts changes of triggers (mdltriggers.go); under mu
	procs     []sql.StoredProcedureDetails
	events    []sql.EventDefinition
	collation sql.CollationID
}

var (
	_ sql.Database            = (*Database)(nil)
	_ sql.TableCreator        = (*Database)(nil)
	_ sql.TableDropper        = (*Database)(nil)
	_ sql.TableRenamer        = (*Database)(nil)
	_ sql.CollatedDatabase    = (*Database)(nil)
	_ sql.IndexedTableCreator = (*Database)(nil)
)

func (d *Database) Name() string { return d.name }

// table is the table of entry te of d, bound to its current definition.
func (d *Database) table(te *tableEntry) *Table { return &Table{db: d, entry: te, meta: te.load()} }

func (d *Database) GetTableInsensitive(ctx *sql.Context, name string) (sql.Table, bool, error) {
	if s, ok := ctx.Session.(*Session); ok {
		if te := s.tempTable(d.name, name); te != nil {
			return d.table(te), true, nil
		}
	}
	d.mu.RLock()
	te, ok := d.tables[strings.ToLower(name)]
	d.mu.RUnlock()
	if !ok {
		return nil, false, nil
	}
	return d.table(te), true, nil
}

func (d *Database) GetTableNames(ctx *sql.Context) ([]string, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	names := make([]string, 0, len(d.tables))
	for _, te := range d.tables {
		names = append(names, te.load().name)
	}
	sort.Strings(names)
	return names, nil
}

func (d *Database) GetCollation(ctx *sql.Context) sql.CollationID { return d.collation }

func (d *Database) SetCollation(ctx *sql.Context, c sql.CollationID) error {
	if err := d.fe.logDDL(ctx); err != nil {
		return err
	}
	d.collation = c
	return nil
}

func (d *Database) CreateTable(ctx *sql.Context, name string, schema sql.PrimaryKeySchema, collation sql.CollationID, comment string) error {
	return d.createTable(ctx, name, schema, collation, comment, nil)
}

func (d *Database) CreateIndexedTable(ctx *sql.Context, name string, schema sql.PrimaryKeySchema, idx sql.IndexDef, collation sql.CollationID) error {
	return d.createTable(ctx, name, schema, collation, "", &idx)
}

func (d *Database) createTable(ctx *sql.Context, name string, schema sql.PrimaryKeySchema, collation sql.CollationID, comment string, idx *sql.IndexDef) error {
	if err := d.fe.beginDDL(ctx); err != nil {
		return err
	}
	key := strings.ToLower(name)
	if d.hasTable(key) {
		return sql.ErrTableAlreadyExists.New(name)
	}
	if s, ok := ctx.Session.(*Session); ok && idx != nil && comment == "" && strings.EqualFold(s.createComment.table, name) {
		comment = s.createComment.comment
	}
	m, err := d.newTableMeta(name, schema, collation, comment, idx)
	if err != nil {
		return err
	}
	desc, err := m.tableDesc()
	if err != nil {
		return err
	}
	if err := d.fe.logDDL(ctx); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.tables[key]; ok {
		return sql.ErrTableAlreadyExists.New(name)
	}
	store, err := d.fe.store.NewTable(name, desc)
	if err != nil {
		return err
	}
	m.version = store.Version()
	te := &tableEntry{store: store}
	te.meta.Store(m)
	d.tables[key] = te
	if s, ok := ctx.Session.(*Session); ok {
		// The statement may still fail (an index or foreign key of the
		// CREATE TABLE, the rows of CREATE TABLE ... SELECT): then the
		// table goes, as in MySQL, where DDL is atomic.
		s.onFailedDDL(ctx, func() { d.undoCreate(key, te) })
	}
	return nil
}

// hasTable reports whether d has a permanent table of lower-cased name key.
func (d *Database) hasTable(key string) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	_, ok := d.tables[key]
	return ok
}

// newTableMeta is the first definition of a new table; idx is the
// primary key clause (for its column prefixes) or one extra index.
func (d *Database) newTableMeta(name string, schema sql.PrimaryKeySchema, collation sql.CollationID, comment string, idx *sql.IndexDef) (*tableMeta, error) {
	for _, c := range schema.Schema {
		if !storable(c.Type) {
			return nil, fmt.Errorf("lockstep does not support columns of type %s yet (column %s)", c.Type.String(), c.Name)
		}
	}
	m := &tableMeta{name: name, db: d.name, collation: collation, comment: comment, sqlIndexes: &indexCache{}}
	m.setSchema(schema)
	if idx != nil && idx.IsPrimary() {
		m.setPKPrefixes(idx.Columns)
	}
	if err := m.checkPK(); err != nil {
		return nil, err
	}
	if idx != nil && !idx.IsPrimary() {
		im, err := m.newIndexMeta(*idx)
		if err != nil {
			return nil, err
		}
		m.indexes = []indexMeta{im}
	}
	return m, nil
}

// undoCreate removes the table a failed CREATE TABLE created.
func (d *Database) undoCreate(key string, te *tableEntry) {
	d.mu.Lock()
	if d.tables[key] == te {
		te.store.Drop()
		delete(d.tables, key)
	}
	d.mu.Unlock()
	d.fe.catalogChanged()
}

func (d *Database) DropTable(ctx *sql.Context, name string) error {
	if d.dropTemp(ctx, name) {
		return nil // a temporary table hides the permanent one
	}
	if err := d.fe.beginDDL(ctx); err != nil {
		return err
	}
	if !d.hasTable(strings.ToLower(name)) {
		return sql.ErrTableNotFound.New(name)
	}
	if err := d.fe.logDDL(ctx); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	key := strings.ToLower(name)
	te, ok := d.tables[key]
	if !ok {
		return sql.ErrTableNotFound.New(name)
	}
	te.store.Drop()
	delete(d.tables, key)
	d.fe.catalogChanged()
	return nil
}

func (d *Database) RenameTable(ctx *sql.Context, oldName, newName string) error {
	if s, ok := ctx.Session.(*Session); ok && s.tempTable(d.name, oldName) != nil {
		// The temporary table, never the permanent one it hides.
		_, err := s.renameTemps([]renamePair{{fromDB: d.name, from: oldName, toDB: d.name, to: newName}})
		return err
	}
	if err := d.fe.beginDDL(ctx); err != nil {
		return err
	}
	if !d.hasTable(strings.ToLower(oldName)) {
		return sql.ErrTableNotFound.New(oldName)
	}
	if d.hasTable(strings.ToLower(newName)) {
		return sql.ErrTableAlreadyExists.New(newName)
	}
	if err := d.fe.logDDL(ctx); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	ok, nk := strings.ToLower(oldName), strings.ToLower(newName)
	te, found := d.tables[ok]
	if !found {
		return sql.ErrTableNotFound.New(oldName)
	}
	if _, exists := d.tables[nk]; exists {
		return sql.ErrTableAlreadyExists.New(newName)
	}
	te.ddl.Lock()
	m := te.load().clone()
	m.name = newName
	for i := range m.schema.Schema {
		c := *m.schema.Schema[i]
		c.Source = newName
		m.schema.Schema[i] = &c
	}
	te.meta.Store(m)
	te.ddl.Unlock()
	delete(d.tables, ok)
	d.tables[nk] = te
	d.moveTriggers(oldName, newName) // triggertable.go
	d.fe.catalogChanged()
	if h := TestingRenameStep.Load(); h != nil {
		d.mu.Unlock()
		(*h)(d.name, oldName, newName)
		d.mu.Lock()
	}
	return nil
}

// TestingRenameStep, for tests only, is called after each rename of a
// RENAME TABLE statement (a statement renames its pairs one after the
// other), with none of the catalog's latches held.
var TestingRenameStep atomic.Pointer[func(db, from, to string)]

// storable reports whether the row format can hold values of typ.
func storable(typ sql.Type) bool {
	switch typ.Type().String() {
	case "GEOMETRY":
		return false
	}
	return true
}

// TakeDroppedTables returns how many tables connection connID's DROP
// DATABASE just dropped — MySQL's affected-row count for it (go-mysql-server
// says 1) — once; ok is false if none was noted.
func (fe *Frontend) TakeDroppedTables(connID uint32) (n int, ok bool) {
	s := fe.session(connID)
	if s == nil || s.droppedTables == 0 {
		return 0, false
	}
	n, s.droppedTables = s.droppedTables-1, 0
	return n, true
}
