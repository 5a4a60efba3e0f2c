package sqlfront

import (
	"context"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"lockstep/internal/mdl"
)

// What LOCK TABLES locks implicitly (docs/mdl.md, "What LOCK TABLES locks
// implicitly"), as MySQL's prelocking does: a table locked WRITE may be
// written, and its writes reach further tables, so LOCK TABLES locks those
// too, for as long as its own locks (explicit duration):
//
//   - the tables its triggers use: SHARED_WRITE for one a trigger body
//     writes, SHARED_READ for one it only reads; a table locked READ
//     explicitly that a trigger writes may be written by its own name
//     (MySQL: "an explicit read lock request ... converted to a write lock
//     request"; its metadata locks are then SRO and SW), while its READ
//     entries stay READ (an alias of one is 1099 for a write, as MariaDB);
//   - its foreign key relatives (MySQL 8.0's "LOCK TABLES and Foreign
//     Keys"): its parents SHARED_READ_ONLY, its children
//     SHARED_NO_READ_WRITE when an ON DELETE/ON UPDATE action changes
//     them (CASCADE, SET NULL, SET DEFAULT), SHARED_READ_ONLY otherwise;
//   - transitively: a table a trigger writes brings its own triggers (of
//     the events the trigger causes) and relatives, a cascade child its
//     relatives (a cascade fires no trigger).
//
// A READ-locked table brings nothing. The session may use an implicitly
// locked table by its own name (an alias is 1100), to read it, and to
// write it when it was locked for a write (else 1099).
//
// Nothing here runs outside LOCK TABLES.

// trigger events, as a set.
const (
	evInsert = 1 << iota
	evUpdate
	evDelete
	evAll = evInsert | evUpdate | evDelete
)

// preLock is what LOCK TABLES locks implicitly on one table.
type preLock struct {
	modes []mdl.Mode // its metadata locks (SR, SW, SRO, SNRW)
	write bool       // the session may write it
}

// addMode adds metadata lock mode m, keeping only the modes no other one
// includes (mdl.Mode.Includes).
func (pl *preLock) addMode(m mdl.Mode) {
	kept := pl.modes[:0]
	for _, x := range pl.modes {
		if x.Includes(m) {
			return
		}
		if !m.Includes(x) {
			kept = append(kept, x)
		}
	}
	pl.modes = append(kept, m)
}

// trigTable is a table a trigger body uses.
type trigTable struct {
	db, name string
	write    bool
	events   int // what the write does to it (its own triggers that fire)
}

// triggerBodyTables parses trigger def of database db and returns the
// table it fires on, its event, and the tables its body uses (a table
// both read and written appears as written). ok is false if its text
// does not parse.
func triggerBodyTables(def *sql.TriggerDefinition, db string) (on string, event int, uses []trigTable, ok bool) {
	opts := ast.ParserOptions{AnsiQuotes: strings.Contains(strings.ToUpper(def.SqlMode), "ANSI_QUOTES")}
	st, err := ast.ParseWithOptions(context.Background(), def.CreateStatement, opts)
	if err != nil {
		return "", 0, nil, false
	}
	ddl, isDDL := st.(*ast.DDL)
	if !isDDL || ddl.TriggerSpec == nil || ddl.TriggerSpec.Body == nil {
		return "", 0, nil, false
	}
	switch strings.ToLower(ddl.TriggerSpec.Event) {
	case ast.InsertStr:
		event = evInsert
	case ast.UpdateStr:
		event = evUpdate
	case ast.DeleteStr:
		event = evDelete
	}
	index := map[string]int{}
	use := func(tn ast.TableName, write bool, events int) {
		name := tn.Name.String()
		if name == "" {
			return
		}
		d := db
		if q := tn.DbQualifier.String(); q != "" {
			d = q
		}
		k := strings.ToLower(d) + "." + strings.ToLower(name)
		if i, seen := index[k]; seen {
			uses[i].write = uses[i].write || write
			uses[i].events |= events
			return
		}
		index[k] = len(uses)
		uses = append(uses, trigTable{db: d, name: name, write: write, events: events})
	}
	// writeExprs marks the tables of a multi-table UPDATE or DELETE written
	// (those named by targets when given, else all of them).
	var writeExprs func(exprs ast.TableExprs, targets map[string]bool, events int)
	writeExprs = func(exprs ast.TableExprs, targets map[string]bool, events int) {
		for _, te := range exprs {
			switch te := te.(type) {
			case *ast.AliasedTableExpr:
				tn, isName := te.Expr.(ast.TableName)
				if !isName {
					continue
				}
				alias := strings.ToLower(tn.Name.String())
				if !te.As.IsEmpty() {
					alias = strings.ToLower(te.As.String())
				}
				if targets == nil || targets[alias] {
					use(tn, true, events)
				}
			case *ast.JoinTableExpr:
				writeExprs(ast.TableExprs{te.LeftExpr, te.RightExpr}, targets, events)
			case *ast.ParenTableExpr:
				writeExprs(te.Exprs, targets, events)
			}
		}
	}
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.AliasedTableExpr:
			if tn, isName := n.Expr.(ast.TableName); isName {
				use(tn, false, 0)
			}
		case *ast.Insert:
			ev := evInsert
			if n.Action == ast.ReplaceStr {
				ev |= evDelete
			}
			if len(n.OnDup) > 0 {
				ev |= evUpdate
			}
			use(n.Table, true, ev)
		case *ast.Update:
			var targets map[string]bool
			if len(n.TableExprs) == 1 {
				if _, single := n.TableExprs[0].(*ast.AliasedTableExpr); single {
					targets = nil // one table: written
				}
			}
			writeExprs(n.TableExprs, targets, evUpdate)
		case *ast.Delete:
			var targets map[string]bool
			if len(n.Targets) > 0 {
				targets = map[string]bool{}
				for _, t := range n.Targets {
					targets[strings.ToLower(t.Name.String())] = true
				}
			}
			writeExprs(n.TableExprs, targets, evDelete)
		}
		return true, nil
	}, ddl.TriggerSpec.Body)
	return ddl.Table.Name.String(), event, uses, true
}

// fkChild is a table whose foreign key references another.
type fkChild struct {
	key     mdl.Key
	changed bool // an ON DELETE/ON UPDATE action changes its rows
}

// fkRelatives returns the parents table db.name's foreign keys reference
// and the tables whose keys reference it (itself left out).
func (fe *Frontend) fkRelatives(db, name string) (parents []mdl.Key, children []fkChild) {
	if !fe.anyFK.Load() {
		return nil, nil
	}
	self := mdlKey(db, name)
	if te := fe.lookupEntry(self.DB, self.Table); te != nil {
		for _, fk := range te.load().fks {
			pdb := fk.parentDB
			if pdb == "" {
				pdb = db
			}
			if k := mdlKey(pdb, fk.parent); k != self {
				parents = append(parents, k)
			}
		}
	}
	for _, d := range fe.provider.databases() {
		for _, te := range d.entries() {
			m := te.load()
			k := mdlKey(d.name, m.name)
			if k == self {
				continue
			}
			for _, fk := range m.fks {
				if d.references(fk, db, name) {
					changed := !fk.onDelete.IsEquivalentToRestrict() || !fk.onUpdate.IsEquivalentToRestrict()
					children = append(children, fkChild{key: k, changed: changed})
				}
			}
		}
	}
	return parents, children
}

// tableTriggers returns the triggers on table name of database key db
// whose event is in events, parsed.
func (fe *Frontend) tableTriggers(db, name string, events int) [][]trigTable {
	d := fe.provider.database(db)
	if d == nil || !fe.anyTrigger.Load() {
		return nil
	}
	d.mu.RLock()
	defs := append([]sql.TriggerDefinition(nil), d.triggers...)
	d.mu.RUnlock()
	var out [][]trigTable
	for i := range defs {
		on, ev, uses, ok := triggerBodyTables(&defs[i], d.name)
		if ok && ev&events != 0 && strings.EqualFold(on, name) {
			out = append(out, uses)
		}
	}
	return out
}

// prelock computes what LOCK TABLES locks implicitly for the tables it
// may write (written: key → the events a write may cause, evAll for a
// table locked WRITE).
func (fe *Frontend) prelock(written map[mdl.Key]int) map[mdl.Key]*preLock {
	out := map[mdl.Key]*preLock{}
	get := func(k mdl.Key) *preLock {
		if written[k] != 0 {
			return &preLock{} // locked WRITE explicitly: nothing to add
		}
		pl := out[k]
		if pl == nil {
			pl = &preLock{}
			out[k] = pl
		}
		return pl
	}
	type item struct {
		key      mdl.Key
		events   int  // triggers to follow (0: none)
		relation bool // follow its foreign keys
	}
	done := map[mdl.Key]int{}     // events followed
	related := map[mdl.Key]bool{} // foreign keys followed
	var queue []item
	for k, ev := range written {
		queue = append(queue, item{key: k, events: ev, relation: true})
	}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if ev := it.events &^ done[it.key]; ev != 0 {
			done[it.key] |= ev
			for _, uses := range fe.tableTriggers(it.key.DB, it.key.Table, ev) {
				for _, u := range uses {
					k := mdlKey(u.db, u.name)
					if fe.lookupEntry(k.DB, k.Table) == nil {
						continue // not a table (a CTE's name, a view)
					}
					pl := get(k)
					if u.write {
						pl.addMode(mdl.SharedWrite)
						pl.write = true
						queue = append(queue, item{key: k, events: u.events, relation: true})
					} else {
						pl.addMode(mdl.SharedRead)
					}
				}
			}
		}
		if !it.relation || related[it.key] {
			continue
		}
		related[it.key] = true
		parents, children := fe.fkRelatives(it.key.DB, it.key.Table)
		for _, k := range parents {
			get(k).addMode(mdl.SharedReadOnly)
		}
		for _, c := range children {
			pl := get(c.key)
			if !c.changed {
				pl.addMode(mdl.SharedReadOnly)
				continue
			}
			pl.addMode(mdl.SharedNoReadWrite)
			pl.write = true
			queue = append(queue, item{key: c.key, relation: true})
		}
	}
	return out
}
