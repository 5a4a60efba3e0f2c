package sqlfront

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Other sessions' threads, as MySQL shows and kills them.
//
//   - SHOW [FULL] PROCESSLIST and information_schema.PROCESSLIST list
//     every thread to an account with PROCESS, and only the threads of
//     its own user name to any other (go-mysql-server refused SHOW
//     PROCESSLIST with 1142 and showed the whole table, query texts
//     included, to anyone).
//   - KILL of one's own thread needs nothing; of another user's thread,
//     SUPER or CONNECTION_ADMIN, else 1095 "You are not owner of thread N"
//     (go-mysql-server asked SUPER for every KILL, 1142).
//
// The parser hook takes go-mysql-server's own checks off both statements
// (processAuth); the exec override applies these.

// processAuth removes go-mysql-server's privilege check of SHOW
// PROCESSLIST (PROCESS) and KILL (SUPER): MySQL lets every account see and
// kill its own threads.
func processAuth(stmt ast.Statement) {
	switch st := stmt.(type) {
	case *ast.Show:
		if strings.EqualFold(st.Type, "processlist") {
			st.Auth = ast.AuthInformation{AuthType: ast.AuthType_IGNORE, TargetType: ast.AuthTargetType_Ignore}
		}
	case *ast.Kill:
		st.Auth = ast.AuthInformation{AuthType: ast.AuthType_IGNORE, TargetType: ast.AuthTargetType_Ignore}
	}
}

// isProcessListTable reports whether n is information_schema.PROCESSLIST.
func isProcessListTable(n *plan.ResolvedTable) bool {
	return strings.EqualFold(n.Name(), "processlist") && n.SqlDatabase != nil &&
		strings.EqualFold(n.SqlDatabase.Name(), "information_schema")
}

// ownThreadsOnly wraps the rows of a process list (user name in column
// 1) so that an account without PROCESS sees its own threads only.
func (fe *Frontend) ownThreadsOnly(ctx *sql.Context, iter sql.RowIter) sql.RowIter {
	iter = fe.mdlStates(iter) // mdl.go
	if fe.hasAnyPriv(ctx, sql.PrivilegeType_Process) {
		return iter
	}
	return &userRows{RowIter: iter, user: ctx.Session.Client().User}
}

type userRows struct {
	sql.RowIter
	user string
}

func (u *userRows) Next(ctx *sql.Context) (sql.Row, error) {
	for {
		r, err := u.RowIter.Next(ctx)
		if err != nil {
			return nil, err
		}
		if len(r) > 1 {
			if name, ok := r[1].(string); ok && name == u.user {
				return r, nil
			}
		}
	}
}

// checkKill refuses a KILL of another user's thread without SUPER or
// CONNECTION_ADMIN (1095).
func (fe *Frontend) checkKill(ctx *sql.Context, n *plan.Kill) error {
	if ctx.ProcessList == nil {
		return nil
	}
	for _, p := range ctx.ProcessList.Processes() {
		if p.Connection != n.ConnID {
			continue
		}
		if p.User == ctx.Session.Client().User || fe.hasAnyPriv(ctx, sql.PrivilegeType_Super, "connection_admin") {
			return nil
		}
		return mysql.NewSQLError(mysql.ERKillDenied, mysql.SSUnknownSQLState, "You are not owner of thread %d", n.ConnID)
	}
	return nil
}
