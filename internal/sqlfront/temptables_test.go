package sqlfront

import (
	"errors"
	"testing"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// TestTempTablesEndWithSession: a session's temporary tables are dropped
// from storage when it ends, take no durable table id, and their rows
// never reach a commit record.
func TestTempTablesEndWithSession(t *testing.T) {
	f := newTestFE(t)
	f.mustExec(f.ctx, "CREATE DATABASE d", "USE d")
	ctx := f.session()
	nextID := f.fe.store.NextTableID()
	f.mustExec(ctx, "CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY)", "INSERT INTO tmp VALUES (1)")
	if got := f.fe.store.NextTableID(); got != nextID {
		t.Fatalf("a temporary table took durable id %d", nextID)
	}
	s := ctx.Session.(*Session)
	te := s.tempTable("d", "tmp")
	if te == nil {
		t.Fatal("the session has no temporary table tmp")
	}
	s.SessionEnd()
	if len(s.temps) != 0 {
		t.Fatalf("temporary tables left after SessionEnd: %d", len(s.temps))
	}
	tx := f.fe.store.Begin(txn.RepeatableRead)
	defer tx.Rollback()
	if err := tx.Insert(ctx, te.store, 0, appendIntKey(nil, 2), nil); !errors.Is(err, storage.ErrTableDropped) {
		t.Fatalf("write to a dropped session's temporary table: %v, want ErrTableDropped", err)
	}
}
