package server

import (
	"fmt"
	"io"

	logrec "lockstep/internal/record"
	"lockstep/internal/sqlfront"
)

// DDL records at recovery. A DDL record is a statement to run again, a
// checkpoint marker (no text), or the failure mark of the statement
// logged before it (sqlfront/ddllog.go): that statement failed when it
// ran and what it changed was undone. The DDL latch keeps every other DDL
// record out from between a statement and its mark, so a statement's
// outcome is known at the next DDL record or the end of the log:
//
//   - a mark follows: the statement failed. If replay failed too (the
//     usual case: same catalog, same session state) it has undone
//     itself and nothing is said; if replay succeeded, its changes are
//     undone now, and a line says so.
//   - no mark follows: the statement succeeded when it ran, or it was
//     still running at a crash (the client never heard; replay's outcome
//     stands), or it was logged by a lockstep that logged failed
//     statements without a mark. If replay failed, it undid itself as it
//     did when it ran, and a note says that there is nothing to do.
//
// A replica's applier would do the same: apply the statement in order,
// keep its undo until the next DDL record, undo it at a mark.

// ddlReplay follows the DDL statement replayed last.
type ddlReplay struct {
	index uint64 // its log index; 0: none pending
	err   error  // its error at replay
}

// apply applies a DDL record d at log index index.
func (r *ddlReplay) apply(fe *sqlfront.Frontend, d *logrec.DDL, index uint64, w io.Writer) error {
	if at, ok := sqlfront.FailedDDLIndex(d.Query); ok {
		return r.failed(fe, d, uint64(at), index, w)
	}
	r.settle(w)
	if d.Query == "" {
		return nil // a checkpoint marker
	}
	derr, err := fe.ReplayDDL(d.Database, d.Query, d.NextTableID)
	if err != nil {
		return err
	}
	r.index, r.err = index, derr
	return nil
}

// failed applies the failure mark at index of the statement logged at at.
func (r *ddlReplay) failed(fe *sqlfront.Frontend, d *logrec.DDL, at, index uint64, w io.Writer) error {
	if r.index != at {
		// The statement is not the one replayed last: it is before the
		// checkpoint recovery started from (which came after its mark,
		// the latch sees to that, so the checkpoint holds the catalog as
		// the undo left it). Nothing to undo.
		r.settle(w)
		return nil
	}
	replayed := r.err == nil
	r.index, r.err = 0, nil
	if err := fe.ReplayFailedDDL(d.NextTableID); err != nil {
		return fmt.Errorf("the failure mark of the DDL statement at log index %d: %w", at, err)
	}
	if replayed {
		fmt.Fprintf(w, "lockstep: recovery: log index %d: the DDL statement at log index %d failed when it ran but not at replay; what it changed is undone, as it was then\n", index, at)
	}
	return nil
}

// settle ends the pending statement: the next record is another DDL
// record, or the log ends, so no failure mark follows it.
func (r *ddlReplay) settle(w io.Writer) {
	if r.index != 0 && r.err != nil {
		fmt.Fprintf(w, "lockstep: recovery: note: log index %d: a DDL statement fails at replay (%v) as it failed when it ran: an earlier lockstep logged failed statements too (or it was still running at a crash); nothing to do\n",
			r.index, r.err)
	}
	r.index, r.err = 0, nil
}
