package sqlfront

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
)

// Triggers and stored procedures are kept as their definitions, per
// database, in memory (they are not yet logged).

var (
	_ sql.TriggerDatabase         = (*Database)(nil)
	_ sql.StoredProcedureDatabase = (*Database)(nil)
)

func (d *Database) GetTriggers(ctx *sql.Context) ([]sql.TriggerDefinition, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if s := planningTriggers(ctx); s != nil {
		return d.planTriggers(s), nil // mdltriggers.go
	}
	return append([]sql.TriggerDefinition(nil), d.triggers...), nil
}

func (d *Database) CreateTrigger(ctx *sql.Context, def sql.TriggerDefinition) error {
	if err := d.fe.logDDLChecked(ctx, func() error { return d.checkNewTrigger(def.Name) }); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if indexNamed(d.triggers, def.Name, triggerName) >= 0 {
		return fmt.Errorf("trigger %q already exists", def.Name)
	}
	d.triggers = append(d.triggers, def)
	d.trigGen++
	d.fe.anyTrigger.Store(true)
	return nil
}

func (d *Database) DropTrigger(ctx *sql.Context, name string) error {
	if err := d.fe.logDDLChecked(ctx, func() error { return d.checkTrigger(name) }); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	i := indexNamed(d.triggers, name, triggerName)
	if i < 0 {
		return sql.ErrTriggerDoesNotExist.New(name)
	}
	d.triggers = slices.Delete(d.triggers, i, i+1)
	d.trigGen++
	return nil
}

func (d *Database) GetStoredProcedure(ctx *sql.Context, name string) (sql.StoredProcedureDetails, bool, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if i := indexNamed(d.procs, name, procName); i >= 0 {
		return d.procs[i], true, nil
	}
	return sql.StoredProcedureDetails{}, false, nil
}

func (d *Database) GetStoredProcedures(ctx *sql.Context) ([]sql.StoredProcedureDetails, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return append([]sql.StoredProcedureDetails(nil), d.procs...), nil
}

func (d *Database) SaveStoredProcedure(ctx *sql.Context, spd sql.StoredProcedureDetails) error {
	if err := d.fe.logDDLChecked(ctx, func() error { return d.checkNewProc(spd.Name) }); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if indexNamed(d.procs, spd.Name, procName) >= 0 {
		return sql.ErrStoredProcedureAlreadyExists.New(spd.Name)
	}
	d.procs = append(d.procs, spd)
	return nil
}

func (d *Database) DropStoredProcedure(ctx *sql.Context, name string) error {
	if err := d.fe.logDDLChecked(ctx, func() error { return d.checkProc(name) }); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	i := indexNamed(d.procs, name, procName)
	if i < 0 {
		return sql.ErrStoredProcedureDoesNotExist.New(name)
	}
	d.procs = slices.Delete(d.procs, i, i+1)
	return nil
}

// indexNamed is the index of the definition called name in defs, or -1.
// Names compare case-insensitively, as MySQL compares routine, trigger and
// event names.
func indexNamed[T any](defs []T, name string, nameOf func(*T) string) int {
	for i := range defs {
		if strings.EqualFold(nameOf(&defs[i]), name) {
			return i
		}
	}
	return -1
}

func triggerName(t *sql.TriggerDefinition) string   { return t.Name }
func procName(p *sql.StoredProcedureDetails) string { return p.Name }
