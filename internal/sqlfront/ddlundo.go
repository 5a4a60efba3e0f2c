package sqlfront

import "github.com/dolthub/go-mysql-server/sql"

// A failed DDL statement changes nothing. go-mysql-server runs a CREATE
// TABLE as several catalog calls — create the table, add each index, each
// foreign key — and stops at the first that fails, leaving what the others
// did; MySQL's DDL is atomic. A change that a later step of the same
// statement may have to take back registers its undo with the session;
// the undo runs if the statement ends without committing (go-mysql-server
// commits every successful DDL statement, CommitTransaction), while the
// statement still holds the DDL latch, so no checkpoint or other DDL sees
// the partial change.
//
// A statement that failed after it was logged is followed in the log by a
// failure mark (ddllog.go, endDDL). Recovery runs the statement again: it
// fails again in the same way (same catalog, same session state, see
// ddlmarks.go) and its undo runs again; if it succeeds instead, the undo
// it registered is kept and run at the mark (Frontend.ReplayFailedDDL).

// onFailedDDL registers fn to undo a change of the running DDL statement
// should the statement fail.
func (s *Session) onFailedDDL(ctx *sql.Context, fn func()) {
	if s.ddlUndoPid != ctx.Pid() {
		s.ddlUndo = s.ddlUndo[:0]
		s.ddlUndoPid = ctx.Pid()
	}
	s.ddlUndo = append(s.ddlUndo, fn)
}

// ddlSucceeded notes that the running statement committed and forgets its
// undo — or, for a statement being replayed, keeps it (ddlStatement).
func (s *Session) ddlSucceeded() {
	s.ddl.committed = true
	if s.ddl.keepUndo {
		s.ddl.doneUndo = append(s.ddl.doneUndo[:0], s.ddlUndo...)
	}
	clear(s.ddlUndo)
	s.ddlUndo = s.ddlUndo[:0]
}

// undoFailedDDL undoes, newest first, what a statement that did not
// commit changed.
func (s *Session) undoFailedDDL() {
	for i := len(s.ddlUndo) - 1; i >= 0; i-- {
		s.ddlUndo[i]()
	}
	clear(s.ddlUndo)
	s.ddlUndo = s.ddlUndo[:0]
}
