package sqlfront

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"
)

// Who may SET what, as MySQL 8 decides it (go-mysql-server let any
// account set any global: max_connections=1, read_only, the sync delay).
//
//   - A global value (SET GLOBAL, SET PERSIST, SET PERSIST_ONLY, @@global.)
//     needs SUPER or SYSTEM_VARIABLES_ADMIN.
//   - The session value of a few variables that reach beyond the session
//     (the binary log, GTIDs, replication's pseudo-variables) needs SUPER,
//     SYSTEM_VARIABLES_ADMIN or SESSION_VARIABLES_ADMIN.
//   - Read-only and unknown variables are left to go-mysql-server's own
//     errors (1238, 1193), which MySQL also gives before the privilege
//     check.
//
// The whole statement is checked before any assignment runs, so a refused
// SET changes nothing; the error is MySQL's 1227.

// restrictedSessionVars are the variables whose session value needs a
// privilege (MySQL 8's "System Variable Privileges").
var restrictedSessionVars = map[string]bool{
	"binlog_direct_non_transactional_updates": true,
	"binlog_format":                   true,
	"binlog_row_image":                true,
	"binlog_row_value_options":        true,
	"binlog_rows_query_log_events":    true,
	"bulk_insert_buffer_size":         true,
	"default_table_encryption":        true,
	"explicit_defaults_for_timestamp": true,
	"gtid_next":                       true,
	"immediate_server_version":        true,
	"original_commit_timestamp":       true,
	"original_server_version":         true,
	"pseudo_replica_mode":             true,
	"pseudo_slave_mode":               true,
	"pseudo_thread_id":                true,
	"rbr_exec_mode":                   true,
	"sql_log_bin":                     true,
	"sql_log_off":                     true,
	"sql_require_primary_key":         true,
}

// setScopeGlobal reports whether a SET target names the global value.
func setScopeGlobal(v *expression.SystemVar) bool {
	switch s := v.Scope.(type) {
	case *sql.MysqlScope:
		switch s.Type {
		case sql.SystemVariableScope_Global, sql.SystemVariableScope_Persist,
			sql.SystemVariableScope_PersistOnly, sql.SystemVariableScope_ResetPersist:
			return true
		}
	case ownScope:
		return s.global
	}
	return false
}

// checkSetPrivileges refuses a SET the session's account may not run.
func (fe *Frontend) checkSetPrivileges(ctx *sql.Context, n *plan.Set) error {
	for _, e := range n.Exprs {
		sf, ok := e.(*expression.SetField)
		if !ok {
			continue
		}
		v, ok := sf.LeftChild.(*expression.SystemVar)
		if !ok {
			continue
		}
		name := strings.ToLower(v.Name)
		def, _, ok := sql.SystemVariables.GetGlobal(name)
		if !ok || def.IsReadOnly() {
			continue // go-mysql-server's error
		}
		if setScopeGlobal(v) {
			if !fe.hasAnyPriv(ctx, sql.PrivilegeType_Super, "system_variables_admin") {
				return errNeedPrivileges("SUPER or SYSTEM_VARIABLES_ADMIN")
			}
			continue
		}
		if restrictedSessionVars[name] && !fe.hasAnyPriv(ctx, sql.PrivilegeType_Super, "system_variables_admin", "session_variables_admin") {
			return errNeedPrivileges("SUPER, SYSTEM_VARIABLES_ADMIN or SESSION_VARIABLES_ADMIN")
		}
	}
	return nil
}

// hasAnyPriv reports whether ctx's account holds the static privilege
// static (on *.*) or any of the dynamic ones.
func (fe *Frontend) hasAnyPriv(ctx *sql.Context, static sql.PrivilegeType, dynamic ...string) bool {
	mdb := fe.Engine.Analyzer.Catalog.MySQLDb
	if !mdb.Enabled() {
		return true
	}
	if mdb.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(sql.PrivilegeCheckSubject{}, static)) {
		return true
	}
	for _, d := range dynamic {
		if mdb.UserHasPrivileges(ctx, sql.NewDynamicPrivilegedOperation(d)) {
			return true
		}
	}
	return false
}

// errNeedPrivileges is MySQL's 1227 naming the privileges that would do.
func errNeedPrivileges(privs string) error {
	return mysql.NewSQLError(mysql.ERSpecifiedAccessDenied, "42000",
		"Access denied; you need (at least one of) the %s privilege(s) for this operation", privs)
}
