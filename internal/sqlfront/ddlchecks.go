package sqlfront

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// The checks a catalog call makes before it logs its statement (ddllog.go:
// only what took effect belongs in the log). Each runs under the DDL latch
// (logDDLChecked), so no other DDL statement changes what it looked at
// before the call changes it; each returns the error the call itself
// would return after logging (the call keeps its own check too: with no
// logger installed, as in recovery, there is no latch).

// logDDLChecked takes the DDL latch for the running statement, runs check
// and logs the statement only if check passes.
func (fe *Frontend) logDDLChecked(ctx *sql.Context, check func() error) error {
	if err := fe.beginDDL(ctx); err != nil {
		return err
	}
	if err := check(); err != nil {
		return err
	}
	return fe.logDDL(ctx)
}

// checkNewView: CREATE VIEW of a view that exists.
func (d *Database) checkNewView(name string) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if _, ok := d.views[strings.ToLower(name)]; ok {
		return sql.ErrExistingView.New(d.name, name)
	}
	return nil
}

// checkView: DROP VIEW of a view that does not exist.
func (d *Database) checkView(name string) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if _, ok := d.views[strings.ToLower(name)]; !ok {
		return sql.ErrViewDoesNotExist.New(d.name, name)
	}
	return nil
}

// checkNewTrigger, checkTrigger: CREATE TRIGGER of one that exists, DROP
// TRIGGER of one that does not.
func (d *Database) checkNewTrigger(name string) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if indexNamed(d.triggers, name, triggerName) >= 0 {
		return fmt.Errorf("trigger %q already exists", name)
	}
	return nil
}

func (d *Database) checkTrigger(name string) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if indexNamed(d.triggers, name, triggerName) < 0 {
		return sql.ErrTriggerDoesNotExist.New(name)
	}
	return nil
}

// checkNewProc, checkProc: the same for stored procedures.
func (d *Database) checkNewProc(name string) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if indexNamed(d.procs, name, procName) >= 0 {
		return sql.ErrStoredProcedureAlreadyExists.New(name)
	}
	return nil
}

func (d *Database) checkProc(name string) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if indexNamed(d.procs, name, procName) < 0 {
		return sql.ErrStoredProcedureDoesNotExist.New(name)
	}
	return nil
}

// checkNewEvent, checkEvent: the same for events.
func (d *Database) checkNewEvent(name string) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if indexNamed(d.events, name, eventName) >= 0 {
		return sql.ErrEventAlreadyExists.New(name)
	}
	return nil
}

func (d *Database) checkEvent(name string) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if indexNamed(d.events, name, eventName) < 0 {
		return sql.ErrEventDoesNotExist.New(name)
	}
	return nil
}

// checkNewIndex: CREATE INDEX of a primary key, of a name the table has,
// or of a definition the table cannot hold.
func (t *Table) checkNewIndex(def sql.IndexDef) error {
	old := t.entry.load()
	if def.IsPrimary() {
		return fmt.Errorf("lockstep cannot add a primary key to an existing table yet")
	}
	if old.indexByName(def.Name) >= 0 || strings.EqualFold(def.Name, "PRIMARY") {
		return sql.ErrDuplicateKey.New(def.Name)
	}
	_, err := old.clone().newIndexMeta(def)
	return err
}

// checkIndex: DROP or RENAME of an index the table does not have.
func (t *Table) checkIndex(name string) error {
	if t.entry.load().indexByName(name) < 0 {
		return sql.ErrIndexNotFound.New(name)
	}
	return nil
}

// checkColumnOrder: FIRST or AFTER a column the table does not have
// (except, a column being moved, does not count).
func (t *Table) checkColumnOrder(order *sql.ColumnOrder, except string) error {
	if order == nil || order.AfterColumn == "" {
		return nil
	}
	m := t.entry.load()
	if i := m.colIndex(order.AfterColumn); i < 0 || (except != "" && strings.EqualFold(order.AfterColumn, except)) {
		return sql.ErrTableColumnNotFound.New(m.name, order.AfterColumn)
	}
	return nil
}

// checkNewColumn: ADD COLUMN of a type rows cannot hold, or AFTER a
// column that is not there.
func (t *Table) checkNewColumn(column *sql.Column, order *sql.ColumnOrder) error {
	if !storable(column.Type) {
		return fmt.Errorf("lockstep does not support columns of type %s yet", column.Type.String())
	}
	return t.checkColumnOrder(order, "")
}

// checkDropColumn: DROP COLUMN of a column that is not there or is part
// of the primary key.
func (t *Table) checkDropColumn(name string) error {
	m := t.entry.load()
	pos := m.colIndex(name)
	if pos < 0 {
		return sql.ErrTableColumnNotFound.New(m.name, name)
	}
	for _, o := range m.schema.PkOrdinals {
		if o == pos {
			return fmt.Errorf("lockstep cannot drop primary key column %s", name)
		}
	}
	return nil
}

// checkModifyColumn: MODIFY/CHANGE COLUMN of a column that is not there,
// to a type rows cannot hold, or AFTER a column that is not there.
func (t *Table) checkModifyColumn(name string, column *sql.Column, order *sql.ColumnOrder) error {
	m := t.entry.load()
	if m.colIndex(name) < 0 {
		return sql.ErrTableColumnNotFound.New(m.name, name)
	}
	if !storable(column.Type) {
		return fmt.Errorf("lockstep does not support columns of type %s yet", column.Type.String())
	}
	return t.checkColumnOrder(order, name)
}

// logDDLChecked is fe.logDDLChecked for a DDL statement on t; a temporary
// table's statement is not logged (its call's own checks apply).
func (t *Table) logDDLChecked(ctx *sql.Context, check func() error) error {
	if t.entry.temp {
		return nil
	}
	return t.db.fe.logDDLChecked(ctx, check)
}

// checkNewFK: ADD FOREIGN KEY of a name the database has.
func (t *Table) checkNewFK(name string) error {
	if t.db.fkNameTaken(name, nil) {
		return sql.ErrForeignKeyDuplicateName.New(name)
	}
	return nil
}

// checkFK: DROP FOREIGN KEY of a key the table does not have.
func (t *Table) checkFK(name string) error {
	m := t.entry.load()
	for _, fk := range m.fks {
		if strings.EqualFold(fk.name, name) {
			return nil
		}
	}
	return sql.ErrForeignKeyNotFound.New(name, m.name)
}

// checkNewCheck: ADD CHECK of a name the database has (an unnamed check
// gets a free one).
func (t *Table) checkNewCheck(name string) error {
	if name != "" && t.db.checkNameTaken(name) {
		return mysql.NewSQLError(3822, "HY000", "Duplicate check constraint name '%s'.", name)
	}
	return nil
}

// checkCheck: DROP CHECK of a check the table does not have.
func (t *Table) checkCheck(name string) error {
	for _, c := range t.entry.load().checks {
		if strings.EqualFold(c.Name, name) {
			return nil
		}
	}
	return sql.ErrUnknownConstraint.New(name)
}
