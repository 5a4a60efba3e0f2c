package storage

import (
	"slices"
	"testing"
	"time"

	"lockstep/internal/txn"
)

// TestLockingReadLatestCommitted: a locking read (LockS/LockX, through Get
// or a cursor on either index) returns the latest committed version even
// when the transaction's own view is older; a consistent read in the same
// transaction still returns the view's version.
func TestLockingReadLatestCommitted(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 3, func(id int) int { return id * 10 })

	tx := e.Begin(txn.RepeatableRead)
	defer tx.Rollback()
	get(t, tx, tb, 1, 0) // open the view
	autocommit(t, e, func(w *Tx) {
		upd(t, w, tb, 1, 15, "new1")
		del(t, w, tb, 2)
		ins(t, w, tb, 4, 40, "v4")
	})

	latest := []string{"1:k=15;v=new1", "3:k=30;v=v3", "4:k=40;v=v4"}
	snapshot := []string{"1:k=10;v=v1", "2:k=20;v=v2", "3:k=30;v=v3"}
	for _, mode := range []txn.LockMode{txn.LockS, txn.LockX} {
		name := map[txn.LockMode]string{txn.LockS: "S", txn.LockX: "X"}[mode]
		for _, c := range []struct {
			name string
			idx  int
			rng  Range
			rev  bool
			want []string
		}{
			{"pk", PrimaryIndex, Range{}, false, latest},
			{"pk reverse", PrimaryIndex, Range{}, true, []string{latest[2], latest[1], latest[0]}},
			{"k", 0, Range{}, false, latest},
			{"k=10 (old key)", 0, kEq(10), false, nil},
			{"k=15 (new key)", 0, kEq(15), false, latest[:1]},
			{"k reverse", 0, Range{}, true, []string{latest[2], latest[1], latest[0]}},
		} {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				if got := scan(t, tx, tb, c.idx, c.rng, c.rev, mode); !slices.Equal(got, c.want) {
					t.Fatalf("got %q, want %q", got, c.want)
				}
			})
		}
		t.Run(name+"/get", func(t *testing.T) {
			for id, w := range map[int]string{1: "k=15;v=new1", 2: "", 4: "k=40;v=v4"} {
				if got := get(t, tx, tb, id, mode); got != w {
					t.Errorf("Get(%d) = %q, want %q", id, got, w)
				}
			}
		})
	}
	// The consistent read of the same transaction is unchanged.
	if got := scan(t, tx, tb, PrimaryIndex, Range{}, false, 0); !slices.Equal(got, snapshot) {
		t.Fatalf("consistent read after locking reads: %q, want %q", got, snapshot)
	}
}

// TestLockingReadBlocks: a locking read waits behind another transaction's
// X lock until it commits (then sees the new version) or rolls back (then
// sees the old one), times out after LockWait, while a consistent read does
// not wait at all.
func TestLockingReadBlocks(t *testing.T) {
	type reader func(tx *Tx, tb *Table, mode txn.LockMode) (string, error)
	viaGet := func(tx *Tx, tb *Table, mode txn.LockMode) (string, error) {
		row, ok, err := tx.Get(bg, tb, tpk(1), mode)
		if !ok {
			return "", err
		}
		return rowStr(row), err
	}
	viaCursor := func(idx int, rng Range, rev bool) reader {
		return func(tx *Tx, tb *Table, mode txn.LockMode) (string, error) {
			c := tx.Cursor(bg, tb, idx, rng, rev, mode)
			s := ""
			for {
				pk, row, ok, err := c.Next()
				if err != nil || !ok {
					return s, err
				}
				if tid(pk) == 1 {
					s = rowStr(row)
				}
			}
		}
	}
	readers := []struct {
		name string
		read reader
	}{
		{"get", viaGet},
		{"pk cursor", viaCursor(PrimaryIndex, Range{}, false)},
		{"pk cursor reverse", viaCursor(PrimaryIndex, Range{}, true)},
		{"k cursor", viaCursor(0, kRange(0, 100), false)},
	}
	for _, rd := range readers {
		for _, mode := range []txn.LockMode{txn.LockS, txn.LockX} {
			for _, outcome := range []string{"commit", "rollback"} {
				name := rd.name + "/" + map[txn.LockMode]string{txn.LockS: "S", txn.LockX: "X"}[mode] + "/" + outcome
				t.Run(name, func(t *testing.T) {
					e := newTestEngine(t)
					tb := newKTable(e, false)
					seed(t, e, tb, 3, func(id int) int { return id * 10 })

					w := e.Begin(txn.RepeatableRead)
					upd(t, w, tb, 1, 12, "locked")

					r := e.Begin(txn.RepeatableRead)
					defer r.Rollback()
					// A consistent read does not wait for the lock.
					if got, err := rd.read(r, tb, 0); err != nil || got != "k=10;v=v1" {
						t.Fatalf("consistent read: %q, %v", got, err)
					}
					// A short LockWait times out.
					r.LockWait = 20 * time.Millisecond
					start := time.Now()
					if _, err := rd.read(r, tb, mode); err != txn.ErrLockWaitTimeout {
						t.Fatalf("locking read with short LockWait: %v, want ErrLockWaitTimeout", err)
					}
					if d := time.Since(start); d < 15*time.Millisecond {
						t.Fatalf("timed out after %v, LockWait is 20ms", d)
					}
					// A long one waits until the writer ends.
					r.LockWait = 10 * time.Second
					ch := async(func() (string, error) { return rd.read(r, tb, mode) })
					waitLockWaiters(t, e, 1)
					notYet(t, ch, 20*time.Millisecond)
					want := "k=12;v=locked"
					if outcome == "commit" {
						commit(t, w)
					} else {
						w.Rollback()
						want = "k=10;v=v1"
					}
					res := await(t, ch)
					if res.err != nil || res.s != want {
						t.Fatalf("locking read after writer's %s: %q, %v; want %q", outcome, res.s, res.err, want)
					}
				})
			}
		}
	}
}

// TestSharedLocksDoNotBlockEachOther: S locks are compatible; an X request
// waits for all S holders.
func TestSharedLocksDoNotBlockEachOther(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 1, func(int) int { return 10 })

	a, b := e.Begin(txn.RepeatableRead), e.Begin(txn.RepeatableRead)
	a.LockWait, b.LockWait = 20*time.Millisecond, 20*time.Millisecond
	if got := get(t, a, tb, 1, txn.LockS); got != "k=10;v=v1" {
		t.Fatal(got)
	}
	if got := get(t, b, tb, 1, txn.LockS); got != "k=10;v=v1" {
		t.Fatal(got)
	}
	c := e.Begin(txn.RepeatableRead)
	c.LockWait = 10 * time.Second
	defer c.Rollback()
	ch := async(func() (string, error) {
		err := c.Update(bg, tb, 0, tpk(1), tpk(1), trow(10, "c"))
		return "", err
	})
	waitLockWaiters(t, e, 1)
	commit(t, a)
	notYet(t, ch, 20*time.Millisecond) // b still holds S
	commit(t, b)
	if r := await(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
}

// TestReadPolicy: NOWAIT and SKIP LOCKED apply to locking reads only —
// Get and cursors fail at once (NoWait) or leave the row out (SkipLocked)
// when another transaction holds it — while writes still wait.
func TestReadPolicy(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 3, func(id int) int { return id * 10 })

	holder := e.Begin(txn.RepeatableRead)
	defer holder.Rollback()
	get(t, holder, tb, 2, txn.LockX)

	for _, mode := range []txn.LockMode{txn.LockS, txn.LockX} {
		tx := e.Begin(txn.RepeatableRead)
		tx.ReadPolicy = NoWait
		start := time.Now()
		if _, _, err := tx.Get(t.Context(), tb, tpk(2), mode); err != ErrLockNowait {
			t.Fatalf("NoWait Get of a held row (mode %d): %v, want ErrLockNowait", mode, err)
		}
		c := tx.Cursor(t.Context(), tb, PrimaryIndex, Range{}, false, mode)
		var err error
		for err == nil {
			var ok bool
			if _, _, ok, err = c.Next(); !ok && err == nil {
				t.Fatal("NoWait scan over a held row ended without an error")
			}
		}
		if err != ErrLockNowait {
			t.Fatalf("NoWait scan: %v, want ErrLockNowait", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("NoWait reads took %v", d)
		}
		if got := get(t, tx, tb, 1, mode); got != "k=10;v=v1" {
			t.Fatalf("NoWait Get of a free row = %q", got)
		}

		tx.ReadPolicy = SkipLocked
		if got := get(t, tx, tb, 2, mode); got != "" {
			t.Fatalf("SkipLocked Get of a held row = %q, want nothing", got)
		}
		if got := scanIDs(t, tx, tb, PrimaryIndex, Range{}, false, mode); !slices.Equal(got, []int{1, 3}) {
			t.Fatalf("SkipLocked scan = %v, want [1 3]", got)
		}
		if got := scanIDs(t, tx, tb, 0, Range{}, true, mode); !slices.Equal(got, []int{3, 1}) {
			t.Fatalf("SkipLocked reverse index scan = %v, want [3 1]", got)
		}

		// A write under either policy waits for the lock (here until
		// LockWait expires).
		tx.LockWait = 50 * time.Millisecond
		for _, p := range []ReadPolicy{NoWait, SkipLocked} {
			tx.ReadPolicy = p
			if err := tx.Delete(t.Context(), tb, 0, tpk(2)); err != txn.ErrLockWaitTimeout {
				t.Fatalf("Delete of a held row under policy %d: %v, want ErrLockWaitTimeout", p, err)
			}
		}
		tx.Rollback()
	}
}

// TestWriteAfterLockingReadSkipsLockManager: an UPDATE or DELETE of the row
// a locking read just X-locked asks the lock manager nothing more (the lock
// is held to the end of the transaction); any other row, or a row only
// S-locked, still goes through it, and the row stays locked against others
// until the end.
func TestWriteAfterLockingReadSkipsLockManager(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 3, func(id int) int { return id * 10 })
	requests := func() uint64 { return e.Locks.Stats().Requests }

	w := e.Begin(txn.RepeatableRead)
	defer w.Rollback()
	if _, ok, err := w.Get(bg, tb, tpk(1), txn.LockX); !ok || err != nil {
		t.Fatalf("locking read: %v %v", ok, err)
	}
	before := requests()
	upd(t, w, tb, 1, 11, "x1")
	if n := requests() - before; n != 0 {
		t.Errorf("UPDATE after FOR UPDATE of the same row: %d lock requests, want 0", n)
	}
	before = requests()
	upd(t, w, tb, 2, 21, "x2") // not the row read
	if n := requests() - before; n != 1 {
		t.Errorf("UPDATE of another row: %d lock requests, want 1", n)
	}
	if _, _, err := w.Get(bg, tb, tpk(3), txn.LockS); err != nil {
		t.Fatal(err)
	}
	before = requests()
	upd(t, w, tb, 3, 31, "x3") // S-locked: the upgrade goes to the lock manager
	if n := requests() - before; n != 1 {
		t.Errorf("UPDATE of an S-locked row: %d lock requests, want 1", n)
	}
	// A cursor's X lock is remembered too.
	c := w.Cursor(bg, tb, PrimaryIndex, Range{Lo: tpk(2), Hi: tpk(3)}, false, txn.LockX)
	if _, _, ok, err := c.Next(); !ok || err != nil {
		t.Fatalf("cursor: %v %v", ok, err)
	}
	c.Close()
	before = requests()
	del(t, w, tb, 2)
	if n := requests() - before; n != 0 {
		t.Errorf("DELETE after a locking cursor read it: %d lock requests, want 0", n)
	}

	r := e.Begin(txn.RepeatableRead)
	defer r.Rollback()
	r.LockWait = 20 * time.Millisecond
	if _, _, err := r.Get(bg, tb, tpk(1), txn.LockS); err != txn.ErrLockWaitTimeout {
		t.Fatalf("another transaction's read of the updated row: %v, want a lock wait timeout", err)
	}
	commit(t, w)
	if row, ok, err := r.Get(bg, tb, tpk(1), txn.LockS); !ok || err != nil || rowStr(row) != "k=11;v=x1" {
		t.Fatalf("after commit: %q %v %v", rowStr(row), ok, err)
	}
}
