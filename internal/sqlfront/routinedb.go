package sqlfront

import (
	"context"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Views, triggers and stored procedures run in their own database. In
// MySQL, an unqualified name in a trigger's or a routine's body names a
// table of the database the trigger or routine belongs to, whatever the
// session's current database is (calling a routine is an implicit USE of
// its database for the duration), and a view can be read from a session
// with no current database. go-mysql-server resolves those bodies against
// the session's current database instead, so:
//
//   - `SELECT * FROM d.v` with no current database failed (1046), and so
//     did any INSERT, UPDATE or DELETE on a table of d with a trigger in d;
//   - from another database o, `INSERT INTO d.t` failed on d's triggers
//     ("Table 'o.t2' doesn't exist"), and `CALL d.p()` read and wrote o's
//     tables of the same names — silently the wrong data.
//
// Lockstep gives each its database: a view's database stands in while
// the view is bound in a session without one (viewDatabase), the
// analyzer's trigger rule runs with the written table's database current
// (inTargetDatabase), and a CALL is built — its body run — with the
// routine's database current (execOverride, buildInDatabase).

// withRuleWrapped returns a with the rule named id (its String()) in
// every batch replaced by wrap(rule).
func withRuleWrapped(a *analyzer.Analyzer, id string, wrap func(analyzer.RuleFunc) analyzer.RuleFunc) bool {
	found := false
	for _, b := range a.Batches {
		for i, r := range b.Rules {
			if r.Id.String() == id {
				b.Rules[i].Apply = wrap(r.Apply)
				found = true
			}
		}
	}
	return found
}

// inTargetDatabase runs go-mysql-server's trigger rule with the database
// of the table the statement writes as the current one, so that the
// database's triggers parse and their bodies resolve there.
func inTargetDatabase(rule analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		if db := writtenDatabase(n); db != "" {
			defer useDatabase(ctx, db)()
		}
		return rule(ctx, a, n, scope, sel, qFlags)
	}
}

// writtenDatabase is the database of the table n inserts into, updates or
// deletes from (the last one, as go-mysql-server's trigger rule picks it),
// or "".
func writtenDatabase(n sql.Node) string {
	db := ""
	transform.Inspect(n, func(n sql.Node) bool {
		switch n := n.(type) {
		case *plan.InsertInto:
			if d := n.Database(); d != nil && d.Name() != "" {
				db = d.Name()
			}
		case *plan.Update:
			if n.Database() != "" {
				db = n.Database()
			}
		case *plan.DeleteFrom:
			if n.Database() != "" {
				db = n.Database()
			}
		}
		return true
	})
	return db
}

// useDatabase makes db the session's current database and returns the
// function that restores the previous one.
func useDatabase(ctx *sql.Context, db string) func() {
	old := ctx.GetCurrentDatabase()
	if strings.EqualFold(old, db) {
		return func() {}
	}
	ctx.SetCurrentDatabase(db)
	return func() { ctx.SetCurrentDatabase(old) }
}

// buildInDatabase builds a CALL — which runs the routine's body — with the
// routine's database current.
func (o execOverride) buildInDatabase(ctx *sql.Context, n *plan.Call, row sql.Row) (sql.RowIter, error) {
	db := n.Database()
	inTrigger := len(row) > 0 // a trigger's CALL: built with the row that fired it
	if (db == nil || db.Name() == "") && !inTrigger {
		return nil, nil // go-mysql-server builds it
	}
	if inTrigger {
		// go-mysql-server runs the procedure's statements while it builds
		// the call, each committing in autocommit mode as at the top
		// level: inside a trigger that ended the firing statement's
		// transaction halfway (its cursor then failed with "transaction
		// already finished", or its next row waited for its own locks). In
		// MySQL a trigger's work is part of its statement: no commit.
		if s, ok := ctx.Session.(*Session); ok {
			s.triggerCalls++
			defer func() { s.triggerCalls-- }()
		}
	}
	if db != nil && db.Name() != "" {
		defer useDatabase(ctx, db.Name())()
	}
	return newExecOverride(o.fe, n).Build(ctx, n, row)
}

// go-mysql-server binds a view by looking up its definition and parsing
// its stored CREATE VIEW statement while it binds the statement that reads
// the view, and that step needs a current database even though the view's
// is known (planbuilder's bindOnlyWithDatabase asks for the current one
// first, and fails with 1046 when the session has none). So when a
// session without a current database looks a view up, the session notes
// the view's database (noteViewLookup); when the parser is then given a
// CREATE VIEW that is not the statement the session runs — the view's
// stored statement — that database stands in as the current one until
// binding ends: the analyzer's first rule (viewDatabaseRule) or the end of
// the command puts it back (endViewDatabase).
//
// The stand-in lasts for the rest of the statement's binding: in
// `SELECT * FROM d.v, t` with no current database, t is d.t, where MySQL
// says 1046. A statement with a current database is not affected.

// noteViewLookup notes that the view definition of database db is being
// looked up by ctx's statement.
func noteViewLookup(ctx *sql.Context, db string) {
	if ctx == nil || ctx.GetCurrentDatabase() != "" {
		return
	}
	if s, ok := ctx.Session.(*Session); ok {
		s.viewLookupDB = db
	}
}

// viewDatabase runs on every statement the parser parses (see above).
func viewDatabase(ctx context.Context, query string, st ast.Statement) {
	ddl, ok := st.(*ast.DDL)
	if !ok || ddl.ViewSpec == nil || ddl.Action != ast.CreateStr {
		return
	}
	sctx, ok := ctx.(*sql.Context)
	if !ok || sctx.Query() == query {
		return
	}
	s, ok := sctx.Session.(*Session)
	if !ok {
		return
	}
	s.viewBound = true // mdlviews.go
	if sctx.GetCurrentDatabase() != "" || s.viewLookupDB == "" {
		return
	}
	sctx.SetCurrentDatabase(s.viewLookupDB)
	s.viewLookupDB = ""
	s.viewDB = true
}

const viewDatabaseRuleID analyzer.RuleId = 1<<20 + 13

// viewDatabaseRule runs first in analysis, when binding is over: a view's
// database standing in for none steps down.
func viewDatabaseRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if ctx != nil {
		if s, ok := ctx.Session.(*Session); ok {
			s.endViewDatabase()
		}
	}
	return n, transform.SameTree, nil
}

// endViewDatabase ends a view's database standing in for none.
func (s *Session) endViewDatabase() {
	s.viewLookupDB = ""
	if s.viewDB {
		s.viewDB = false
		s.SetCurrentDatabase("")
	}
}

// information_schema.TRIGGERS parses every trigger's CREATE TRIGGER text
// to describe it, and go-mysql-server parses them all under the session's
// current database: a trigger declared `ON p` in database a failed the
// whole query with "Table 'b.p' doesn't exist" from a session in b (1046
// with none) — and with it every mysqldump of any database, which asks
// that table about each table it dumps, once any database had a trigger.
// triggersInOwnDatabase makes go-mysql-server's reader run once per
// database, with that database current and the only one it sees.
func triggersInOwnDatabase(ctx *sql.Context, cat *analyzer.Catalog) error {
	t, ok, err := cat.InfoSchema.GetTableInsensitive(ctx, information_schema.TriggersTableName)
	if err != nil || !ok {
		return fmt.Errorf("information_schema has no %s table (routinedb.go): %v", information_schema.TriggersTableName, err)
	}
	ist, ok := t.(*information_schema.InformationSchemaTable)
	if !ok || ist.Reader == nil {
		return fmt.Errorf("information_schema.%s is a %T, not go-mysql-server's table (routinedb.go)", information_schema.TriggersTableName, t)
	}
	read := ist.Reader
	ist.Reader = func(ctx *sql.Context, c sql.Catalog) (sql.RowIter, error) {
		var rows []sql.Row
		for _, db := range c.AllDatabases(ctx) {
			if _, ok := db.(sql.TriggerDatabase); !ok {
				continue
			}
			restore := useDatabase(ctx, db.Name())
			iter, err := read(ctx, oneDatabase{Catalog: c, db: db})
			var part []sql.Row
			if err == nil {
				part, err = sql.RowIterToRows(ctx, iter)
			}
			restore()
			if err != nil {
				return nil, err
			}
			rows = append(rows, part...)
		}
		return sql.RowsToRowIter(rows...), nil
	}
	return nil
}

// oneDatabase is a catalog that lists one database.
type oneDatabase struct {
	sql.Catalog
	db sql.Database
}

func (c oneDatabase) AllDatabases(*sql.Context) []sql.Database { return []sql.Database{c.db} }
