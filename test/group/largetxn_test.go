package group

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// Large transactions in a group (docs/cluster.md, "Large transactions"):
// one raft entry travels to a follower as one transport frame, so a
// transaction, or a commit group of several, must never make an entry a
// frame cannot carry, or the group stalls on it.
//
// TestGroupLargeTransactions, with real processes and real TCP between the
// members:
//
//  1. a transaction over group_replication_transaction_size_limit is
//     refused with 3100 on COMMIT, counted, logged with its size, and the
//     group commits the next transaction right after;
//  2. a transaction just under the limit replicates;
//  3. two large transactions committing in one commit group (the sync
//     delay holds the group's leader until both are queued) are proposed
//     as two entries (Lockstep_group_replication_commit_groups_split) and
//     both replicate;
//
// and every member ends with the same checksums. In CI the limit is
// lowered to 20,000,000 bytes and the transactions are 15-25 MB.
// LOCKSTEP_GROUP_LARGE_REAL=1 runs real sizes instead: the default limit
// (150,000,000), a 300 MB transaction, one of 140 MB and two of 140 MB
// at once (minutes, and several GB of memory: not for CI).
func TestGroupLargeTransactions(t *testing.T) {
	real := os.Getenv("LOCKSTEP_GROUP_LARGE_REAL") != ""
	const mb = 1 << 20
	limit := 20_000_000
	overMB, underMB, pairMB := 25, 15, 12
	if real {
		limit = 150_000_000
		overMB, underMB, pairMB = 300, 140, 140
	}
	c := startCluster(t)
	p := c.waitPrimary(0)
	var seq strings.Builder
	for i := 1; i <= 400; i++ {
		if i > 1 {
			seq.WriteByte(',')
		}
		fmt.Fprintf(&seq, "(%d)", i)
	}
	exec(t, p, "CREATE DATABASE lt", "CREATE TABLE lt.seq (n INT PRIMARY KEY)", "INSERT INTO lt.seq VALUES "+seq.String(),
		"CREATE TABLE lt.big (id INT PRIMARY KEY, b LONGBLOB)", "CREATE TABLE lt.small (id INT PRIMARY KEY)",
		// Hold a group's leader until two commits are queued (step 3).
		"SET GLOBAL binlog_group_commit_sync_no_delay_count = 2")
	if !real {
		exec(t, p, fmt.Sprintf("SET GLOBAL group_replication_transaction_size_limit = %d", limit))
	}
	var v int64
	if err := p.db.QueryRow("SELECT @@global.group_replication_transaction_size_limit").Scan(&v); err != nil || v != int64(limit) {
		t.Fatalf("@@group_replication_transaction_size_limit = %d, %v; want %d", v, err, limit)
	}
	next := 1 // the next lt.big id
	small := 0
	smallCommit := func(when string) {
		t.Helper()
		small++
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		if _, err := p.db.ExecContext(ctx, "INSERT INTO lt.small VALUES (?)", small); err != nil {
			t.Fatalf("%s: a small transaction did not commit: %v\n%s", when, err, c.describe())
		}
		t.Logf("%s: a small transaction committed in %v", when, time.Since(start).Round(time.Millisecond))
	}

	// 1. Over the limit: 3100, nothing proposed, the group goes on.
	before := primaryStatus(t, c, p)
	start := time.Now()
	err := c.bigTxn(p, next, overMB, mb, 3*time.Minute)
	t.Logf("a %d MB transaction: %v after %v", overMB, err, time.Since(start).Round(time.Millisecond))
	if errno(err) != 3100 || !strings.Contains(err.Error(), "before_commit") {
		t.Fatalf("a %d MB transaction over the %d-byte limit: %v, want 3100 (before_commit)\n%s", overMB, limit, err, c.describe())
	}
	smallCommit("after the refused transaction")
	after := primaryStatus(t, c, p)
	if d := after["transactions_too_large"] - before["transactions_too_large"]; d != 1 {
		t.Errorf("Lockstep_group_replication_transactions_too_large rose by %d, want 1", d)
	}
	if d := after["proposals"] - before["proposals"]; d != 1 {
		t.Errorf("%d proposals for the refused transaction and a small one, want 1 (the refused one is never proposed)", d)
	}
	if out := p.srv.Stderr(); !strings.Contains(out, fmt.Sprintf("exceeds group_replication_transaction_size_limit (%d", limit)) {
		t.Errorf("the primary's log does not say why the transaction was refused:\n%s", tail(out, 2000))
	}

	// 2. Just under the limit: it replicates.
	start = time.Now()
	if err := c.bigTxn(p, next, underMB, mb, 3*time.Minute); err != nil {
		t.Fatalf("a %d MB transaction under the %d-byte limit: %v\n%s", underMB, limit, err, c.describe())
	}
	t.Logf("a %d MB transaction committed in %v", underMB, time.Since(start).Round(time.Millisecond))
	next += underMB
	smallCommit("after the transaction under the limit")

	// 3. Two large transactions in one commit group: two entries.
	exec(t, p, "SET GLOBAL binlog_group_commit_sync_delay = 1000000")
	before = primaryStatus(t, c, p)
	start = time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func(i, first int) {
			defer wg.Done()
			errs[i] = c.bigTxn(p, first, pairMB, mb, 3*time.Minute)
		}(i, next+i*pairMB)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("transaction %d of two of %d MB at once: %v\n%s", i+1, pairMB, err, c.describe())
		}
	}
	t.Logf("two %d MB transactions committed in %v", pairMB, time.Since(start).Round(time.Millisecond))
	next += 2 * pairMB
	exec(t, p, "SET GLOBAL binlog_group_commit_sync_delay = 0")
	after = primaryStatus(t, c, p)
	if d := after["commit_groups_split"] - before["commit_groups_split"]; d != 1 {
		t.Errorf("Lockstep_group_replication_commit_groups_split rose by %d, want 1 (one group of two large transactions)", d)
	}
	if d := after["proposals"] - before["proposals"]; d != 2 {
		t.Errorf("%d proposals for two large transactions in one group, want 2", d)
	}
	smallCommit("after the split group")

	c.waitConverged()
	c.checkChecksums("after the large transactions")
	var n, total int64
	if err := p.db.QueryRow("SELECT COUNT(*), SUM(LENGTH(b)) FROM lt.big").Scan(&n, &total); err != nil {
		t.Fatal(err)
	}
	if want := int64(next - 1); n != want || total != want*mb {
		t.Errorf("lt.big has %d rows, %d bytes; want %d rows of 1 MiB", n, total, want)
	}
}

// bigTxn inserts rows rows of rowBytes bytes each into lt.big from id
// first on in one transaction (one INSERT ... SELECT, the data made by the
// server) and commits it; the COMMIT's error is returned.
func (c *cluster) bigTxn(m *member, first, rows, rowBytes int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := m.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO lt.big SELECT n + ?, REPEAT('x', ?) FROM lt.seq WHERE n <= ?", first-1, rowBytes, rows); err != nil {
		tx.Rollback()
		return fmt.Errorf("insert: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- tx.Commit() }()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			c.t.Logf("COMMIT of %d MB still waiting:\n%s", rows*rowBytes>>20, c.describe())
		}
	}
}

func primaryStatus(t *testing.T, c *cluster, m *member) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := status(ctx, m)
	if err != nil {
		t.Fatalf("%v\n%s", err, c.describe())
	}
	return st
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
