package sqlfront

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/storage"
)

// Checkpoints. The catalog goes into a checkpoint as the SQL statements
// that recreate it — SHOW CREATE DATABASE / TABLE output, the stored
// CREATE statements of views, triggers, routines and events, each marked
// with the sql_mode it was created under (ddlmarks.go) — with each
// table's durable id and definition version, so that loading runs the
// statements against an empty engine, gives every table its id back, and
// installs the rows.

// CatalogItem is one statement of a catalog snapshot. For a CREATE TABLE,
// Table is the storage table whose rows follow it.
type CatalogItem struct {
	Database string
	SQL      string
	Table    *storage.Table
	Version  uint64
}

// LockDDL keeps DDL statements out (a checkpoint holds it while it reads
// the catalog and the rows: an ALTER rewrites rows in place).
func (fe *Frontend) LockDDL() { fe.ddlMu.Lock() }

// DDLWaiting reports whether a DDL statement is waiting for LockDDL's
// holder (a paced checkpoint then writes at full speed).
func (fe *Frontend) DDLWaiting() bool { return fe.ddlWaiting.Load() > 0 }

// UnlockDDL lets DDL run again.
func (fe *Frontend) UnlockDDL() { fe.ddlMu.Unlock() }

// Catalog returns the statements that recreate the catalog: databases,
// tables in durable-id order, then views, triggers, procedures and events.
// The caller holds LockDDL.
func (fe *Frontend) Catalog() ([]CatalogItem, error) {
	ctx := fe.NewLocalContext(context.Background())
	var out, tables, rest []CatalogItem
	for _, db := range fe.provider.AllDatabases(ctx) {
		d := db.(*Database)
		rows, err := fe.queryRows(ctx, "SHOW CREATE DATABASE "+QuoteIdent(d.name))
		if err != nil {
			return nil, err
		}
		out = append(out, CatalogItem{SQL: fmt.Sprint(rows[0][1])})
		d.mu.RLock()
		entries := make([]*tableEntry, 0, len(d.tables))
		for _, te := range d.tables {
			entries = append(entries, te)
		}
		views := make([]string, 0, len(d.views))
		for _, v := range d.views {
			views = append(views, withSQLMode(v.SqlMode, v.CreateViewStatement))
		}
		sort.Strings(views)
		var trig, procs, events []string
		for _, t := range d.triggers {
			trig = append(trig, withSQLMode(t.SqlMode, t.CreateStatement))
		}
		for _, p := range d.procs {
			procs = append(procs, withSQLMode(p.SqlMode, p.CreateStatement))
		}
		for i := range d.events {
			events = append(events, withSQLMode(d.events[i].SqlMode, d.events[i].CreateEventStatement()))
		}
		d.mu.RUnlock()
		for _, te := range entries {
			m := te.load()
			rows, err := fe.queryRows(ctx, "SHOW CREATE TABLE "+QuoteIdent(d.name)+"."+QuoteIdent(m.name))
			if err != nil {
				return nil, err
			}
			tables = append(tables, CatalogItem{Database: d.name, SQL: fmt.Sprint(rows[0][1]), Table: te.store, Version: te.store.Version()})
		}
		for _, group := range [][]string{views, trig, procs, events} {
			for _, s := range group {
				rest = append(rest, CatalogItem{Database: d.name, SQL: s})
			}
		}
	}
	sort.Slice(tables, func(i, j int) bool { return tables[i].Table.ID() < tables[j].Table.ID() })
	out = append(out, tables...)
	return append(out, rest...), nil
}

// RunCatalogSQL runs one catalog statement while a checkpoint is loaded.
// Tables come in durable-id order, a child's foreign keys possibly before
// their parent: they load with foreign_key_checks=0, as a dump does.
func (fe *Frontend) RunCatalogSQL(database, query string) error {
	ctx := fe.NewLocalContext(context.Background())
	if database != "" {
		ctx.SetCurrentDatabase(database)
	}
	if s, ok := ctx.Session.(*Session); ok {
		// A checkpoint's statement, not a client's: not logged, and not
		// stopped by a read-only mode (a group member loading one).
		s.replaying = true
		defer s.releaseMDL(0, true) // mdl.go: no CommandEnd for a local session
	}
	if err := ctx.SetSessionVariable(ctx, "foreign_key_checks", int8(0)); err != nil {
		return err
	}
	if q, mode, ok := cutSQLModeMark(query); ok {
		if err := ctx.SetSessionVariable(ctx, "sql_mode", mode); err != nil {
			return fmt.Errorf("loading the catalog: %q: sql_mode: %w", query, err)
		}
		query = q
	}
	_, err := fe.queryRows(ctx, query)
	if err != nil {
		if s, ok := ctx.Session.(*Session); ok {
			s.undoFailedDDL()
		}
		return fmt.Errorf("loading the catalog: %q: %w", query, err)
	}
	return nil
}

// RestoreTableVersion sets the definition version of the table with
// durable id id (just created from a checkpoint) in storage and in the
// table definition the SQL layer encodes rows for.
func (fe *Frontend) RestoreTableVersion(id, version uint64) (*storage.Table, error) {
	ctx := fe.NewLocalContext(context.Background())
	for _, db := range fe.provider.AllDatabases(ctx) {
		d := db.(*Database)
		d.mu.RLock()
		for _, te := range d.tables {
			if uint64(te.store.ID()) != id {
				continue
			}
			d.mu.RUnlock()
			te.ddl.Lock()
			te.store.SetVersion(version)
			m := te.load().clone()
			m.version = version
			te.meta.Store(m)
			te.ddl.Unlock()
			return te.store, nil
		}
		d.mu.RUnlock()
	}
	return nil, fmt.Errorf("loading the catalog: no table has durable id %d", id)
}

func (fe *Frontend) queryRows(ctx *sql.Context, q string) ([]sql.Row, error) {
	// A local statement (a checkpoint's, written or loaded) ends here, with
	// its metadata locks (mdl.go): nothing ends its session's commands,
	// and a loaded table stayed locked — every statement on it waited.
	if s, ok := ctx.Session.(*Session); ok {
		defer s.releaseMDL(0, true)
	}
	_, iter, _, err := fe.Engine.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	return sql.RowIterToRows(ctx, iter)
}

// QuoteIdent quotes an identifier for SQL text: backticks, doubled inside.
func QuoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// TryLockDDL is LockDDL when no DDL statement holds the latch; it reports
// whether it took it (a group member's applier cannot wait for a DDL
// statement that waits for the applier).
func (fe *Frontend) TryLockDDL() bool { return fe.ddlMu.TryLock() }

// UserDatabases lists the databases the server holds (a new group member
// holds none).
func (fe *Frontend) UserDatabases() []string {
	ctx := fe.NewLocalContext(context.Background())
	var out []string
	for _, db := range fe.provider.AllDatabases(ctx) {
		out = append(out, db.Name())
	}
	return out
}
