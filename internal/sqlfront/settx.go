package sqlfront

import (
	"regexp"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// The isolation level of the next transaction only.
//
// MySQL gives `SET TRANSACTION ISOLATION LEVEL x` (no GLOBAL or SESSION)
// and `SET @@transaction_isolation = x` (no scope word) to the next
// transaction alone: the session's level is unchanged, and the statement
// fails with 1568 while a transaction is open. go-mysql-server sets the
// session variable. So the parser notes such a statement (nextTxSet); once
// go-mysql-server has run it, CommandEnd moves the value it set into the
// session's one-shot level and puts the session value back
// (finishNextTxSet); the next transaction to start takes the one-shot level
// and clears it (txIsolation).

// bareTxVar matches @@transaction_isolation / @@tx_isolation written with
// no scope word.
var bareTxVar = regexp.MustCompile(`(?i)@@(transaction_isolation|tx_isolation)\b`)

// nextTxSet reports whether stmt (parsed from query) sets the isolation
// level of the next transaction only.
func nextTxSet(query string, stmt ast.Statement) bool {
	set, ok := stmt.(*ast.Set)
	if !ok {
		return false
	}
	for _, e := range set.Exprs {
		if e.Name == nil {
			continue
		}
		switch e.Name.Name.Lowered() {
		case "transaction":
			if e.Scope == "" {
				return true
			}
		case "transaction_isolation", "tx_isolation":
			if e.Scope == ast.SessionStr && bareTxVar.MatchString(query) {
				return true
			}
		}
	}
	return false
}

// errTxInProgress is MySQL's ER_CANT_CHANGE_TX_CHARACTERISTICS.
var errTxInProgress = mysql.NewSQLError(1568, "25001", "Transaction characteristics can't be changed while a transaction is in progress")

// beginNextTxSet is called when such a statement is parsed: it fails it
// inside a transaction, and otherwise remembers the session value to put
// back.
func (s *Session) beginNextTxSet(ctx *sql.Context) error {
	if s.GetIgnoreAutoCommit() || (!s.autocommit() && s.tx != nil && !s.tx.Done()) {
		return errTxInProgress
	}
	v, err := s.GetSessionVariable(ctx, "transaction_isolation")
	if err != nil {
		return nil
	}
	s.nextTx.pending, s.nextTx.prev = true, v
	return nil
}

// finishNextTxSet runs at the end of the statement: the value the
// statement set becomes the next transaction's level, the session keeps
// its own.
func (s *Session) finishNextTxSet() {
	if !s.nextTx.pending {
		return
	}
	s.nextTx.pending = false
	ctx := s.fastContext()
	v, err := s.GetSessionVariable(ctx, "transaction_isolation")
	if err != nil || v == s.nextTx.prev {
		return
	}
	if level, ok := v.(string); ok {
		s.nextTx.level = level
	}
	_ = s.SetSessionVariable(ctx, "transaction_isolation", s.nextTx.prev)
}

// nextTxState is a session's pending next-transaction isolation level.
type nextTxState struct {
	pending bool   // a SET of it is running
	prev    any    // the session value to put back
	level   string // the next transaction's level ("" when none)
	// The statement that took it, and the level: go-mysql-server starts a
	// transaction for the BEGIN statement itself and then BEGIN starts
	// another, which must get the same level.
	takenPid uint64
	taken    string
}

// take returns the level the transaction starting now in statement pid
// gets from a SET TRANSACTION without a scope, or "".
func (n *nextTxState) take(pid uint64) string {
	if n.level != "" {
		n.taken, n.takenPid = n.level, pid
		n.level = ""
		return n.taken
	}
	if pid != 0 && pid == n.takenPid {
		return n.taken
	}
	return ""
}
