package storage

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"lockstep/internal/storage/rowenc"
	"lockstep/internal/txn"
)

// TestAddIndexOverVersions: an index added while old views are open
// indexes every version, so an old view reading through it sees exactly
// what it sees through the primary key, and a new view sees the present.
func TestAddIndexOverVersions(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 4, func(id int) int { return id * 10 })

	old := e.Begin(txn.RepeatableRead)
	defer old.Rollback()
	get(t, old, tb, 1, 0)
	autocommit(t, e, func(w *Tx) {
		upd(t, w, tb, 1, 15, "b1") // v changes: moves in the new index
		del(t, w, tb, 2)
		ins(t, w, tb, 5, 50, "a5")
	})
	// An uncommitted change at DDL time, committed afterwards.
	pending := e.Begin(txn.RepeatableRead)
	upd(t, pending, tb, 3, 30, "c3")
	ver := tb.Version()

	must(t, tb.AddIndex(vIndex("v")))
	commit(t, pending)
	if tb.Version() != ver+1 {
		t.Fatalf("Version %d after AddIndex, want %d", tb.Version(), ver+1)
	}
	if names := tb.IndexNames(); strings.Join(names, ",") != "k,v" {
		t.Fatalf("IndexNames = %v", names)
	}
	const vi = 1
	fresh := e.Begin(txn.RepeatableRead)
	defer fresh.Rollback()
	vRange := func(v string) Range {
		k := tiv(v)
		return Range{Lo: k, Hi: rowenc.PrefixEnd(k)}
	}
	for _, c := range []struct {
		name string
		tx   *Tx
		rng  Range
		want []string
	}{
		{"old view, all (v order)", old, Range{}, []string{"1:k=10;v=v1", "2:k=20;v=v2", "3:k=30;v=v3", "4:k=40;v=v4"}},
		{"old view, v=v1", old, vRange("v1"), []string{"1:k=10;v=v1"}},
		{"old view, v=b1", old, vRange("b1"), nil},
		{"old view, v=c3", old, vRange("c3"), nil},
		{"new view, all (v order)", fresh, Range{}, []string{"5:k=50;v=a5", "1:k=15;v=b1", "3:k=30;v=c3", "4:k=40;v=v4"}},
		{"new view, v=v1", fresh, vRange("v1"), nil},
		{"new view, v=v3", fresh, vRange("v3"), nil},
		{"new view, v=c3", fresh, vRange("c3"), []string{"3:k=30;v=c3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := scan(t, c.tx, tb, vi, c.rng, false, 0); !slices.Equal(got, c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
	// Writes after the DDL maintain the new index; purge cleans it.
	autocommit(t, e, func(w *Tx) { upd(t, w, tb, 4, 40, "d4") })
	old.Rollback()
	fresh.Rollback()
	e.Purge()
	if n := secLen(tb, vi); n != 4 {
		t.Fatalf("new index holds %d entries after purge, want 4", n)
	}
}

// TestAddUniqueIndex: building a unique index fails with *DuplicateKeyError
// on two live rows with the same non-NULL key and leaves the table as it
// was; duplicates only in old versions, deleted rows or NULLs are fine.
func TestAddUniqueIndex(t *testing.T) {
	cases := []struct {
		name    string
		rows    func(t *testing.T, e *Engine, tb *Table)
		wantDup bool
	}{
		{"live duplicate", func(t *testing.T, e *Engine, tb *Table) {
			autocommit(t, e, func(w *Tx) { ins(t, w, tb, 1, 5, "a"); ins(t, w, tb, 2, 5, "b"); ins(t, w, tb, 3, 6, "c") })
		}, true},
		{"duplicate with an uncommitted row", func(t *testing.T, e *Engine, tb *Table) {
			autocommit(t, e, func(w *Tx) { ins(t, w, tb, 1, 5, "a") })
			w := e.Begin(txn.RepeatableRead)
			ins(t, w, tb, 2, 5, "b")
			t.Cleanup(w.Rollback)
		}, true},
		{"no duplicates", func(t *testing.T, e *Engine, tb *Table) {
			autocommit(t, e, func(w *Tx) { ins(t, w, tb, 1, 5, "a"); ins(t, w, tb, 2, 6, "b") })
		}, false},
		{"duplicate only in an old version", func(t *testing.T, e *Engine, tb *Table) {
			autocommit(t, e, func(w *Tx) { ins(t, w, tb, 1, 5, "a"); ins(t, w, tb, 2, 6, "b") })
			autocommit(t, e, func(w *Tx) { upd(t, w, tb, 1, 7, "a"); upd(t, w, tb, 2, 5, "b") })
		}, false},
		{"duplicate with a deleted row", func(t *testing.T, e *Engine, tb *Table) {
			autocommit(t, e, func(w *Tx) { ins(t, w, tb, 1, 5, "a") })
			autocommit(t, e, func(w *Tx) { del(t, w, tb, 1); ins(t, w, tb, 2, 5, "b") })
		}, false},
		{"NULLs", func(t *testing.T, e *Engine, tb *Table) {
			autocommit(t, e, func(w *Tx) {
				must(t, w.Insert(bg, tb, 0, tpk(1), trowNull("a")))
				must(t, w.Insert(bg, tb, 0, tpk(2), trowNull("b")))
				ins(t, w, tb, 3, 5, "c")
			})
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEngine(t)
			tb := newTable(e, "t")
			old := e.Begin(txn.RepeatableRead)
			defer old.Rollback()
			get(t, old, tb, 1, 0) // a view from before any row: keeps every version
			c.rows(t, e, tb)
			ver := tb.Version()
			err := tb.AddIndex(kIndex("uk", true))
			if !c.wantDup {
				must(t, err)
				// The new unique index is enforced.
				w := e.Begin(txn.RepeatableRead)
				defer w.Rollback()
				d := dupErr(t, w.Insert(bg, tb, 0, tpk(100), trow(5, "dup")))
				if d.Index != 0 || d.Name != "uk" {
					t.Fatalf("dup on %d %s", d.Index, d.Name)
				}
				return
			}
			d := dupErr(t, err)
			if d.Name != "uk" || string(d.Key) != string(tik(5)) {
				t.Fatalf("dup %s key %x", d.Name, d.Key)
			}
			if tb.Version() != ver || len(tb.IndexNames()) != 0 {
				t.Fatalf("failed AddIndex changed the table: version %d->%d, indexes %v", ver, tb.Version(), tb.IndexNames())
			}
		})
	}
}

// TestRewrite: Rewrite converts every version (old views see converted old
// versions), rebuilds the indexes from the new descriptor, bumps the version so
// writes encoded for the old definition fail; a failing conversion changes
// nothing.
func TestRewrite(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 3, func(id int) int { return id * 10 })
	old := e.Begin(txn.RepeatableRead)
	defer old.Rollback()
	get(t, old, tb, 1, 0)
	autocommit(t, e, func(w *Tx) { upd(t, w, tb, 1, 15, "b1"); del(t, w, tb, 2) })
	ver := tb.Version()

	// A failing conversion leaves the table untouched.
	boom := errors.New("boom")
	err := tb.Rewrite(func(row []byte) ([]byte, error) {
		if strings.Contains(string(row), "v3") {
			return nil, boom
		}
		return append(row, "!"...), nil
	}, testDesc(vIndex("v")))
	if err != boom {
		t.Fatalf("Rewrite: %v, want boom", err)
	}
	if tb.Version() != ver || strings.Join(tb.IndexNames(), ",") != "k" {
		t.Fatalf("failed Rewrite changed the table: version %d, indexes %v", tb.Version(), tb.IndexNames())
	}
	if got := get(t, old, tb, 1, 0); got != "k=10;v=v1" {
		t.Fatalf("failed Rewrite changed a version: %q", got)
	}

	// Upper-case v and index it (replacing the k index).
	conv := func(row []byte) ([]byte, error) {
		k, null, v, err := parseRow(row)
		if err != nil || null {
			return nil, err
		}
		return trow(k, strings.ToUpper(v)), nil
	}
	must(t, tb.Rewrite(conv, testDesc(vIndex("V"))))
	if tb.Version() != ver+1 {
		t.Fatalf("Version %d, want %d", tb.Version(), ver+1)
	}
	if names := tb.IndexNames(); len(names) != 1 || names[0] != "V" {
		t.Fatalf("IndexNames %v", names)
	}
	wantOld := []string{"1:k=10;v=V1", "2:k=20;v=V2", "3:k=30;v=V3"}
	if got := scan(t, old, tb, PrimaryIndex, Range{}, false, 0); !slices.Equal(got, wantOld) {
		t.Fatalf("old view after Rewrite: %q, want %q", got, wantOld)
	}
	if got := scan(t, old, tb, 0, Range{}, false, 0); !slices.Equal(got, wantOld) {
		t.Fatalf("old view through the rebuilt index: %q, want %q", got, wantOld)
	}
	fresh := e.Begin(txn.RepeatableRead)
	defer fresh.Rollback()
	if got := scan(t, fresh, tb, 0, Range{}, false, 0); !slices.Equal(got, []string{"1:k=15;v=B1", "3:k=30;v=V3"}) {
		t.Fatalf("new view after Rewrite: %q", got)
	}
	// Old-format writes fail; new-format ones work.
	w := e.Begin(txn.RepeatableRead)
	defer w.Rollback()
	if err := w.Insert(bg, tb, ver, tpk(9), trow(90, "x")); err != ErrTableChanged {
		t.Fatalf("stale insert: %v", err)
	}
	must(t, w.Insert(bg, tb, tb.Version(), tpk(9), trow(90, "X")))
}

// TestStaleTableVersion: every write kind checks the version it was encoded
// for; 0 skips the check. DDL of every kind bumps the version.
func TestStaleTableVersion(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 3, func(id int) int { return id * 10 })
	v0 := tb.Version()

	ddls := []struct {
		name string
		do   func() error
	}{
		{"AddIndex", func() error { return tb.AddIndex(vIndex("v")) }},
		{"DropIndex", func() error { return tb.DropIndex(1) }},
		{"Rewrite", func() error {
			return tb.Rewrite(func(r []byte) ([]byte, error) { return r, nil }, testDesc(kIndex("k", false)))
		}},
	}
	for _, d := range ddls {
		before := tb.Version()
		must(t, d.do())
		if tb.Version() <= before {
			t.Fatalf("%s did not bump the version", d.name)
		}
	}
	if err := tb.DropIndex(7); err == nil {
		t.Fatal("DropIndex of a missing index succeeded")
	}

	writes := []struct {
		name string
		do   func(tx *Tx, ver uint64) error
	}{
		{"insert", func(tx *Tx, ver uint64) error { return tx.Insert(bg, tb, ver, tpk(9), trow(90, "x")) }},
		{"update", func(tx *Tx, ver uint64) error { return tx.Update(bg, tb, ver, tpk(1), tpk(1), trow(11, "x")) }},
		{"update moving the pk", func(tx *Tx, ver uint64) error { return tx.Update(bg, tb, ver, tpk(2), tpk(8), trow(20, "x")) }},
		{"delete", func(tx *Tx, ver uint64) error { return tx.Delete(bg, tb, ver, tpk(3)) }},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			tx := e.Begin(txn.RepeatableRead)
			defer tx.Rollback()
			if err := w.do(tx, v0); err != ErrTableChanged {
				t.Fatalf("stale version: %v, want ErrTableChanged", err)
			}
			must(t, w.do(tx, tb.Version()))
		})
		t.Run(w.name+"/unchecked", func(t *testing.T) {
			tx := e.Begin(txn.RepeatableRead)
			defer tx.Rollback()
			must(t, w.do(tx, 0))
		})
	}
	if !errors.Is(ErrTableChanged, ErrTableChanged) || ErrTableChanged.Error() == "" {
		t.Fatal("ErrTableChanged")
	}
}

// TestTruncate: TRUNCATE empties the table for everyone, resets
// AUTO_INCREMENT, bumps the version, and the table is usable afterwards.
func TestTruncate(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, true)
	seed(t, e, tb, 10, func(id int) int { return id })
	tb.NextAutoIncrement(50)
	old := e.Begin(txn.RepeatableRead)
	defer old.Rollback()
	get(t, old, tb, 1, 0)
	ver := tb.Version()

	if n := tb.Truncate(); n != 10 {
		t.Fatalf("Truncate returned %d, want 10", n)
	}
	if tb.ApproxRows() != 0 || pkLen(tb) != 0 || secLen(tb, 0) != 0 {
		t.Fatalf("after Truncate: %d rows, %d records, %d entries", tb.ApproxRows(), pkLen(tb), secLen(tb, 0))
	}
	if tb.Version() != ver+1 {
		t.Fatalf("Version %d, want %d", tb.Version(), ver+1)
	}
	if got := tb.PeekAutoIncrement(); got != 1 {
		t.Fatalf("AUTO_INCREMENT after Truncate = %d, want 1", got)
	}
	if got := scanIDs(t, old, tb, PrimaryIndex, Range{}, false, 0); len(got) != 0 {
		t.Fatalf("an old view still sees %v (TRUNCATE is not transactional)", got)
	}
	autocommit(t, e, func(w *Tx) {
		ins(t, w, tb, 1, 1, "again")
		ins(t, w, tb, 2, 2, "again")
	})
	e.Purge()
	r := e.Begin(txn.RepeatableRead)
	defer r.Rollback()
	if got := scan(t, r, tb, 0, Range{}, false, 0); !slices.Equal(got, []string{"1:k=1;v=again", "2:k=2;v=again"}) {
		t.Fatalf("after Truncate and inserts: %q", got)
	}
}

// TestTruncateThenPurge: purge of versions that were committed before a
// TRUNCATE (and so still wait in the history list) must not touch the rows
// inserted afterwards with the same keys.
func TestTruncateThenPurge(t *testing.T) {
	cases := []struct {
		name   string
		before func(t *testing.T, e *Engine, tb *Table) // committed before TRUNCATE
	}{
		{"update before truncate", func(t *testing.T, e *Engine, tb *Table) {
			autocommit(t, e, func(w *Tx) { upd(t, w, tb, 1, 6, "moved") })
		}},
		{"delete before truncate", func(t *testing.T, e *Engine, tb *Table) {
			autocommit(t, e, func(w *Tx) { del(t, w, tb, 1) })
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEngine(t)
			tb := newKTable(e, false)
			autocommit(t, e, func(w *Tx) { ins(t, w, tb, 1, 5, "first") })
			c.before(t, e, tb)
			tb.Truncate()
			autocommit(t, e, func(w *Tx) { ins(t, w, tb, 1, 5, "after truncate") })
			e.Purge()

			r := e.Begin(txn.RepeatableRead)
			defer r.Rollback()
			want := []string{"1:k=5;v=after truncate"}
			if got := scan(t, r, tb, PrimaryIndex, Range{}, false, 0); !slices.Equal(got, want) {
				t.Fatalf("pk scan: %q, want %q", got, want)
			}
			if got := scan(t, r, tb, 0, kEq(5), false, 0); !slices.Equal(got, want) {
				t.Fatalf("index scan of k=5 after purge: %q, want %q (the purge of a pre-TRUNCATE version removed the new row's index entry)", got, want)
			}
			if n := tb.ApproxRows(); n != 1 {
				t.Fatalf("ApproxRows = %d, want 1", n)
			}
		})
	}
}

// TestTruncateWithOpenWriter: a transaction that wrote before TRUNCATE and
// rolls back afterwards leaves the emptied table (and its row count) alone.
func TestTruncateWithOpenWriter(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 3, func(id int) int { return id })
	w := e.Begin(txn.RepeatableRead)
	ins(t, w, tb, 9, 9, "pending")
	upd(t, w, tb, 1, 100, "pending")
	tb.Truncate()
	w.Rollback()
	if pkLen(tb) != 0 || secLen(tb, 0) != 0 {
		t.Fatalf("rollback after TRUNCATE left %d records, %d entries", pkLen(tb), secLen(tb, 0))
	}
	if n := tb.ApproxRows(); n != 0 {
		t.Fatalf("ApproxRows = %d after TRUNCATE and a rollback of a pre-TRUNCATE insert, want 0", n)
	}
}

// TestDrop: every access to a dropped table fails with ErrTableDropped.
func TestDrop(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 3, func(id int) int { return id })
	ver := tb.Version()
	tb.Drop()
	if tb.Version() == ver {
		t.Fatal("Drop did not bump the version")
	}
	const dropBug = ""
	ops := []struct {
		name string
		do   func(tx *Tx) error
		bug  string // non-empty: known bug, skipped
	}{
		{"insert", func(tx *Tx) error { return tx.Insert(bg, tb, 0, tpk(9), trow(9, "x")) }, ""},
		{"scan pk", func(tx *Tx) error {
			return tx.Scan(bg, tb, PrimaryIndex, Range{}, false, 0, func(_, _ []byte) (bool, error) { return true, nil })
		}, ""},
		{"scan k", func(tx *Tx) error {
			return tx.Scan(bg, tb, 0, Range{}, true, txn.LockS, func(_, _ []byte) (bool, error) { return true, nil })
		}, ""},
		{"get", func(tx *Tx) error { _, _, err := tx.Get(bg, tb, tpk(1), 0); return err }, dropBug},
		{"locking get", func(tx *Tx) error { _, _, err := tx.Get(bg, tb, tpk(1), txn.LockX); return err }, dropBug},
		{"update", func(tx *Tx) error { return tx.Update(bg, tb, 0, tpk(1), tpk(1), trow(1, "x")) }, dropBug},
		{"delete", func(tx *Tx) error { return tx.Delete(bg, tb, 0, tpk(1)) }, dropBug},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			if op.bug != "" {
				t.Skip(op.bug)
			}
			tx := e.Begin(txn.RepeatableRead)
			defer tx.Rollback()
			if err := op.do(tx); !errors.Is(err, ErrTableDropped) {
				t.Fatalf("%s on a dropped table: %v, want ErrTableDropped", op.name, err)
			}
		})
	}
}

// TestAutoIncrementConcurrent: concurrent NextAutoIncrement(0) calls get
// distinct, gap-free values.
func TestAutoIncrementConcurrent(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	const n = 1000
	vals := make([]uint64, n)
	done := make(chan struct{})
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		go func(i int) {
			<-start
			vals[i] = tb.NextAutoIncrement(0)
			done <- struct{}{}
		}(i)
	}
	close(start)
	for i := 0; i < n; i++ {
		<-done
	}
	seen := make(map[uint64]bool, n)
	for _, v := range vals {
		if v < 1 || v > n {
			t.Fatalf("value %d out of 1..%d", v, n)
		}
		if seen[v] {
			t.Fatalf("value %d handed out twice", v)
		}
		seen[v] = true
	}
	if got := tb.PeekAutoIncrement(); got != n+1 {
		t.Fatalf("Peek = %d, want %d", got, n+1)
	}
}

// TestAutoIncrementExplicit: explicit values move the counter past them,
// smaller ones leave it alone; SetAutoIncrement never moves it back.
func TestAutoIncrementExplicit(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	steps := []struct {
		op       string // "next", "set"
		arg      uint64
		want     uint64 // returned by next
		wantPeek uint64
	}{
		{"peek", 0, 0, 1},
		{"next", 0, 1, 2},
		{"next", 0, 2, 3},
		{"next", 10, 10, 11},
		{"next", 0, 11, 12},
		{"next", 5, 5, 12},   // below the counter: returned, counter unchanged
		{"next", 12, 12, 13}, // exactly the next value
		{"set", 100, 0, 100},
		{"set", 50, 0, 100}, // never backwards
		{"next", 0, 100, 101},
		{"next", 1 << 40, 1 << 40, 1<<40 + 1},
	}
	for i, s := range steps {
		switch s.op {
		case "next":
			if got := tb.NextAutoIncrement(s.arg); got != s.want {
				t.Fatalf("step %d: Next(%d) = %d, want %d", i, s.arg, got, s.want)
			}
		case "set":
			tb.SetAutoIncrement(s.arg)
		}
		if got := tb.PeekAutoIncrement(); got != s.wantPeek {
			t.Fatalf("step %d: Peek = %d, want %d", i, got, s.wantPeek)
		}
	}
}

// TestAutoIncrementConcurrentExplicit: implicit values stay distinct while
// explicit values bump the counter concurrently, and the counter ends past
// every value handed out.
func TestAutoIncrementConcurrentExplicit(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	const n = 1000
	type res struct {
		v        uint64
		explicit bool
	}
	out := make(chan res, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			if i%10 == 0 {
				out <- res{tb.NextAutoIncrement(uint64(3*i + 1)), true}
				return
			}
			out <- res{tb.NextAutoIncrement(0), false}
		}(i)
	}
	seen := map[uint64]bool{}
	var maxV uint64
	deadline := time.After(5 * time.Second)
	for i := 0; i < n; i++ {
		var r res
		select {
		case r = <-out:
		case <-deadline:
			t.Fatal("timeout")
		}
		maxV = max(maxV, r.v)
		if r.explicit {
			continue
		}
		if seen[r.v] {
			t.Fatalf("implicit value %d handed out twice", r.v)
		}
		seen[r.v] = true
	}
	if got := tb.PeekAutoIncrement(); got <= maxV {
		t.Fatalf("Peek = %d, not past the largest value %d", got, maxV)
	}
}

// TestAddUniqueIndexWithPendingDelete: a unique index built while another
// transaction's delete of a conflicting row is still uncommitted must not
// end up with two live rows under one key when that delete rolls back.
func TestAddUniqueIndexWithPendingDelete(t *testing.T) {
	e := newTestEngine(t)
	tb := newTable(e, "t")
	autocommit(t, e, func(w *Tx) { ins(t, w, tb, 1, 5, "a") })
	deleter := e.Begin(txn.RepeatableRead)
	del(t, deleter, tb, 1) // uncommitted
	autocommit(t, e, func(w *Tx) { ins(t, w, tb, 2, 5, "b") })

	err := tb.AddIndex(kIndex("uk", true))
	deleter.Rollback()
	if err != nil {
		dupErr(t, err) // refusing the index is a correct outcome
		return
	}
	r := e.Begin(txn.RepeatableRead)
	defer r.Rollback()
	if got := scanIDs(t, r, tb, 0, kEq(5), false, 0); len(got) > 1 {
		t.Fatalf("unique index uk holds rows %v under one key after the pending delete rolled back", got)
	}
}

// TestTruncateWithOpenWriterCommit: a transaction that wrote before
// TRUNCATE and commits afterwards brings none of its rows back: the records
// it wrote left the table with the truncate (holds reports them gone).
func TestTruncateWithOpenWriterCommit(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 3, func(id int) int { return id })
	w := e.Begin(txn.RepeatableRead)
	ins(t, w, tb, 9, 9, "pending")
	upd(t, w, tb, 1, 100, "pending")
	tb.Truncate()
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	e.Purge()
	r := e.Begin(txn.RepeatableRead)
	defer r.Rollback()
	if got := scan(t, r, tb, PrimaryIndex, Range{}, false, 0); len(got) != 0 {
		t.Fatalf("after TRUNCATE and a later commit: %q, want no rows", got)
	}
	if pkLen(tb) != 0 || secLen(tb, 0) != 0 {
		t.Fatalf("commit after TRUNCATE left %d records, %d entries", pkLen(tb), secLen(tb, 0))
	}
}
