package sqlfront

import (
	"strings"
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
	for _, e := range d.events {
		if strings.EqualFold(e.Name, name) {
			return e, true, nil
		}
	}
	return sql.EventDefinition{}, false, nil
}

func (d *Database) GetEvents(ctx *sql.Context) ([]sql.EventDefinition, interface{}, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return append([]sql.EventDefinition(nil), d.events...), nil, nil
}

func (d *Database) SaveEvent(ctx *sql.Context, ed sql.EventDefinition) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range d.events {
		if strings.EqualFold(e.Name, ed.Name) {
			return false, sql.ErrEventAlreadyExists.New(ed.Name)
		}
	}
	d.events = append(d.events, ed)
	return false, nil // false: nothing for a scheduler to do
}

func (d *Database) DropEvent(ctx *sql.Context, name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, e := range d.events {
		if strings.EqualFold(e.Name, name) {
			d.events = append(d.events[:i:i], d.events[i+1:]...)
			return nil
		}
	}
	return sql.ErrEventDoesNotExist.New(name)
}

func (d *Database) UpdateEvent(ctx *sql.Context, originalName string, ed sql.EventDefinition) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, e := range d.events {
		if strings.EqualFold(e.Name, originalName) {
			d.events[i] = ed
			return false, nil
		}
	}
	return false, sql.ErrEventDoesNotExist.New(originalName)
}

func (d *Database) UpdateLastExecuted(ctx *sql.Context, name string, at time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, e := range d.events {
		if strings.EqualFold(e.Name, name) {
			d.events[i].LastExecuted = at
			return nil
		}
	}
	return sql.ErrEventDoesNotExist.New(name)
}

func (d *Database) NeedsToReloadEvents(ctx *sql.Context, token interface{}) (bool, error) {
	return false, nil
}
