package sqlfront

import (
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
)

// Views are kept as their definition text, per database.

var _ sql.ViewDatabase = (*Database)(nil)

func (d *Database) CreateView(ctx *sql.Context, name string, selectStatement, createViewStmt string) error {
	if err := d.fe.logDDLChecked(ctx, func() error { return d.checkNewView(name) }); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	key := strings.ToLower(name)
	if _, ok := d.views[key]; ok {
		return sql.ErrExistingView.New(d.name, name)
	}
	if d.views == nil {
		d.views = map[string]sql.ViewDefinition{}
	}
	d.views[key] = sql.ViewDefinition{Name: name, TextDefinition: selectStatement, CreateViewStatement: createViewStmt,
		SqlMode: sql.LoadSqlMode(ctx).String()}
	return nil
}

func (d *Database) DropView(ctx *sql.Context, name string) error {
	if err := d.fe.logDDLChecked(ctx, func() error { return d.checkView(name) }); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	key := strings.ToLower(name)
	if _, ok := d.views[key]; !ok {
		return sql.ErrViewDoesNotExist.New(d.name, name)
	}
	delete(d.views, key)
	return nil
}

func (d *Database) GetViewDefinition(ctx *sql.Context, name string) (sql.ViewDefinition, bool, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	key := strings.ToLower(name)
	v, ok := d.views[key]
	if ok {
		noteViewLookup(ctx, d.name) // routinedb.go
		if s, isOurs := ctx.Session.(*Session); isOurs {
			// The view's metadata lock (mdl.go): taken with the
			// statement's, when the definition read must still be the
			// view's.
			s.viewsSeen = append(s.viewsSeen, viewSeen{db: d, key: key, create: v.CreateViewStatement})
		}
	}
	return v, ok, nil
}

func (d *Database) AllViews(ctx *sql.Context) ([]sql.ViewDefinition, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]sql.ViewDefinition, 0, len(d.views))
	for _, v := range d.views {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
