package sqlfront

import (
	"slices"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
)

// Event definitions are kept per database so information_schema.events and
// SHOW EVENTS work; lockstep does not run an event scheduler yet, so events
// are stored but never fire.

var _ sql.EventDatabase = (*Database)(nil)

func (d *Database) GetEvent(ctx *sql.Context, name string) (sql.EventDefinition, bool, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if i := indexNamed(d.events, name, eventName); i >= 0 {
		return d.events[i], true, nil
	}
	return sql.EventDefinition{}, false, nil
}

func (d *Database) GetEvents(ctx *sql.Context) ([]sql.EventDefinition, interface{}, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return append([]sql.EventDefinition(nil), d.events...), nil, nil
}

func (d *Database) SaveEvent(ctx *sql.Context, ed sql.EventDefinition) (bool, error) {
	if err := d.fe.logDDLChecked(ctx, func() error { return d.checkNewEvent(ed.Name) }); err != nil {
		return false, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if indexNamed(d.events, ed.Name, eventName) >= 0 {
		return false, sql.ErrEventAlreadyExists.New(ed.Name)
	}
	d.events = append(d.events, ed)
	return false, nil // false: nothing for a scheduler to do
}

func (d *Database) DropEvent(ctx *sql.Context, name string) error {
	if err := d.fe.logDDLChecked(ctx, func() error { return d.checkEvent(name) }); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	i := indexNamed(d.events, name, eventName)
	if i < 0 {
		return sql.ErrEventDoesNotExist.New(name)
	}
	d.events = slices.Delete(d.events, i, i+1)
	return nil
}

func (d *Database) UpdateEvent(ctx *sql.Context, originalName string, ed sql.EventDefinition) (bool, error) {
	if err := d.fe.logDDLChecked(ctx, func() error { return d.checkEvent(originalName) }); err != nil {
		return false, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	i := indexNamed(d.events, originalName, eventName)
	if i < 0 {
		return false, sql.ErrEventDoesNotExist.New(originalName)
	}
	d.events[i] = ed
	return false, nil
}

func (d *Database) UpdateLastExecuted(ctx *sql.Context, name string, at time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := indexNamed(d.events, name, eventName)
	if i < 0 {
		return sql.ErrEventDoesNotExist.New(name)
	}
	d.events[i].LastExecuted = at
	return nil
}

func (d *Database) NeedsToReloadEvents(ctx *sql.Context, token interface{}) (bool, error) {
	return false, nil
}

func eventName(e *sql.EventDefinition) string { return e.Name }
