package sqlfront

import (
	"context"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// RENAME TABLE d.a TO d.b (and ALTER TABLE d.a RENAME TO d.b).
//
// go-mysql-server builds a rename with the session's current database and
// drops the names' qualifiers: with no current database the statement
// failed with 1046, and from another database it renamed that database's
// table of the same name. MySQL needs no current database when every name
// is qualified. Here, when every name of the statement is in one database
// (qualified, or unqualified in the current one), that database stands in
// as the current one from parsing to the statement's end (as for DELETE,
// deletedb.go; Session.CommandEnd puts the old one back), so the rename,
// its metadata locks (mdl.go) and its DDL log record (the current database
// is logged with the text) all name it. A rename between databases, which
// MySQL runs as a move, is refused with 1235 rather than run in the wrong
// database.
func renameDatabase(ctx context.Context, stmt ast.Statement) error {
	var ddls []*ast.DDL
	switch st := stmt.(type) {
	case *ast.DDL:
		if st.Action == ast.RenameStr {
			ddls = append(ddls, st)
		}
	case *ast.AlterTable:
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
	if s == nil || s.deleteDB != nil {
		return nil
	}
	cur := sctx.GetCurrentDatabase()
	db := ""
	for _, d := range ddls {
		for _, names := range []ast.TableNames{d.FromTables, d.ToTables} {
			for _, tn := range names {
				q := tn.DbQualifier.String()
				if q == "" {
					q = cur
				}
				if q == "" {
					return nil // go-mysql-server's 1046, as MySQL's
				}
				if db == "" {
					db = q
				} else if !strings.EqualFold(db, q) {
					return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
						"This version of lockstep doesn't yet support 'RENAME TABLE between databases'")
				}
			}
		}
	}
	if db == "" || strings.EqualFold(db, cur) {
		return nil
	}
	s.deleteDB = &cur
	sctx.SetCurrentDatabase(db)
	return nil
}
