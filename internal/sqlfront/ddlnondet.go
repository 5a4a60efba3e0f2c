package sqlfront

import (
	"reflect"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// DDL that fills rows from a non-deterministic expression. ALTER TABLE ...
// ADD COLUMN fills the rows a table has with the new column's default (or
// generated) expression. The statement is logged as its text and replayed
// by running it again (ddllog.go), with the session state its marks carry
// (ddlmarks.go): the statement's time, time zone, sql_mode, character
// sets. An expression whose value depends on nothing of that — UUID(),
// RAND() without a seed, SYSDATE(), CONNECTION_ID(), USER() — would fill
// the rows with other values at every replay, and a restarted server (or
// a replica) would hold other data than the one that ran it. MySQL with
// GTIDs refuses such a statement, as the binary log cannot carry it either:
// ER_GTID_UNSAFE_ALTER_ADD_COL_WITH_DEFAULT_EXPRESSION. Lockstep refuses it
// when the statement would fill rows — the table has some — and the
// statement is being logged (not at recovery, which replays what was
// logged, and not without a log).

// errUnsafeAddColumnDefault is MySQL's error 3775.
func errUnsafeAddColumnDefault() error {
	return mysql.NewSQLError(3775, "HY000",
		"Statement violates GTID consistency: ALTER TABLE ... ADD COLUMN .. with expression as DEFAULT.")
}

// unreplayableFill returns the expression ADD COLUMN fills existing rows
// with, if its value cannot be reproduced by replaying the statement; nil
// otherwise.
func unreplayableFill(col *sql.Column) sql.Expression {
	fill := col.Generated
	if fill == nil {
		fill = col.Default
	}
	if fill == nil || fill.Expr == nil {
		return nil
	}
	var found sql.Expression
	transform.InspectExpr(fill.Expr, func(e sql.Expression) bool {
		if !replayable(e) {
			found = e
			return true
		}
		return false
	})
	return found
}

// replayable reports whether e gives the same value when its statement
// is replayed from the log: it is deterministic, or what it depends on is
// in the statement's marks (NOW() and the other functions of the
// statement's time; DATABASE(): the record's database; VERSION(): the
// binary's).
func replayable(e sql.Expression) bool {
	nd, ok := e.(sql.NonDeterministicExpression)
	if !ok || !nd.IsNonDeterministic() {
		return true
	}
	switch f := e.(type) {
	case *function.Now:
		return !exactTime(f) // SYSDATE() reads the clock at each call
	case *function.CurrDate, function.CurrDate, *function.CurrTime,
		*function.Database, *function.Version, function.Version:
		return true
	}
	return false
}

// exactTime reports whether n is SYSDATE(), which go-mysql-server builds
// as NOW() reading the clock at every call (an unexported flag).
func exactTime(n *function.Now) bool {
	f := reflect.ValueOf(n).Elem().FieldByName("alwaysUseExactTime")
	return !f.IsValid() || f.Bool() // unknown layout: assume the worst
}

// loggingDDL reports whether the running statement is being logged (it
// holds the DDL latch, which beginDDL takes only with a logger).
func loggingDDL(ctx *sql.Context) bool {
	s, _ := ctx.Session.(*Session)
	return s != nil && s.ddl.held
}

// checkReplayableFill refuses ADD COLUMN of col with error 3775 if the
// statement is being logged, the column's fill expression cannot be
// replayed, and the table has a committed row. The rewrite also fills
// versions no committed read sees (a deleted row's, kept for an open
// snapshot; a row not committed yet): those are gone from the table's
// final state, or reach the log in their transaction's record.
func (t *Table) checkReplayableFill(ctx *sql.Context, col *sql.Column) error {
	if !loggingDDL(ctx) || unreplayableFill(col) == nil {
		return nil
	}
	tx := t.db.fe.store.Begin(txn.ReadCommitted)
	defer tx.Rollback()
	rows := false
	err := tx.Scan(ctx, t.entry.store, storage.PrimaryIndex, storage.Range{}, false, 0, func(_, _ []byte) (bool, error) {
		rows = true
		return false, nil
	})
	if err != nil {
		return err
	}
	if rows {
		return errUnsafeAddColumnDefault()
	}
	return nil
}
