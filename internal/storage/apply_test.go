package storage

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	logrec "lockstep/internal/record"
	"lockstep/internal/txn"
)

// TestApplyReplaysCommitRecords: the records one engine produces, applied
// to a second engine with the same tables, give the same rows and index
// entries; applying the last one again changes nothing; dropped tables are skipped
// and unknown ones are an error.
func TestApplyReplaysCommitRecords(t *testing.T) {
	fc := &fakeCommitter{}
	src := New(Options{PurgeInterval: -1, Committer: fc})
	defer src.Close()
	st := newKTable(src, true)
	seed(t, src, st, 5, func(id int) int { return id })
	tx := src.Begin(txn.RepeatableRead)
	upd(t, tx, st, 1, 100, "x")
	del(t, tx, st, 2)
	ins(t, tx, st, 9, 9, "new")
	commit(t, tx)

	dst := newTestEngine(t)
	dt := newKTable(dst, true)
	if dt.ID() != st.ID() {
		t.Fatalf("table ids differ: %d vs %d", dt.ID(), st.ID())
	}
	for i, rec := range fc.recs {
		n, err := dst.ApplyTxn(rec.Changes)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(rec.Changes) {
			t.Fatalf("record %d: applied %d of %d", i, n, len(rec.Changes))
		}
	}
	// Re-applying the record last applied is a no-op (a crash between
	// applying and recording the position); older records are skipped by
	// their GTID, not here.
	if n, err := dst.ApplyTxn(fc.recs[len(fc.recs)-1].Changes); err != nil || n != 0 {
		t.Fatalf("re-applying the last record: %d changes, %v", n, err)
	}
	r1, r2 := src.Begin(txn.RepeatableRead), dst.Begin(txn.RepeatableRead)
	defer r1.Rollback()
	defer r2.Rollback()
	for _, idx := range []int{PrimaryIndex, 0} {
		want, got := scan(t, r1, st, idx, Range{}, false, 0), scan(t, r2, dt, idx, Range{}, false, 0)
		if !slices.Equal(got, want) || len(got) != 5 {
			t.Fatalf("index %d after apply: %q, want %q", idx, got, want)
		}
	}
	dst.Purge()
	if got := scan(t, r2, dt, 0, Range{}, false, 0); len(got) != 5 {
		t.Fatalf("after purge: %q", got)
	}

	dt.Drop()
	if n, err := dst.ApplyTxn(fc.recs[0].Changes); err != nil || n != 0 {
		t.Fatalf("apply to a dropped table: %d, %v", n, err)
	}
	bad := []logrec.Change{{Op: logrec.OpInsert, Table: 999, Version: 1, PK: tpk(1), After: trow(1, "a")}}
	if _, err := dst.ApplyTxn(bad); err == nil {
		t.Fatal("apply to an unknown table id succeeded")
	}
	if tb, known := dst.TableByID(uint64(dt.ID())); tb != nil || !known {
		t.Fatalf("TableByID(dropped) = %v, %v", tb, known)
	}
}

// TestApplyTxnHeld: a transaction applied held is invisible until it is
// published, even to a view opened after a later transaction was
// published; a transaction that builds on a held one (its dependant)
// applies on top of its versions.
func TestApplyTxnHeld(t *testing.T) {
	fc := &fakeCommitter{}
	src := New(Options{PurgeInterval: -1, Committer: fc})
	defer src.Close()
	st := newKTable(src, true)
	seed(t, src, st, 2, func(id int) int { return id })
	tx := src.Begin(txn.RepeatableRead)
	upd(t, tx, st, 1, 100, "x")
	commit(t, tx)
	tx = src.Begin(txn.RepeatableRead)
	upd(t, tx, st, 2, 200, "y")
	commit(t, tx)
	tx = src.Begin(txn.RepeatableRead)
	upd(t, tx, st, 1, 101, "z")
	commit(t, tx)
	recs := fc.recs[len(fc.recs)-3:]

	dst := newTestEngine(t)
	dt := newKTable(dst, true)
	for _, rec := range fc.recs[:len(fc.recs)-3] {
		if _, err := dst.ApplyTxn(rec.Changes); err != nil {
			t.Fatal(err)
		}
	}
	rows := func() []string {
		r := dst.Begin(txn.RepeatableRead)
		defer r.Rollback()
		return scan(t, r, dt, PrimaryIndex, Range{}, false, 0)
	}
	before := rows()
	_, h1, err := dst.ApplyTxnHeld(recs[0].Changes)
	if err != nil {
		t.Fatal(err)
	}
	_, h2, err := dst.ApplyTxnHeld(recs[1].Changes)
	if err != nil {
		t.Fatal(err)
	}
	h2.Publish()                                    // out of order on purpose: storage does not order publication
	_, h3, err := dst.ApplyTxnHeld(recs[2].Changes) // builds on held recs[0]
	if err != nil {
		t.Fatal(err)
	}
	mid := rows()
	if slices.Equal(mid, before) {
		t.Fatalf("published transaction not visible: %q", mid)
	}
	h1.Publish()
	h3.Publish()
	r1 := src.Begin(txn.RepeatableRead)
	defer r1.Rollback()
	want := scan(t, r1, st, PrimaryIndex, Range{}, false, 0)
	if got := rows(); !slices.Equal(got, want) {
		t.Fatalf("after publishing all: %q, want %q", got, want)
	}
	// Before pub1, a view saw recs[1] but neither recs[0] nor recs[2].
	if mid[0] != before[0] || mid[1] == before[1] {
		t.Fatalf("before publishing 1 and 3: %q (start %q)", mid, before)
	}
}

// TestApplyTxnAtomic: a transaction whose N-th change fails leaves nothing
// of itself — not the changes before N (rows, index entries, the row
// count) — for every N; applying it whole afterwards gives the source's
// rows. A held transaction rolled back leaves nothing either.
func TestApplyTxnAtomic(t *testing.T) {
	fc := &fakeCommitter{}
	src := New(Options{PurgeInterval: -1, Committer: fc})
	defer src.Close()
	st := newKTable(src, true)
	seed(t, src, st, 3, func(id int) int { return id })
	tx := src.Begin(txn.RepeatableRead)
	upd(t, tx, st, 1, 100, "x")
	del(t, tx, st, 2)
	ins(t, tx, st, 4, 4, "d")
	ins(t, tx, st, 5, 5, "e")
	ins(t, tx, st, 6, 6, "f")
	commit(t, tx)
	seedRec, multi := fc.recs[0], fc.recs[1].Changes
	if len(multi) != 5 {
		t.Fatalf("the transaction has %d changes, want 5", len(multi))
	}

	dst := newTestEngine(t)
	dt := newKTable(dst, true)
	if _, err := dst.ApplyTxn(seedRec.Changes); err != nil {
		t.Fatal(err)
	}
	state := func() string {
		r := dst.Begin(txn.RepeatableRead)
		defer r.Rollback()
		return strings.Join(scan(t, r, dt, PrimaryIndex, Range{}, false, 0), ",") + " | " +
			strings.Join(scan(t, r, dt, 0, Range{}, false, 0), ",") + " | " +
			strconv.FormatInt(dt.rows.Load(), 10)
	}
	before := state()
	for n := range multi {
		bad := slices.Clone(multi)
		bad[n].Version = 99
		if _, err := dst.ApplyTxn(bad); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("(change %d of 5)", n+1)) {
			t.Fatalf("change %d bad: %v", n+1, err)
		}
		if got := state(); got != before {
			t.Fatalf("change %d failed and left %q, want %q", n+1, got, before)
		}
	}
	_, h, err := dst.ApplyTxnHeld(multi)
	if err != nil {
		t.Fatal(err)
	}
	h.Rollback()
	if got := state(); got != before {
		t.Fatalf("rolled back and left %q, want %q", got, before)
	}
	dst.Purge()
	if _, err := dst.ApplyTxn(multi); err != nil {
		t.Fatal(err)
	}
	r1 := src.Begin(txn.RepeatableRead)
	defer r1.Rollback()
	want := strings.Join(scan(t, r1, st, PrimaryIndex, Range{}, false, 0), ",") + " | " +
		strings.Join(scan(t, r1, st, 0, Range{}, false, 0), ",") + " | " + strconv.FormatInt(st.rows.Load(), 10)
	if got := state(); got != want {
		t.Fatalf("applied after the failures: %q, want %q", got, want)
	}
}
