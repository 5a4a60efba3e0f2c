package server

import (
	"context"
	"strings"
	"testing"
	"time"
)

// statCounters are SHOW GLOBAL STATUS counters the nocounters build tag
// stops (internal/stat): each moves under counterWorkload in the default
// build (TestCountersMove), and stays 0 under the tag (TestNoCounters).
var statCounters = []string{
	// storage
	"Innodb_rows_read", "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted",
	"Lockstep_commits", "Lockstep_rollbacks", "Lockstep_purge_runs", "Lockstep_purged_versions",
	// lock-sys and trx-sys
	"Lockstep_lock_requests", "Lockstep_lock_immediate_grants", "Innodb_row_lock_waits",
	"Innodb_row_lock_time", "Lockstep_lock_wait_timeouts",
	"Lockstep_trx_started", "Lockstep_read_views_opened",
	// metadata locks, the fast path, connections
	"Lockstep_mdl_acquires", "Lockstep_fast_path_hits", "Lockstep_fast_path_text_hits",
	"Lockstep_fast_protocol_executes", "Connections",
	// the commit pipeline (the latency histogram's count among them)
	"Binlog_commits", "Binlog_group_commits", "Lockstep_group_commit_leaders",
	"Lockstep_group_commit_appended", "Lockstep_group_commit_size_1",
	"Lockstep_commit_latency_us_count", "Lockstep_commit_latency_us_sum",
	// the log
	"Lockstep_log_fsyncs", "Lockstep_log_writes", "Lockstep_log_appends",
	"Lockstep_log_state_writes", "Lockstep_log_records_compressed",
}

// keptCounters are not statistics (the code reads them), or are the log's
// position rather than a counter: they move under the tag too.
var keptCounters = []string{
	"Lockstep_trx_read_write", // Active = read-write begun - finished, which a demotion waits on
	"Lockstep_log_bytes",      // the log's reserved position
	"Threads_connected",       // the session table's size
}

// counterWorkload runs what moves every counter in statCounters: text and
// prepared statements on the fast path, inserts (one compressible), updates,
// deletes, a rollback, a row lock wait that is granted and one that times
// out, and enough time for purge to run.
func counterWorkload(t *testing.T, s *procServer) {
	t.Helper()
	ctx := context.Background()
	s.exec(t, "CREATE DATABASE c")
	s.exec(t, "CREATE TABLE c.t (id INT PRIMARY KEY, v VARCHAR(5000))")
	for i := 1; i <= 20; i++ {
		v := "x"
		if i == 1 {
			v = strings.Repeat("abcd", 1200) // compressible
		}
		s.exec(t, "INSERT INTO c.t VALUES (?, ?)", i, v) // prepared: the fast protocol
	}
	for i := 1; i <= 20; i++ {
		s.str(t, "SELECT v FROM c.t WHERE id = 5")                                // text
		if _, err := s.db.Exec("SELECT v FROM c.t WHERE id = ?", i); err != nil { // prepared
			t.Fatal(err)
		}
	}
	s.exec(t, "UPDATE c.t SET v = 'y' WHERE id = ?", 2)
	s.exec(t, "DELETE FROM c.t WHERE id = ?", 3)

	a, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, q := range []string{"BEGIN", "UPDATE c.t SET v = 'r' WHERE id = 4", "ROLLBACK",
		"BEGIN", "UPDATE c.t SET v = 'a' WHERE id = 5"} {
		if _, err := a.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// b waits for a's lock: a commits after 100 ms.
	done := make(chan error, 1)
	go func() {
		_, err := b.ExecContext(ctx, "UPDATE c.t SET v = 'b' WHERE id = 5")
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if _, err := a.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the waiting update: %v", err)
	}
	// A wait that times out (1205 after a second).
	for _, q := range []string{"BEGIN", "UPDATE c.t SET v = 'a' WHERE id = 6"} {
		if _, err := a.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := b.ExecContext(ctx, "SET innodb_lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ExecContext(ctx, "UPDATE c.t SET v = 'b' WHERE id = 6"); err == nil {
		t.Fatal("the update of a locked row did not time out")
	}
	if _, err := a.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // purge runs every 50 ms
}
