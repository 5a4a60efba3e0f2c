package apply

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"lockstep/internal/record"
)

// HeldExecutor is an Executor that can apply a transaction without making
// it visible (storage.Engine.ApplyTxnHeld): publish makes it visible,
// rollback removes it unseen. The commit-order gate calls publish in
// sequence order; a transaction installed after a failed one is rolled
// back. An Executor without it has its Txn calls serialized by the gate
// (the transaction is applied and visible in one call, so it is the whole
// call that waits its turn).
type HeldExecutor interface {
	Executor
	// TxnHeld applies t's row changes without publishing them, then its
	// AUTO_INCREMENT counters (raise only, order-free). Exactly one of
	// publish and rollback is to be called; both are nil when err is not,
	// and then nothing of t is left (as for Txn).
	TxnHeld(t *record.Txn) (publish, rollback func(), err error)
}

// ParallelOptions configure the concurrent driver.
type ParallelOptions struct {
	// Workers is the number of worker goroutines
	// (replica_parallel_workers). At least 1.
	Workers int
	// PreserveCommitOrder (replica_preserve_commit_order: ON by default
	// in MySQL 8 and in the server's option; the zero value here is OFF)
	// makes a transaction visible only after every earlier one. OFF: a
	// transaction is published as soon as it is applied (its
	// last_committed still orders it after what it depends on).
	PreserveCommitOrder bool
	// QueuePerWorker is how many transaction steps may be handed out per
	// worker (in flight or queued for a worker). Default 4.
	QueuePerWorker int
	// MaxPendingBytes bounds the log fed and not yet applied, in payload
	// bytes and decoded steps (Machine.PendingBytes): Entry waits while
	// more is pending (an entry larger than the bound is taken once
	// nothing else is). Default 64 MiB.
	MaxPendingBytes int64
	// Scheduler says who waits for a transaction's last_committed: its
	// worker (SchedulerLockstep, the default) or the one dispatching
	// thread before it hands the transaction out (SchedulerCoordinator,
	// MySQL's LOGICAL_CLOCK coordinator: a baseline).
	Scheduler Scheduler
}

// DefaultMaxPendingBytes is ParallelOptions.MaxPendingBytes's default.
const DefaultMaxPendingBytes = 64 << 20

// Parallel is the concurrent driver: it owns a Machine (whose Window it
// sets from the options), feeds it entries and hands its steps to worker
// goroutines. The scheduler (dispatch, run by whoever feeds an entry or
// finishes a step) never waits for a dependency: it hands transaction
// steps out in sequence order as long as the machine's window allows;
// each worker waits until its transaction's last_committed is applied,
// applies it, and (commit order preserved) waits for its turn at the gate
// to publish it. DDL, undo and account steps are handed out alone (the
// machine sees to it) and run by a worker like the others.
type Parallel struct {
	m   *Machine
	x   Executor
	hx  HeldExecutor // nil: x cannot hold publication
	opt ParallelOptions

	mu     sync.Mutex
	cond   *sync.Cond // signalled on every Done and on failure
	err    error
	errSeq int64 // the sequence number of the step that failed (steps before it still finish)
	closed bool
	work   chan Step
	// entryWaits counts the times Entry waited for the pending bytes to
	// fall (EntryWaits).
	entryWaits int64
	// busy: workers performing a step; deps, gate: the waits for
	// last_committed and at the commit-order gate.
	busy       int
	peakBusy   int // the most workers performing steps at once
	deps, gate waitStat
	wg         sync.WaitGroup
}

// waitStat counts waits and their total time.
type waitStat struct {
	n int64
	d time.Duration
}

// NewParallel starts opts.Workers workers applying m's steps through x.
// m must be new (nothing fed) and is owned by the driver from now on: use
// the driver's Entry, Wait and Close, and the machine's read-only calls
// (Applied, ExecutedSet, Stats) only after Wait.
func NewParallel(m *Machine, x Executor, opts ParallelOptions) *Parallel {
	if opts.Workers < 1 {
		opts.Workers = 1
	}
	if opts.QueuePerWorker < 1 {
		opts.QueuePerWorker = 4
	}
	if opts.MaxPendingBytes <= 0 {
		opts.MaxPendingBytes = DefaultMaxPendingBytes
	}
	window := opts.Workers * opts.QueuePerWorker
	m.window = window
	p := &Parallel{m: m, x: x, opt: opts, work: make(chan Step, window)}
	p.hx, _ = x.(HeldExecutor)
	p.cond = sync.NewCond(&p.mu)
	for range opts.Workers {
		p.wg.Add(1)
		go p.worker()
	}
	if opts.Scheduler == SchedulerCoordinator {
		p.wg.Add(1)
		go p.coordinate()
	}
	return p
}

// Entry feeds the log entry at index (Machine.Entry) and hands out what
// became ready. It returns the first failure of the applier, if any.
func (p *Parallel) Entry(index uint64, payload []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	// The reader slows down instead of queueing the log: wait while the
	// fed-and-unapplied bytes are over the bound (issue 31 item 4).
	for p.err == nil && !p.closed && p.m.PendingBytes() > 0 &&
		p.m.PendingBytes()+int64(len(payload)) > p.opt.MaxPendingBytes {
		p.entryWaits++
		p.cond.Wait()
	}
	if p.err != nil {
		return p.err
	}
	if err := p.m.Entry(index, payload); err != nil {
		p.fail(err, math.MaxInt64) // what was fed before it is applied
		return err
	}
	p.dispatch()
	return nil
}

// EntryStream feeds the log entry at index whose payload open reads
// (Machine.EntryStream): a large transaction's changes are read again, a
// chunk at a time, by the worker that applies it. The first pass over
// the payload runs before the driver's lock is taken; the wait for room
// counts cost (what the step holds while it runs), not the payload.
func (p *Parallel) EntryStream(index uint64, open record.Opener, cost int64) error {
	payload, t, err := record.StreamEntry(open, p.m.chunk)
	if err != nil {
		err = fmt.Errorf("log index %d: %w", index, err)
		p.mu.Lock()
		p.fail(err, math.MaxInt64)
		p.mu.Unlock()
		return err
	}
	if t == nil {
		return p.Entry(index, payload)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.err == nil && !p.closed && p.m.PendingBytes() > 0 &&
		p.m.PendingBytes()+cost > p.opt.MaxPendingBytes {
		p.entryWaits++
		p.cond.Wait()
	}
	if p.err != nil {
		return p.err
	}
	if err := p.m.streamed(index, nil, t, cost); err != nil {
		p.fail(err, math.MaxInt64)
		return err
	}
	p.dispatch()
	return nil
}

// EntryThrough feeds the log entry at index once every step fed before it
// is performed, and performs its steps at once, one at a time, through x
// instead of the workers' executor (apply.Drain's way). A group primary
// applies its own entries so: its commit pipeline installed their
// transactions, x only advances the machine, and no worker runs meanwhile.
// x's steps run under the driver's lock: they must be quick.
func (p *Parallel) EntryThrough(index uint64, payload []byte, x Executor) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.err == nil && !p.closed && !p.m.Idle() {
		p.cond.Wait()
	}
	if p.err != nil {
		return p.err
	}
	if p.closed {
		return errors.New("apply: the parallel applier is closed")
	}
	if err := p.m.Entry(index, payload); err != nil {
		p.fail(err, math.MaxInt64)
		return err
	}
	if err := Drain(p.m, x); err != nil {
		p.fail(err, math.MaxInt64)
		return err
	}
	p.cond.Broadcast()
	return nil
}

// Settled waits until every step fed so far is performed (Wait) and
// returns the machine's applied position and highest executed GNO then:
// with nothing in progress, every GNO up to it that the log holds is
// applied.
func (p *Parallel) Settled() (Position, int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.err == nil && !p.m.Idle() {
		p.cond.Wait()
	}
	return p.m.Applied(), p.m.LastGNO(), p.err
}

// Wait waits until every step fed so far is performed, or the applier
// failed.
func (p *Parallel) Wait() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.err == nil && !p.m.Idle() {
		p.cond.Wait()
	}
	return p.err
}

// Close stops the workers once the steps handed out are finished (or
// abandoned after a failure: the steps before the failed one finish, so
// the applied position ends just before it) and returns the applier's
// failure, if any.
func (p *Parallel) Close() error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.work)
	}
	p.cond.Broadcast() // an Entry waiting for room
	p.mu.Unlock()
	p.wg.Wait()
	return p.err
}

// dispatch hands out every step the machine has ready. Under p.mu.
// With the coordinator, it wakes the coordinator instead (coordinate).
func (p *Parallel) dispatch() {
	if p.opt.Scheduler == SchedulerCoordinator {
		p.cond.Broadcast()
		return
	}
	for p.err == nil && !p.closed {
		s, ok := p.m.Next()
		if !ok {
			return
		}
		if s.Kind == StepNote {
			p.x.Note(s.Note) // in order: nothing is in flight before it
			continue
		}
		// Never blocks: the machine hands out at most window steps, the
		// channel's capacity.
		p.work <- s
	}
}

// fail records the applier's first failure, of the step with sequence
// number seq: steps after it are abandoned, steps before it finish (the
// applied position then stands just before it). Under p.mu.
func (p *Parallel) fail(err error, seq int64) {
	if p.err == nil || seq < p.errSeq {
		p.err, p.errSeq = err, seq // the earliest failure is the one to report
	}
	p.cond.Broadcast()
}

// stopped reports whether step s is abandoned after a failure. Under p.mu.
func (p *Parallel) stopped(s Step) bool { return p.err != nil && s.Pos.Seq > p.errSeq }

func (p *Parallel) worker() {
	defer p.wg.Done()
	for s := range p.work {
		p.mu.Lock()
		failed := p.stopped(s)
		if !failed {
			p.busy++
			p.peakBusy = max(p.peakBusy, p.busy)
		}
		p.mu.Unlock()
		if failed {
			continue // abandoned: the applied position stays before it
		}
		var outcome, err error
		if s.Kind == StepTxn {
			err = p.txn(s)
		} else {
			err = p.retried(s, func() (err error) {
				outcome, err = perform(p.x, s)
				return err
			})
		}
		p.mu.Lock()
		p.busy--
		if err != nil {
			if !errors.Is(err, errStopped) {
				p.fail(p.m.stepError(s, err), s.Pos.Seq)
			}
		} else if !p.stopped(s) {
			p.m.Done(s, outcome)
			p.cond.Broadcast()
			p.dispatch()
		}
		p.mu.Unlock()
	}
}

// txn performs a transaction step: it waits for its last_committed,
// applies it, and passes the gate. Errors are the executor's, or
// errStopped when another step failed meanwhile.
func (p *Parallel) txn(s Step) error {
	// Wait until every transaction up to last_committed is applied.
	if !p.await(p.m.Ready, s, &p.deps) {
		return errStopped
	}
	txn := func() error { return p.x.Txn(s.Txn) }
	if !p.opt.PreserveCommitOrder {
		return p.retried(s, txn)
	}
	if p.hx == nil {
		// Applying is publishing: the gate takes the whole call.
		if !p.await(p.m.MayPublish, s, &p.gate) {
			return errStopped
		}
		return p.retried(s, txn)
	}
	var publish, rollback func()
	err := p.retried(s, func() (err error) {
		publish, rollback, err = p.hx.TxnHeld(s.Txn)
		return err
	})
	if err != nil {
		return err
	}
	if !p.await(p.m.MayPublish, s, &p.gate) {
		// Installed, never to be published: an earlier step failed and
		// the applied position stays before it. Nothing of this one is
		// left.
		rollback()
		return errStopped
	}
	publish()
	return nil
}

// retried runs f under the machine's retry policy: a transient error is
// counted and f tried again, unless the applier stopped meanwhile.
func (p *Parallel) retried(s Step, f func() error) error {
	return p.m.retry.do(f, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.stopped(s) {
			return false
		}
		p.m.stats.Retries++
		return true
	})
}

// errStopped: a step abandoned because another failed first (its own
// error is not reported: the first failure is).
var errStopped = errors.New("apply: stopped")

// await waits under p.mu until cond(s) holds (true) or the applier failed
// (false); a wait is counted in w.
func (p *Parallel) await(cond func(Step) bool, s Step, w *waitStat) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped(s) || cond(s) {
		return !p.stopped(s)
	}
	w.n++
	t0 := p.m.clock()
	for !p.stopped(s) && !cond(s) {
		p.cond.Wait()
	}
	w.d += p.m.clock().Sub(t0)
	return !p.stopped(s)
}

// perform runs a step through x (the serial path: Drain, and the
// parallel driver's DDL, undo and account steps).
func perform(x Executor, s Step) (outcome, err error) {
	switch s.Kind {
	case StepNote:
		x.Note(s.Note)
	case StepTxn:
		err = x.Txn(s.Txn)
	case StepDDL:
		outcome, err = x.DDL(s.DDL)
	case StepUndoDDL:
		if err = x.UndoDDL(s.DDL); err == nil && s.Note != "" {
			x.Note(s.Note)
		}
	case StepAccounts:
		err = x.Accounts(s.Accounts)
	}
	return outcome, err
}

// EntryWaits returns how many times Entry waited for applied entries to
// make room under MaxPendingBytes.
func (p *Parallel) EntryWaits() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.entryWaits
}
