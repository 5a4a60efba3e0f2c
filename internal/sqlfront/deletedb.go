package sqlfront

import (
	"context"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// DELETE FROM db.t without a WHERE, from a session whose current database
// is not db.
//
// go-mysql-server analyzes a single-table DELETE with a fixed list of
// rules lockstep cannot wrap; one of them (processTruncate) turns a DELETE
// without WHERE into a truncate after looking the table and its ON DELETE
// triggers up in the *current* database: with none it failed with 1049
// "Unknown database ''", and with another one it read that database's
// triggers. For such a statement the target's database stands in as the
// current one from parsing to the statement's end (the statement names no
// other object, so nothing else resolves differently).

// deleteDatabase makes the table's database current for a DELETE FROM
// db.t without WHERE; Session.CommandEnd puts the old one back.
func deleteDatabase(ctx context.Context, st *ast.Delete) {
	if st.Where != nil || len(st.TableExprs) != 1 || len(st.Targets) > 0 {
		return
	}
	ate, ok := st.TableExprs[0].(*ast.AliasedTableExpr)
	if !ok {
		return
	}
	tn, ok := ate.Expr.(ast.TableName)
	if !ok || tn.DbQualifier.IsEmpty() {
		return
	}
	sctx, ok := ctx.(*sql.Context)
	if !ok {
		return
	}
	s, ok := sctx.Session.(*Session)
	if !ok || s.deleteDB != nil {
		return
	}
	db, cur := tn.DbQualifier.String(), sctx.GetCurrentDatabase()
	if strings.EqualFold(db, cur) {
		return
	}
	s.deleteDB = &cur
	sctx.SetCurrentDatabase(db)
}

// endDeleteDatabase puts back the database deleteDatabase replaced.
func (s *Session) endDeleteDatabase() {
	if s.deleteDB != nil {
		s.SetCurrentDatabase(*s.deleteDB)
		s.deleteDB = nil
	}
}
