package server

import "lockstep/internal/apply"

// applierStatus adds the applier's metrics to SHOW STATUS: after a start,
// what crash recovery's applier did (docs/apply.md, "Status"). MySQL has
// a status variable for one of them (5.7's Slave_retried_transactions, in
// 8.0's spelling); the others are lockstep's. The lag in seconds is
// MySQL's Seconds_Behind_Source (SHOW REPLICA STATUS, which this server
// does not have), -1 when the oldest record waiting carries no commit time.
func applierStatus(m map[string]int64, a apply.Metrics) {
	m["Replica_retried_transactions"] = a.Retries
	m["Lockstep_applier_entries"] = a.Entries
	m["Lockstep_applier_empty_entries"] = a.EmptyEntries
	m["Lockstep_applier_records"] = a.Records
	m["Lockstep_applier_skipped"] = a.Skipped
	m["Lockstep_applier_applied"] = a.Applied
	m["Lockstep_applier_transactions"] = a.Transactions
	m["Lockstep_applier_ddl"] = a.DDL
	m["Lockstep_applier_accounts"] = a.Accounts
	m["Lockstep_applier_applied_index"] = int64(a.AppliedIndex)
	m["Lockstep_applier_applied_seq"] = a.AppliedSeq
	m["Lockstep_applier_applied_gno"] = a.AppliedGNO
	m["Lockstep_applier_queued"] = a.Queued
	m["Lockstep_applier_in_flight"] = a.InFlight
	m["Lockstep_applier_pending_bytes"] = a.PendingBytes
	m["Lockstep_applier_lag_transactions"] = a.Lag
	m["Lockstep_applier_lag_seconds"] = a.LagSeconds
	m["Lockstep_applier_last_applied_commit_us"] = a.LastAppliedCommitTime
	m["Lockstep_applier_workers"] = a.Workers
	m["Lockstep_applier_busy_workers"] = a.BusyWorkers
	m["Lockstep_applier_busy_workers_peak"] = a.PeakBusyWorkers
	m["Lockstep_applier_dependency_waits"] = a.DependencyWaits
	m["Lockstep_applier_dependency_wait_us"] = a.DependencyWaitTime.Microseconds()
	m["Lockstep_applier_commit_order_waits"] = a.GateWaits
	m["Lockstep_applier_commit_order_wait_us"] = a.GateWaitTime.Microseconds()
	m["Lockstep_applier_entry_waits"] = a.EntryWaits
	m["Lockstep_applier_serial_dependencies"] = a.SerialDeps
	m["Lockstep_applier_certified"] = a.Certified
	m["Lockstep_applier_streamed_entries"] = a.Streamed
	m["Lockstep_applier_time_ms"] = a.Elapsed.Milliseconds()
	m["Lockstep_applier_rate"] = int64(a.Rate())
}
