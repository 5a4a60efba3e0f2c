package storage

import (
	"testing"

	"lockstep/internal/txn"
)

// TestAutocommitReadAllocs: an autocommit point read (sysbench's point
// select: begin, one Get with a fresh view, commit) allocates once: the
// Tx, its txn.Trx and the first read view are one object (issue 35; they
// were three, plus the view's bits).
func TestAutocommitReadAllocs(t *testing.T) {
	e := New(Options{})
	tb := loadSysbench(t, e, 1000, true)
	key := sbKey(42)
	got := testing.AllocsPerRun(200, func() {
		tx := e.Begin(txn.RepeatableRead)
		if _, ok, err := tx.Get(bg, tb, key, 0); !ok || err != nil {
			t.Fatal("miss", err)
		}
		_ = tx.Commit()
	})
	if got != 1 {
		t.Fatalf("%v allocations per autocommit point read, want 1", got)
	}
}
