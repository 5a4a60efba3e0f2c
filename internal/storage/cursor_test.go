package storage

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"testing"

	"lockstep/internal/txn"
)

// batchFixture: 1000 rows with even ids 2..2000 and k = id/6, so every k
// has up to three rows and ranges cross several 128-row batches.
const batchRows = 1000

func batchK(id int) int { return id / 6 }

func newBatchTable(t *testing.T) (*Engine, *Table) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	autocommit(t, e, func(tx *Tx) {
		for i := 1; i <= batchRows; i++ {
			ins(t, tx, tb, 2*i, batchK(2*i), "v")
		}
	})
	return e, tb
}

// expectPK lists the ids in [lo, hi) (-1: unbounded) in order.
func expectPK(lo, hi int, reverse bool) []int {
	var out []int
	for i := 1; i <= batchRows; i++ {
		id := 2 * i
		if (lo < 0 || id >= lo) && (hi < 0 || id < hi) {
			out = append(out, id)
		}
	}
	if reverse {
		slices.Reverse(out)
	}
	return out
}

// expectK lists the ids whose k is in [lo, hi) in (k, id) order.
func expectK(lo, hi int, reverse bool) []int {
	var out []int
	for i := 1; i <= batchRows; i++ {
		id := 2 * i
		k := batchK(id)
		if (lo < 0 || k >= lo) && (hi < 0 || k < hi) {
			out = append(out, id)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return batchK(out[a]) < batchK(out[b]) })
	if reverse {
		slices.Reverse(out)
	}
	return out
}

// TestCursorBatchingBounds: cursors over more than one batch (128 rows),
// both directions, every combination of bounds, on the clustered and a
// secondary index, consistent and locking. Lo is inclusive, Hi exclusive,
// nil is unbounded.
func TestCursorBatchingBounds(t *testing.T) {
	e, tb := newBatchTable(t)
	_ = e
	b := func(id int) []byte {
		if id < 0 {
			return nil
		}
		return tpk(id)
	}
	bk := func(k int) []byte {
		if k < 0 {
			return nil
		}
		return tik(k)
	}
	pkCases := []struct {
		name   string
		lo, hi int
	}{
		{"unbounded", -1, -1},
		{"lo only, on a key (inclusive)", 300, -1},
		{"lo only, between keys", 301, -1},
		{"hi only, on a key (exclusive)", -1, 1000},
		{"hi only, between keys", -1, 1001},
		{"both", 300, 1000},
		{"exactly one batch", 2, 2 + 2*scanBatch},
		{"one batch plus one", 2, 4 + 2*scanBatch},
		{"one batch minus one", 2, 2 * scanBatch},
		{"two batches from the middle", 501, 501 + 4*scanBatch},
		{"single row", 600, 601},
		{"lo == hi", 600, 600},
		{"lo > hi", 700, 600},
		{"below all keys", 0, 2},
		{"above all keys", 2001, -1},
		{"past both ends", 0, 5000},
	}
	for _, mode := range []txn.LockMode{0, txn.LockS} {
		mname := map[txn.LockMode]string{0: "consistent", txn.LockS: "locking"}[mode]
		tx := e.Begin(txn.RepeatableRead)
		for _, c := range pkCases {
			for _, rev := range []bool{false, true} {
				t.Run(mname+"/pk/"+c.name+"/reverse="+strconv.FormatBool(rev), func(t *testing.T) {
					got := scanIDs(t, tx, tb, PrimaryIndex, Range{Lo: b(c.lo), Hi: b(c.hi)}, rev, mode)
					if want := expectPK(c.lo, c.hi, rev); !slices.Equal(got, want) {
						t.Fatalf("got %d rows %v..., want %d rows %v...", len(got), head(got), len(want), head(want))
					}
				})
			}
		}
		kCases := []struct {
			name   string
			lo, hi int
		}{
			{"unbounded", -1, -1},
			{"lo only", 50, -1},
			{"hi only", -1, 300},
			{"both, many batches", 40, 300},
			{"one key, three rows", 100, 101},
			{"empty", 100, 100},
			{"above all keys", 334, -1},
		}
		for _, c := range kCases {
			for _, rev := range []bool{false, true} {
				t.Run(mname+"/k/"+c.name+"/reverse="+strconv.FormatBool(rev), func(t *testing.T) {
					got := scanIDs(t, tx, tb, 0, Range{Lo: bk(c.lo), Hi: bk(c.hi)}, rev, mode)
					if want := expectK(c.lo, c.hi, rev); !slices.Equal(got, want) {
						t.Fatalf("got %d rows %v..., want %d rows %v...", len(got), head(got), len(want), head(want))
					}
				})
			}
		}
		tx.Rollback()
	}
}

func head(s []int) []int {
	if len(s) > 6 {
		return s[:6]
	}
	return s
}

// TestCursorSnapshotAcrossBatches: a consistent cursor returns its view's
// rows even when other transactions delete, insert and move rows (and purge
// runs) between its batches.
func TestCursorSnapshotAcrossBatches(t *testing.T) {
	for _, c := range []struct {
		name string
		idx  int
		rev  bool
	}{
		{"pk", PrimaryIndex, false}, {"pk reverse", PrimaryIndex, true},
		{"k", 0, false}, {"k reverse", 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, tb := newBatchTable(t)
			var want []int
			if c.idx == PrimaryIndex {
				want = expectPK(-1, -1, c.rev)
			} else {
				want = expectK(-1, -1, c.rev)
			}
			tx := e.Begin(txn.RepeatableRead)
			defer tx.Rollback()
			cur := tx.Cursor(bg, tb, c.idx, Range{}, c.rev, 0)
			var got []int
			for {
				pk, row, ok, err := cur.Next()
				must(t, err)
				if !ok {
					break
				}
				if rowStr(row) != "k="+strconv.Itoa(batchK(tid(pk)))+";v=v" {
					t.Fatalf("row %d is %q", tid(pk), row)
				}
				got = append(got, tid(pk))
				if len(got) == 200 { // inside the second batch
					autocommit(t, e, func(w *Tx) {
						for i := 1; i <= batchRows; i += 3 {
							del(t, w, tb, 2*i)
						}
						for i := 2; i <= batchRows; i += 3 {
							upd(t, w, tb, 2*i, 5000-i, "moved") // far along the k index
						}
						for i := 1; i <= batchRows; i += 5 {
							ins(t, w, tb, 2*i+1, batchK(2*i+1), "new")
						}
					})
					e.Purge()
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %d rows %v..., want %d rows %v...", len(got), head(got), len(want), head(want))
			}
		})
	}
}

// TestLockingCursorAcrossBatches: a locking cursor returns the latest
// committed rows: rows deleted ahead of it (and purged) are skipped, rows
// inserted ahead of it are returned, nothing twice, in order.
func TestLockingCursorAcrossBatches(t *testing.T) {
	for _, rev := range []bool{false, true} {
		t.Run("reverse="+strconv.FormatBool(rev), func(t *testing.T) {
			e, tb := newBatchTable(t)
			tx := e.Begin(txn.RepeatableRead)
			defer tx.Rollback()
			cur := tx.Cursor(bg, tb, PrimaryIndex, Range{}, rev, txn.LockS)
			var got []int
			var deleted = map[int]bool{}
			var added []int
			for {
				pk, _, ok, err := cur.Next()
				must(t, err)
				if !ok {
					break
				}
				got = append(got, tid(pk))
				if len(got) == 200 {
					// Change rows well ahead of the cursor in either direction.
					autocommit(t, e, func(w *Tx) {
						for id := 900; id < 1100; id += 2 {
							del(t, w, tb, id)
							deleted[id] = true
						}
						for id := 801; id < 1201; id += 20 {
							ins(t, w, tb, id, 0, "new")
							added = append(added, id)
						}
					})
					e.Purge()
				}
			}
			var want []int
			for _, id := range expectPK(-1, -1, false) {
				if !deleted[id] {
					want = append(want, id)
				}
			}
			want = append(want, added...)
			slices.Sort(want)
			if rev {
				slices.Reverse(want)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %d rows, want %d", len(got), len(want))
			}
		})
	}
}

// TestSecondaryScanAfterKeyMove: after a row's key moves, a new view finds
// it only under the new key and an old view only under the old key; no view
// gets a row twice, before or after purge, however often the key moved.
func TestSecondaryScanAfterKeyMove(t *testing.T) {
	cases := []struct {
		name  string
		moves []int // successive k values of row 1 (it starts at 10)
		purge bool
	}{
		{"one move", []int{50}, false},
		{"one move, purged", []int{50}, true},
		{"there and back", []int{50, 10}, false},
		{"there and back, purged", []int{50, 10}, true},
		{"many moves", []int{50, 60, 10, 70, 50, 80}, false},
		{"many moves, purged", []int{50, 60, 10, 70, 50, 80}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEngine(t)
			tb := newKTable(e, false)
			seed(t, e, tb, 3, func(id int) int { return id * 10 }) // 10 20 30

			old := e.Begin(txn.RepeatableRead)
			defer old.Rollback()
			get(t, old, tb, 2, 0)
			for i, k := range c.moves {
				autocommit(t, e, func(w *Tx) { upd(t, w, tb, 1, k, "m"+strconv.Itoa(i)) })
			}
			if c.purge {
				e.Purge()
			}
			final := c.moves[len(c.moves)-1]
			finalRow := "k=" + strconv.Itoa(final) + ";v=m" + strconv.Itoa(len(c.moves)-1)

			fresh := e.Begin(txn.RepeatableRead)
			defer fresh.Rollback()
			for _, k := range []int{10, 50, 60, 70, 80} {
				var wantNew, wantOld []string
				if k == final {
					wantNew = []string{"1:" + finalRow}
				}
				if k == 10 {
					wantOld = []string{"1:k=10;v=v1"}
				}
				for _, rev := range []bool{false, true} {
					if got := scan(t, fresh, tb, 0, kEq(k), rev, 0); !slices.Equal(got, wantNew) {
						t.Errorf("new view, k=%d: %q, want %q", k, got, wantNew)
					}
					if got := scan(t, old, tb, 0, kEq(k), rev, 0); !slices.Equal(got, wantOld) {
						t.Errorf("old view, k=%d: %q, want %q", k, got, wantOld)
					}
				}
			}
			// Whole-index scans: every row exactly once, in key order.
			wantAllNew := []string{"2:k=20;v=v2", "3:k=30;v=v3"}
			if final < 20 {
				wantAllNew = append([]string{"1:" + finalRow}, wantAllNew...)
			} else {
				wantAllNew = append(wantAllNew, "1:"+finalRow)
			}
			if got := scan(t, fresh, tb, 0, Range{}, false, 0); !slices.Equal(got, wantAllNew) {
				t.Errorf("new view, all: %q, want %q", got, wantAllNew)
			}
			wantAllOld := []string{"1:k=10;v=v1", "2:k=20;v=v2", "3:k=30;v=v3"}
			if got := scan(t, old, tb, 0, Range{}, false, 0); !slices.Equal(got, wantAllOld) {
				t.Errorf("old view, all: %q, want %q", got, wantAllOld)
			}
			if got := scan(t, old, tb, 0, Range{}, true, 0); !slices.Equal(got, []string{wantAllOld[2], wantAllOld[1], wantAllOld[0]}) {
				t.Errorf("old view, all reverse: %q", got)
			}
			// Locking reads follow the latest version.
			if got := scan(t, fresh, tb, 0, Range{}, false, txn.LockS); !slices.Equal(got, wantAllNew) {
				t.Errorf("locking, all: %q, want %q", got, wantAllNew)
			}
		})
	}
}

// TestScanStopsEarly: fn returning false ends Scan without an error; a
// cancelled context ends a cursor at its next batch.
func TestScanStopsEarly(t *testing.T) {
	e, tb := newBatchTable(t)
	tx := e.Begin(txn.RepeatableRead)
	defer tx.Rollback()
	n := 0
	must(t, tx.Scan(bg, tb, PrimaryIndex, Range{}, false, 0, func(_, _ []byte) (bool, error) {
		n++
		return n < 10, nil
	}))
	if n != 10 {
		t.Fatalf("fn called %d times, want 10", n)
	}

	ctx, cancel := context.WithCancel(bg)
	cur := tx.Cursor(ctx, tb, PrimaryIndex, Range{}, false, 0)
	if _, _, ok, err := cur.Next(); !ok || err != nil {
		t.Fatalf("first Next: %v %v", ok, err)
	}
	cancel()
	var err error
	for i := 0; i < 2*scanBatch && err == nil; i++ {
		_, _, _, err = cur.Next()
	}
	if err != context.Canceled {
		t.Fatalf("cursor after cancel: %v, want context.Canceled", err)
	}

	if err := tx.Scan(bg, tb, 5, Range{}, false, 0, func(_, _ []byte) (bool, error) { return true, nil }); err == nil {
		t.Fatal("scan of a missing index: no error")
	}
}

// TestCursorHidesLaterOwnWrites: a consistent cursor never returns a version
// its own transaction wrote after the cursor opened, even in batches it
// collects later (INSERT INTO t SELECT ... FROM t adds rows ahead of its own
// scan; they must not be read back). Own writes made before it opened are
// seen, and a cursor opened afterwards sees everything.
func TestCursorHidesLaterOwnWrites(t *testing.T) {
	for _, n := range []int{10, 127, 128, 129, 1000, 3000} {
		for _, reverse := range []bool{false, true} {
			t.Run(fmt.Sprintf("rows=%d/reverse=%v", n, reverse), func(t *testing.T) {
				e := newTestEngine(t)
				tb := newKTable(e, false)
				seed(t, e, tb, n, func(id int) int { return id })
				tx := e.Begin(txn.RepeatableRead)
				tx.NewStatement()
				// An own write before the cursor opens: seen by it.
				upd(t, tx, tb, 1, -1, "before")
				c := tx.Cursor(bg, tb, PrimaryIndex, Range{}, reverse, 0)
				copied, sawBefore := 0, false
				for {
					pk, row, ok, err := c.Next()
					must(t, err)
					if !ok {
						break
					}
					id := tid(pk)
					if id > n {
						t.Fatalf("cursor returned row %d, written after it opened", id)
					}
					if id == 1 {
						sawBefore = rowStr(row) == "k=-1;v=before"
					}
					// Copy the row ahead of (and behind) the scan, and
					// change a row the scan has not reached yet.
					ins(t, tx, tb, id+n, id, "copy")
					copied++
				}
				if copied != n || !sawBefore {
					t.Fatalf("copied %d rows (want %d), saw own earlier write: %v", copied, n, sawBefore)
				}
				// A cursor opened now sees the copies.
				if got := len(scanIDs(t, tx, tb, PrimaryIndex, Range{}, false, 0)); got != 2*n {
					t.Fatalf("later scan: %d rows, want %d", got, 2*n)
				}
				// And secondary index scans obey the same rule.
				c2 := tx.Cursor(bg, tb, 0, Range{}, false, 0)
				m := 0
				for {
					pk, _, ok, err := c2.Next()
					must(t, err)
					if !ok {
						break
					}
					ins(t, tx, tb, tid(pk)+10*n, 0, "copy2")
					m++
				}
				if m != 2*n {
					t.Fatalf("secondary scan while inserting: %d rows, want %d", m, 2*n)
				}
				commit(t, tx)
			})
		}
	}
}

// TestCursorSeesLaterUpdateAsBefore: a row the scan has not reached yet,
// updated by the same transaction after the cursor opened, is read as it
// was when the cursor opened (its own earlier version or the committed one).
func TestCursorSeesLaterUpdateAsBefore(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 500, func(id int) int { return id })
	tx := e.Begin(txn.RepeatableRead)
	tx.NewStatement()
	upd(t, tx, tb, 400, 1, "mine")
	c := tx.Cursor(bg, tb, PrimaryIndex, Range{}, false, 0)
	for {
		pk, row, ok, err := c.Next()
		must(t, err)
		if !ok {
			break
		}
		switch id := tid(pk); id {
		case 1:
			upd(t, tx, tb, 300, 2, "later")
			upd(t, tx, tb, 400, 3, "later")
			del(t, tx, tb, 450)
		case 300:
			if got := rowStr(row); got != "k=300;v=v300" {
				t.Fatalf("row 300 = %s, want the committed version", got)
			}
		case 400:
			if got := rowStr(row); got != "k=1;v=mine" {
				t.Fatalf("row 400 = %s, want the own version from before the cursor", got)
			}
		case 450:
			if got := rowStr(row); got != "k=450;v=v450" {
				t.Fatalf("row 450 = %s, want it (deleted after the cursor opened)", got)
			}
		}
	}
	if got := get(t, tx, tb, 300, 0); got != "k=2;v=later" {
		t.Fatalf("point read after the scan = %s, want own latest", got)
	}
	commit(t, tx)
}

// TestCursorBufferReuse: cursors share candidate buffers through the
// engine. A cursor closed early, or read to its end, gives its buffer back;
// the next cursor to take it reads its own range only, and a closed cursor
// reads nothing more (Close twice is harmless).
func TestCursorBufferReuse(t *testing.T) {
	e, tb := newBatchTable(t)
	tx := e.Begin(txn.RepeatableRead)
	defer tx.Rollback()
	read := func(c *Cursor, max int) []int {
		var ids []int
		for len(ids) < max {
			pk, _, ok, err := c.Next()
			must(t, err)
			if !ok {
				break
			}
			ids = append(ids, tid(pk))
		}
		return ids
	}
	for i, tc := range []struct {
		lo, hi  int
		reverse bool
		stop    int // read this many rows, then Close (0: to the end)
	}{
		{lo: -1, hi: -1, stop: 3},
		{lo: 100, hi: 120},
		{lo: 500, hi: 1200, reverse: true, stop: scanBatch + 5},
		{lo: 1990, hi: 1996},
		{lo: 7, hi: 8}, // empty
		{lo: 10, hi: 600, reverse: true},
	} {
		rng := Range{}
		if tc.lo >= 0 {
			rng.Lo = tpk(tc.lo)
		}
		if tc.hi >= 0 {
			rng.Hi = tpk(tc.hi)
		}
		c := tx.Cursor(bg, tb, PrimaryIndex, rng, tc.reverse, 0)
		want := expectPK(tc.lo, tc.hi, tc.reverse)
		limit := len(want) + 1
		if tc.stop > 0 {
			limit, want = tc.stop, want[:tc.stop]
		}
		if got := read(c, limit); !slices.Equal(got, want) {
			t.Fatalf("case %d: read %v, want %v", i, got, want)
		}
		c.Close()
		c.Close()
		if got := read(c, 10); len(got) != 0 {
			t.Fatalf("case %d: a closed cursor read %v", i, got)
		}
	}
}
