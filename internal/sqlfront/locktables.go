package sqlfront

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"

	"lockstep/internal/mdl"
)

// LOCK TABLES and UNLOCK TABLES are metadata locks (docs/mdl.md, "LOCK
// TABLES"): LOCK TABLES t READ takes SHARED_READ_ONLY, t WRITE
// SHARED_NO_READ_WRITE, held to UNLOCK TABLES, the next LOCK TABLES or the
// session's end. mdlRule takes them when the statement is planned (after
// giving back those of an earlier LOCK TABLES); running the statement
// only ends the transaction, as MySQL's do:
//   - LOCK TABLES commits the open transaction;
//   - UNLOCK TABLES commits it if the session had locked tables, and gives
//     the locks back.
//
// go-mysql-server's own LOCK TABLES asks each table for sql.Lockable,
// which lockstep's tables are not (it warned about every table).
func (o execOverride) buildLockTables(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	s, ok := ctx.Session.(*Session)
	if !ok {
		return sql.RowsToRowIter(), nil
	}
	_, unlock := n.(*plan.UnlockTables)
	locked := s.mdl != nil && s.mdl.HeldFor(mdl.Explicit)
	if (!unlock || locked) && ctx.GetIgnoreAutoCommit() && ctx.GetTransaction() != nil {
		iter, err := o.fe.exec.Build(ctx, plan.NewCommit(), row)
		if err != nil {
			return nil, err
		}
		if _, err := sql.RowIterToRows(ctx, iter); err != nil {
			return nil, err
		}
	}
	if unlock {
		s.unlockTables()
	} else {
		// From now on the session uses only these tables (lockcheck.go).
		s.locked, s.pendingLocked = s.pendingLocked, nil
		if s.locked == nil {
			s.locked = &lockedSet{}
		}
	}
	return sql.RowsToRowIter(), nil
}
