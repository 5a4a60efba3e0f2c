package sqlfront

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
)

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

// fkChecksOffMark starts the logged text of a DDL statement that ran with
// foreign_key_checks=0 (a dump being loaded creates a child table before
// its parent). Replay runs the statement with the same setting, so that it
// succeeds or fails as it did (MySQL's binary log carries the flag with
// each statement too). The mark is a comment: the text stays the
// statement, and a binary without this rule replays it as before.
const fkChecksOffMark = "/* lockstep: foreign_key_checks=0 */ "

// fkChecks reports the session's foreign_key_checks.
func fkChecks(ctx *sql.Context) bool {
	v, err := ctx.GetSessionVariable(ctx, "foreign_key_checks")
	if err != nil {
		return true
	}
	switch x := v.(type) {
	case int8:
		return x != 0
	case int64:
		return x != 0
	case int:
		return x != 0
	}
	return true
}

// loggedDDLText is the text logged for the running DDL statement.
// It starts with marks (comments) carrying the session state the
// statement's outcome depends on: collation_server always (collation.go),
// foreign_key_checks when off.
func loggedDDLText(ctx *sql.Context) string {
	mark := collationMark(sessionCollationServer(ctx))
	if !fkChecks(ctx) {
		mark += fkChecksOffMark
	}
	return mark + ctx.Query()
}

// replayText returns the statement a logged text runs, setting on ctx the
// session state the text carries. A text without a collation mark was
// logged before lockstep's default became MySQL's: it ran under
// utf8mb4_0900_bin.
func replayText(ctx *sql.Context, logged string) (string, error) {
	q, coll := cutCollationMark(logged)
	if coll == "" {
		coll = legacyCollation
	}
	if err := ctx.SetSessionVariable(ctx, "collation_server", coll); err != nil {
		return q, fmt.Errorf("collation_server %q: %w", coll, err)
	}
	if rest, ok := strings.CutPrefix(q, fkChecksOffMark); ok {
		return rest, ctx.SetSessionVariable(ctx, "foreign_key_checks", int8(0))
	}
	return q, nil
}
