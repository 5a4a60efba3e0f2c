package storage

import (
	"errors"
	"slices"
	"testing"

	"lockstep/internal/txn"
)

// kAsKey files a test row under its k value (as a test primary key).
func kAsKey(row []byte) ([]byte, error) {
	k, _, _, err := parseRow(row)
	return tpk(k), err
}

// TestRekey: ALTER TABLE ADD/DROP PRIMARY KEY's re-keying files every live
// row under its new key, rebuilds the secondary indexes, keeps the writer
// of each row's newest version, refuses while an unfinished transaction
// has changed a row and on a duplicate key, changing nothing then.
func TestRekey(t *testing.T) {
	e := newTestEngine(t)
	tb := newTable(e, "t", vIndex("v"))
	seed(t, e, tb, 4, func(id int) int { return 50 - id*10 }) // k: 40, 30, 20, 10
	autocommit(t, e, func(w *Tx) { del(t, w, tb, 2) })
	rows := func() []string {
		tx := e.Begin(txn.RepeatableRead)
		defer tx.Rollback()
		return scan(t, tx, tb, PrimaryIndex, Range{}, false, 0)
	}
	before := rows()
	byV := func() []string {
		tx := e.Begin(txn.RepeatableRead)
		defer tx.Rollback()
		return scan(t, tx, tb, 0, Range{}, false, 0)
	}
	beforeV := byV()

	// An unfinished change: refused, nothing changed.
	open := e.Begin(txn.RepeatableRead)
	upd(t, open, tb, 1, 40, "x1")
	ver := tb.Version()
	if !tb.InUse() {
		t.Fatal("InUse = false with an uncommitted update")
	}
	if err := tb.Rekey(testDesc(vIndex("v")), kAsKey); !errors.Is(err, ErrRowsInUse) {
		t.Fatalf("Rekey with an open writer: %v, want ErrRowsInUse", err)
	}
	open.Rollback()
	if got := rows(); !slices.Equal(got, before) || tb.Version() != ver || tb.InUse() {
		t.Fatalf("after a refused Rekey: rows %v version %d (want %v, %d)", got, tb.Version(), before, ver)
	}

	// A duplicate new key: refused, nothing changed.
	autocommit(t, e, func(w *Tx) { ins(t, w, tb, 9, 10, "dup") })
	err := tb.Rekey(testDesc(vIndex("v")), kAsKey)
	var dk *DuplicateKeyError
	if !errors.As(err, &dk) || dk.Index != PrimaryIndex || tid(dk.Key) != 10 {
		t.Fatalf("Rekey with two rows of k=10: %v", err)
	}
	autocommit(t, e, func(w *Tx) { del(t, w, tb, 9) })
	if got := rows(); !slices.Equal(got, before) {
		t.Fatalf("after a duplicate: %v, want %v", got, before)
	}
	if got := byV(); !slices.Equal(got, beforeV) {
		t.Fatalf("index v after a duplicate: %v, want %v", got, beforeV)
	}

	old := e.Begin(txn.RepeatableRead) // a snapshot from before the re-key
	defer old.Rollback()
	must(t, tb.Rekey(testDesc(vIndex("v")), kAsKey))
	if tb.Version() == ver {
		t.Fatal("Rekey did not change the table version")
	}
	want := []string{"10:k=10;v=v4", "20:k=20;v=v3", "40:k=40;v=v1"}
	if got := rows(); !slices.Equal(got, want) {
		t.Fatalf("rows after Rekey = %v, want %v", got, want)
	}
	// The older snapshot reads the re-keyed rows (history is not kept).
	if got := scan(t, old, tb, PrimaryIndex, Range{}, false, 0); !slices.Equal(got, want) {
		t.Fatalf("old snapshot after Rekey = %v, want %v", got, want)
	}
	fresh := e.Begin(txn.RepeatableRead)
	defer fresh.Rollback()
	if got := scan(t, fresh, tb, 0, Range{}, false, 0); !slices.Equal(got, []string{"40:k=40;v=v1", "20:k=20;v=v3", "10:k=10;v=v4"}) {
		t.Fatalf("index v after Rekey = %v", got)
	}
	if got := get(t, fresh, tb, 20, 0); got != "k=20;v=v3" {
		t.Fatalf("get 20 = %q", got)
	}
	if n := tb.ApproxRows(); n != 3 {
		t.Fatalf("ApproxRows = %d, want 3", n)
	}
	// Writes by the new key, locks included.
	autocommit(t, e, func(w *Tx) { upd(t, w, tb, 20, 20, "z3") })
	if got := get(t, fresh, tb, 20, txn.LockX); got != "k=20;v=z3" {
		t.Fatalf("locking get 20 after update = %q", got)
	}

	// Back to row ids chosen by the caller (DROP PRIMARY KEY), and the
	// descriptor's own key when keyOf is nil.
	n := 0
	must(t, tb.Rekey(testDesc(vIndex("v")), func([]byte) ([]byte, error) { n++; return tpk(100 + n), nil }))
	if got := rows(); !slices.Equal(got, []string{"101:k=10;v=v4", "102:k=20;v=z3", "103:k=40;v=v1"}) {
		t.Fatalf("rows after re-keying by row id = %v", got)
	}
	d := testDesc(vIndex("v"))
	d.PrimaryKey = []KeyPart{{Column: 1}}
	must(t, tb.Rekey(d, nil))
	tx := e.Begin(txn.RepeatableRead)
	defer tx.Rollback()
	var vs []string
	must(t, tx.Scan(bg, tb, PrimaryIndex, Range{}, false, 0, func(_, row []byte) (bool, error) {
		vs = append(vs, rowStr(row))
		return true, nil
	}))
	if !slices.Equal(vs, []string{"k=40;v=v1", "k=10;v=v4", "k=20;v=z3"}) {
		t.Fatalf("rows keyed by v = %v", vs)
	}
}
