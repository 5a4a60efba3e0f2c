package sqlfront

import (
	"math"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"lockstep/internal/config"
	"lockstep/internal/txn"
)

// Definitions are registered in go-mysql-server's process-wide registry
// once per process; ownedVars, built with them and never changed after, are
// those whose global values each server keeps (servervars.go).
// ServerVersion is the MySQL version lockstep presents: in the handshake
// and as @@version / VERSION().
const ServerVersion = "8.0.33-lockstep"

var (
	registerOnce sync.Once
	ownedVars    map[string]*serverVar
)

// registerSystemVariables installs lockstep's system variables: the real
// innodb_lock_wait_timeout (go-mysql-server pins it to 1),
// innodb_lock_schedule_algorithm (fcfs | cats), which picks lock-sys's
// grant order, autocommit's per-server global value, and the read-only
// variables the server answers from its own state.
func registerSystemVariables() {
	registerOnce.Do(func() {
		vars := lockstepVariables()
		owned := make(map[string]*serverVar)
		for _, v := range vars {
			if sv, ok := v.(*serverVar); ok {
				owned[sv.key] = sv
			}
		}
		ownedVars = owned
		sql.SystemVariables.AddSystemVariables(vars)
	})
}

func lockstepVariables() []sql.SystemVariable {
	vars := []sql.SystemVariable{
		perServer(&sql.MysqlSystemVariable{
			Name:    "innodb_lock_wait_timeout",
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Both),
			Dynamic: true,
			Type:    types.NewSystemIntType("innodb_lock_wait_timeout", 1, 1073741824, false),
			Default: int64(50),
		}),
		// Read-only, per session: served by Session.GetSessionVariable.
		&sql.MysqlSystemVariable{
			Name:    "warning_count",
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Session),
			Dynamic: false,
			Type:    types.NewSystemIntType("warning_count", 0, math.MaxUint16, false),
			Default: int64(0),
		},
		&sql.MysqlSystemVariable{
			Name:    "error_count",
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Session),
			Dynamic: false,
			Type:    types.NewSystemIntType("error_count", 0, math.MaxUint16, false),
			Default: int64(0),
		},
		fastVariable(),
		fastProtoVariable(),
		consistencyVariable(), // consistency.go
		perServer(&sql.MysqlSystemVariable{
			Name:          "innodb_lock_schedule_algorithm",
			Scope:         sql.GetMysqlScope(sql.SystemVariableScope_Global),
			Dynamic:       true,
			Type:          types.NewSystemEnumType("innodb_lock_schedule_algorithm", "fcfs", "cats"),
			Default:       "fcfs",
			NotifyChanged: setLockSchedule,
		}),
		// MySQL's range, out-of-range values truncated (truncvar.go).
		&sql.MysqlSystemVariable{
			Name:              "max_execution_time",
			Scope:             sql.GetMysqlScope(sql.SystemVariableScope_Both),
			Dynamic:           true,
			SetVarHintApplies: true,
			Type:              newTruncatedInt("max_execution_time", 0, math.MaxUint32),
			Default:           int64(0),
		},
		// go-mysql-server's definition, with a per-server global value.
		perServer(&sql.MysqlSystemVariable{
			Name:    "autocommit",
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Both),
			Dynamic: true,
			Type:    types.NewSystemBoolType("autocommit"),
			Default: int8(1),
		}),
		// MySQL 8's defaults, per server (collation.go).
		collationVariable("collation_server"),
		collationVariable("collation_connection"),
		// Enforced under the protocol layer (internal/server/maxpacket.go),
		// per connection from the global value when it was accepted;
		// MySQL 8's default (go-mysql-server's is 1 GiB, enforced nowhere).
		perServer(&sql.MysqlSystemVariable{
			Name:    "max_allowed_packet",
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Both),
			Dynamic: true,
			Type:    types.NewSystemUintType("max_allowed_packet", 1024, 1073741824),
			Default: int64(64 << 20),
		}),
		// Enforced by the server's listener (internal/server/connlimit.go).
		perServer(&sql.MysqlSystemVariable{
			Name:    "max_connections",
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Global),
			Dynamic: true,
			Type:    types.NewSystemIntType("max_connections", 1, 100000, false),
			Default: int64(151),
		}),
		// Applied by the server to its commit pipeline (WatchGlobal).
		perServer(&sql.MysqlSystemVariable{
			Name:    "binlog_group_commit_sync_delay",
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Global),
			Dynamic: true,
			Type:    types.NewSystemIntType("binlog_group_commit_sync_delay", 0, 1000000, false),
			Default: int64(0),
		}),
		perServer(&sql.MysqlSystemVariable{
			Name:    "binlog_group_commit_sync_no_delay_count",
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Global),
			Dynamic: true,
			Type:    types.NewSystemIntType("binlog_group_commit_sync_no_delay_count", 0, 100000, false),
			Default: int64(0),
		}),
		// A group member refuses a larger transaction at commit (3100) and
		// caps a commit group's entry at it (internal/server/txnlimit.go);
		// 0: no limit but what one entry carries. Standalone: unused.
		perServer(&sql.MysqlSystemVariable{
			Name:    "group_replication_transaction_size_limit",
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Global),
			Dynamic: true,
			Type:    types.NewSystemIntType("group_replication_transaction_size_limit", 0, 2147483647, false),
			Default: int64(150000000),
		}),
		fromServer(&sql.MysqlSystemVariable{Name: "server_uuid",
			Type: types.NewSystemStringType("server_uuid"), Default: ""}),
		fromServer(&sql.MysqlSystemVariable{Name: "gtid_executed",
			Type: types.NewSystemStringType("gtid_executed"), Default: ""}),
		fromServer(&sql.MysqlSystemVariable{Name: "sync_binlog",
			Type: types.NewSystemIntType("sync_binlog", 0, math.MaxUint32, false), Default: int64(1)}),
		fromServer(&sql.MysqlSystemVariable{Name: "binlog_row_image",
			Type: types.NewSystemEnumType("binlog_row_image", "MINIMAL", "FULL", "NOBLOB"), Default: "FULL"}),
		fromServer(&sql.MysqlSystemVariable{Name: "port",
			Type: types.NewSystemIntType("port", 0, 65535, false), Default: int64(3306)}),
		fromServer(&sql.MysqlSystemVariable{Name: "datadir",
			Type: types.NewSystemStringType("datadir"), Default: ""}),
		// The applier's options (docs/apply.md), as the server was started.
		fromServer(&sql.MysqlSystemVariable{Name: "replica_parallel_workers",
			Type: types.NewSystemIntType("replica_parallel_workers", 0, 1024, false), Default: int64(0)}),
		fromServer(&sql.MysqlSystemVariable{Name: "replica_preserve_commit_order",
			Type: types.NewSystemBoolType("replica_preserve_commit_order"), Default: int8(1)}),
		fromServer(&sql.MysqlSystemVariable{Name: "replica_transaction_retries",
			Type:    types.NewSystemIntType("replica_transaction_retries", 0, config.MaxReplicaTransactionRetries, false),
			Default: int64(config.DefaultReplicaTransactionRetries)}),
		// The server's file policy (fileaccess.go); NULL when disabled. The
		// registry's default stays "", which go-mysql-server's own file
		// code (no longer reached) read as "anywhere".
		fromServer(&sql.MysqlSystemVariable{Name: "secure_file_priv",
			Type: types.NewSystemStringType("secure_file_priv"), Default: ""}),
		fromServer(&sql.MysqlSystemVariable{Name: "lockstep_group_commit_wakeup",
			Type: types.NewSystemEnumType("lockstep_group_commit_wakeup", "targeted", "broadcast"), Default: "targeted"}),
		// The server's version, as its handshake gives it (go-mysql-
		// server's defaults say 8.0.31 and "Dolt").
		fromServer(&sql.MysqlSystemVariable{Name: "version",
			Type: types.NewSystemStringType("version"), Default: ServerVersion}),
		fromServer(&sql.MysqlSystemVariable{Name: "version_comment",
			Type: types.NewSystemStringType("version_comment"), Default: "lockstep"}),
		// The machine, as MySQL reports it (pt-mysql-summary and admin
		// tools show them; go-mysql-server's are empty).
		fromServer(&sql.MysqlSystemVariable{Name: "hostname",
			Type: types.NewSystemStringType("hostname"), Default: hostName()}),
		fromServer(&sql.MysqlSystemVariable{Name: "version_compile_os",
			Type: types.NewSystemStringType("version_compile_os"), Default: compileOS()}),
		fromServer(&sql.MysqlSystemVariable{Name: "version_compile_machine",
			Type: types.NewSystemStringType("version_compile_machine"), Default: compileMachine()}),
		// InnoDB settings tools read, with the value that describes
		// lockstep (read-only: lockstep has no other mode). Index
		// statistics (ANALYZE TABLE) are kept in memory, not persisted;
		// tables do not have a file each (pt-online-schema-change dies on
		// a missing innodb_stats_persistent; mysqltuner reads both).
		fromServer(&sql.MysqlSystemVariable{Name: "innodb_stats_persistent",
			Type: types.NewSystemBoolType("innodb_stats_persistent"), Default: int8(0)}),
		fromServer(&sql.MysqlSystemVariable{Name: "innodb_file_per_table",
			Type: types.NewSystemBoolType("innodb_file_per_table"), Default: int8(0)}),
		fromServer(&sql.MysqlSystemVariable{Name: "lockstep_log_retention_size",
			Type: types.NewSystemIntType("lockstep_log_retention_size", 0, math.MaxInt64, false), Default: int64(0)}),
		fromServer(&sql.MysqlSystemVariable{Name: "lockstep_log_syncs_in_flight",
			Type: types.NewSystemIntType("lockstep_log_syncs_in_flight", 1, config.MaxLogSyncsInFlight, false), Default: int64(1)}),
	}
	for _, v := range readOnlyVariables() { // readonly.go
		vars = append(vars, v)
	}
	return vars
}

// setLockSchedule applies SET GLOBAL innodb_lock_schedule_algorithm to the
// lock-sys of the server the statement runs on.
func setLockSchedule(ctx *sql.Context, scope sql.SystemVariableScope, v sql.SystemVarValue) error {
	fe := frontendOf(ctx)
	if fe == nil || !scope.IsGlobalOnly() {
		return nil
	}
	if s, ok := v.Val.(string); ok && strings.EqualFold(s, "cats") {
		fe.store.Locks.SetPolicy(txn.CATS)
	} else {
		fe.store.Locks.SetPolicy(txn.FIFO)
	}
	return nil
}

// StatusValues returns lockstep's status counters by MySQL name.
func (fe *Frontend) StatusValues() map[string]int64 {
	st := fe.store.Stats()
	ls := fe.store.Locks.Stats()
	ss := fe.store.Sys.Stats()
	m := map[string]int64{
		"Innodb_rows_read":              int64(st.RowsRead.Load()),
		"Innodb_rows_inserted":          int64(st.RowsInserted.Load()),
		"Innodb_rows_updated":           int64(st.RowsUpdated.Load()),
		"Innodb_rows_deleted":           int64(st.RowsDeleted.Load()),
		"Lockstep_commits":              int64(st.Commits.Load()),
		"Lockstep_rollbacks":            int64(st.Rollbacks.Load()),
		"Lockstep_purge_runs":           int64(st.PurgeRuns.Load()),
		"Lockstep_purged_versions":      int64(st.PurgedVersion.Load()),
		"Lockstep_purged_records":       int64(st.PurgedRecords.Load()),
		"Lockstep_row_chunks_compacted": int64(st.SlabChunksCompacted.Load()),
		"Innodb_history_list_length":    st.HistoryLength.Load(),
	}
	if f := fe.gcPercent.Load(); f != nil {
		m["Lockstep_gc_percent"] = (*f)()
	}
	rm := fe.store.RowMemory()
	m["Lockstep_row_arena_bytes"] = rm.ArenaBytes
	m["Lockstep_row_arena_live_bytes"] = rm.LiveBytes
	m["Lockstep_row_slot_bytes"] = rm.SlotBytes
	m["Lockstep_row_tree_bytes"] = rm.TreeBytes
	m["Lockstep_row_slots"] = rm.Rows
	m["Lockstep_row_chain_rows"] = rm.ChainRows
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
	ms := fe.MetadataLockStats() // mdl.go
	m["Lockstep_mdl_acquires"] = ms.Acquires
	m["Lockstep_mdl_waits"] = ms.Waits
	m["Lockstep_mdl_wait_time"] = ms.WaitNanos / 1e6
	m["Lockstep_mdl_current_waits"] = ms.Waiting
	m["Lockstep_mdl_wait_timeouts"] = ms.Timeouts
	m["Lockstep_mdl_deadlocks"] = ms.Deadlocks
	m["Lockstep_mdl_locked_names"] = ms.Names
	m["Lockstep_gap_lock_requests"] = int64(ls.GapLockRequests)
	m["Lockstep_gap_locks_held"] = ls.GapLocksHeld
	m["Lockstep_insert_intention_checks"] = int64(ls.InsertIntentions)
	m["Lockstep_insert_intention_waits"] = int64(ls.InsertWaits)
	m["Lockstep_gap_lock_inherits"] = int64(ls.GapInherits)
	m["Lockstep_mdl_replans"] = fe.mdlReplans.Load()
	m["Lockstep_trx_started"] = int64(ss.TrxStarted)
	m["Lockstep_trx_read_write"] = int64(ss.TrxWithID)
	m["Lockstep_trx_active"] = ss.Active
	m["Lockstep_read_views_opened"] = int64(ss.ViewsOpened)
	m["Lockstep_read_views_open"] = ss.ViewsOpen
	m["Lockstep_trx_long_running"] = ss.LongActive
	m["Lockstep_purge_limit"] = int64(ss.PurgeLimit)
	m["Threads_connected"], m["Connections"] = fe.connStats()
	fe.fastStatus(m)
	if fs := fe.extraStatus.Load(); fs != nil {
		for _, f := range *fs {
			f(m)
		}
	}
	return m
}

// AddExtraStatus adds counters owned by other parts (the log, the commit
// pipeline, the listener): f is called with the map SHOW STATUS is built
// from, after those added before it.
func (fe *Frontend) AddExtraStatus(f func(m map[string]int64)) {
	for {
		old := fe.extraStatus.Load()
		var fs []func(map[string]int64)
		if old != nil {
			fs = append(fs, *old...)
		}
		fs = append(fs, f)
		if fe.extraStatus.CompareAndSwap(old, &fs) {
			return
		}
	}
}

// hostName is @@hostname: the machine's name ("" if it has none).
func hostName() string {
	h, _ := os.Hostname()
	return h
}

// compileOS is @@version_compile_os in MySQL's spelling (Linux, not linux).
func compileOS() string {
	switch runtime.GOOS {
	case "linux":
		return "Linux"
	case "darwin":
		return "macos"
	case "windows":
		return "Win64"
	}
	return runtime.GOOS
}

// compileMachine is @@version_compile_machine in MySQL's spelling.
func compileMachine() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}

// SetGCPercentSource installs where SHOW STATUS reads the GC percent the
// server's pacer set (Lockstep_gc_percent; absent without a pacer).
func (fe *Frontend) SetGCPercentSource(f func() int64) { fe.gcPercent.Store(&f) }
