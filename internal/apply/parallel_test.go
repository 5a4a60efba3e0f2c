package apply

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lockstep/internal/record"
)

func txnLC(seq, lc int64) []byte {
	return record.AppendTxn(nil, &record.Txn{Position: record.Position{Seq: seq, GNO: seq, LastCommitted: lc}})
}

func accts(seq int64) []byte {
	return record.AppendAccounts(nil, &record.Accounts{Position: record.Position{Seq: seq, GNO: seq, LastCommitted: seq - 1}})
}

// TestScheduler drives the machine by hand, as the parallel driver does:
// "next 1 2" hands out steps with those sequence numbers and then nothing
// more; "next" hands out nothing; "done N" reports N performed;
// "ready N", "!ready N", "publish N", "!publish N" ask whether N may start
// (its last_committed is applied) and may be published (commit order);
// "applied N" checks the contiguous applied prefix.
func TestScheduler(t *testing.T) {
	for _, tc := range []struct {
		name    string
		window  int
		records [][]byte // one entry each
		script  string
		serial  int64 // Stats.SerialDeps
	}{
		{
			name:    "independent transactions go out together, up to the window",
			window:  3,
			records: [][]byte{txnLC(1, 0), txnLC(2, 0), txnLC(3, 0), txnLC(4, 0)},
			script:  "next 1 2 3; ready 1; ready 2; ready 3; publish 1; !publish 2; done 2; applied 0; next 4; done 1; applied 2; publish 3; done 3; done 4; applied 4",
		},
		{
			name:    "a transaction is handed out before its last_committed is applied, and is not ready until it is",
			window:  8,
			records: [][]byte{txnLC(1, 0), txnLC(2, 0), txnLC(3, 2), txnLC(4, 1), txnLC(5, 4)},
			script:  "next 1 2 3 4 5; !ready 3; !ready 4; !ready 5; done 2; !ready 3; ready 2; done 1; ready 3; ready 4; !ready 5; done 4; !ready 5; done 3; ready 5; publish 5",
		},
		{
			name:    "DDL goes alone: after everything before it, before anything after it",
			window:  8,
			records: [][]byte{txnLC(1, 0), txnLC(2, 0), ddl(3, 3, "create"), txnLC(4, 3), txnLC(5, 3)},
			script:  "next 1 2; done 2; next; done 1; next 3; next; done 3; next 4 5",
		},
		{
			name:    "accounts go alone",
			window:  8,
			records: [][]byte{txnLC(1, 0), accts(2), txnLC(3, 0)},
			script:  "next 1; done 1; next 2; next; done 2; next 3",
		},
		{
			name:    "a last_committed not below the sequence number, or negative, is the predecessor",
			window:  8,
			records: [][]byte{txnLC(1, 0), txnLC(2, 2), txnLC(3, 7), txnLC(4, -1)},
			script:  "next 1 2 3 4; !ready 2; done 1; ready 2; !ready 3; done 2; ready 3; !ready 4; done 3; ready 4",
			serial:  3,
		},
		{
			name:    "serial (window 1) is one step at a time",
			window:  1,
			records: [][]byte{txnLC(1, 0), txnLC(2, 0)},
			script:  "next 1; done 1; next 2",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Options{Window: tc.window})
			for i, r := range tc.records {
				if err := m.Entry(uint64(i+1), r); err != nil {
					t.Fatal(err)
				}
			}
			out := map[int64]Step{}
			for _, cmd := range strings.Split(tc.script, ";") {
				f := strings.Fields(cmd)
				nums := make([]int64, len(f)-1)
				for i, a := range f[1:] {
					nums[i], _ = strconv.ParseInt(a, 10, 64)
				}
				step := func(n int64) Step {
					s, ok := out[n]
					if !ok {
						t.Fatalf("%s: %d was not handed out", cmd, n)
					}
					return s
				}
				switch f[0] {
				case "next":
					var got []int64
					for {
						s, ok := m.Next()
						if !ok {
							break
						}
						out[s.Pos.Seq] = s
						got = append(got, s.Pos.Seq)
					}
					if fmt.Sprint(got) != fmt.Sprint(nums) && len(got)+len(nums) > 0 {
						t.Fatalf("%s: handed out %v", cmd, got)
					}
				case "done":
					m.Done(step(nums[0]), nil)
				case "ready", "!ready":
					if got := m.Ready(step(nums[0])); got != (f[0] == "ready") {
						t.Fatalf("%s: Ready = %v (applied %+v)", cmd, got, m.Applied())
					}
				case "publish", "!publish":
					if got := m.MayPublish(step(nums[0])); got != (f[0] == "publish") {
						t.Fatalf("%s: MayPublish = %v (applied %+v)", cmd, got, m.Applied())
					}
				case "applied":
					if got := m.Applied().Seq; got != nums[0] {
						t.Fatalf("%s: applied %d", cmd, got)
					}
				default:
					t.Fatalf("bad command %q", cmd)
				}
			}
			if got := m.Stats().SerialDeps; got != tc.serial {
				t.Errorf("SerialDeps %d, want %d", got, tc.serial)
			}
		})
	}
}

// checkExec is an executor for the concurrent driver that checks its
// rules as they happen: a transaction starts only when every transaction
// up to its last_committed is published; DDL and accounts run with
// nothing else in flight; (held) publication is in sequence order. It
// sleeps a random while in each step so that steps overlap.
type checkExec struct {
	t     *testing.T
	held  bool // implement TxnHeld
	order bool // publication must be in sequence order

	mu        sync.Mutex
	published map[int64]bool
	pubOrder  []int64
	running   int
	maxTxns   int
	failSeq   int64
	errs      []string
	// rolledBack: transactions installed held and rolled back.
	rolledBack []int64
	// through: records that must not reach this executor (they are fed
	// with EntryThrough and another executor).
	through map[int64]bool
}

func (x *checkExec) sleep() { time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond) }

func (x *checkExec) errorf(f string, a ...any) {
	x.errs = append(x.errs, fmt.Sprintf(f, a...))
}

func (x *checkExec) start(t *record.Txn) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.through[t.Seq] {
		x.errorf("txn %d, fed through EntryThrough, reached the workers' executor", t.Seq)
	}
	for s := int64(1); s <= t.LastCommitted; s++ {
		if !x.published[s] {
			x.errorf("txn %d (last_committed %d) started before %d was applied", t.Seq, t.LastCommitted, s)
			break
		}
	}
	x.running++
	x.maxTxns = max(x.maxTxns, x.running)
}

func (x *checkExec) publish(seq int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.running--
	if x.order && len(x.pubOrder) > 0 && x.pubOrder[len(x.pubOrder)-1] != seq-1 {
		x.errorf("txn %d published after %d", seq, x.pubOrder[len(x.pubOrder)-1])
	}
	x.published[seq] = true
	x.pubOrder = append(x.pubOrder, seq)
}

func (x *checkExec) Txn(t *record.Txn) error {
	x.start(t)
	x.sleep()
	if t.Seq == x.failSeq {
		x.mu.Lock()
		x.running--
		x.mu.Unlock()
		return errors.New("boom")
	}
	x.publish(t.Seq)
	return nil
}

func (x *checkExec) alone(what string, seq int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.running != 0 {
		x.errorf("%s %d ran with %d transactions in flight", what, seq, x.running)
	}
	if x.through[seq] {
		x.errorf("%s %d, fed through EntryThrough, reached the workers' executor", what, seq)
	}
	x.published[seq] = true
	x.pubOrder = append(x.pubOrder, seq)
}

func (x *checkExec) DDL(d *record.DDL) (error, error) { x.alone("DDL", d.Seq); return nil, nil }
func (x *checkExec) UndoDDL(*record.DDL) error        { return nil }
func (x *checkExec) Accounts(a *record.Accounts) error {
	x.alone("accounts", a.Seq)
	return nil
}
func (x *checkExec) Note(string) {}

// heldExec adds TxnHeld to checkExec.
type heldExec struct{ *checkExec }

func (x heldExec) TxnHeld(t *record.Txn) (func(), func(), error) {
	x.start(t)
	x.sleep()
	if t.Seq == x.failSeq {
		x.mu.Lock()
		x.running--
		x.mu.Unlock()
		return nil, nil, errors.New("boom")
	}
	return func() { x.publish(t.Seq) }, func() { x.rollback(t.Seq) }, nil
}

var _ HeldExecutor = heldExec{}

// rollback: a transaction installed held and not to be published.
func (x *checkExec) rollback(seq int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.running--
	x.rolledBack = append(x.rolledBack, seq)
}

// randomLog is n records, one or a batch per entry: transactions with a
// random last_committed among the last few, a DDL or accounts record now
// and then.
func randomLog(r *rand.Rand, n int) [][]byte {
	var entries [][]byte
	var group [][]byte
	for seq := int64(1); seq <= int64(n); seq++ {
		var b []byte
		switch k := r.IntN(50); {
		case k == 0:
			b = ddl(seq, seq, "ddl")
		case k == 1:
			b = accts(seq)
		default:
			lc := max(0, seq-1-int64(r.IntN(6)))
			b = txnLC(seq, lc)
		}
		group = append(group, b)
		if r.IntN(3) == 0 || seq == int64(n) {
			if len(group) == 1 {
				entries = append(entries, group[0])
			} else {
				entries = append(entries, record.AppendBatch(nil, group...))
			}
			group = nil
		}
	}
	return entries
}

// TestParallelDriver: with either scheduler (the workers wait for their
// dependencies, or the coordinator does), 1 to 16 workers, with and without a held
// executor, with commit order preserved or not, every transaction starts
// after its last_committed is applied, DDL and accounts run alone, and
// (preserved) publication is in sequence order.
func TestParallelDriver(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	entries := randomLog(r, 400)
	for _, sched := range []Scheduler{SchedulerLockstep, SchedulerCoordinator} {
		for _, workers := range []int{1, 2, 4, 8, 16} {
			for _, held := range []bool{true, false} {
				for _, order := range []bool{true, false} {
					name := fmt.Sprintf("%v/workers=%d/held=%v/order=%v", sched, workers, held, order)
					t.Run(name, func(t *testing.T) {
						cx := &checkExec{t: t, order: order, published: map[int64]bool{}}
						var x Executor = cx
						if held {
							x = heldExec{cx}
						}
						m := New(Options{})
						p := NewParallel(m, x, ParallelOptions{Workers: workers, PreserveCommitOrder: order, Scheduler: sched})
						for i, e := range entries {
							if err := p.Entry(uint64(i+1), e); err != nil {
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
						if got := m.Applied(); got.Seq != 400 || got.Index != uint64(len(entries)) {
							t.Errorf("applied %+v", got)
						}
						if m.ExecutedSet() != "1-400" || len(cx.pubOrder) != 400 {
							t.Errorf("executed %q, %d published", m.ExecutedSet(), len(cx.pubOrder))
						}
						// Without held publication the gate takes the whole
						// call: serial, as it must be.
						if workers > 1 && (held || !order) && cx.maxTxns < 2 {
							t.Errorf("never more than %d transactions at once", cx.maxTxns)
						}
					})
				}
			}
		}
	}
}

// TestParallelFailure: a failed transaction stops the driver with an error
// naming it; the applied position stays before it and nothing after it is
// published.
func TestParallelFailure(t *testing.T) {
	for _, tc := range []struct {
		held  bool
		sched Scheduler
	}{{true, SchedulerLockstep}, {false, SchedulerLockstep}, {true, SchedulerCoordinator}, {false, SchedulerCoordinator}} {
		held := tc.held
		cx := &checkExec{t: t, order: true, published: map[int64]bool{}, failSeq: 40}
		var x Executor = cx
		if held {
			x = heldExec{cx}
		}
		m := New(Options{})
		p := NewParallel(m, x, ParallelOptions{Workers: 4, PreserveCommitOrder: true, Scheduler: tc.sched})
		var err error
		for seq := int64(1); seq <= 80 && err == nil; seq++ {
			err = p.Entry(uint64(seq), txnLC(seq, max(0, seq-3)))
		}
		if err == nil {
			err = p.Wait()
		}
		if cerr := p.Close(); err == nil || cerr == nil || !strings.Contains(err.Error(), "sequence number 40, GNO 40): boom") {
			t.Fatalf("held=%v: %v / %v", held, err, cerr)
		}
		if got := m.Applied().Seq; got != 39 {
			t.Errorf("held=%v: applied %d, want 39", held, got)
		}
		for s := range cx.published {
			if s >= 40 {
				t.Errorf("held=%v: %d published after the failure of 40", held, s)
			}
		}
		// Every transaction installed was published or, after 40,
		// rolled back: none is left installed and unseen.
		if cx.running != 0 {
			t.Errorf("held=%v: %d transactions installed, neither published nor rolled back", held, cx.running)
		}
		for _, s := range cx.rolledBack {
			if s <= 40 {
				t.Errorf("held=%v: %d rolled back", held, s)
			}
		}
	}
}

// TestParallelPendingBound: with MaxPendingBytes set, the reader waits
// instead of queueing the log — the bytes fed and not applied never pass
// the bound by more than one entry — and the result is the same. Without
// the bound (issue 31 item 4) Entry never waited: the whole log was queued.
func TestParallelPendingBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	entries := randomLog(r, 400)
	largest := int64(0) // the costliest entry: its bytes and its decoded steps'
	for _, e := range entries {
		largest = max(largest, entryCost(t, e))
	}
	bound := 4 * largest
	cx := &checkExec{t: t, order: true, published: map[int64]bool{}}
	m := New(Options{})
	p := NewParallel(m, heldExec{cx}, ParallelOptions{Workers: 4, PreserveCommitOrder: true, MaxPendingBytes: bound})
	var peak int64
	for i, e := range entries {
		if err := p.Entry(uint64(i+1), e); err != nil {
			t.Fatal(err)
		}
		p.mu.Lock()
		peak = max(peak, m.PendingBytes())
		p.mu.Unlock()
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
	if m.ExecutedSet() != "1-400" || len(cx.pubOrder) != 400 {
		t.Errorf("executed %q, %d published", m.ExecutedSet(), len(cx.pubOrder))
	}
	if peak > bound+largest {
		t.Errorf("pending bytes reached %d, bound %d (+ one entry of at most %d)", peak, bound, largest)
	}
	if p.EntryWaits() == 0 {
		t.Errorf("Entry never waited with a bound of %d bytes over %d entries", bound, len(entries))
	}
	if m.PendingBytes() != 0 {
		t.Errorf("pending bytes after everything applied: %d", m.PendingBytes())
	}
}

// throughExec is the executor EntryThrough is given: it checks that no
// worker's transaction runs while it performs a step.
type throughExec struct {
	cx    *checkExec
	steps int
}

func (x *throughExec) check(seq int64) {
	x.cx.mu.Lock()
	defer x.cx.mu.Unlock()
	if x.cx.running != 0 {
		x.cx.errorf("step %d through EntryThrough ran with %d worker transactions in flight", seq, x.cx.running)
	}
	x.cx.published[seq] = true
	x.cx.pubOrder = append(x.cx.pubOrder, seq)
	x.steps++
}

func (x *throughExec) Txn(t *record.Txn) error           { x.check(t.Seq); return nil }
func (x *throughExec) DDL(d *record.DDL) (error, error)  { x.check(d.Seq); return nil, nil }
func (x *throughExec) UndoDDL(*record.DDL) error         { return nil }
func (x *throughExec) Accounts(a *record.Accounts) error { x.check(a.Seq); return nil }
func (x *throughExec) Note(string)                       {}

// TestParallelEntryThrough: entries fed through EntryThrough (a group
// primary's own) wait for every step fed before them and run while no
// worker does, between entries the workers apply concurrently; Settled
// gives the applied position with nothing in progress; the peak of busy
// workers shows the concurrency.
func TestParallelEntryThrough(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	entries := randomLog(r, 600)
	cx := &checkExec{t: t, order: true, published: map[int64]bool{}, through: map[int64]bool{}}
	tx := &throughExec{cx: cx}
	isThrough := func(i int) bool { return (i/20)%3 == 2 } // runs of entries alternate between the two ways
	want := 0
	for i, e := range entries {
		if !isThrough(i) {
			continue
		}
		recs, err := record.EntryRecords(e)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range recs {
			_, pos, err := record.PeekPosition(b)
			if err != nil {
				t.Fatal(err)
			}
			cx.through[pos.Seq] = true
			want++
		}
	}
	m := New(Options{})
	p := NewParallel(m, heldExec{cx}, ParallelOptions{Workers: 4, PreserveCommitOrder: true})
	defer p.Close()
	through := 0
	for i, e := range entries {
		var err error
		if isThrough(i) {
			err = p.EntryThrough(uint64(i+1), e, tx)
			through++
		} else {
			err = p.Entry(uint64(i+1), e)
		}
		if err != nil {
			t.Fatal(err)
		}
		if i%50 == 49 {
			pos, gno, err := p.Settled()
			if err != nil {
				t.Fatal(err)
			}
			if pos.Index != uint64(i+1) || gno != pos.Seq {
				t.Fatalf("settled after entry %d: %+v, last GNO %d", i+1, pos, gno)
			}
		}
	}
	pos, gno, err := p.Settled()
	if err != nil || pos.Seq != 600 || gno != 600 || pos.Index != uint64(len(entries)) {
		t.Fatalf("settled: %+v, %d, %v", pos, gno, err)
	}
	for _, e := range cx.errs {
		t.Error(e)
	}
	if through == 0 || tx.steps != want {
		t.Fatalf("%d entries through EntryThrough, %d steps, want %d", through, tx.steps, want)
	}
	if mt := p.Metrics(); mt.PeakBusyWorkers < 2 || mt.PeakBusyWorkers > 4 {
		t.Fatalf("peak busy workers %d, want 2-4", mt.PeakBusyWorkers)
	}
	if mt := New(Options{}).Metrics(); mt.PeakBusyWorkers != 0 {
		t.Fatalf("a fresh machine's peak busy workers: %d", mt.PeakBusyWorkers)
	}
}
