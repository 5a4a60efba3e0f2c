package sqlfront

import (
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// CHECK constraints. The definitions live in the table's tableMeta (name,
// expression text, ENFORCED); go-mysql-server parses the expressions and
// evaluates them on every INSERT and UPDATE it runs (a violation is 3819
// "Check constraint 'c' is violated."). Durability is the foreign keys':
// the DDL statement is logged as text and replayed, and SHOW CREATE TABLE —
// what a checkpoint keeps — prints the constraints. The fast path leaves
// writes to a table with checks to go-mysql-server (writableMeta).

var (
	_ sql.CheckTable          = (*Table)(nil)
	_ sql.CheckAlterableTable = (*Table)(nil)
)

// GetChecks implements sql.CheckTable.
func (t *Table) GetChecks(ctx *sql.Context) ([]sql.CheckDefinition, error) {
	m := t.entry.load()
	out := append([]sql.CheckDefinition(nil), m.checks...)
	if ctx != nil {
		if s, ok := ctx.Session.(*Session); ok && (len(s.viewChecks) > 0 || len(s.preparedViewChecks) > 0 || len(s.routineViewChecks) > 0) {
			out = append(out, s.viewChecksFor(ctx, t.entry)...) // viewwrite.go
		}
	}
	return out, nil
}

// CreateCheck implements sql.CheckAlterableTable. Check names are unique
// in a database (MySQL's 3822 "Duplicate check constraint name").
func (t *Table) CreateCheck(ctx *sql.Context, check *sql.CheckDefinition) error {
	if err := t.logDDLChecked(ctx, func() error { return t.checkNewCheck(check.Name) }); err != nil {
		return err
	}
	if check.Name == "" {
		// MySQL names an unnamed check <table>_chk_<n>.
		m := t.entry.load()
		for n := 1; ; n++ {
			name := m.name + "_chk_" + strconv.Itoa(n)
			if !t.db.checkNameTaken(name) {
				c := *check
				c.Name = name
				check = &c
				break
			}
		}
	}
	if t.db.checkNameTaken(check.Name) {
		return mysql.NewSQLError(3822, "HY000", "Duplicate check constraint name '%s'.", check.Name)
	}
	return t.editFKs(func(m *tableMeta) error {
		m.checks = append(m.checks, *check)
		return nil
	})
}

// DropCheck implements sql.CheckAlterableTable.
func (t *Table) DropCheck(ctx *sql.Context, name string) error {
	if err := t.logDDLChecked(ctx, func() error { return t.checkCheck(name) }); err != nil {
		return err
	}
	return t.editFKs(func(m *tableMeta) error {
		for i, c := range m.checks {
			if strings.EqualFold(c.Name, name) {
				m.checks = append(m.checks[:i:i], m.checks[i+1:]...)
				return nil
			}
		}
		return sql.ErrUnknownConstraint.New(name)
	})
}

// checkNameTaken reports whether a table of the database has a check of
// that name.
func (d *Database) checkNameTaken(name string) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, te := range d.tables {
		for _, c := range te.load().checks {
			if strings.EqualFold(c.Name, name) {
				return true
			}
		}
	}
	return false
}
