package sqlfront

import "github.com/dolthub/go-mysql-server/sql"

// A failed statement's error in its diagnostics.
//
// MySQL lists a statement's error among its conditions: after a failed
// statement SHOW WARNINGS shows it (Level Error, after any warnings the
// statement raised first), SHOW ERRORS shows it alone, and @@error_count
// counts it. go-mysql-server keeps only warnings, so SHOW WARNINGS after an
// error showed the conditions of the statement before it, or nothing. The
// handler calls BeginStatement before each statement and NoteError with
// the error it sends; a statement that failed before it started its
// diagnostics (a syntax error) starts them then, so older conditions go.

// BeginStatement marks the start of a statement on connection connID.
func (fe *Frontend) BeginStatement(connID uint32) {
	if s := fe.session(connID); s != nil {
		s.cleared = false
		s.timer.reset() // interrupt.go
	}
}

// NoteError adds the error a statement of connection connID failed with
// to its diagnostics.
func (fe *Frontend) NoteError(connID uint32, code int, message string) {
	s := fe.session(connID)
	if s == nil {
		return
	}
	if !s.cleared {
		s.ClearWarnings()
	}
	s.BaseSession.Warn(&sql.Warning{Level: "Error", Code: code, Message: message})
}
