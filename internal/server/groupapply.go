package server

import (
	"fmt"
	"sync/atomic"
	"time"

	"lockstep/internal/apply"
	logrec "lockstep/internal/record"
)

// A member's parallel applier (docs/cluster.md, "Applying on a
// secondary"): with --replica-parallel-workers > 1 the entries of other
// members go to apply.Parallel, which applies the transactions of the
// primary's commit groups concurrently by their last_committed and
// publishes them in commit order (--replica-preserve-commit-order). Apply
// returns once the entry is handed over; the node flushes the applier at
// the end of each apply step (cluster.BatchStateMachine) and only then
// does the member report the batch applied: its applied index, GTIDs and
// checkpoints cover wholly applied entries only, a contiguous prefix. The
// primary's own entries go through EntryThrough once the workers are
// idle: they only advance the machine.

var _ interface{ Flush() error } = (*groupSM)(nil)

// reset makes m the member's machine (at start, and when a snapshot
// replaced the member's state), with a parallel applier on it if the
// member has workers. The apply step is not running.
func (s *groupSM) reset(m *apply.Machine) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if s.par != nil {
		err = s.par.Close() // idle: the node flushed it
	}
	s.m, s.par, s.pendIndex = m, nil, 0
	if s.popt.Workers > 1 {
		s.par = apply.NewParallel(m, groupExec{s.x}, s.popt)
	}
	if err != nil {
		return fmt.Errorf("stopping the parallel applier: %w", err)
	}
	return nil
}

// applyParallel is Apply with the parallel applier: another member's entry
// is handed to it, the primary's own performed through ownExec once every
// earlier entry is applied (then waiting for the pipeline to publish it,
// as the serial path does).
func (s *groupSM) applyParallel(par *apply.Parallel, index, term uint64, data []byte, own bool) error {
	if !own {
		if err := par.Entry(index, data); err != nil {
			return err
		}
		s.pendIndex, s.pendTerm = index, term
		return nil
	}
	if err := par.EntryThrough(index, data, ownExec{s.x}); err != nil {
		return err
	}
	pos, gno, err := par.Settled()
	if err != nil {
		return err
	}
	if err := s.g.p.WaitPublished(pos.Seq, s.g.applyStop); err != nil {
		return fmt.Errorf("the commit pipeline did not publish sequence number %d: %w", pos.Seq, err)
	}
	s.pendIndex = 0 // covered: everything before it is applied
	s.appliedUpTo(index, term, pos.Seq, gno)
	return nil
}

// Flush implements cluster.BatchStateMachine: it waits until the parallel
// applier has applied every entry handed to it, then records them applied.
func (s *groupSM) Flush() error {
	if s.pendIndex == 0 {
		return nil
	}
	index, term := s.pendIndex, s.pendTerm
	s.pendIndex = 0
	s.mu.Lock()
	par := s.par
	s.mu.Unlock()
	pos, gno, err := par.Settled()
	if err != nil {
		return err
	}
	s.appliedUpTo(index, term, pos.Seq, gno)
	return nil
}

// metrics is the applier's status: the parallel driver's, or the serial
// machine's.
func (s *groupSM) metrics() apply.Metrics {
	s.mu.Lock()
	par := s.par
	if par == nil {
		defer s.mu.Unlock()
		return s.m.Metrics()
	}
	s.mu.Unlock()
	return par.Metrics()
}

// closeApplier stops the parallel applier's workers (the node's steps
// have stopped).
func (s *groupSM) closeApplier() error {
	s.mu.Lock()
	par := s.par
	s.mu.Unlock()
	if par == nil {
		return nil
	}
	if err := par.Close(); err != nil {
		return fmt.Errorf("the parallel applier: %w", err)
	}
	return nil
}

// testTxnApplyDelay, in tests, makes every transaction another member's
// applier installs take at least this long (to show workers overlapping);
// testTxnApplyFail, if set, fails a transaction it returns an error for.
var (
	testTxnApplyDelay time.Duration
	testTxnApplyFail  atomic.Pointer[func(*logrec.Txn) error]
)

// testHooks runs the test hooks before another member's transaction.
func testHooks(t *logrec.Txn) error {
	if testTxnApplyDelay > 0 {
		time.Sleep(testTxnApplyDelay)
	}
	if f := testTxnApplyFail.Load(); f != nil {
		return (*f)(t)
	}
	return nil
}

// groupExec is the executor of other members' entries: recovery's.
type groupExec struct{ *recoveryExec }

var _ apply.HeldExecutor = groupExec{}

func (x groupExec) Txn(t *logrec.Txn) error {
	if err := testHooks(t); err != nil {
		return err
	}
	return x.recoveryExec.Txn(t)
}

func (x groupExec) TxnHeld(t *logrec.Txn) (publish, rollback func(), err error) {
	if err := testHooks(t); err != nil {
		return nil, nil, err
	}
	return x.recoveryExec.TxnHeld(t)
}
