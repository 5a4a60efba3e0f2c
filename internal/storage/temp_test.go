package storage

import (
	"slices"
	"testing"

	"lockstep/internal/txn"
)

// TestTempTableStaysOutOfTheLog: a temporary table's changes never reach
// the committer — a transaction touching only it commits without a record,
// a mixed one carries only the permanent table's rows — and roll back
// like any table's.
func TestTempTableStaysOutOfTheLog(t *testing.T) {
	fc := &fakeCommitter{}
	e := New(Options{PurgeInterval: -1, Committer: fc})
	defer e.Close()
	perm := newKTable(e, false)
	next := e.NextTableID()
	tmp, err := e.NewTempTable("tmp", testDesc(kIndex("k", true)))
	must(t, err)
	if e.NextTableID() != next {
		t.Fatal("NewTempTable took a durable id")
	}
	if got, known := e.TableByID(uint64(tmp.ID())); got != nil || known {
		t.Fatal("a temporary table is in the durable registry")
	}
	autocommit(t, e, func(w *Tx) { ins(t, w, tmp, 1, 10, "t1") })
	if len(fc.recs) != 0 {
		t.Fatalf("a temporary-only transaction sent %d records", len(fc.recs))
	}
	autocommit(t, e, func(w *Tx) {
		ins(t, w, tmp, 2, 20, "t2")
		ins(t, w, perm, 1, 10, "p1")
	})
	if len(fc.recs) != 1 || len(fc.recs[0].Changes) != 1 || fc.recs[0].Changes[0].Table != uint64(perm.ID()) {
		t.Fatalf("mixed transaction's records: %+v", fc.recs)
	}
	tx := e.Begin(txn.RepeatableRead)
	ins(t, tx, tmp, 3, 30, "t3")
	tx.Rollback()
	r := e.Begin(txn.RepeatableRead)
	defer r.Rollback()
	if got := scan(t, r, tmp, PrimaryIndex, Range{}, false, 0); !slices.Equal(got, []string{"1:k=10;v=t1", "2:k=20;v=t2"}) {
		t.Fatalf("temporary table rows = %v", got)
	}
}
