package apply

import (
	"fmt"

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
// serial applier). A failed step stops it with an error naming the log
// index, the sequence number and the GNO; the machine's applied position
// stays before that step.
func Drain(m *Machine, x Executor) error {
	for {
		s, ok := m.Next()
		if !ok {
			return nil
		}
		outcome, err := perform(x, s)
		if err != nil {
			return fmt.Errorf("log index %d (sequence number %d, GNO %d): %w", s.Index, s.Pos.Seq, s.Pos.GNO, err)
		}
		m.Done(s, outcome)
	}
}
