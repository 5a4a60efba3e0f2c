package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"lockstep/internal/apply"
	logrec "lockstep/internal/record"
	"lockstep/internal/sqlfront"
)

// The oracle tests of issue 31 beyond TestParallelReplayOracle: a reader
// on the replaying engine never sees a transaction in part, and a wrong
// last_committed is caught deterministically (a hook forces the
// interleaving it allows).

// replayWith replays payloads (log indexes 1, 2, ...) into a fresh
// frontend with the parallel applier (commit-order gate on) and the
// executor mk builds for it; during replay, each entry is also handed to
// onEntry (nil: nothing). It returns the bank tables' contents, or the
// applier's error.
func replayWith(t *testing.T, payloads [][]byte, workers int, mk func(*sqlfront.Frontend) apply.Executor, fe *sqlfront.Frontend) (string, error) {
	t.Helper()
	if fe == nil {
		var err error
		if fe, err = sqlfront.New(sqlfront.Options{}); err != nil {
			t.Fatal(err)
		}
		defer fe.Close()
	}
	m := apply.New(apply.Options{FailedDDL: sqlfront.FailedDDLIndex})
	p := apply.NewParallel(m, mk(fe), apply.ParallelOptions{Workers: workers, PreserveCommitOrder: true})
	for i, b := range payloads {
		if err := p.Entry(uint64(i+1), b); err != nil {
			p.Close()
			return "", err
		}
	}
	err := p.Wait()
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	s := &localServer{t: t, fe: fe, ctx: fe.NewLocalContext(context.Background()), closed: true}
	return bankState(s), nil
}

// invariantReader is a session on a replaying engine that checks, when
// asked, that the accounts' balances sum to 1000 per account (what every
// transaction of the bank log keeps: accounts are created with 1000,
// transfers move money between two). Each check is one statement: one
// ReadView.
type invariantReader struct {
	s       *localServer
	req     chan chan struct{}
	mu      sync.Mutex
	checks  int
	broken  []string
	stopped chan struct{}
}

func newInvariantReader(t *testing.T, fe *sqlfront.Frontend) *invariantReader {
	r := &invariantReader{
		s:       &localServer{t: t, fe: fe, ctx: fe.NewLocalContext(context.Background()), closed: true},
		req:     make(chan chan struct{}),
		stopped: make(chan struct{}),
	}
	go func() {
		for done := range r.req {
			r.check()
			close(done)
		}
		close(r.stopped)
	}()
	return r
}

func (r *invariantReader) check() {
	rows, err := r.s.query("SELECT COUNT(*), COALESCE(SUM(bal), 0) FROM b.acct")
	if err != nil || len(rows) != 1 {
		return // the tables are not created yet
	}
	n, sum := fmt.Sprint(rows[0][0]), fmt.Sprint(rows[0][1])
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checks++
	var cnt, total int64
	fmt.Sscan(n, &cnt)
	fmt.Sscan(sum, &total)
	if total != cnt*1000 {
		r.broken = append(r.broken, fmt.Sprintf("%d accounts hold %d", cnt, total))
	}
}

// look has the reader check now and waits for it (at most a second).
func (r *invariantReader) look() {
	done := make(chan struct{})
	select {
	case r.req <- done:
		select {
		case <-done:
		case <-time.After(time.Second):
		}
	case <-time.After(time.Second):
	}
}

func (r *invariantReader) stop() (checks int, broken []string) {
	close(r.req)
	<-r.stopped
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.checks, r.broken
}

// lookingExec is recovery's executor that has the reader look at the
// engine when a transaction is installed and not yet published (the
// moment a wrong publication would show).
type lookingExec struct {
	*recoveryExec
	r *invariantReader
}

func (x lookingExec) TxnHeld(t *logrec.Txn) (publish, rollback func(), err error) {
	publish, rollback, err = x.recoveryExec.TxnHeld(t)
	if err == nil {
		x.r.look()
	}
	return publish, rollback, err
}

// splitExec applies each change of a transaction as a transaction of its
// own, and has the reader look after the first: what an applier that
// publishes a transaction in parts would show. It has no TxnHeld: the
// commit-order gate takes its whole Txn call.
type splitExec struct {
	x *recoveryExec
	r *invariantReader
}

func (x splitExec) Txn(t *logrec.Txn) error {
	for i := range t.Changes {
		if _, err := x.x.fe.Storage().ApplyTxn(t.Changes[i : i+1]); err != nil {
			return err
		}
		if i == 0 && len(t.Changes) > 1 {
			x.r.look()
		}
	}
	return x.x.fe.Storage().ApplyAutoInc(t.AutoInc)
}

func (x splitExec) DDL(d *logrec.DDL) (error, error)  { return x.x.DDL(d) }
func (x splitExec) UndoDDL(mark *logrec.DDL) error    { return x.x.UndoDDL(mark) }
func (x splitExec) Accounts(a *logrec.Accounts) error { return x.x.Accounts(a) }
func (x splitExec) Note(line string)                  { x.x.Note(line) }
func newRecoveryExec(fe *sqlfront.Frontend) *recoveryExec {
	return &recoveryExec{fe: fe, w: io.Discard}
}

// TestReplayReaderSeesInvariant: while the parallel applier (4, 8 and 16
// workers, commit order preserved) replays the bank log, a reader on the
// same engine, made to look each time a transaction is installed and not
// yet published, never sees the balances' sum broken, and the replay ends
// in the source's state. The same reader catches an applier that
// publishes a transaction in parts (splitExec): the check can fail.
func TestReplayReaderSeesInvariant(t *testing.T) {
	cfg, want := makeBankLog(t)
	payloads := readLogEntries(t, filepath.Join(cfg.Datadir, "log"))
	for _, workers := range []int{4, 8, 16} {
		fe, err := sqlfront.New(sqlfront.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := newInvariantReader(t, fe)
		got, err := replayWith(t, payloads, workers, func(fe *sqlfront.Frontend) apply.Executor {
			return lookingExec{newRecoveryExec(fe), r}
		}, fe)
		checks, broken := r.stop()
		fe.Close()
		if err != nil {
			t.Fatalf("%d workers: %v", workers, err)
		}
		if got != want {
			t.Errorf("%d workers: replayed state differs from the source's", workers)
		}
		if len(broken) > 0 {
			t.Errorf("%d workers: the reader saw the invariant broken %d times in %d checks, first: %s", workers, len(broken), checks, broken[0])
		}
		if checks < 100 {
			t.Errorf("%d workers: the reader checked only %d times", workers, checks)
		}
		t.Logf("%d workers: %d checks during replay, none broken", workers, checks)
	}

	fe, err := sqlfront.New(sqlfront.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fe.Close()
	r := newInvariantReader(t, fe)
	if _, err := replayWith(t, payloads, 4, func(fe *sqlfront.Frontend) apply.Executor {
		return splitExec{newRecoveryExec(fe), r}
	}, fe); err != nil {
		t.Fatal(err)
	}
	checks, broken := r.stop()
	if len(broken) == 0 {
		t.Fatalf("an applier publishing transactions in parts: the reader saw nothing broken in %d checks; the check cannot fail", checks)
	}
	t.Logf("parts published: %d of %d checks broken, first: %s", len(broken), checks, broken[0])
}

// orderingExec is recovery's executor with a forced interleaving: the
// transaction of sequence number first waits (at most wait) until the one
// of sequence number second has installed its rows. With a correct log,
// second depends on first and cannot start before first is applied: first
// waits in vain and the replay is right. With a log in which second
// claims independence from first, second installs first. (Signalling when
// second only started let first install before it when second was slow
// to go on: a flaky pass of the wrong log under load.)
type orderingExec struct {
	*recoveryExec
	first, second int64
	installed     chan struct{}
	once          *sync.Once
	wait          time.Duration
}

// before runs ahead of a transaction's install: first waits for second.
func (x orderingExec) before(seq int64) {
	if seq == x.first {
		select {
		case <-x.installed:
		case <-time.After(x.wait):
		}
	}
}

// after runs once a transaction installed its rows: second lets first go.
func (x orderingExec) after(seq int64) {
	if seq == x.second {
		x.once.Do(func() { close(x.installed) })
	}
}

func (x orderingExec) Txn(t *logrec.Txn) error {
	x.before(t.Seq)
	defer x.after(t.Seq)
	return x.recoveryExec.Txn(t)
}

func (x orderingExec) TxnHeld(t *logrec.Txn) (publish, rollback func(), err error) {
	x.before(t.Seq)
	defer x.after(t.Seq)
	return x.recoveryExec.TxnHeld(t)
}

// TestReplayOracleCatchesWrongLastCommitted: in the bank log, a
// transaction B that updates an account the transaction A just before it
// updated (its last_committed is A) is rewritten to claim independence
// from A (last_committed = A's predecessor). The log up to B is replayed
// with 4 workers while a hook makes A wait until B has installed: the
// replayed state differs from the correct prefix's (or the applier
// fails), every time. The correct log under the same hook replays right.
func TestReplayOracleCatchesWrongLastCommitted(t *testing.T) {
	cfg, _ := makeBankLog(t)
	payloads := readLogEntries(t, filepath.Join(cfg.Datadir, "log"))

	// Find A and B: consecutive transactions, B's last_committed is A,
	// and they change a row in common.
	type found struct {
		entry int // B's entry
		a, b  int64
	}
	var pick *found
	var prev *logrec.Txn
	for i, p := range payloads {
		recs, err := logrec.EntryRecords(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if k, _, _ := logrec.PeekPosition(r); k != logrec.KindTxn {
				prev = nil
				continue
			}
			tx, err := logrec.DecodeTxn(r)
			if err != nil {
				t.Fatal(err)
			}
			if pick == nil && prev != nil && tx.LastCommitted == prev.Seq && sharesRow(prev, tx) {
				pick = &found{entry: i, a: prev.Seq, b: tx.Seq}
			}
			prev = tx
		}
	}
	if pick == nil {
		t.Fatal("no transaction in the log depends on its predecessor through a row")
	}
	prefix := payloads[:pick.entry+1]
	wrong := make([][]byte, len(prefix))
	copy(wrong, prefix)
	recs, err := logrec.EntryRecords(prefix[pick.entry])
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(recs))
	for j, r := range recs {
		out[j] = r
		if _, pos, _ := logrec.PeekPosition(r); pos.Seq == pick.b {
			tx, err := logrec.DecodeTxn(r)
			if err != nil {
				t.Fatal(err)
			}
			tx.LastCommitted = pick.a - 1
			out[j] = logrec.AppendTxn(nil, tx)
		}
	}
	if len(out) == 1 {
		wrong[pick.entry] = out[0]
	} else {
		wrong[pick.entry] = logrec.AppendBatch(nil, out...)
	}
	if bytes.Equal(wrong[pick.entry], prefix[pick.entry]) {
		t.Fatal("the rewrite changed nothing")
	}

	serial, err := replayWith(t, prefix, 1, func(fe *sqlfront.Frontend) apply.Executor { return newRecoveryExec(fe) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	ordering := func(fe *sqlfront.Frontend) apply.Executor {
		return orderingExec{recoveryExec: newRecoveryExec(fe), first: pick.a, second: pick.b,
			installed: make(chan struct{}), once: new(sync.Once), wait: 300 * time.Millisecond}
	}
	if got, err := replayWith(t, prefix, 4, ordering, nil); err != nil || got != serial {
		t.Fatalf("the correct log under the hook: %v, state equal to the serial replay's: %v", err, got == serial)
	}
	for run := 1; run <= 3; run++ {
		got, err := replayWith(t, wrong, 4, ordering, nil)
		if err == nil && got == serial {
			t.Fatalf("run %d: B (seq %d) claiming independence from A (seq %d) replayed to the right state: the oracle cannot catch a wrong last_committed", run, pick.b, pick.a)
		}
		t.Logf("run %d: caught (error %v; state differs %v)", run, err, err == nil && got != serial)
	}
}

// sharesRow reports whether a and b change a row in common.
func sharesRow(a, b *logrec.Txn) bool {
	rows := make(map[string]bool)
	for _, c := range a.Changes {
		rows[fmt.Sprintf("%d/%x", c.Table, c.PK)] = true
	}
	for _, c := range b.Changes {
		if rows[fmt.Sprintf("%d/%x", c.Table, c.PK)] {
			return true
		}
	}
	return false
}

// Both must stay held executors, or the driver silently takes the non-held
// path and the tests above test something else.
var (
	_ apply.HeldExecutor = lookingExec{}
	_ apply.HeldExecutor = orderingExec{}
)
