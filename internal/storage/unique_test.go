package storage

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"lockstep/internal/txn"
)

// TestDuplicateKey covers primary key and unique secondary key checks.
// Every case starts from rows 1:k10, 2:k20, 3:NULL committed in a table
// whose "k" index is unique.
func TestDuplicateKey(t *testing.T) {
	type dup struct {
		index    int
		key      []byte
		existing string
	}
	cases := []struct {
		name string
		ops  func(t *testing.T, e *Engine, tx *Tx, tb *Table) error // the last op's error is checked
		want *dup                                                   // nil: no error
	}{
		{"pk duplicate of a committed row", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			return tx.Insert(bg, tb, 0, tpk(1), trow(99, "x"))
		}, &dup{PrimaryIndex, tpk(1), "k=10;v=v1"}},
		{"pk duplicate of an own uncommitted insert", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			ins(t, tx, tb, 5, 50, "mine")
			return tx.Insert(bg, tb, 0, tpk(5), trow(51, "x"))
		}, &dup{PrimaryIndex, tpk(5), "k=50;v=mine"}},
		{"pk duplicate reports the latest version", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			autocommit(t, e, func(w *Tx) { upd(t, w, tb, 1, 11, "newer") })
			get(t, tx, tb, 2, 0)
			return tx.Insert(bg, tb, 0, tpk(1), trow(99, "x"))
		}, &dup{PrimaryIndex, tpk(1), "k=11;v=newer"}},
		{"unique secondary duplicate", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			return tx.Insert(bg, tb, 0, tpk(5), trow(20, "x"))
		}, &dup{0, tik(20), "k=20;v=v2"}},
		{"unique secondary duplicate via update", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			return tx.Update(bg, tb, 0, tpk(1), tpk(1), trow(20, "x"))
		}, &dup{0, tik(20), "k=20;v=v2"}},
		{"unique secondary duplicate via primary key change", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			return tx.Update(bg, tb, 0, tpk(1), tpk(7), trow(20, "x"))
		}, &dup{0, tik(20), "k=20;v=v2"}},
		{"update keeping its own unique key", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			return tx.Update(bg, tb, 0, tpk(1), tpk(1), trow(10, "same key"))
		}, nil},
		{"unique key that exists only in an old version", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			autocommit(t, e, func(w *Tx) { upd(t, w, tb, 1, 11, "moved") })
			return tx.Insert(bg, tb, 0, tpk(5), trow(10, "takes the old key"))
		}, nil},
		{"NULL never conflicts", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			must(t, tx.Insert(bg, tb, 0, tpk(5), trowNull("a")))
			must(t, tx.Update(bg, tb, 0, tpk(1), tpk(1), trowNull("b")))
			return tx.Insert(bg, tb, 0, tpk(6), trowNull("c"))
		}, nil},
		{"re-insert after own delete (pk and unique key)", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			del(t, tx, tb, 1)
			return tx.Insert(bg, tb, 0, tpk(1), trow(10, "again"))
		}, nil},
		{"unique key of an own deleted row", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			del(t, tx, tb, 2)
			return tx.Insert(bg, tb, 0, tpk(5), trow(20, "takes 2's key"))
		}, nil},
		{"unique key freed by an own update", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			upd(t, tx, tb, 2, 21, "moved")
			return tx.Insert(bg, tb, 0, tpk(5), trow(20, "takes 2's key"))
		}, nil},
		{"insert after another transaction's delete committed (not yet purged)", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			autocommit(t, e, func(w *Tx) { del(t, w, tb, 1); del(t, w, tb, 2) })
			ins(t, tx, tb, 1, 10, "again")
			return tx.Insert(bg, tb, 0, tpk(5), trow(20, "takes 2's key"))
		}, nil},
		{"insert after another transaction's delete committed and purged", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			autocommit(t, e, func(w *Tx) { del(t, w, tb, 1) })
			e.Purge()
			return tx.Insert(bg, tb, 0, tpk(1), trow(10, "again"))
		}, nil},
		{"dup against a row another view cannot see", func(t *testing.T, e *Engine, tx *Tx, tb *Table) error {
			get(t, tx, tb, 1, 0) // view opened before row 5 exists
			autocommit(t, e, func(w *Tx) { ins(t, w, tb, 5, 50, "new") })
			return tx.Insert(bg, tb, 0, tpk(6), trow(50, "x"))
		}, &dup{0, tik(50), "k=50;v=new"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEngine(t)
			tb := newKTable(e, true)
			autocommit(t, e, func(tx *Tx) {
				ins(t, tx, tb, 1, 10, "v1")
				ins(t, tx, tb, 2, 20, "v2")
				must(t, tx.Insert(bg, tb, 0, tpk(3), trowNull("v3")))
			})
			tx := e.Begin(txn.RepeatableRead)
			defer tx.Rollback()
			err := c.ops(t, e, tx, tb)
			if c.want == nil {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				commit(t, tx)
				return
			}
			d := dupErr(t, err)
			wantName := "PRIMARY"
			if c.want.index != PrimaryIndex {
				wantName = "k"
			}
			if d.Index != c.want.index || d.Name != wantName || d.Table != "t" {
				t.Errorf("error names %s.%s (index %d), want t.%s (index %d)", d.Table, d.Name, d.Index, wantName, c.want.index)
			}
			if !bytes.Equal(d.Key, c.want.key) {
				t.Errorf("Key = %x, want %x", d.Key, c.want.key)
			}
			if rowStr(d.Existing) != c.want.existing {
				t.Errorf("Existing = %q, want %q", d.Existing, c.want.existing)
			}
			if d.Error() == "" {
				t.Error("empty message")
			}
		})
	}
}

// TestDuplicateKeyLeavesNoTrace: a failed insert changes nothing and the
// transaction can go on and commit.
func TestDuplicateKeyLeavesNoTrace(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, true)
	seed(t, e, tb, 2, func(id int) int { return id * 10 })
	entries := secLen(tb, 0)

	tx := e.Begin(txn.RepeatableRead)
	dupErr(t, tx.Insert(bg, tb, 0, tpk(1), trow(77, "x")))
	dupErr(t, tx.Insert(bg, tb, 0, tpk(5), trow(20, "x")))
	dupErr(t, tx.Update(bg, tb, 0, tpk(1), tpk(1), trow(20, "x")))
	if n := tb.ApproxRows(); n != 2 {
		t.Fatalf("ApproxRows = %d after failed inserts", n)
	}
	if n := secLen(tb, 0); n != entries {
		t.Fatalf("index has %d entries after failed writes, want %d", n, entries)
	}
	if n := chainLen(tb, 1); n != 1 {
		t.Fatalf("row 1 has %d versions after a failed update", n)
	}
	ins(t, tx, tb, 5, 50, "ok")
	commit(t, tx)
	r := e.Begin(txn.RepeatableRead)
	defer r.Rollback()
	want := []string{"1:k=10;v=v1", "2:k=20;v=v2", "5:k=50;v=ok"}
	if got := scan(t, r, tb, 0, Range{}, false, 0); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestNonUniqueIndexAllowsDuplicates: equal keys in a non-unique index.
func TestNonUniqueIndexAllowsDuplicates(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 5, func(int) int { return 7 })
	r := e.Begin(txn.RepeatableRead)
	defer r.Rollback()
	if got := scanIDs(t, r, tb, 0, kEq(7), false, 0); !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
		t.Fatalf("got %v", got)
	}
	if got := scanIDs(t, r, tb, 0, kEq(7), true, 0); !slices.Equal(got, []int{5, 4, 3, 2, 1}) {
		t.Fatalf("reverse: got %v", got)
	}
}

// TestConcurrentInsertSameKey: an insert of a key another transaction has
// inserted, deleted or moved (uncommitted) waits for that transaction; then
// fails with a duplicate if the key is still taken, or succeeds.
func TestConcurrentInsertSameKey(t *testing.T) {
	cases := []struct {
		name    string
		first   func(t *testing.T, tx *Tx, tb *Table) // holds the key, uncommitted
		second  func(tx *Tx, tb *Table) error         // waits
		outcome string                                // what first does: commit or rollback
		dup     string                                // "": succeeds; else the index named in the duplicate error
	}{
		{"pk, first commits", func(t *testing.T, tx *Tx, tb *Table) { ins(t, tx, tb, 5, 50, "first") },
			func(tx *Tx, tb *Table) error { return tx.Insert(bg, tb, 0, tpk(5), trow(51, "second")) }, "commit", "PRIMARY"},
		{"pk, first rolls back", func(t *testing.T, tx *Tx, tb *Table) { ins(t, tx, tb, 5, 50, "first") },
			func(tx *Tx, tb *Table) error { return tx.Insert(bg, tb, 0, tpk(5), trow(51, "second")) }, "rollback", ""},
		{"unique key, first commits", func(t *testing.T, tx *Tx, tb *Table) { ins(t, tx, tb, 5, 50, "first") },
			func(tx *Tx, tb *Table) error { return tx.Insert(bg, tb, 0, tpk(6), trow(50, "second")) }, "commit", "k"},
		{"unique key, first rolls back", func(t *testing.T, tx *Tx, tb *Table) { ins(t, tx, tb, 5, 50, "first") },
			func(tx *Tx, tb *Table) error { return tx.Insert(bg, tb, 0, tpk(6), trow(50, "second")) }, "rollback", ""},
		{"pk deleted, first commits", func(t *testing.T, tx *Tx, tb *Table) { del(t, tx, tb, 1) },
			func(tx *Tx, tb *Table) error { return tx.Insert(bg, tb, 0, tpk(1), trow(11, "second")) }, "commit", ""},
		{"pk deleted, first rolls back", func(t *testing.T, tx *Tx, tb *Table) { del(t, tx, tb, 1) },
			func(tx *Tx, tb *Table) error { return tx.Insert(bg, tb, 0, tpk(1), trow(11, "second")) }, "rollback", "PRIMARY"},
		{"unique key freed by delete, first commits", func(t *testing.T, tx *Tx, tb *Table) { del(t, tx, tb, 1) },
			func(tx *Tx, tb *Table) error { return tx.Insert(bg, tb, 0, tpk(6), trow(10, "second")) }, "commit", ""},
		{"unique key freed by delete, first rolls back", func(t *testing.T, tx *Tx, tb *Table) { del(t, tx, tb, 1) },
			func(tx *Tx, tb *Table) error { return tx.Insert(bg, tb, 0, tpk(6), trow(10, "second")) }, "rollback", "k"},
		{"unique key freed by update, first commits", func(t *testing.T, tx *Tx, tb *Table) { upd(t, tx, tb, 1, 11, "moved") },
			func(tx *Tx, tb *Table) error { return tx.Insert(bg, tb, 0, tpk(6), trow(10, "second")) }, "commit", ""},
		{"unique key freed by update, first rolls back", func(t *testing.T, tx *Tx, tb *Table) { upd(t, tx, tb, 1, 11, "moved") },
			func(tx *Tx, tb *Table) error { return tx.Insert(bg, tb, 0, tpk(6), trow(10, "second")) }, "rollback", "k"},
		{"update into a key being inserted, first commits", func(t *testing.T, tx *Tx, tb *Table) { ins(t, tx, tb, 5, 50, "first") },
			func(tx *Tx, tb *Table) error { return tx.Update(bg, tb, 0, tpk(1), tpk(1), trow(50, "second")) }, "commit", "k"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEngine(t)
			tb := newKTable(e, true)
			seed(t, e, tb, 1, func(int) int { return 10 })

			first := e.Begin(txn.RepeatableRead)
			c.first(t, first, tb)
			second := e.Begin(txn.RepeatableRead)
			defer second.Rollback()
			second.LockWait = 10 * time.Second
			ch := async(func() (string, error) { return "", c.second(second, tb) })
			waitLockWaiters(t, e, 1)
			notYet(t, ch, 20*time.Millisecond)
			if c.outcome == "commit" {
				commit(t, first)
			} else {
				first.Rollback()
			}
			err := await(t, ch).err
			if c.dup == "" {
				if err != nil {
					t.Fatalf("second: %v, want success", err)
				}
				commit(t, second)
				return
			}
			if d := dupErr(t, err); d.Name != c.dup {
				t.Fatalf("duplicate on index %s, want %s", d.Name, c.dup)
			}
		})
	}
}

// TestConcurrentUniqueInserts: many goroutines insert rows with colliding
// unique keys; exactly one row per key survives and the index stays exact.
func TestConcurrentUniqueInserts(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, true)
	const workers, per, keys = 8, 60, 40
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			for i := 0; i < per; i++ {
				tx := e.Begin(txn.RepeatableRead)
				tx.LockWait = 5 * time.Second
				id := w*per + i + 1
				err := tx.Insert(bg, tb, 0, tpk(id), trow((id*7)%keys, "x"))
				var d *DuplicateKeyError
				switch {
				case err == nil:
					if i%3 == 0 {
						tx.Rollback()
						continue
					}
					if err := tx.Commit(); err != nil {
						errs <- err
						return
					}
				case errors.As(err, &d) && d.Index == 0:
					tx.Rollback()
				default:
					tx.Rollback()
					errs <- err
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	r := e.Begin(txn.RepeatableRead)
	defer r.Rollback()
	seen := map[int]bool{}
	n := 0
	must(t, r.Scan(bg, tb, 0, Range{}, false, 0, func(_, row []byte) (bool, error) {
		k, _, _, err := parseRow(row)
		if seen[k] {
			t.Errorf("key %d twice", k)
		}
		seen[k] = true
		n++
		return true, err
	}))
	if n != keys {
		t.Fatalf("%d rows, want one per key (%d)", n, keys)
	}
	if pk := len(scanIDs(t, r, tb, PrimaryIndex, Range{}, false, 0)); pk != n {
		t.Fatalf("pk scan finds %d rows, index %d", pk, n)
	}
}
