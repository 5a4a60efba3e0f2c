package sqlfront

import (
	"math"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/go-mysql-server/sql/variables"

	"lockstep/internal/txn"
)

// registerSystemVariables installs lockstep's system variables: the real
// innodb_lock_wait_timeout (go-mysql-server pins it to 1) and
// innodb_lock_schedule_algorithm (fcfs | cats), which picks lock-sys's
// grant order.
func registerSystemVariables(fe *Frontend) error {
	variables.InitSystemVariables()
	sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{
		&sql.MysqlSystemVariable{
			Name:    "innodb_lock_wait_timeout",
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Both),
			Dynamic: true,
			Type:    types.NewSystemIntType("innodb_lock_wait_timeout", 1, 1073741824, false),
			Default: int64(50),
		},
		// Read-only, per session: served by Session.GetSessionVariable.
		&sql.MysqlSystemVariable{
			Name:    "warning_count",
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Session),
			Dynamic: false,
			Type:    types.NewSystemIntType("warning_count", 0, math.MaxUint16, false),
			Default: int64(0),
		},
		fastVariable(),
		&sql.MysqlSystemVariable{
			Name:    "innodb_lock_schedule_algorithm",
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Global),
			Dynamic: true,
			Type:    types.NewSystemEnumType("innodb_lock_schedule_algorithm", "fcfs", "cats"),
			Default: "fcfs",
			NotifyChanged: func(_ *sql.Context, _ sql.SystemVariableScope, v sql.SystemVarValue) error {
				if s, ok := v.Val.(string); ok && strings.EqualFold(s, "cats") {
					fe.store.Locks.SetPolicy(txn.CATS)
				} else {
					fe.store.Locks.SetPolicy(txn.FIFO)
				}
				return nil
			},
		},
	})
	return nil
}

// statusRegistry adds lockstep's live counters to go-mysql-server's status
// variables (SHOW [GLOBAL] STATUS).
type statusRegistry struct {
	sql.StatusVariableRegistry
	fe *Frontend
}

func registerStatusVariables(fe *Frontend) {
	variables.InitStatusVariables()
	if _, ok := sql.StatusVariables.(*statusRegistry); ok {
		sql.StatusVariables.(*statusRegistry).fe = fe
		return
	}
	sql.StatusVariables = &statusRegistry{StatusVariableRegistry: sql.StatusVariables, fe: fe}
}

func (r *statusRegistry) NewGlobalMap() map[string]sql.StatusVarValue {
	m := r.StatusVariableRegistry.NewGlobalMap()
	for name, v := range r.fe.StatusValues() {
		m[name] = &sql.ImmutableStatusVarValue{
			Var: &sql.MySQLStatusVariable{Name: name, Scope: sql.StatusVariableScope_Global,
				Type: types.NewSystemIntType(name, 0, math.MaxInt64, false), Default: int64(0)},
			Val: v,
		}
	}
	return m
}

func (r *statusRegistry) GetGlobal(name string) (sql.StatusVariable, interface{}, bool) {
	if v, ok := r.fe.StatusValues()[name]; ok {
		return &sql.MySQLStatusVariable{Name: name, Scope: sql.StatusVariableScope_Global,
			Type: types.NewSystemIntType(name, 0, math.MaxInt64, false)}, v, true
	}
	return r.StatusVariableRegistry.GetGlobal(name)
}

// StatusValues returns lockstep's status counters by MySQL name.
func (fe *Frontend) StatusValues() map[string]int64 {
	st := fe.store.Stats()
	ls := fe.store.Locks.Stats()
	ss := fe.store.Sys.Stats()
	m := map[string]int64{
		"Innodb_rows_read":           int64(st.RowsRead.Load()),
		"Innodb_rows_inserted":       int64(st.RowsInserted.Load()),
		"Innodb_rows_updated":        int64(st.RowsUpdated.Load()),
		"Innodb_rows_deleted":        int64(st.RowsDeleted.Load()),
		"Lockstep_commits":           int64(st.Commits.Load()),
		"Lockstep_rollbacks":         int64(st.Rollbacks.Load()),
		"Lockstep_purge_runs":        int64(st.PurgeRuns.Load()),
		"Lockstep_purged_versions":   int64(st.PurgedVersion.Load()),
		"Lockstep_purged_records":    int64(st.PurgedRecords.Load()),
		"Innodb_history_list_length": st.HistoryLength.Load(),
	}
	m["Innodb_row_lock_waits"] = int64(ls.RowLockWaits)
	m["Innodb_row_lock_current_waits"] = ls.RowLockCurrent
	m["Innodb_row_lock_time"] = int64(ls.RowLockTimeNs / 1e6)
	m["Innodb_row_lock_time_max"] = int64(ls.RowLockTimeMaxNs / 1e6)
	if ls.RowLockWaits > 0 {
		m["Innodb_row_lock_time_avg"] = int64(ls.RowLockTimeNs / 1e6 / ls.RowLockWaits)
	} else {
		m["Innodb_row_lock_time_avg"] = 0
	}
	m["Innodb_deadlocks"] = int64(ls.Deadlocks)
	m["Lockstep_lock_requests"] = int64(ls.Requests)
	m["Lockstep_lock_immediate_grants"] = int64(ls.ImmediateGrants)
	m["Lockstep_lock_wait_timeouts"] = int64(ls.LockWaitTimeouts)
	m["Lockstep_lock_schedule_cats"] = int64(ls.Policy)
	m["Lockstep_trx_started"] = int64(ss.TrxStarted)
	m["Lockstep_trx_read_write"] = int64(ss.TrxWithID)
	m["Lockstep_trx_active"] = ss.Active
	m["Lockstep_read_views_opened"] = int64(ss.ViewsOpened)
	m["Lockstep_read_views_open"] = ss.ViewsOpen
	m["Lockstep_trx_long_running"] = ss.LongActive
	m["Lockstep_purge_limit"] = int64(ss.PurgeLimit)
	fe.fastStatus(m)
	if f := fe.extraStatus.Load(); f != nil {
		(*f)(m)
	}
	return m
}

// SetExtraStatus adds counters owned by other parts (the log, the commit
// pipeline): f is called with the map SHOW STATUS is built from.
func (fe *Frontend) SetExtraStatus(f func(m map[string]int64)) { fe.extraStatus.Store(&f) }
