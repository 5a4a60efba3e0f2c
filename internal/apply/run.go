package apply

import (
	"lockstep/internal/record"
)

// Executor performs steps: the I/O edge of the machine. The server wires
// it to storage (ApplyTxn, ApplyAutoInc), to sqlfront (ReplayDDL,
// ReplayFailedDDL, LoadAccounts) and to its output.
type Executor interface {
	// Txn applies a transaction's row changes and then its AUTO_INCREMENT
	// counters (storage.Engine.ApplyTxn, ApplyAutoInc).
	Txn(t *record.Txn) error
	// DDL runs a statement. stmtErr is the statement's own failure (it may
	// have failed on the source too: its mark says so later); err is a
	// failure of the applier.
	DDL(d *record.DDL) (stmtErr, err error)
	// UndoDDL undoes the DDL statement run last: mark is its failure mark
	// (its NextTableID is the source's next table id after the undo).
	UndoDDL(mark *record.DDL) error
	// Accounts installs the accounts.
	Accounts(a *record.Accounts) error
	// Note prints a line.
	Note(line string)
}

// Drain performs, one at a time, every step the machine has ready (the
// serial applier). A step whose executor error is transient is tried
// again (Options.Retry; Stats.Retries counts the retries); a step that
// fails otherwise, or still fails after the retries, stops it with an
// error naming the log index, the sequence number and the GTID, and the
// machine's applied position stays before that step.
func Drain(m *Machine, x Executor) error {
	for {
		s, ok := m.Next()
		if !ok {
			return nil
		}
		var outcome error
		err := m.retry.do(func() (err error) {
			outcome, err = perform(x, s)
			return err
		}, func() bool {
			m.stats.Retries++
			return true
		})
		if err != nil {
			return m.stepError(s, err)
		}
		m.Done(s, outcome)
	}
}
