package sqlfront

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// TEMPORARY tables. A session's temporary tables live in the session, keyed
// by database and lower-cased name, in storage tables that take no durable
// id and never appear in a commit record (storage.Engine.NewTempTable): the
// log, recovery and a replica never hear of them, and neither does a
// checkpoint's catalog. As in MySQL, a temporary table hides a permanent
// one of the same name from its session (DROP TABLE drops the temporary one
// first), SHOW TABLES and information_schema.TABLES do not list it, its
// DDL is not logged and does not commit the open transaction, its rows are
// transactional, and it goes when the session ends. The fast path leaves
// statements on a name a temporary table hides to go-mysql-server
// (runFast).

var (
	_ sql.TemporaryTableCreator  = (*Database)(nil)
	_ sql.TemporaryTableDatabase = (*Database)(nil)
)

func tempKey(db, table string) string { return strings.ToLower(db) + "\x00" + strings.ToLower(table) }

// tempTable returns the session's temporary table db.name, or nil.
func (s *Session) tempTable(db, name string) *tableEntry {
	if len(s.temps) == 0 {
		return nil
	}
	return s.temps[tempKey(db, name)]
}

// hidesTable reports whether a temporary table of the session hides the
// permanent table of the given lower-cased keys.
func (s *Session) hidesTable(dbKey, tableKey string) bool {
	return len(s.temps) > 0 && s.temps[dbKey+"\x00"+tableKey] != nil
}

// dropTemps drops every temporary table of the session (its end).
func (s *Session) dropTemps() {
	for _, te := range s.temps {
		te.store.Drop()
	}
	clear(s.temps)
}

// logDDL logs the running DDL statement on t (fe.logDDL), unless t is
// temporary: the log never hears of temporary tables.
func (t *Table) logDDL(ctx *sql.Context) error {
	if t.entry.temp {
		return nil
	}
	return t.db.fe.logDDL(ctx)
}

// CreateTemporaryTable implements CREATE TEMPORARY TABLE.
func (d *Database) CreateTemporaryTable(ctx *sql.Context, name string, schema sql.PrimaryKeySchema, collation sql.CollationID) error {
	s, ok := ctx.Session.(*Session)
	if !ok {
		return sql.ErrTemporaryTableNotSupported.New()
	}
	if s.tempTable(d.name, name) != nil {
		return sql.ErrTableAlreadyExists.New(name)
	}
	m, err := d.newTableMeta(name, schema, collation, "", nil)
	if err != nil {
		return err
	}
	desc, err := m.tableDesc()
	if err != nil {
		return err
	}
	store, err := d.fe.store.NewTempTable(name, desc)
	if err != nil {
		return err
	}
	m.version = store.Version()
	te := &tableEntry{store: store, temp: true}
	te.meta.Store(m)
	if s.temps == nil {
		s.temps = map[string]*tableEntry{}
	}
	s.temps[tempKey(d.name, name)] = te
	return nil
}

// GetAllTemporaryTables implements sql.TemporaryTableDatabase: the
// session's temporary tables in this database.
func (d *Database) GetAllTemporaryTables(ctx *sql.Context) ([]sql.Table, error) {
	s, ok := ctx.Session.(*Session)
	if !ok {
		return nil, nil
	}
	prefix := strings.ToLower(d.name) + "\x00"
	var out []sql.Table
	for k, te := range s.temps {
		if strings.HasPrefix(k, prefix) {
			out = append(out, d.table(te))
		}
	}
	return out, nil
}

// dropTemp drops the session's temporary table name, reporting whether
// there was one.
func (d *Database) dropTemp(ctx *sql.Context, name string) bool {
	s, ok := ctx.Session.(*Session)
	if !ok {
		return false
	}
	te := s.tempTable(d.name, name)
	if te == nil {
		return false
	}
	te.store.Drop()
	delete(s.temps, tempKey(d.name, name))
	return true
}

// renameTemps runs a RENAME TABLE (or ALTER TABLE ... RENAME) whose
// sources are temporary tables of the session, as MySQL and MariaDB do:
// pairs left to right, each checked against the session's temporary
// tables as the earlier pairs leave them — the target database must exist
// (1049), no temporary table may have the new name (1050; a permanent one
// may: the temporary table hides it) — and all applied, or none. Nothing
// is logged. handled is false when no source is a temporary table; a
// statement that mixes temporary and permanent tables is refused (1235).
func (s *Session) renameTemps(pairs []renamePair) (handled bool, err error) {
	if len(s.temps) == 0 {
		return false, nil
	}
	type move struct {
		te       *tableEntry
		db, name string
	}
	sim := make(map[string]*tableEntry, len(s.temps))
	for k, te := range s.temps {
		sim[k] = te
	}
	var moves []move
	perm := false
	for _, p := range pairs {
		fk := tempKey(p.fromDB, p.from)
		te := sim[fk]
		if te == nil {
			db := s.fe.provider.database(p.fromDB)
			if db == nil || !db.hasTable(strings.ToLower(p.from)) {
				if len(moves) > 0 {
					return true, mysql.NewSQLError(mysql.ERNoSuchTable, "42S02", "Table '%s.%s' doesn't exist", p.fromDB, p.from)
				}
				return false, nil // the permanent path answers
			}
			perm = true
			continue
		}
		to := s.fe.provider.database(p.toDB)
		if to == nil {
			return true, mysql.NewSQLError(mysql.ERBadDb, "42000", "Unknown database '%s'", p.toDB)
		}
		tk := tempKey(p.toDB, p.to)
		if sim[tk] != nil {
			return true, mysql.NewSQLError(mysql.ERTableExists, "42S01", "Table '%s' already exists", p.to)
		}
		delete(sim, fk)
		sim[tk] = te
		moves = append(moves, move{te: te, db: to.name, name: p.to})
	}
	if len(moves) == 0 {
		return false, nil
	}
	if perm {
		return true, mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
			"This version of lockstep doesn't yet support 'RENAME TABLE of TEMPORARY and permanent tables in one statement'")
	}
	for _, mv := range moves {
		m := mv.te.load().clone()
		m.name, m.db = mv.name, mv.db
		for i := range m.schema.Schema {
			c := *m.schema.Schema[i]
			c.Source = mv.name
			if c.DatabaseSource != "" {
				c.DatabaseSource = mv.db
			}
			m.schema.Schema[i] = &c
		}
		mv.te.meta.Store(m)
	}
	s.temps = sim
	return true, nil
}
