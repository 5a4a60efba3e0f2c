package server

import "github.com/prometheus/client_golang/prometheus"

// The metrics endpoint's names for SHOW STATUS counters (docs/metrics.md).
// Each row maps one SHOW GLOBAL STATUS name to a Prometheus metric: the
// collector (metrics.go) reads the same map SHOW STATUS shows, at scrape
// time, and scales the value into the metric's base unit (seconds, bytes,
// ratios). TestMetricsCoverStatus fails for a status counter that is in
// neither this table nor statusNotExported.

const (
	counter = prometheus.CounterValue
	gauge   = prometheus.GaugeValue
)

// statusMetric maps one SHOW STATUS counter.
type statusMetric struct {
	status string
	name   string // without the lockstep_ prefix
	typ    prometheus.ValueType
	scale  float64 // value = status * scale (0: 1)
	help   string
}

const (
	perMs  = 1e-3
	perUs  = 1e-6
	perPct = 1e-2
)

var statusMetrics = []statusMetric{
	// Transactions and rows (storage).
	{"Lockstep_commits", "commits_total", counter, 0, "Transactions committed by storage."},
	{"Lockstep_rollbacks", "rollbacks_total", counter, 0, "Transactions rolled back."},
	{"Lockstep_trx_started", "trx_started_total", counter, 0, "Transactions started."},
	{"Lockstep_trx_read_write", "trx_read_write_total", counter, 0, "Transactions that were given a transaction id (wrote)."},
	{"Lockstep_trx_active", "trx_active", gauge, 0, "Transactions open now."},
	{"Lockstep_trx_long_running", "trx_long_running", gauge, 0, "Transactions open for a long time now."},
	{"Lockstep_read_views_opened", "read_views_opened_total", counter, 0, "ReadViews created (consistent snapshots)."},
	{"Lockstep_read_views_open", "read_views_open", gauge, 0, "ReadViews open now."},
	{"Innodb_rows_read", "rows_read_total", counter, 0, "Rows read."},
	{"Innodb_rows_inserted", "rows_inserted_total", counter, 0, "Rows inserted."},
	{"Innodb_rows_updated", "rows_updated_total", counter, 0, "Rows updated."},
	{"Innodb_rows_deleted", "rows_deleted_total", counter, 0, "Rows deleted."},
	// Purge.
	{"Innodb_history_list_length", "purge_history_length", gauge, 0, "Purge backlog: old row versions not yet purged (InnoDB's history list length)."},
	{"Lockstep_purge_runs", "purge_runs_total", counter, 0, "Purge runs."},
	{"Lockstep_purged_versions", "purged_versions_total", counter, 0, "Old row versions purged."},
	{"Lockstep_purged_records", "purged_records_total", counter, 0, "Delete-marked records purged."},
	{"Lockstep_row_chunks_compacted", "row_chunks_compacted_total", counter, 0, "Table arena chunks whose live rows purge moved to a new chunk."},
	// Row memory (storage/rows.go).
	{"Lockstep_gc_percent", "gc_percent", gauge, 0, "The Go collector's GC percent the table-memory pacer set (server/gcpace.go)."},
	{"Lockstep_row_arena_bytes", "row_arena_bytes", gauge, 0, "Bytes of the tables' slab chunks (rows, keys, index entries)."},
	{"Lockstep_row_arena_live_bytes", "row_arena_live_bytes", gauge, 0, "Bytes of live items in the tables' slab chunks."},
	{"Lockstep_row_slot_bytes", "row_slot_bytes", gauge, 0, "Bytes of the tables' slot chunks."},
	{"Lockstep_row_tree_bytes", "row_tree_bytes", gauge, 0, "Bytes of the tables' index tree nodes."},
	{"Lockstep_row_slots", "row_slots", gauge, 0, "Rows in the tables (live slots)."},
	{"Lockstep_row_chain_rows", "row_chain_rows", gauge, 0, "Rows with versions newer than their base (held as Go objects)."},
	{"Lockstep_purge_limit", "purge_limit_trx_id", gauge, 0, "Oldest transaction id a ReadView may still see (purge limit)."},
	// Row locks.
	{"Lockstep_lock_requests", "lock_requests_total", counter, 0, "Row lock requests."},
	{"Lockstep_lock_immediate_grants", "lock_immediate_grants_total", counter, 0, "Row lock requests granted without waiting."},
	{"Innodb_row_lock_waits", "row_lock_waits_total", counter, 0, "Row lock requests that waited."},
	{"Innodb_row_lock_current_waits", "row_lock_current_waits", gauge, 0, "Row lock requests waiting now."},
	{"Innodb_row_lock_time", "row_lock_wait_seconds_total", counter, perMs, "Time spent waiting for row locks."},
	{"Innodb_row_lock_time_max", "row_lock_wait_max_seconds", gauge, perMs, "Longest row lock wait."},
	{"Innodb_deadlocks", "deadlocks_total", counter, 0, "Deadlocks detected (a victim rolled back, 1213)."},
	{"Lockstep_lock_wait_timeouts", "lock_wait_timeouts_total", counter, 0, "Row lock waits that timed out (1205)."},
	{"Lockstep_lock_schedule_cats", "lock_schedule_cats", gauge, 0, "1 when row locks are granted by CATS, 0 for FCFS."},
	// Gap and next-key locks (storage.md).
	{"Lockstep_gap_lock_requests", "gap_lock_requests_total", counter, 0, "Gap lock requests (a next-key lock counts one)."},
	{"Lockstep_gap_locks_held", "gap_locks_held", gauge, 0, "Gap locks granted and not released."},
	{"Lockstep_insert_intention_checks", "insert_intention_checks_total", counter, 0, "Inserts that found gap locks held and checked them in the lock table."},
	{"Lockstep_insert_intention_waits", "insert_intention_waits_total", counter, 0, "Inserts that waited for another transaction's gap lock."},
	{"Lockstep_gap_lock_inherits", "gap_lock_inherits_total", counter, 0, "Gap locks passed to a new key's gap or to a removed key's successor."},
	// Metadata locks.
	{"Lockstep_mdl_acquires", "mdl_acquires_total", counter, 0, "Metadata lock acquisitions."},
	{"Lockstep_mdl_waits", "mdl_waits_total", counter, 0, "Metadata lock acquisitions that waited."},
	{"Lockstep_mdl_replans", "mdl_replans_total", counter, 0, "Statements planned again because a table or its triggers changed while they waited for metadata locks."},
	{"Lockstep_mdl_wait_time", "mdl_wait_seconds_total", counter, perMs, "Time spent waiting for metadata locks."},
	{"Lockstep_mdl_current_waits", "mdl_current_waits", gauge, 0, "Metadata lock requests waiting now."},
	{"Lockstep_mdl_wait_timeouts", "mdl_wait_timeouts_total", counter, 0, "Metadata lock waits that timed out (lock_wait_timeout, 1205)."},
	{"Lockstep_mdl_deadlocks", "mdl_deadlocks_total", counter, 0, "Metadata lock deadlocks (1213)."},
	{"Lockstep_mdl_locked_names", "mdl_locked_names", gauge, 0, "Table names with a metadata lock held now."},
	// Fast path.
	{"Lockstep_fast_path_plans", "fast_path_plans_total", counter, 0, "Statements the fast path planned."},
	{"Lockstep_fast_path_hits", "fast_path_hits_total", counter, 0, "Statements the fast path ran."},
	{"Lockstep_fast_path_text_hits", "fast_path_text_hits_total", counter, 0, "Text-protocol statements the fast path ran."},
	{"Lockstep_fast_path_fallbacks", "fast_path_fallbacks_total", counter, 0, "Statements the fast path handed to the full engine after planning."},
	{"Lockstep_fast_path_misses", "fast_path_misses_total", counter, 0, "Statements the fast path did not take."},
	{"Lockstep_fast_protocol_executes", "fast_protocol_executes_total", counter, 0, "Prepared executes answered below the protocol layer."},
	{"Lockstep_fast_protocol_passed", "fast_protocol_passed_total", counter, 0, "Prepared executes passed on to the protocol layer."},
	// Connections.
	{"Threads_connected", "connections_open", gauge, 0, "Client connections open now."},
	{"Connections", "connections_total", counter, 0, "Client connections accepted."},
	{"Aborted_connects", "connections_aborted_total", counter, 0, "Connection attempts that failed."},
	{"Connection_errors_max_connections", "connections_refused_max_total", counter, 0, "Connections refused for max_connections."},
	{"Lockstep_connect_timeouts", "connect_timeouts_total", counter, 0, "Connections closed for connect_timeout during the handshake."},
	{"Lockstep_pending_evicted", "connections_pending_evicted_total", counter, 0, "Connections closed while pending for a newer one."},
	{"Lockstep_pending", "connections_pending", gauge, 0, "Connections accepted and not yet logged in."},
	{"Lockstep_protocol_panics", "protocol_panics_total", counter, 0, "Panics caught in the protocol layer (each is a bug)."},
	{"Lockstep_prepare_parse_kills", "prepare_parse_kills_total", counter, 0, "COM_STMT_PREPAREs KILL answered while the protocol layer parsed their text."},
	// Commit pipeline (group commit).
	{"Binlog_commits", "group_commit_transactions_total", counter, 0, "Transactions the commit pipeline published."},
	{"Binlog_group_commits", "group_commit_groups_total", counter, 0, "Commit groups appended to the log (one fsync wait each)."},
	{"Lockstep_group_commit_leaders", "group_commit_leaders_total", counter, 0, "Commits that led a group."},
	{"Lockstep_group_commit_wakeups", "group_commit_wakeups_total", counter, 0, "Follower wake-ups."},
	{"Lockstep_group_commit_wakeups_done", "group_commit_wakeups_done_total", counter, 0, "Follower wake-ups that found their commit done."},
	{"Lockstep_group_commit_wake_efficiency_pct", "group_commit_wake_efficiency_ratio", gauge, perPct, "Wake-ups that found their commit done, over all wake-ups."},
	{"Lockstep_group_commit_delays", "group_commit_delays_total", counter, 0, "Leaders that waited for their group to grow (sync delay)."},
	{"Lockstep_group_commit_delays_cut", "group_commit_delays_cut_total", counter, 0, "Sync delays ended early by no_delay_count."},
	{"Lockstep_group_commit_delays_skipped", "group_commit_delays_skipped_total", counter, 0, "Sync delays skipped (queue already long enough)."},
	{"Lockstep_group_commit_delay_time_us", "group_commit_delay_seconds_total", counter, perUs, "Time leaders waited for their group to grow."},
	{"Lockstep_group_commit_turn_waits", "group_commit_turn_waits_total", counter, 0, "Groups durable before an earlier group that waited for their turn."},
	{"Lockstep_commits_per_fsync_x100", "commits_per_fsync_ratio", gauge, perPct, "Transactions committed per log fsync."},
	{"Lockstep_certify_certifications", "certify_certifications_total", counter, 0, "Transactions certified (write-set dependency tracking)."},
	{"Lockstep_certify_resets", "certify_resets_total", counter, 0, "Certifier history resets."},
	{"Lockstep_certify_serial_fallbacks", "certify_serial_fallbacks_total", counter, 0, "Transactions certified as depending on all before them."},
	{"Lockstep_certify_mean_distance_x100", "certify_mean_distance_transactions", gauge, perPct, "Mean dependency distance of certified transactions."},
	// Log.
	{"Lockstep_log_fsyncs", "log_fsyncs_total", counter, 0, "Log fsyncs."},
	{"Lockstep_log_fsyncs_overlapped", "log_fsyncs_overlapped_total", counter, 0, "Log fsyncs started while another was in flight."},
	{"Lockstep_log_fsyncs_held_back", "log_fsyncs_held_back_total", counter, 0, "Log fsyncs that ended before an earlier one and waited for it."},
	{"Lockstep_log_writes", "log_writes_total", counter, 0, "write(2) calls to log segments."},
	{"Lockstep_log_bytes", "log_written_bytes_total", counter, 0, "Log record bytes appended."},
	{"Lockstep_log_appends", "log_appends_total", counter, 0, "Log appends."},
	{"Lockstep_log_records_compressed", "log_records_compressed_total", counter, 0, "Log records stored zstd-compressed."},
	{"Lockstep_log_compressed_input_bytes", "log_compression_input_bytes_total", counter, 0, "Payload bytes of compressed log records before compression."},
	{"Lockstep_log_compressed_output_bytes", "log_compression_output_bytes_total", counter, 0, "Payload bytes of compressed log records after compression."},
	{"Lockstep_log_wait_wakeups", "log_wait_wakeups_total", counter, 0, "Durability waiters woken."},
	{"Lockstep_log_wait_wakeups_done", "log_wait_wakeups_done_total", counter, 0, "Durability waiters woken that found their LSN durable."},
	{"Lockstep_log_disk_full_resumes", "log_disk_full_resumes_total", counter, 0, "Times the log resumed after a disk-full failure."},
	{"Lockstep_log_segments", "log_segments", gauge, 0, "Log segment files kept."},
	{"Lockstep_log_first_index", "log_first_index", gauge, 0, "Index of the first log record kept."},
	{"Lockstep_log_segments_preallocated", "log_segments_preallocated_total", counter, 0, "Log segment files zero-filled ahead of time."},
	{"Lockstep_log_segments_preallocated_used", "log_segments_preallocated_used_total", counter, 0, "Preallocated log segment files used."},
	{"Lockstep_log_preallocate_failures", "log_preallocate_failures_total", counter, 0, "Log segment preallocations that failed."},
	{"Lockstep_log_state_writes", "log_state_writes_total", counter, 0, "Writes of log.state."},
	{"Lockstep_log_state_write_failures", "log_state_write_failures_total", counter, 0, "Writes of log.state that failed."},
	// Checkpoints.
	{"Lockstep_checkpoints", "checkpoints_total", counter, 0, "Checkpoints written since start."},
	{"Lockstep_checkpoint_last_seq", "checkpoint_last_seq", gauge, 0, "Sequence number the last checkpoint covers."},
	{"Lockstep_checkpoint_last_rows", "checkpoint_last_rows", gauge, 0, "Rows in the last checkpoint."},
	{"Lockstep_checkpoint_last_ms", "checkpoint_last_duration_seconds", gauge, perMs, "Time the last checkpoint took."},
	{"Lockstep_checkpoint_last_bytes", "checkpoint_last_size_bytes", gauge, 0, "Size of the last checkpoint file."},
	{"Lockstep_checkpoint_writeback_chunks", "checkpoint_writeback_chunks_total", counter, 0, "Chunks of checkpoint files sent to disk while written."},
	{"Lockstep_checkpoint_paused_ms", "checkpoint_paused_seconds_total", counter, perMs, "Time checkpoints slept for the rate limit."},
	// Applier (recovery standalone, the live applier in a group).
	{"Lockstep_applier_entries", "applier_entries_total", counter, 0, "Log entries the applier read."},
	{"Lockstep_applier_empty_entries", "applier_empty_entries_total", counter, 0, "Log entries without transactions."},
	{"Lockstep_applier_records", "applier_records_total", counter, 0, "Log records the applier read."},
	{"Lockstep_applier_skipped", "applier_skipped_total", counter, 0, "Records skipped (already applied)."},
	{"Lockstep_applier_applied", "applier_applied_total", counter, 0, "Records applied."},
	{"Lockstep_applier_transactions", "applier_transactions_total", counter, 0, "Transactions applied."},
	{"Lockstep_applier_ddl", "applier_ddl_total", counter, 0, "DDL statements applied."},
	{"Lockstep_applier_accounts", "applier_accounts_total", counter, 0, "Account changes applied."},
	{"Lockstep_applier_applied_index", "applier_applied_index", gauge, 0, "Last log index applied."},
	{"Lockstep_applier_applied_seq", "applier_applied_seq", gauge, 0, "Last sequence number applied."},
	{"Lockstep_applier_applied_gno", "applier_applied_gno", gauge, 0, "Last GTID number applied."},
	{"Lockstep_applier_queued", "applier_queue_transactions", gauge, 0, "Transactions queued for the applier's workers."},
	{"Lockstep_applier_in_flight", "applier_in_flight_transactions", gauge, 0, "Transactions being applied now."},
	{"Lockstep_applier_pending_bytes", "applier_pending_bytes", gauge, 0, "Bytes of transactions read and not yet applied."},
	{"Lockstep_applier_lag_transactions", "applier_lag_transactions", gauge, 0, "Transactions committed and not yet applied here."},
	{"Lockstep_applier_lag_seconds", "applier_lag_seconds", gauge, 0, "Apply lag: seconds since the last transaction applied here was committed (0 when caught up)."},
	{"Lockstep_applier_last_applied_commit_us", "applier_last_applied_commit_timestamp_seconds", gauge, perUs, "Commit time of the last transaction applied (Unix seconds)."},
	{"Lockstep_applier_workers", "applier_workers", gauge, 0, "Applier workers."},
	{"Lockstep_applier_busy_workers", "applier_busy_workers", gauge, 0, "Applier workers busy now."},
	{"Lockstep_applier_busy_workers_peak", "applier_busy_workers_peak", gauge, 0, "Most applier workers busy at once."},
	{"Lockstep_applier_dependency_waits", "applier_dependency_waits_total", counter, 0, "Transactions that waited for one they depend on."},
	{"Lockstep_applier_dependency_wait_us", "applier_dependency_wait_seconds_total", counter, perUs, "Time spent waiting for dependencies."},
	{"Lockstep_applier_commit_order_waits", "applier_commit_order_waits_total", counter, 0, "Transactions that waited for their commit turn."},
	{"Lockstep_applier_commit_order_wait_us", "applier_commit_order_wait_seconds_total", counter, perUs, "Time spent waiting for the commit turn."},
	{"Lockstep_applier_entry_waits", "applier_entry_waits_total", counter, 0, "Times the applier waited for an entry to read."},
	{"Lockstep_applier_serial_dependencies", "applier_serial_dependencies_total", counter, 0, "Transactions applied serially (depend on all before)."},
	{"Lockstep_applier_certified", "applier_certified_total", counter, 0, "Transactions the applier certified itself."},
	{"Lockstep_applier_streamed_entries", "applier_streamed_entries_total", counter, 0, "Log entries whose transaction was streamed from the log, a chunk at a time, rather than read whole."},
	{"Lockstep_applier_time_ms", "applier_busy_seconds_total", counter, perMs, "Time the applier has spent applying."},
	{"Lockstep_applier_rate", "applier_rate_transactions_per_second", gauge, 0, "Applier throughput."},
	{"Replica_retried_transactions", "applier_retried_transactions_total", counter, 0, "Transactions the applier retried after a transient error."},
	// Group replication.
	{"Lockstep_group_replication_member_id", "group_replication_member_id", gauge, 0, "This member's server id."},
	{"Lockstep_group_replication_primary_id", "group_replication_primary_id", gauge, 0, "The primary's server id (0: none known)."},
	{"Lockstep_group_replication_primary", "group_replication_primary", gauge, 0, "1 when this member is the primary (takes writes)."},
	{"Lockstep_group_replication_term", "group_replication_term", gauge, 0, "Raft term."},
	{"Lockstep_group_replication_applied_index", "group_replication_applied_index", gauge, 0, "Raft log index applied here."},
	{"Lockstep_group_replication_written_index", "group_replication_written_index", gauge, 0, "Raft log index written here."},
	{"Lockstep_group_replication_commit_index", "group_replication_commit_index", gauge, 0, "Raft commit index known here."},
	{"Lockstep_group_replication_apply_lag_entries", "group_replication_apply_lag_entries", gauge, 0, "Entries committed and not yet applied here."},
	{"Lockstep_group_replication_promotions", "group_replication_promotions_total", counter, 0, "Times this member became primary."},
	{"Lockstep_group_replication_demotions", "group_replication_demotions_total", counter, 0, "Times this member stopped being primary."},
	{"Lockstep_group_replication_hand_offs", "group_replication_hand_offs_total", counter, 0, "Primary roles handed off at shutdown."},
	{"Lockstep_group_replication_membership_changes", "group_replication_membership_changes_total", counter, 0, "Membership changes applied."},
	{"Lockstep_group_replication_lag_cuts", "group_replication_lag_cuts_total", counter, 0, "Log cuts after a checkpoint that did not wait for a member lagging more than group-lag-retention-size behind."},
	{"Lockstep_group_replication_reinstalls", "group_replication_reinstalls_total", counter, 0, "Checkpoints this member received over the data it held (it fell behind what the group's logs keep) and restarted from."},
	{"Lockstep_group_replication_voters", "group_replication_voters", gauge, 0, "Voting members."},
	{"Lockstep_group_replication_learners", "group_replication_learners", gauge, 0, "Learners (members catching up)."},
	{"Lockstep_group_replication_member_error", "group_replication_member_error", gauge, 0, "1 when this member stopped on an error."},
	{"Lockstep_group_replication_transactions_too_large", "group_replication_transactions_too_large_total", counter, 0, "Transactions refused at commit: larger than group_replication_transaction_size_limit (3100)."},
	{"Lockstep_group_replication_commit_groups_split", "group_replication_commit_groups_split_total", counter, 0, "Commit groups over the size limit proposed as several entries."},
	{"Lockstep_group_replication_commit_group_split_entries", "group_replication_commit_group_split_entries_total", counter, 0, "Entries the split commit groups became."},
	{"Lockstep_group_replication_read_barriers", "group_replication_read_barriers_total", counter, 0, "Read barriers passed (group_replication_consistency)."},
	{"Lockstep_group_replication_proposals", "group_replication_proposals_total", counter, 0, "Raft proposals made here."},
	{"Lockstep_group_replication_proposals_failed", "group_replication_proposals_failed_total", counter, 0, "Raft proposals dropped or lost (never committed)."},
	{"Lockstep_group_replication_elections", "group_replication_elections_total", counter, 0, "Elections this member started."},
	{"Lockstep_group_replication_leader_conn_lost", "group_replication_leader_conn_lost_total", counter, 0, "Times this member saw the primary's connection break and ran its election clock forward."},
	{"Lockstep_group_replication_append_queue", "group_replication_append_queue_entries", gauge, 0, "Raft entries waiting to be written here."},
	{"Lockstep_group_replication_apply_queue", "group_replication_apply_queue_entries", gauge, 0, "Committed raft entries waiting to be applied here."},
	{"Lockstep_group_replication_send_queued_bytes", "group_replication_send_queued_bytes", gauge, 0, "Bytes queued to send to all peers."},
	{"Lockstep_group_replication_send_dropped_messages", "group_replication_send_dropped_messages_total", counter, 0, "Messages to peers dropped with the send queue full."},
}

// peerMetrics map the per-peer counters, Lockstep_group_replication_peer_<id>_<suffix>,
// to metrics with a peer label.
var peerMetrics = []statusMetric{
	{"queued_bytes", "group_replication_peer_send_queued_bytes", gauge, 0, "Bytes queued to send to the peer."},
	{"queued_bytes_max", "group_replication_peer_send_queued_max_bytes", gauge, 0, "Most bytes queued for the peer at once."},
	{"queued_messages", "group_replication_peer_send_queued_messages", gauge, 0, "Messages queued to send to the peer."},
	{"dropped_messages", "group_replication_peer_send_dropped_messages_total", counter, 0, "Messages to the peer dropped with its queue full."},
}

// statusNotExported are SHOW STATUS counters the endpoint leaves out, with
// why: another name carries the same number, or a histogram does.
var statusNotExported = map[string]string{
	"Innodb_row_lock_time_avg":       "derived: row_lock_wait_seconds_total / row_lock_waits_total",
	"Innodb_log_write_requests":      "= Lockstep_log_appends",
	"Innodb_log_writes":              "= Lockstep_log_writes",
	"Innodb_os_log_written":          "= Lockstep_log_bytes",
	"Innodb_os_log_fsyncs":           "= Lockstep_log_fsyncs",
	"Innodb_data_fsyncs":             "= Lockstep_log_fsyncs",
	"Lockstep_group_commit_appended": "the sum of lockstep_group_commit_size_transactions",
}
