package sqlfront

import (
	"context"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/txn"
)

// TestLockingWritesNest: two UPDATE/DELETE editors open in one statement (a
// trigger's UPDATE inside an UPDATE) are both counted, so closing the inner
// one keeps the outer one's lock intent.
func TestLockingWritesNest(t *testing.T) {
	f := newTestFE(t)
	s := f.ctx.Session.(*Session)
	// A statement as the server runs it: its own process id.
	ctx := sql.NewContext(context.Background(), sql.WithSession(s), sql.WithPid(7))
	s.beginLockingWrite(ctx)
	s.beginLockingWrite(ctx)
	if s.writers != 2 {
		t.Fatalf("writers = %d after two editors, want 2", s.writers)
	}
	s.endLockingWrite()
	if got := s.lockIntent(ctx).mode; got != txn.LockX {
		t.Fatalf("lock intent after the inner editor closed = %v, want X", got)
	}
	s.endLockingWrite()
	if s.writers != 0 || s.stmtLock.mode != 0 {
		t.Fatalf("after both closed: writers %d, lock %v", s.writers, s.stmtLock)
	}
	s.rollbackTx()
}
