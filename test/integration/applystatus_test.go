package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// TestApplierStatusAfterRecovery: after a kill -9, the recovered server
// shows in SHOW STATUS what its applier did (docs/apply.md, "Status"):
// every transaction of the log applied, the applied position at the last
// GTID, nothing queued, no lag, its workers; with the serial applier, the
// parallel one, and the parallel one with replica_preserve_commit_order
// OFF (then no commit-order wait). The options show in @@variables.
func TestApplierStatusAfterRecovery(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s1 := testutil.StartServer(t)
	db := s1.DB(t, "")
	st := status(t, ctx, db, "SHOW GLOBAL STATUS LIKE 'Lockstep_applier%'")
	if st["Lockstep_applier_transactions"] != 0 || st["Lockstep_applier_workers"] != 1 {
		t.Fatalf("a new server's applier status: %v", st)
	}
	const inserts = 40
	for _, q := range []string{"CREATE DATABASE ap", "CREATE TABLE ap.t (id INT PRIMARY KEY, v INT, KEY (v))"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i := 1; i <= inserts; i++ {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("INSERT INTO ap.t VALUES (%d, %d)", i, i)); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var committing time.Time // just before the last COMMIT
	for _, q := range []string{"BEGIN", "UPDATE ap.t SET v = v + 1 WHERE id <= 10", "INSERT INTO ap.t VALUES (100, 100)", "COMMIT"} {
		if q == "COMMIT" {
			committing = time.Now()
		}
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close()
	var gtid string
	if err := db.QueryRowContext(ctx, "SELECT @@gtid_executed").Scan(&gtid); err != nil {
		t.Fatal(err)
	}
	lastGNO, err := strconv.ParseInt(gtid[strings.LastIndexAny(gtid, ":-")+1:], 10, 64)
	if err != nil {
		t.Fatalf("@@gtid_executed %q: %v", gtid, err)
	}
	wantRows := rowsString(t, ctx, db, "SELECT COUNT(*), SUM(v) FROM ap.t")
	killed := time.Now()
	s1.Kill()

	for _, c := range []struct {
		args           []string
		workers, order int64
	}{
		{nil, 1, 1},
		{[]string{"--replica-parallel-workers", "4"}, 4, 1},
		{[]string{"--replica-parallel-workers", "4", "--replica-preserve-commit-order=OFF"}, 4, 0},
	} {
		name := fmt.Sprintf("workers=%d/preserve=%d", c.workers, c.order)
		s := testutil.StartServer(t, append([]string{"--datadir", s1.Datadir}, c.args...)...)
		db := s.DB(t, "")
		st := status(t, ctx, db, "SHOW GLOBAL STATUS LIKE 'Lockstep_applier%'")
		retried := status(t, ctx, db, "SHOW GLOBAL STATUS LIKE 'Replica_retried_transactions'")
		want := map[string]int64{
			"Lockstep_applier_transactions":     inserts + 1,
			"Lockstep_applier_applied_gno":      lastGNO,
			"Lockstep_applier_skipped":          0,
			"Lockstep_applier_queued":           0,
			"Lockstep_applier_in_flight":        0,
			"Lockstep_applier_lag_transactions": 0,
			"Lockstep_applier_lag_seconds":      0,
			"Lockstep_applier_busy_workers":     0,
			"Lockstep_applier_pending_bytes":    0,
			"Lockstep_applier_workers":          c.workers,
		}
		if c.order == 0 {
			want["Lockstep_applier_commit_order_waits"] = 0
		}
		for k, v := range want {
			if got, ok := st[k]; !ok || got != v {
				t.Errorf("%s: %s = %d (shown: %v), want %d", name, k, got, ok, v)
			}
		}
		// The last record applied is the last COMMIT's, with the time the
		// source's pipeline gave it (record format 3).
		if at := st["Lockstep_applier_last_applied_commit_us"]; at < committing.UnixMicro() || at > killed.UnixMicro() {
			t.Errorf("%s: Lockstep_applier_last_applied_commit_us %d, want between %d (the last COMMIT) and %d (the kill)", name, at, committing.UnixMicro(), killed.UnixMicro())
		}
		if n, ok := retried["Replica_retried_transactions"]; !ok || n != 0 {
			t.Errorf("%s: Replica_retried_transactions %d (shown: %v)", name, n, ok)
		}
		if st["Lockstep_applier_ddl"] < 2 || st["Lockstep_applier_applied"] != st["Lockstep_applier_transactions"]+st["Lockstep_applier_ddl"]+st["Lockstep_applier_accounts"] ||
			st["Lockstep_applier_records"] != st["Lockstep_applier_applied"]+st["Lockstep_applier_skipped"] ||
			st["Lockstep_applier_entries"] < st["Lockstep_applier_records"] || st["Lockstep_applier_applied_index"] != st["Lockstep_applier_entries"] {
			t.Errorf("%s: counters do not add up: %v", name, st)
		}
		var workers, order, retries int64
		if err := db.QueryRowContext(ctx, "SELECT @@replica_parallel_workers, @@replica_preserve_commit_order, @@replica_transaction_retries").Scan(&workers, &order, &retries); err != nil {
			t.Fatal(err)
		}
		if max(workers, 1) != c.workers || order != c.order || retries != 10 {
			t.Errorf("%s: @@replica_parallel_workers %d, @@replica_preserve_commit_order %d, @@replica_transaction_retries %d", name, workers, order, retries)
		}
		if got := rowsString(t, ctx, db, "SELECT COUNT(*), SUM(v) FROM ap.t"); got != wantRows {
			t.Errorf("%s: rows %s, want %s", name, got, wantRows)
		}
		s.Kill()
	}
}
