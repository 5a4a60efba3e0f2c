package sqlfront

import (
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// read_only and super_read_only, per server, as MySQL's.
//
// With read_only ON, accounts without CONNECTION_ADMIN or SUPER may not
// change data, the catalog or the accounts; with super_read_only ON nobody
// may (a secondary's applier, when it exists, will write underneath
// both). Temporary tables stay writable. Setting super_read_only ON sets
// read_only ON; setting read_only OFF sets super_read_only OFF. A refused
// statement is MySQL's 1290, naming the option.
//
// Where it is enforced: the table editor before a row write (every
// go-mysql-server write, LOAD DATA included), the fast path (which steps
// aside to that editor while either is ON), DDL before it is logged
// (ddllog.go), and account statements before they run (execOverride).

// read-only modes (Frontend.readOnly).
const (
	readWrite     int32 = 0
	readOnlyMode  int32 = 1 // read_only
	superReadOnly int32 = 2 // super_read_only
)

// readOnlyState is the server's mode, kept from the two variables, and
// whether the server is a secondary of a replication group (which refuses
// every write as super_read_only does, naming the primary).
type readOnlyState struct {
	mode      atomic.Int32
	secondary atomic.Bool
	primary   atomic.Pointer[string]
}

// SetGroupSecondary says whether this server is a secondary of its group
// (it then refuses writes from every account with 1290, as MySQL Group
// Replication's secondaries do with super_read_only); why is the clause
// the message ends with ("the primary is member 2 at …"; "" when no
// primary is known).
func (fe *Frontend) SetGroupSecondary(on bool, why string) {
	fe.readOnly.primary.Store(&why)
	fe.readOnly.secondary.Store(on)
}

// GroupSecondary reports whether the server is a secondary of its group.
func (fe *Frontend) GroupSecondary() bool { return fe.readOnly.secondary.Load() }

func readOnlyVariables() []*serverVar {
	return []*serverVar{
		perServer(&sql.MysqlSystemVariable{
			Name:    "read_only",
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Global),
			Dynamic: true,
			Type:    types.NewSystemBoolType("read_only"),
			Default: int8(0),
		}),
		perServer(&sql.MysqlSystemVariable{
			Name:    "super_read_only",
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Global),
			Dynamic: true,
			Type:    types.NewSystemBoolType("super_read_only"),
			Default: int8(0),
		}),
	}
}

// watchReadOnly keeps the mode in step with SET GLOBAL of either variable.
func (fe *Frontend) watchReadOnly() error {
	if err := fe.WatchGlobal("read_only", func(v any) {
		if !truthy(v) {
			fe.vars.setGlobal("super_read_only", int8(0))
		}
		fe.updateReadOnly()
	}); err != nil {
		return err
	}
	return fe.WatchGlobal("super_read_only", func(v any) {
		if truthy(v) {
			fe.vars.setGlobal("read_only", int8(1))
		}
		fe.updateReadOnly()
	})
}

func truthy(v any) bool {
	on, err := sql.ConvertToBool(nil, v)
	return err == nil && on
}

func (fe *Frontend) updateReadOnly() {
	mode := readWrite
	if v, _ := fe.GlobalVariable("super_read_only"); truthy(v) {
		mode = superReadOnly
	} else if v, _ := fe.GlobalVariable("read_only"); truthy(v) {
		mode = readOnlyMode
	}
	fe.readOnly.mode.Store(mode)
}

// readOnlyActive reports whether either variable is ON (one atomic load:
// the write paths ask it first).
func (fe *Frontend) readOnlyActive() bool {
	return fe.readOnly.mode.Load() != readWrite || fe.readOnly.secondary.Load()
}

// readOnlyError is nil when ctx's session may write under the server's
// mode, else MySQL's 1290.
func (fe *Frontend) readOnlyError(ctx *sql.Context) error {
	if ctx != nil {
		if s, ok := ctx.Session.(*Session); ok && s.replaying {
			return nil // the log's own statements (ReplayDDL)
		}
	}
	if fe.readOnly.secondary.Load() {
		where := "no primary is known at the moment"
		if p := fe.readOnly.primary.Load(); p != nil && *p != "" {
			where = *p
		}
		return mysql.NewSQLError(mysql.EROptionPreventsStatement, mysql.SSUnknownSQLState,
			"The MySQL server is running with the --super-read-only option so it cannot execute this statement (this server is a secondary of its replication group; %s)", where)
	}
	switch fe.readOnly.mode.Load() {
	case superReadOnly:
		return mysql.NewSQLError(mysql.EROptionPreventsStatement, mysql.SSUnknownSQLState,
			"The MySQL server is running with the --super-read-only option so it cannot execute this statement")
	case readOnlyMode:
		if ctx != nil && fe.hasAnyPriv(ctx, sql.PrivilegeType_Super, "connection_admin") {
			return nil
		}
		return mysql.NewSQLError(mysql.EROptionPreventsStatement, mysql.SSUnknownSQLState,
			"The MySQL server is running with the --read-only option so it cannot execute this statement")
	}
	return nil
}

// isAccountStatement reports whether n changes accounts or privileges.
func isAccountStatement(n sql.Node) bool {
	switch n.(type) {
	case *plan.CreateUser, *plan.DropUser, *plan.RenameUser, *plan.AlterUser,
		*plan.Grant, *plan.Revoke, *plan.GrantRole, *plan.RevokeRole,
		*plan.CreateRole, *plan.DropRole, *plan.RevokeAll:
		return true
	}
	return false
}
