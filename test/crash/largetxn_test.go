package crash

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// TestKillRecoverLargeTxn: a server SIGKILLed right after it committed one
// transaction of 200,000 rows recovers exactly its rows — serially, then
// (killed again) with 4 workers — and streamed its log entry rather than
// read it whole (docs/apply.md "Large entries: streamed from the log"):
// SHOW STATUS's Lockstep_applier_streamed_entries is 1 after each start.
func TestKillRecoverLargeTxn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const side, rows = 1000, 200_000
	// No checkpoint: recovery replays the transaction.
	s := testutil.StartServer(t, "--checkpoint-log-size", "0")
	dir := s.Datadir
	db := openDB(t, s, "")
	var seq strings.Builder
	for i := 0; i < side; i++ {
		if i > 0 {
			seq.WriteByte(',')
		}
		fmt.Fprintf(&seq, "(%d)", i)
	}
	mustExec(t, ctx, db, "CREATE DATABASE lt", "CREATE TABLE lt.seq (n INT PRIMARY KEY)", "INSERT INTO lt.seq VALUES "+seq.String(),
		"CREATE TABLE lt.big (id BIGINT PRIMARY KEY, k INT, c CHAR(40), KEY (k))",
		fmt.Sprintf("INSERT INTO lt.big SELECT a.n * %d + b.n + 1, (a.n * 7919 + b.n) %% 1000, CONCAT('large-', a.n, '-', LPAD(b.n, 12, '0')) "+
			"FROM lt.seq a CROSS JOIN lt.seq b WHERE a.n * %d + b.n < %d", side, side, rows))
	const q = "SELECT COUNT(*), SUM(id), SUM(k), SUM(LENGTH(c)) FROM lt.big"
	// 200 values of a.n: 10 of one digit, 90 of two, 100 of three.
	want := fmt.Sprintf("%d %d %d %d", rows, int64(rows)*(rows+1)/2, 200*(999*1000/2), 200*19*1000+1000*(10+180+300))
	look := func(s *testutil.Server) (string, int64) {
		t.Helper()
		db := openDB(t, s, "")
		defer db.Close()
		var n, sumID, sumK, sumC int64
		if err := db.QueryRowContext(ctx, q).Scan(&n, &sumID, &sumK, &sumC); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return fmt.Sprintf("%d %d %d %d", n, sumID, sumK, sumC), statusValue(s.DSN(""), "Lockstep_applier_streamed_entries")
	}
	if got, _ := look(s); got != want {
		t.Fatalf("the source has %s, want %s", got, want)
	}
	db.Close()
	s.Kill()

	for _, workers := range []string{"1", "4"} {
		r := testutil.StartServer(t, "--datadir", dir, "--checkpoint-log-size", "0", "--replica-parallel-workers", workers)
		got, streamed := look(r)
		if got != want {
			t.Errorf("workers %s: recovered %s, want %s", workers, got, want)
		}
		if streamed != 1 {
			t.Errorf("workers %s: Lockstep_applier_streamed_entries %d, want 1 (the large entry streamed)", workers, streamed)
		}
		r.Kill()
	}
}
