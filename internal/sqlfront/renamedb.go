package sqlfront

import (
	"context"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// RENAME TABLE with qualified names, and between databases.
//
// go-mysql-server builds a rename with the session's current database and
// drops the names' qualifiers: with no current database the statement
// failed with 1046, from another database it renamed that database's
// table of the same name, and it cannot move a table to another database.
// MySQL needs no current database when every name is qualified, and moves
// a table between databases (renametables.go).
//
// The parse of a RENAME TABLE notes its pairs on the session, each name
// with its database (the current one for an unqualified name), and the
// exec override runs them (Frontend.renameTables): checked in order as
// MySQL checks them, then all applied, or none. Its metadata locks
// (mdl.go) are taken on every old and new name. An ALTER TABLE ...
// RENAME within one database stays go-mysql-server's; one that moves the
// table is noted the same way, and with other clauses it runs after them
// (alterMove, renametables.go).
//
// go-mysql-server still wants a current database to build the node: when
// every name of the statement is in one database, that database stands in
// as the current one from parsing to the statement's end (as for DELETE,
// deletedb.go; Session.CommandEnd puts the old one back), so the DDL log
// record (logged with the current database) names it; between databases,
// one of the statement's databases stands in only when there is no usable
// current database and every name is qualified, so the logged text means
// the same under the logged database.
func renameDatabase(ctx context.Context, stmt ast.Statement) error {
	var ddls []*ast.DDL
	alter := false
	switch st := stmt.(type) {
	case *ast.DDL:
		if st.Action == ast.RenameStr {
			ddls = append(ddls, st)
		}
	case *ast.AlterTable:
		alter = true
		for _, d := range st.Statements {
			if d != nil && d.Action == ast.RenameStr {
				ddls = append(ddls, d)
			}
		}
	}
	if len(ddls) == 0 {
		return nil
	}
	sctx, s := parsingSession(ctx)
	if s == nil {
		return nil
	}
	cur := sctx.GetCurrentDatabase()
	if s.deleteDB != nil {
		cur = *s.deleteDB // parsed again within the command (a reopen)
	}
	var pairs []renamePair
	for _, d := range ddls {
		for i := range d.FromTables {
			if i >= len(d.ToTables) {
				return nil
			}
			p := renamePair{
				fromDB: qualifier(d.FromTables[i], cur), from: d.FromTables[i].Name.String(),
				toDB: qualifier(d.ToTables[i], cur), to: d.ToTables[i].Name.String(),
			}
			if p.fromDB == "" || p.toDB == "" {
				return nil // go-mysql-server's 1046, as MySQL's
			}
			pairs = append(pairs, p)
		}
	}
	db, cross := pairs[0].fromDB, false
	for _, p := range pairs {
		if !strings.EqualFold(p.fromDB, db) || !strings.EqualFold(p.toDB, db) {
			cross = true
		}
	}
	if !alter || cross { // else go-mysql-server's ALTER TABLE ... RENAME, in db (below)
		s.renames, s.renameAlter = pairs, alter
	}
	if s.deleteDB != nil {
		return nil
	}
	if cross {
		if cur != "" && sessionHasDatabase(s, cur) {
			return nil
		}
		if !allQualified(ddls) {
			return nil
		}
		db = pairs[0].fromDB
		for _, p := range pairs {
			if sessionHasDatabase(s, p.fromDB) {
				db = p.fromDB
				break
			}
		}
	}
	if strings.EqualFold(db, cur) {
		return nil
	}
	s.deleteDB = &cur
	sctx.SetCurrentDatabase(db)
	return nil
}

// renamePair is one "old TO new" of a RENAME TABLE, each name with its
// database as the statement means it.
type renamePair struct {
	fromDB, from, toDB, to string
}

// qualifier is tn's database: its qualifier, or cur.
func qualifier(tn ast.TableName, cur string) string {
	if q := tn.DbQualifier.String(); q != "" {
		return q
	}
	return cur
}

// allQualified reports whether every name of the renames is qualified.
func allQualified(ddls []*ast.DDL) bool {
	for _, d := range ddls {
		for _, names := range []ast.TableNames{d.FromTables, d.ToTables} {
			for _, tn := range names {
				if tn.DbQualifier.IsEmpty() {
					return false
				}
			}
		}
	}
	return true
}

// sessionHasDatabase reports whether database name exists.
func sessionHasDatabase(s *Session, name string) bool {
	return s.fe.provider.database(name) != nil
}
