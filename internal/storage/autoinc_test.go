package storage

import (
	"reflect"
	"testing"

	logrec "lockstep/internal/record"
	"lockstep/internal/txn"
)

// insAuto inserts a row whose id the table's AUTO_INCREMENT counter hands
// out, as sqlfront does, and returns the id.
func insAuto(t testing.TB, tx *Tx, tb *Table) int {
	t.Helper()
	id := int(tb.NextAutoIncrement(0))
	ins(t, tx, tb, id, id, "a")
	return id
}

func counters(rec *CommitRecord) map[uint64]uint64 {
	m := map[uint64]uint64{}
	for _, a := range rec.AutoInc {
		m[a.Table] = a.Next
	}
	return m
}

// TestCommitRecordAutoInc: a commit record carries the counter of each
// table its transaction wrote that has one, as it stood at commit; and the
// counters rollbacks moved, in the next record written, whatever it wrote.
func TestCommitRecordAutoInc(t *testing.T) {
	fc := &fakeCommitter{}
	e := New(Options{PurgeInterval: -1, Committer: fc})
	defer e.Close()
	a := newTable(e, "a")
	b := newTable(e, "b")
	plain := newTable(e, "plain") // no AUTO_INCREMENT counter
	last := func() map[uint64]uint64 { return counters(fc.recs[len(fc.recs)-1]) }
	ida, idb := uint64(a.ID()), uint64(b.ID())

	// Ids 1..5 into a; a row into plain: only a's counter.
	autocommit(t, e, func(tx *Tx) {
		for i := 0; i < 5; i++ {
			insAuto(t, tx, a)
		}
		ins(t, tx, plain, 1, 1, "p")
	})
	if got := last(); !reflect.DeepEqual(got, map[uint64]uint64{ida: 6}) {
		t.Fatalf("after ids 1..5: counters %v", got)
	}
	// Deleting 4 and 5 carries the counter too.
	autocommit(t, e, func(tx *Tx) { del(t, tx, a, 4); del(t, tx, a, 5) })
	if got := last(); !reflect.DeepEqual(got, map[uint64]uint64{ida: 6}) {
		t.Fatalf("after deleting 4, 5: counters %v", got)
	}
	// A transaction writing plain only: none.
	autocommit(t, e, func(tx *Tx) { ins(t, tx, plain, 2, 2, "p") })
	if got := last(); len(got) != 0 {
		t.Fatalf("a transaction on a table without a counter: %v", got)
	}

	// A rolled-back transaction's ids (6, 7) and a statement rolled back
	// inside a committed transaction (8): the next record carries a's
	// counter although its transaction writes only b, then no more.
	tx := e.Begin(txn.RepeatableRead)
	insAuto(t, tx, a)
	insAuto(t, tx, a)
	tx.Rollback()
	tx = e.Begin(txn.RepeatableRead)
	ins(t, tx, plain, 3, 3, "p")
	mark := tx.Savepoint()
	insAuto(t, tx, a)
	tx.RollbackTo(mark)
	commit(t, tx)
	if got := last(); !reflect.DeepEqual(got, map[uint64]uint64{ida: 9}) {
		t.Fatalf("the commit after rollbacks: counters %v, want a's 9", got)
	}
	autocommit(t, e, func(tx *Tx) { insAuto(t, tx, b) })
	if got := last(); !reflect.DeepEqual(got, map[uint64]uint64{idb: 2}) {
		t.Fatalf("the commit after that: counters %v, want b's only", got)
	}

	// Inserted and deleted again in one transaction: no record; the next
	// one carries the counter.
	n := len(fc.recs)
	autocommit(t, e, func(tx *Tx) { id := insAuto(t, tx, a); del(t, tx, a, id) })
	if len(fc.recs) != n {
		t.Fatal("a transaction that left nothing wrote a record")
	}
	autocommit(t, e, func(tx *Tx) { insAuto(t, tx, b) })
	if got := last(); !reflect.DeepEqual(got, map[uint64]uint64{ida: 10, idb: 3}) {
		t.Fatalf("after an insert deleted in its own transaction: counters %v", got)
	}

	// A commit that fails leaves the counters it took for the next record.
	tx = e.Begin(txn.RepeatableRead)
	insAuto(t, tx, a)
	tx.Rollback() // a at 11, noted
	fc.fail = true
	tx = e.Begin(txn.RepeatableRead)
	ins(t, tx, plain, 4, 4, "p")
	if err := tx.Commit(); err == nil {
		t.Fatal("the failing committer's commit succeeded")
	}
	fc.fail = false
	autocommit(t, e, func(tx *Tx) { ins(t, tx, plain, 5, 5, "p") })
	if got := last(); !reflect.DeepEqual(got, map[uint64]uint64{ida: 11}) {
		t.Fatalf("after a failed commit: counters %v, want a's 11", got)
	}
}

// TestApplyAutoInc: the counters of one engine's records, applied to a
// second engine (as recovery and a replica's applier do), continue the
// first engine's counter there — past ids since deleted and rolled back —
// not the largest id present. Applying never lowers a counter, skips
// dropped tables and refuses a table id the engine never reached.
func TestApplyAutoInc(t *testing.T) {
	fc := &fakeCommitter{}
	src := New(Options{PurgeInterval: -1, Committer: fc})
	defer src.Close()
	sa := newTable(src, "a")
	autocommit(t, src, func(tx *Tx) {
		for i := 0; i < 5; i++ {
			insAuto(t, tx, sa)
		}
	})
	autocommit(t, src, func(tx *Tx) { del(t, tx, sa, 4); del(t, tx, sa, 5) })
	tx := src.Begin(txn.RepeatableRead)
	insAuto(t, tx, sa) // 6, rolled back
	tx.Rollback()
	autocommit(t, src, func(tx *Tx) { del(t, tx, sa, 3) }) // carries 7

	dst := newTestEngine(t)
	da := newTable(dst, "a")
	for _, rec := range fc.recs {
		if _, err := dst.ApplyTxn(rec.Changes); err != nil {
			t.Fatal(err)
		}
		must(t, dst.ApplyAutoInc(rec.AutoInc))
	}
	if got, want := da.PeekAutoIncrement(), sa.PeekAutoIncrement(); got != want || got != 7 {
		t.Fatalf("applied counter %d, source %d, want 7", got, want)
	}
	// Older records again (any order): the counter stays.
	must(t, dst.ApplyAutoInc(fc.recs[0].AutoInc))
	must(t, dst.ApplyAutoInc([]logrec.AutoInc{{Table: uint64(da.ID()), Next: 2}}))
	if got := da.NextAutoIncrement(0); got != 7 {
		t.Fatalf("next id after re-applying older counters: %d, want 7", got)
	}
	da.Drop()
	must(t, dst.ApplyAutoInc([]logrec.AutoInc{{Table: uint64(da.ID()), Next: 50}}))
	if err := dst.ApplyAutoInc([]logrec.AutoInc{{Table: 999, Next: 1}}); err == nil {
		t.Fatal("a counter of a table id the engine never had was applied")
	}
}
