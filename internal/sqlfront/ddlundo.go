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
// The statement is logged before its first change, failing or not, and
// recovery replays it: it fails again in the same way (same catalog, same
// foreign_key_checks, see fkChecksOffMark) and its undo runs again.

// onFailedDDL registers fn to undo a change of the running DDL statement
// should the statement fail.
func (s *Session) onFailedDDL(ctx *sql.Context, fn func()) {
	if s.ddlUndoPid != ctx.Pid() {
		s.ddlUndo = s.ddlUndo[:0]
		s.ddlUndoPid = ctx.Pid()
	}
	s.ddlUndo = append(s.ddlUndo, fn)
}

// ddlSucceeded forgets the undo of a statement that committed.
func (s *Session) ddlSucceeded() { s.ddlUndo = s.ddlUndo[:0] }

// undoFailedDDL undoes, newest first, what a statement that did not
// commit changed.
func (s *Session) undoFailedDDL() {
	for i := len(s.ddlUndo) - 1; i >= 0; i-- {
		s.ddlUndo[i]()
	}
	s.ddlUndo = s.ddlUndo[:0]
}
