package server

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	logrec "lockstep/internal/record"
)

// TestGroupParallelApply: secondaries apply the primary's transactions
// with the parallel applier — several workers install transactions at
// once (Lockstep_applier_busy_workers_peak > 1; each installation is
// slowed so that overlaps show) — and stay consistent: under concurrent
// bank transfers on conflicting rows, a reader on a secondary never sees
// the sum of balances broken, a session with consistency BEFORE reads
// what the primary committed before (the applied index covers wholly
// applied entries only), a session that waits for the primary's
// @@gtid_executed on a secondary (WAIT_FOR_EXECUTED_GTID_SET) then reads
// every transaction in it, and at the end every member holds the same
// rows.
func TestGroupParallelApply(t *testing.T) {
	testTxnApplyDelay = 2 * time.Millisecond
	defer func() { testTxnApplyDelay = 0 }()
	ms := startGroupInProcess(t, 3)
	p, s := ms[0], ms[1]
	const rows, total = 20, 20 * 100
	p.exec(t, "CREATE DATABASE d")
	p.exec(t, "CREATE TABLE d.acct (id INT PRIMARY KEY, bal INT NOT NULL)")
	p.exec(t, "CREATE TABLE d.mark (id INT PRIMARY KEY, n INT NOT NULL)")
	for i := 1; i <= rows; i++ {
		p.exec(t, fmt.Sprintf("INSERT INTO d.acct VALUES (%d, 100)", i))
	}
	p.exec(t, "INSERT INTO d.mark VALUES (1, 0)")
	setup := p.str(t, "SELECT @@gtid_executed")
	for _, m := range ms[1:] {
		if got := m.str(t, fmt.Sprintf("SELECT WAIT_FOR_EXECUTED_GTID_SET('%s', 20)", setup)); got != "0" {
			t.Fatalf("a secondary did not execute the setup %s: %s", setup, got)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var transfers atomic.Int64
	errc := make(chan error, 16)
	// Writers: transfers between random accounts (they conflict), each a
	// transaction of two updates.
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range 60 {
				a, b := 1+r.IntN(rows), 1+r.IntN(rows)
				if a == b {
					continue
				}
				tx, err := p.db.BeginTx(ctx, nil)
				if err != nil {
					errc <- err
					return
				}
				_, err1 := tx.ExecContext(ctx, "UPDATE d.acct SET bal = bal - 1 WHERE id = ?", a)
				_, err2 := tx.ExecContext(ctx, "UPDATE d.acct SET bal = bal + 1 WHERE id = ?", b)
				if err1 != nil || err2 != nil {
					tx.Rollback()
					continue // a lock wait or deadlock: the next transfer
				}
				if err := tx.Commit(); err == nil {
					transfers.Add(1)
				}
			}
		}()
	}
	// Read-your-writes on a secondary: a marker written on the primary is
	// there for a session with group_replication_consistency = BEFORE (a
	// read index, then the applied index), and once its GTID set is
	// executed on the secondary.
	before := s.newSession(t)
	if _, err := before.ExecContext(ctx, "SET SESSION group_replication_consistency = 'BEFORE'"); err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 1; k <= 30; k++ {
			if _, err := p.db.ExecContext(ctx, "UPDATE d.mark SET n = ? WHERE id = 1", k); err != nil {
				errc <- err
				return
			}
			var n int
			if err := before.QueryRowContext(ctx, "SELECT n FROM d.mark WHERE id = 1").Scan(&n); err != nil || n < k {
				errc <- fmt.Errorf("a BEFORE session on the secondary reads marker %d (%v) after the primary committed %d", n, err, k)
				return
			}
			var set string
			if err := p.db.QueryRowContext(ctx, "SELECT @@gtid_executed").Scan(&set); err != nil {
				errc <- err
				return
			}
			var waited int
			if err := s.db.QueryRowContext(ctx, "SELECT WAIT_FOR_EXECUTED_GTID_SET(?, 10)", set).Scan(&waited); err != nil || waited != 0 {
				errc <- fmt.Errorf("WAIT_FOR_EXECUTED_GTID_SET(%s) on the secondary: %d, %v", set, waited, err)
				return
			}
			if err := s.db.QueryRowContext(ctx, "SELECT n FROM d.mark WHERE id = 1").Scan(&n); err != nil || n < k {
				errc <- fmt.Errorf("after waiting for %s the secondary reads marker %d (%v), want >= %d", set, n, err, k)
				return
			}
		}
	}()
	// The invariant, read on a secondary while it applies.
	var reads atomic.Int64
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for ctx.Err() == nil {
			var sum int
			if err := s.db.QueryRowContext(ctx, "SELECT SUM(bal) FROM d.acct").Scan(&sum); err != nil {
				if ctx.Err() == nil {
					errc <- err
				}
				return
			}
			reads.Add(1)
			if sum != total {
				errc <- fmt.Errorf("a reader on the secondary saw the balances sum to %d, want %d", sum, total)
				return
			}
		}
	}()
	wg.Wait()
	cancel()
	<-readerDone
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	if transfers.Load() < 100 || reads.Load() == 0 {
		t.Fatalf("%d transfers committed, %d reads: too few to show anything", transfers.Load(), reads.Load())
	}

	// Every member catches up and holds the same rows.
	final := p.str(t, "SELECT @@gtid_executed")
	want := ""
	for i, m := range ms {
		if got := m.str(t, fmt.Sprintf("SELECT WAIT_FOR_EXECUTED_GTID_SET('%s', 20)", final)); got != "0" {
			t.Fatalf("member %d did not execute %s: %s", i, final, got)
		}
		got := m.str(t, "SELECT CONCAT(COUNT(*), ' ', SUM(bal), ' ', GROUP_CONCAT(CONCAT(id, '=', bal) ORDER BY id)) FROM d.acct") +
			" " + m.str(t, "SELECT n FROM d.mark")
		if i == 0 {
			want = got
		} else if got != want {
			t.Errorf("member %d holds %q, the primary %q", i, got, want)
		}
		if !strings.HasPrefix(got, fmt.Sprintf("%d %d ", rows, total)) || !strings.HasSuffix(got, " 30") {
			t.Errorf("member %d holds %q", i, got)
		}
	}
	for _, sec := range ms[1:] {
		if w := sec.status(t, "GLOBAL", "Lockstep_applier_workers"); w != groupTestWorkers {
			t.Errorf("Lockstep_applier_workers on a secondary: %d, want %d", w, groupTestWorkers)
		}
		if peak := sec.status(t, "GLOBAL", "Lockstep_applier_busy_workers_peak"); peak < 2 {
			t.Errorf("Lockstep_applier_busy_workers_peak on a secondary: %d: its applier never ran two transactions at once", peak)
		}
		if n := sec.status(t, "GLOBAL", "Lockstep_applier_transactions"); n < transfers.Load() {
			t.Errorf("Lockstep_applier_transactions on a secondary: %d, fewer than the %d transfers", n, transfers.Load())
		}
	}
	t.Logf("%d transfers, %d reads of the sum on a secondary; peak busy workers %d, %d", transfers.Load(), reads.Load(),
		ms[1].status(t, "GLOBAL", "Lockstep_applier_busy_workers_peak"), ms[2].status(t, "GLOBAL", "Lockstep_applier_busy_workers_peak"))
}

// TestGroupParallelApplyFailure: a transaction the parallel applier
// cannot apply on a secondary puts the secondary in the ERROR state
// (Lockstep_group_replication_member_error, the error on stderr), its
// applied position and data stay before the failed transaction, and it
// goes on serving reads of what it applied.
func TestGroupParallelApplyFailure(t *testing.T) {
	ms := startGroupInProcess(t, 3)
	p := ms[0]
	p.exec(t, "CREATE DATABASE d")
	p.exec(t, "CREATE TABLE d.t (id INT PRIMARY KEY)")
	p.exec(t, "INSERT INTO d.t VALUES (1)")
	set := p.str(t, "SELECT @@gtid_executed")
	for _, m := range ms[1:] {
		if got := m.str(t, fmt.Sprintf("SELECT WAIT_FOR_EXECUTED_GTID_SET('%s', 20)", set)); got != "0" {
			t.Fatalf("a secondary did not execute %s: %s", set, got)
		}
	}
	applied := ms[1].status(t, "GLOBAL", "Lockstep_group_replication_applied_index")
	fail := func(*logrec.Txn) error { return errors.New("injected failure") }
	testTxnApplyFail.Store(&fail)
	defer testTxnApplyFail.Store(nil)
	p.exec(t, "INSERT INTO d.t VALUES (2)") // committed: the secondaries' logs hold it
	for _, m := range ms[1:] {
		deadline := time.Now().Add(10 * time.Second)
		for m.status(t, "GLOBAL", "Lockstep_group_replication_member_error") != 1 {
			if time.Now().After(deadline) {
				t.Fatal("a secondary that cannot apply a transaction is not in the ERROR state after 10 s")
			}
			time.Sleep(10 * time.Millisecond)
		}
		if got := m.str(t, "SELECT COUNT(*) FROM d.t"); got != "1" {
			t.Errorf("a failed secondary reads %s rows, want 1 (the failed transaction not applied)", got)
		}
		if got := m.status(t, "GLOBAL", "Lockstep_group_replication_applied_index"); got < applied || got > applied+1 {
			// +1: an empty entry of raft's may follow before the failure
			t.Errorf("a failed secondary's applied index %d, %d before the failed transaction", got, applied)
		}
		if got := m.str(t, fmt.Sprintf("SELECT WAIT_FOR_EXECUTED_GTID_SET('%s', 0.1)", p.str(t, "SELECT @@gtid_executed"))); got != "1" {
			t.Errorf("a failed secondary executed the failed transaction's GTID: %s", got)
		}
	}
}
