package sqlfront

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// LOAD DATA [LOCAL] INFILE's privileges and file, as MySQL's.
//
// go-mysql-server asked for FILE for both forms and for nothing on the
// table, opened the server's file by its name with secure_file_priv
// compared as text, and answered a missing privilege with 1142. MySQL asks
// for INSERT on the table (1142 without it) and, for a file on the
// server's host, FILE as well (1045 without it). The parser hook
// (loadDataAuth) makes go-mysql-server's planner check INSERT on the table;
// buildLoadData checks FILE, opens the file under the file policy
// (fileaccess.go) and lets go-mysql-server read that open file through
// /proc/self/fd, so the name it opens cannot lead anywhere else. LOCAL
// needs @@local_infile (MySQL 8's default OFF; 3948 when off).

// loadDataAuth replaces the parser's FILE check of a LOAD DATA with MySQL's
// INSERT on the target table.
func loadDataAuth(st *ast.Load) {
	st.Auth = ast.AuthInformation{
		AuthType:    ast.AuthType_INSERT,
		TargetType:  ast.AuthTargetType_SingleTableIdentifier,
		TargetNames: []string{st.Table.DbQualifier.String(), st.Table.Name.String()},
	}
}

// buildLoadData runs a LOAD DATA node; done is false when go-mysql-server
// should build it as it is.
func (fe *Frontend) buildLoadData(ctx *sql.Context, n *plan.LoadData, row sql.Row) (sql.RowIter, error) {
	if n.Local {
		_, v, _ := sql.SystemVariables.GetGlobal("local_infile")
		if on, _ := v.(int8); on == 0 {
			return nil, mysql.NewSQLError(3948, "42000",
				"Loading local data is disabled; this must be enabled on both the client and server sides")
		}
		return newExecOverride(fe, n).Build(ctx, n, row) // go-mysql-server asks the client
	}
	if !fe.hasAnyPriv(ctx, sql.PrivilegeType_File) {
		return nil, fe.accessDeniedHere(ctx)
	}
	f, err := fe.openServerFile(n.File, false)
	if err != nil {
		return nil, err
	}
	// go-mysql-server opens the file itself, by name, while it builds the
	// iterator: give it this open file's name.
	out := *n
	out.File = fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	iter, err := newExecOverride(fe, &out).Build(ctx, &out, row)
	f.Close()
	return iter, err
}
