package sqlfront

import (
	"fmt"
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
	return append([]sql.TriggerDefinition(nil), d.triggers...), nil
}

func (d *Database) CreateTrigger(ctx *sql.Context, def sql.TriggerDefinition) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range d.triggers {
		if strings.EqualFold(t.Name, def.Name) {
			return fmt.Errorf("trigger %q already exists", def.Name)
		}
	}
	d.triggers = append(d.triggers, def)
	return nil
}

func (d *Database) DropTrigger(ctx *sql.Context, name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, t := range d.triggers {
		if strings.EqualFold(t.Name, name) {
			d.triggers = append(d.triggers[:i:i], d.triggers[i+1:]...)
			return nil
		}
	}
	return sql.ErrTriggerDoesNotExist.New(name)
}

func (d *Database) GetStoredProcedure(ctx *sql.Context, name string) (sql.StoredProcedureDetails, bool, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, p := range d.procs {
		if strings.EqualFold(p.Name, name) {
			return p, true, nil
		}
	}
	return sql.StoredProcedureDetails{}, false, nil
}

func (d *Database) GetStoredProcedures(ctx *sql.Context) ([]sql.StoredProcedureDetails, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return append([]sql.StoredProcedureDetails(nil), d.procs...), nil
}

func (d *Database) SaveStoredProcedure(ctx *sql.Context, spd sql.StoredProcedureDetails) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.procs {
		if strings.EqualFold(p.Name, spd.Name) {
			return sql.ErrStoredProcedureAlreadyExists.New(spd.Name)
		}
	}
	d.procs = append(d.procs, spd)
	return nil
}

func (d *Database) DropStoredProcedure(ctx *sql.Context, name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, p := range d.procs {
		if strings.EqualFold(p.Name, name) {
			d.procs = append(d.procs[:i:i], d.procs[i+1:]...)
			return nil
		}
	}
	return sql.ErrStoredProcedureDoesNotExist.New(name)
}
