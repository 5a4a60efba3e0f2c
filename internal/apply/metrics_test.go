package apply

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lockstep/internal/record"
)

// retryExec fails transaction seq transiently fails[seq] times, then
// applies it; a transaction in permanent fails for good.
type retryExec struct {
	fakeExec
	fails     map[int64]int
	permanent int64
	calls     map[int64]int
}

func (x *retryExec) Txn(t *record.Txn) error {
	if x.calls == nil {
		x.calls = map[int64]int{}
	}
	x.calls[t.Seq]++
	if t.Seq == x.permanent {
		return errors.New("storage: apply to t: change encoded for definition version 9, table is at 1")
	}
	if x.fails[t.Seq] > 0 {
		x.fails[t.Seq]--
		return Transient(errors.New("Lock wait timeout exceeded; try restarting transaction"))
	}
	return x.fakeExec.Txn(t)
}

func accounts(seq, gno int64) []byte {
	return record.AppendAccounts(nil, &record.Accounts{Position: record.Position{Seq: seq, GNO: gno, LastCommitted: seq - 1}})
}

// fakeClock advances a second at every reading.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { c.t = c.t.Add(time.Second); return c.t }

// TestMetrics: the serial driver's counters move as they should: entries,
// records, skips, what was applied by kind, the applied position and its
// GNO, the lag after a failure, retries and their pauses.
func TestMetrics(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		entries []entry
		fails   map[int64]int // transient failures by sequence number
		perm    int64         // a permanent failure
		want    Metrics
		sleeps  []time.Duration
		err     string
	}{
		{
			name: "groups, empty entries, skips, kinds",
			opts: Options{Applied: Position{Seq: 2}, ExecutedGNO: 2},
			entries: []entry{{1, [][]byte{txn(1, 1), txn(2, 2), txn(3, 3)}}, {2, nil},
				{3, [][]byte{ddl(4, 4, "create t"), accounts(5, 5)}}, {4, [][]byte{txn(6, 6)}}},
			want: Metrics{Entries: 4, EmptyEntries: 1, Records: 6, Skipped: 2, Applied: 4, Transactions: 2, DDL: 1, Accounts: 1,
				AppliedIndex: 4, AppliedSeq: 6, AppliedGNO: 6, LastGNO: 6, Workers: 1},
		},
		{
			name:    "numbers apart: the GNO at the applied position",
			opts:    Options{Applied: Position{Seq: 10}, ExecutedGNO: 110},
			entries: []entry{{5, [][]byte{txn(11, 111), txn(12, 112)}}},
			want: Metrics{Entries: 1, Records: 2, Applied: 2, Transactions: 2,
				AppliedIndex: 5, AppliedSeq: 12, AppliedGNO: 112, LastGNO: 112, Workers: 1},
		},
		{
			name:    "transient failures are retried, counted, and paused for with backoff",
			opts:    Options{Retry: RetryPolicy{Backoff: time.Millisecond, MaxBackoff: 3 * time.Millisecond}},
			entries: []entry{{1, [][]byte{txn(1, 1), txn(2, 2)}}, {2, [][]byte{txn(3, 3)}}},
			fails:   map[int64]int{2: 3, 3: 1},
			want: Metrics{Entries: 2, Records: 3, Applied: 3, Transactions: 3,
				AppliedIndex: 2, AppliedSeq: 3, AppliedGNO: 3, LastGNO: 3, Workers: 1, Retries: 4},
			sleeps: []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, time.Millisecond},
		},
		{
			name:    "retries run out: the applier stops before the transaction",
			opts:    Options{UUID: "3e11fa47-71ca-11e1-9e33-c80aa9429562", Retry: RetryPolicy{Retries: 2, Backoff: time.Millisecond}},
			entries: []entry{{1, [][]byte{txn(1, 1), txn(2, 2), txn(3, 3)}}},
			fails:   map[int64]int{2: 5},
			want: Metrics{Entries: 1, Records: 3, Applied: 1, Transactions: 1, AppliedSeq: 1, AppliedGNO: 1, LastGNO: 1,
				Queued: 1, InFlight: 1, Lag: 2, LagSeconds: -1, PendingBytes: int64(len(payload(entry{1, [][]byte{txn(1, 1), txn(2, 2), txn(3, 3)}}))) + 3*emptyTxnCost,
				Workers: 1, Retries: 2},
			sleeps: []time.Duration{time.Millisecond, 2 * time.Millisecond},
			err:    "apply: log index 1 (sequence number 2, GTID 3e11fa47-71ca-11e1-9e33-c80aa9429562:2): Lock wait timeout exceeded; try restarting transaction (a transient error, retried 2 times",
		},
		{
			name:    "no retries",
			opts:    Options{Retry: RetryPolicy{Retries: -1}},
			entries: []entry{{1, [][]byte{txn(1, 1)}}},
			fails:   map[int64]int{1: 1},
			want: Metrics{Entries: 1, Records: 1, InFlight: 1, Lag: 1, LagSeconds: -1, Workers: 1,
				PendingBytes: int64(len(txn(1, 1))) + emptyTxnCost},
			err: "(sequence number 1, GNO 1): Lock wait timeout exceeded; try restarting transaction (a transient error, retried 0 times",
		},
		{
			name:    "a permanent failure is not retried",
			entries: []entry{{1, [][]byte{txn(1, 1)}}, {2, [][]byte{txn(2, 2)}}},
			perm:    2,
			want: Metrics{Entries: 2, Records: 2, Applied: 1, Transactions: 1, AppliedIndex: 1, AppliedSeq: 1, AppliedGNO: 1, LastGNO: 1,
				InFlight: 1, Lag: 1, LagSeconds: -1, PendingBytes: int64(len(txn(2, 2))) + emptyTxnCost, Workers: 1},
			err: "log index 2 (sequence number 2, GNO 2): storage: apply to t: change encoded for definition version 9",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var slept []time.Duration
			tc.opts.Retry.Sleep = func(d time.Duration) { slept = append(slept, d) }
			clock := &fakeClock{}
			tc.opts.Clock = clock.now
			m := New(tc.opts)
			x := &retryExec{fails: tc.fails, permanent: tc.perm}
			var err error
			for _, e := range tc.entries {
				if err = m.Entry(e.index, payload(e)); err != nil {
					break
				}
				if err = Drain(m, x); err != nil {
					break
				}
			}
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v\nwant %q", err, tc.err)
			}
			got := m.Metrics()
			// One second a reading: the first entry's, and this one.
			if got.Elapsed != time.Second {
				t.Errorf("Elapsed %v, want 1s (the fake clock read twice)", got.Elapsed)
			}
			got.Elapsed = 0
			if got != tc.want {
				t.Errorf("metrics\n%+v\nwant\n%+v", got, tc.want)
			}
			if !slices.Equal(slept, tc.sleeps) {
				t.Errorf("pauses %v, want %v", slept, tc.sleeps)
			}
			if tc.perm != 0 && x.calls[tc.perm] != 1 {
				t.Errorf("the permanent failure was tried %d times", x.calls[tc.perm])
			}
		})
	}
}

// orderExec makes transaction 1 wait until transaction 2 is installed
// (held) or applied (not held, commit order not preserved), and records
// the order transactions become visible in.
type orderExec struct {
	fakeExec
	mu        sync.Mutex
	installed chan struct{} // closed when 2 is installed
	visible   []int64
	p         *Parallel
	waitDeps  bool // transaction 1 also waits until a worker waits for its last_committed
	waitGate  bool // transaction 1 also waits until transaction 2 waits at the commit-order gate
}

func (x *orderExec) show(seq int64) {
	x.mu.Lock()
	x.visible = append(x.visible, seq)
	x.mu.Unlock()
}

func (x *orderExec) before(seq int64) {
	if seq != 1 {
		return
	}
	select {
	case <-x.installed:
	case <-time.After(10 * time.Second):
		panic("transaction 2 never installed")
	}
	if x.waitDeps {
		for deadline := time.Now().Add(10 * time.Second); x.p.Metrics().DependencyWaits == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				panic("no worker waited for its last_committed")
			}
		}
	}
	if x.waitGate {
		// 1 goes on only once 2 waits at the gate (else 2's worker may
		// reach the gate after 1 was published, and wait for nothing).
		for deadline := time.Now().Add(10 * time.Second); x.p.Metrics().GateWaits == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				panic("transaction 2 never waited at the gate")
			}
		}
	}
}

func (x *orderExec) Txn(t *record.Txn) error {
	x.before(t.Seq)
	x.show(t.Seq)
	if t.Seq == 2 {
		close(x.installed)
	}
	return nil
}

func (x *orderExec) TxnHeld(t *record.Txn) (func(), func(), error) {
	x.before(t.Seq)
	if t.Seq == 2 {
		close(x.installed)
	}
	return func() { x.show(t.Seq) }, func() {}, nil
}

// TestPreserveCommitOrder: with replica_preserve_commit_order ON,
// transaction 2, installed while 1 is still being applied, waits at the
// gate and becomes visible after 1 (one commit-order wait); OFF, it is
// visible first and nothing waits at the gate. The parallel driver's
// metrics count the waits, its workers, and a worker waiting for a
// last_committed.
func TestPreserveCommitOrder(t *testing.T) {
	for _, order := range []bool{true, false} {
		t.Run(fmt.Sprintf("preserve=%v", order), func(t *testing.T) {
			x := &orderExec{installed: make(chan struct{}), waitDeps: true, waitGate: order}
			m := New(Options{})
			p := NewParallel(m, x, ParallelOptions{Workers: 3, PreserveCommitOrder: order})
			x.p = p
			// 1 and 2 independent; 3 depends on 2.
			for i, b := range [][]byte{txnLC(1, 0), txnLC(2, 0), txnLC(3, 2)} {
				if err := p.Entry(uint64(i+1), b); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.Wait(); err != nil {
				t.Fatal(err)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			want, waits := []int64{1, 2, 3}, int64(1)
			if !order {
				want, waits = []int64{2, 1, 3}, 0
			}
			if !slices.Equal(x.visible, want) {
				t.Errorf("visible in the order %v, want %v", x.visible, want)
			}
			mt := p.Metrics()
			if mt.GateWaits != waits || (waits > 0) != (mt.GateWaitTime > 0) {
				t.Errorf("commit-order waits %d (%v), want %d", mt.GateWaits, mt.GateWaitTime, waits)
			}
			if mt.DependencyWaits < 1 || mt.DependencyWaitTime <= 0 {
				t.Errorf("dependency waits %d (%v), want at least 1 (transaction 3 waits for 2)", mt.DependencyWaits, mt.DependencyWaitTime)
			}
			if mt.Workers != 3 || mt.BusyWorkers != 0 || mt.Transactions != 3 || mt.Lag != 0 || mt.InFlight != 0 || mt.AppliedSeq != 3 {
				t.Errorf("after the end: %+v", mt)
			}
		})
	}
}

// TestParallelRetry: the parallel driver retries a transient failure,
// held or not, and counts it; a busy worker shows while a step runs.
func TestParallelRetry(t *testing.T) {
	for _, held := range []bool{true, false} {
		cx := &checkExec{t: t, order: true, published: map[int64]bool{}}
		var x Executor = &flakyExec{checkExec: cx, fails: map[int64]int{5: 2, 9: 1}}
		if held {
			x = flakyHeld{x.(*flakyExec)}
		}
		var mu sync.Mutex
		var slept []time.Duration
		m := New(Options{Retry: RetryPolicy{Sleep: func(d time.Duration) { mu.Lock(); slept = append(slept, d); mu.Unlock() }}})
		p := NewParallel(m, x, ParallelOptions{Workers: 4, PreserveCommitOrder: true})
		for seq := int64(1); seq <= 20; seq++ {
			if err := p.Entry(uint64(seq), txnLC(seq, max(0, seq-2))); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		for _, e := range cx.errs {
			t.Error(e)
		}
		mt := p.Metrics()
		if mt.Retries != 3 || len(slept) != 3 || mt.Transactions != 20 || m.ExecutedSet() != "1-20" {
			t.Errorf("held=%v: %d retries, pauses %v, %d transactions, executed %q", held, mt.Retries, slept, mt.Transactions, m.ExecutedSet())
		}
	}
}

// flakyExec fails transaction seq transiently fails[seq] times.
type flakyExec struct {
	*checkExec
	fmu   sync.Mutex
	fails map[int64]int
}

func (x *flakyExec) flake(seq int64) error {
	x.fmu.Lock()
	defer x.fmu.Unlock()
	if x.fails[seq] > 0 {
		x.fails[seq]--
		return Transient(errors.New("Deadlock found when trying to get lock; try restarting transaction"))
	}
	return nil
}

func (x *flakyExec) Txn(t *record.Txn) error {
	if err := x.flake(t.Seq); err != nil {
		return err
	}
	return x.checkExec.Txn(t)
}

type flakyHeld struct{ *flakyExec }

func (x flakyHeld) TxnHeld(t *record.Txn) (func(), func(), error) {
	if err := x.flake(t.Seq); err != nil {
		return nil, nil, err
	}
	return heldExec{x.checkExec}.TxnHeld(t)
}

var _ HeldExecutor = flakyHeld{}
