//go:build nogaplocks

package storage

import (
	"context"
	"errors"
	"testing"
	"time"

	"lockstep/internal/txn"
)

// TestNoGapLocksPhantomInsert (built only with -tags nogaplocks): a locking
// range read under REPEATABLE READ locks the rows it reads and no gap, so
// an insert into the range (a phantom) and past it goes ahead, while a
// write of a row it read still waits.
//
//	go test -tags nogaplocks ./internal/storage -run TestNoGapLocks
func TestNoGapLocksPhantomInsert(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seedIDs(t, e, tb, 10, 20, 30, 40)
	tx := e.Begin(txn.RepeatableRead)
	defer tx.Rollback()
	if got := scanIDs(t, tx, tb, PrimaryIndex, pkRange(10, 25), false, txn.LockX); len(got) != 2 {
		t.Fatalf("scan: %v", got)
	}
	missing := tx.Get // a read of a missing key locks no gap either
	if _, found, err := missing(context.Background(), tb, tpk(33), txn.LockX); err != nil || found {
		t.Fatalf("get 33: %v %v", found, err)
	}
	expectInserts(t, e, tb, []int{5, 15, 25, 35, 45}, []bool{false, false, false, false, false})
	if held := e.Locks.GapLocksHeld(); held {
		t.Fatal("gap locks held")
	}
	other := e.Begin(txn.RepeatableRead)
	defer other.Rollback()
	other.LockWait = 30 * time.Millisecond
	if _, _, err := other.Get(context.Background(), tb, tpk(20), txn.LockX); !errors.Is(err, txn.ErrLockWaitTimeout) {
		t.Fatalf("record 20: %v, want a lock wait timeout (record locks stay)", err)
	}
}
