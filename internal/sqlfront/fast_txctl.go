package sqlfront

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// Transaction control on the fast path: BEGIN / START TRANSACTION, COMMIT
// and ROLLBACK in their plain forms (sysbench and TPC-C drivers send them
// around every transaction, often as prepared statements). They do what
// go-mysql-server's StartTransaction, Commit and Rollback nodes do with
// lockstep's session: BEGIN commits an open transaction first, then starts
// one and stops autocommit until it ends; COMMIT and ROLLBACK end it. Forms
// with options (READ ONLY, WITH CONSISTENT SNAPSHOT, AND CHAIN, RELEASE,
// TO SAVEPOINT) and a BEGIN while a SET TRANSACTION level is pending for the
// next transaction are left to go-mysql-server.

// txControl is a plain transaction control statement.
type txControl uint8

const (
	txBegin txControl = iota + 1
	txCommit
	txRollback
)

// txControlOf recognises a plain BEGIN, START TRANSACTION, COMMIT or
// ROLLBACK (optionally WORK, and a trailing semicolon), or returns 0.
func txControlOf(q string) txControl {
	if len(q) > 24 {
		return 0
	}
	q = strings.TrimSpace(q)
	if len(q) < 5 {
		return 0
	}
	switch q[0] | 0x20 { // every text query up to 24 bytes comes here: most leave at once
	case 'b', 'c', 'r', 's':
	default:
		return 0
	}
	q = strings.TrimSpace(strings.TrimSuffix(q, ";"))
	switch strings.ToLower(strings.Join(strings.Fields(q), " ")) {
	case "begin", "begin work", "start transaction":
		return txBegin
	case "commit", "commit work":
		return txCommit
	case "rollback", "rollback work":
		return txRollback
	}
	return 0
}

// runTxControl executes a transaction control statement. handled is false
// when go-mysql-server must run it.
func (s *Session) runTxControl(c txControl) (*sqltypes.Result, bool, error) {
	sctx := s.fastContext()
	switch c {
	case txBegin:
		if s.nextTx.pending || s.nextTx.level != "" {
			return nil, false, nil
		}
		if cur := s.GetTransaction(); cur != nil {
			if err := s.CommitTransaction(sctx, cur); err != nil {
				return nil, true, err
			}
		}
		t, err := s.StartTransaction(sctx, sql.ReadWrite)
		if err != nil {
			return nil, true, err
		}
		s.SetTransaction(t)
		s.SetIgnoreAutoCommit(true)
	case txCommit:
		if cur := s.GetTransaction(); cur != nil {
			if err := s.CommitTransaction(sctx, cur); err != nil {
				return nil, true, err
			}
			s.SetIgnoreAutoCommit(false)
			s.SetTransaction(nil)
		}
	case txRollback:
		if cur := s.GetTransaction(); cur != nil {
			if err := s.Rollback(sctx, cur); err != nil {
				return nil, true, err
			}
			s.SetIgnoreAutoCommit(false)
			s.SetTransaction(nil)
		}
	}
	s.ClearWarnings()
	s.SetLastQueryInfoInt(sql.RowCount, 0)
	sql.IncrementStatusVariable(sctx, "Questions", 1)
	return &sqltypes.Result{}, true, nil
}
