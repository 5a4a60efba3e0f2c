package sqlfront

import (
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// SHOW REPLICA STATUS (and its old name SHOW SLAVE STATUS) with MySQL
// 8.0's columns, in MySQL's order (go-mysql-server's node has 55 of the
// 60, Seconds_Behind_Source before Source_SSL_Verify_Server_Cert in the
// wrong place, no Channel_Name, and every value a string): a rule
// replaces go-mysql-server's node with showReplicaStatus before analysis,
// and the exec override (serverplan.go) answers it from the server's
// source of rows (SetReplicaStatus): one row per channel, none when the
// server replicates from nothing (MySQL's empty set). MySQL requires
// REPLICATION CLIENT or SUPER (1227 otherwise).

// ReplicaStatus is one channel's row.
type ReplicaStatus struct {
	IOState            string // Replica_IO_State
	SourceHost         string
	SourceUser         string
	SourcePort         int
	ConnectRetry       int
	SourceLogFile      string
	ReadSourceLogPos   int64
	RelayLogFile       string
	RelayLogPos        int64
	RelaySourceLogFile string
	IORunning          string // Yes, No or Connecting
	SQLRunning         bool
	LastSQLErrno       int
	LastSQLError       string
	LastSQLErrorAt     time.Time // zero: none
	ExecSourceLogPos   int64
	RelayLogSpace      int64
	// SecondsBehind is Seconds_Behind_Source; negative shows NULL.
	SecondsBehind    int64
	SourceServerID   uint64
	SourceUUID       string
	SQLRunningState  string
	SourceRetryCount int64
	RetrievedGtidSet string
	ExecutedGtidSet  string
	AutoPosition     bool
	Channel          string
}

// SetReplicaStatus installs the source of SHOW REPLICA STATUS's rows (nil:
// no rows).
func (fe *Frontend) SetReplicaStatus(rows func() []ReplicaStatus) {
	fe.replicaStatus.Store(&rows)
}

// replicaStatusColumns are MySQL 8.0's, in order: name, numeric, nullable.
var replicaStatusColumns = []struct {
	name          string
	num, nullable bool
}{
	{"Replica_IO_State", false, false}, {"Source_Host", false, false}, {"Source_User", false, false},
	{"Source_Port", true, false}, {"Connect_Retry", true, false}, {"Source_Log_File", false, false},
	{"Read_Source_Log_Pos", true, false}, {"Relay_Log_File", false, false}, {"Relay_Log_Pos", true, false},
	{"Relay_Source_Log_File", false, false}, {"Replica_IO_Running", false, false}, {"Replica_SQL_Running", false, false},
	{"Replicate_Do_DB", false, false}, {"Replicate_Ignore_DB", false, false}, {"Replicate_Do_Table", false, false},
	{"Replicate_Ignore_Table", false, false}, {"Replicate_Wild_Do_Table", false, false}, {"Replicate_Wild_Ignore_Table", false, false},
	{"Last_Errno", true, false}, {"Last_Error", false, false}, {"Skip_Counter", true, false},
	{"Exec_Source_Log_Pos", true, false}, {"Relay_Log_Space", true, false}, {"Until_Condition", false, false},
	{"Until_Log_File", false, false}, {"Until_Log_Pos", true, false}, {"Source_SSL_Allowed", false, false},
	{"Source_SSL_CA_File", false, false}, {"Source_SSL_CA_Path", false, false}, {"Source_SSL_Cert", false, false},
	{"Source_SSL_Cipher", false, false}, {"Source_SSL_Key", false, false}, {"Seconds_Behind_Source", true, true},
	{"Source_SSL_Verify_Server_Cert", false, false}, {"Last_IO_Errno", true, false}, {"Last_IO_Error", false, false},
	{"Last_SQL_Errno", true, false}, {"Last_SQL_Error", false, false}, {"Replicate_Ignore_Server_Ids", false, false},
	{"Source_Server_Id", true, false}, {"Source_UUID", false, false}, {"Source_Info_File", false, false},
	{"SQL_Delay", true, false}, {"SQL_Remaining_Delay", true, true}, {"Replica_SQL_Running_State", false, false},
	{"Source_Retry_Count", true, false}, {"Source_Bind", false, false}, {"Last_IO_Error_Timestamp", false, false},
	{"Last_SQL_Error_Timestamp", false, false}, {"Source_SSL_Crl", false, false}, {"Source_SSL_Crlpath", false, false},
	{"Retrieved_Gtid_Set", false, false}, {"Executed_Gtid_Set", false, false}, {"Auto_Position", true, false},
	{"Replicate_Rewrite_DB", false, false}, {"Channel_Name", false, false}, {"Source_TLS_Version", false, false},
	{"Source_public_key_path", false, false}, {"Get_Source_public_key", true, false}, {"Network_Namespace", false, false},
}

// oldReplicaColumn is a column's name in SHOW SLAVE STATUS (MySQL's names
// before 8.0.22).
func oldReplicaColumn(name string) string {
	if name == "Get_Source_public_key" {
		return "Get_master_public_key"
	}
	name = strings.ReplaceAll(name, "Source", "Master")
	return strings.ReplaceAll(name, "Replica", "Slave")
}

// showReplicaStatus is SHOW REPLICA STATUS (slave: SHOW SLAVE STATUS).
type showReplicaStatus struct{ slave bool }

var _ sql.Node = (*showReplicaStatus)(nil)

func (*showReplicaStatus) Resolved() bool       { return true }
func (*showReplicaStatus) Children() []sql.Node { return nil }
func (*showReplicaStatus) IsReadOnly() bool     { return true }

func (s *showReplicaStatus) String() string {
	if s.slave {
		return "SHOW SLAVE STATUS"
	}
	return "SHOW REPLICA STATUS"
}

func (s *showReplicaStatus) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(s, len(children), 0)
	}
	return s, nil
}

func (s *showReplicaStatus) Schema() sql.Schema {
	sch := make(sql.Schema, len(replicaStatusColumns))
	for i, c := range replicaStatusColumns {
		name := c.name
		if s.slave {
			name = oldReplicaColumn(name)
		}
		var typ sql.Type = types.LongText
		if c.num {
			typ = types.Int64
		}
		sch[i] = &sql.Column{Name: name, Type: typ, Nullable: c.nullable}
	}
	return sch
}

// replicaStatusAuth removes go-mysql-server's privilege check of SHOW
// REPLICA STATUS (REPLICATION CLIENT only, 1142 without it): MySQL also
// accepts SUPER, and answers 1227 (buildReplicaStatus checks).
func replicaStatusAuth(stmt ast.Statement) {
	if st, ok := stmt.(*ast.Show); ok {
		if t := strings.ToLower(st.Type); t == "replica status" || t == "slave status" {
			st.Auth = ast.AuthInformation{AuthType: ast.AuthType_IGNORE, TargetType: ast.AuthTargetType_Ignore}
		}
	}
}

// replicaStatusRuleID names replicaStatusRule among the analyzer's rules.
const replicaStatusRuleID analyzer.RuleId = 1<<20 + 16

// replicaStatusRule puts showReplicaStatus in place of go-mysql-server's
// node.
func replicaStatusRule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if r, ok := n.(*plan.ShowReplicaStatus); ok {
		return &showReplicaStatus{slave: r.String() == "SHOW SLAVE STATUS"}, transform.NewTree, nil
	}
	return n, transform.SameTree, nil
}

// buildReplicaStatus answers the statement: 1227 without REPLICATION
// CLIENT or SUPER, else the server's rows.
func (fe *Frontend) buildReplicaStatus(ctx *sql.Context) (sql.RowIter, error) {
	if !fe.hasAnyPriv(ctx, sql.PrivilegeType_ReplicationClient) && !fe.hasAnyPriv(ctx, sql.PrivilegeType_Super) {
		return nil, errNeedPrivileges("SUPER, REPLICATION CLIENT")
	}
	var rows []sql.Row
	if p := fe.replicaStatus.Load(); p != nil && *p != nil {
		for _, r := range (*p)() {
			rows = append(rows, r.row())
		}
	}
	return sql.RowsToRowIter(rows...), nil
}

func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "No"
}

// replicaErrorTime is MySQL's format of Last_SQL_Error_Timestamp.
func replicaErrorTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("060102 15:04:05")
}

func (r ReplicaStatus) row() sql.Row {
	var behind any
	if r.SecondsBehind >= 0 {
		behind = r.SecondsBehind
	}
	auto := int64(0)
	if r.AutoPosition {
		auto = 1
	}
	return sql.Row{
		r.IOState, r.SourceHost, r.SourceUser, int64(r.SourcePort), int64(r.ConnectRetry), r.SourceLogFile,
		r.ReadSourceLogPos, r.RelayLogFile, r.RelayLogPos, r.RelaySourceLogFile, r.IORunning, yesNo(r.SQLRunning),
		"", "", "", "", "", "", // the replication filters: none
		int64(r.LastSQLErrno), r.LastSQLError, int64(0), r.ExecSourceLogPos, r.RelayLogSpace, "None",
		"", int64(0), "No", "", "", "",
		"", "", behind, "No", int64(0), "",
		int64(r.LastSQLErrno), r.LastSQLError, "", int64(r.SourceServerID), r.SourceUUID, "",
		int64(0), nil, r.SQLRunningState, r.SourceRetryCount, "", "",
		replicaErrorTime(r.LastSQLErrorAt), "", "", r.RetrievedGtidSet, r.ExecutedGtidSet, auto,
		"", r.Channel, "", "", int64(0), "",
	}
}
