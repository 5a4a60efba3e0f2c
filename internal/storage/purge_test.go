package storage

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lockstep/internal/txn"
)

// TestPurgeCollapsesChain: after many committed updates of one row and no
// open view, Purge leaves one version and one index entry, counts what it
// removed, and empties the history list.
func TestPurgeCollapsesChain(t *testing.T) {
	for _, c := range []struct {
		name    string
		updates int
		moveKey bool // each update changes k
	}{
		{"same key", 200, false},
		{"moving key", 200, true},
		{"one update", 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEngine(t)
			tb := newKTable(e, false)
			seed(t, e, tb, 2, func(id int) int { return id * 10 })
			st := e.Stats()
			e.Purge()
			purged0 := st.PurgedVersion.Load()
			k := 10
			for i := 0; i < c.updates; i++ {
				if c.moveKey {
					k = 1000 + i
				}
				autocommit(t, e, func(w *Tx) { upd(t, w, tb, 1, k, strconv.Itoa(i)) })
			}
			if n := chainLen(tb, 1); n != c.updates+1 {
				t.Fatalf("chain before purge: %d versions, want %d", n, c.updates+1)
			}
			if h := st.HistoryLength.Load(); h != int64(c.updates) {
				t.Fatalf("HistoryLength before purge = %d, want %d", h, c.updates)
			}
			if n := e.Purge(); n != c.updates {
				t.Fatalf("Purge purged %d transactions, want %d", n, c.updates)
			}
			if got := st.PurgedVersion.Load() - purged0; got != uint64(c.updates) {
				t.Errorf("PurgedVersion grew by %d, want %d", got, c.updates)
			}
			if h := st.HistoryLength.Load(); h != 0 {
				t.Errorf("HistoryLength after purge = %d", h)
			}
			if n := chainLen(tb, 1); n != 1 {
				t.Errorf("chain after purge: %d versions", n)
			}
			if n := secLen(tb, 0); n != 2 {
				t.Errorf("index has %d entries after purge, want 2", n)
			}
			r := e.Begin(txn.RepeatableRead)
			defer r.Rollback()
			want := []string{"1:k=" + strconv.Itoa(k) + ";v=" + strconv.Itoa(c.updates-1), "2:k=20;v=v2"}
			if k > 20 {
				want[0], want[1] = want[1], want[0]
			}
			if got := scan(t, r, tb, 0, Range{}, false, 0); !slices.Equal(got, want) {
				t.Errorf("after purge: %q, want %q", got, want)
			}
		})
	}
}

// TestPurgeKeepsVersionsOpenViewsNeed: a long-running RR view (and an RC
// statement view) keeps seeing its versions, through both indexes, across
// any number of purges; once the views close, purge collapses the chains.
func TestPurgeKeepsVersionsOpenViewsNeed(t *testing.T) {
	for _, iso := range []txn.Isolation{txn.RepeatableRead, txn.ReadCommitted} {
		t.Run(map[txn.Isolation]string{txn.RepeatableRead: "RR", txn.ReadCommitted: "RC statement"}[iso], func(t *testing.T) {
			e := newTestEngine(t)
			tb := newKTable(e, false)
			seed(t, e, tb, 3, func(id int) int { return id * 10 })

			old := e.Begin(iso)
			want := []string{"1:k=10;v=v1", "2:k=20;v=v2", "3:k=30;v=v3"}
			check := func(when string) {
				t.Helper()
				if got := scan(t, old, tb, PrimaryIndex, Range{}, false, 0); !slices.Equal(got, want) {
					t.Fatalf("%s: pk scan %q, want %q", when, got, want)
				}
				if got := scan(t, old, tb, 0, Range{}, false, 0); !slices.Equal(got, want) {
					t.Fatalf("%s: k scan %q, want %q", when, got, want)
				}
				if got := get(t, old, tb, 2, 0); got != "k=20;v=v2" {
					t.Fatalf("%s: Get(2) = %q", when, got)
				}
			}
			check("before")
			for i := 0; i < 50; i++ {
				autocommit(t, e, func(w *Tx) {
					upd(t, w, tb, 1, 100+i, "u"+strconv.Itoa(i))
					if i == 10 {
						del(t, w, tb, 2)
					}
					if i == 20 {
						ins(t, w, tb, 4, 40, "v4")
						del(t, w, tb, 4)
					}
				})
				e.Purge()
			}
			check("after purges")
			if h := e.Stats().HistoryLength.Load(); h != 50 {
				t.Fatalf("HistoryLength with the view open = %d, want 50", h)
			}
			commit(t, old) // closes the view
			e.Purge()
			if h := e.Stats().HistoryLength.Load(); h != 0 {
				t.Fatalf("HistoryLength after the view closed = %d", h)
			}
			if n := chainLen(tb, 1); n != 1 {
				t.Fatalf("row 1 has %d versions after the view closed", n)
			}
			if n := chainLen(tb, 2); n != 0 {
				t.Fatalf("deleted row 2 still has a record (%d versions)", n)
			}
			if n := secLen(tb, 0); n != 2 {
				t.Fatalf("index has %d entries, want 2", n)
			}
		})
	}
}

// TestPurgeRespectsViewOpenedMidway: versions a view needs are kept even
// when the view opens between a row's updates.
func TestPurgeRespectsViewOpenedMidway(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 1, func(int) int { return 10 })
	var views []*Tx
	var wants []string
	for i := 0; i < 20; i++ {
		autocommit(t, e, func(w *Tx) { upd(t, w, tb, 1, 10+i, "u"+strconv.Itoa(i)) })
		if i%5 == 0 {
			v := e.Begin(txn.RepeatableRead)
			wants = append(wants, get(t, v, tb, 1, 0))
			views = append(views, v)
		}
		e.Purge()
	}
	for i, v := range views {
		if got := get(t, v, tb, 1, 0); got != wants[i] {
			t.Fatalf("view %d: %q, want %q", i, got, wants[i])
		}
		k, _ := strconv.Atoi(strings.TrimPrefix(strings.Split(wants[i], ";")[0], "k="))
		if got := scan(t, v, tb, 0, kEq(k), false, 0); len(got) != 1 {
			t.Fatalf("view %d finds %q under k=%d", i, got, k)
		}
		v.Rollback()
		e.Purge()
	}
	if n := chainLen(tb, 1); n != 1 {
		t.Fatalf("%d versions left", n)
	}
}

// TestPurgeRemovesDeletedRows: committed deletes disappear from the
// clustered and secondary indexes after purge — unless a view still sees
// the rows.
func TestPurgeRemovesDeletedRows(t *testing.T) {
	for _, withView := range []bool{false, true} {
		t.Run("view="+strconv.FormatBool(withView), func(t *testing.T) {
			e := newTestEngine(t)
			tb := newTable(e, "t", kIndex("k", true), vIndex("v"))
			seed(t, e, tb, 500, func(id int) int { return id })
			e.Purge()
			var old *Tx
			if withView {
				old = e.Begin(txn.RepeatableRead)
				get(t, old, tb, 1, 0)
			}
			autocommit(t, e, func(w *Tx) {
				for id := 2; id <= 500; id += 2 {
					del(t, w, tb, id)
				}
			})
			if n := tb.ApproxRows(); n != 250 {
				t.Fatalf("ApproxRows = %d, want 250", n)
			}
			recs0 := e.Stats().PurgedRecords.Load()
			e.Purge()
			if withView {
				if n := pkLen(tb); n != 500 {
					t.Fatalf("records purged under an open view: %d left", n)
				}
				if got := len(scanIDs(t, old, tb, 1, Range{}, false, 0)); got != 500 {
					t.Fatalf("old view sees %d rows through index v", got)
				}
				old.Rollback()
				e.Purge()
			}
			if n := pkLen(tb); n != 250 {
				t.Fatalf("clustered index holds %d records after purge, want 250", n)
			}
			for i := 0; i < 2; i++ {
				if n := secLen(tb, i); n != 250 {
					t.Fatalf("index %d holds %d entries after purge, want 250", i, n)
				}
			}
			if got := e.Stats().PurgedRecords.Load() - recs0; got != 250 {
				t.Fatalf("PurgedRecords grew by %d, want 250", got)
			}
			r := e.Begin(txn.RepeatableRead)
			defer r.Rollback()
			for _, idx := range []int{PrimaryIndex, 0, 1} {
				ids := scanIDs(t, r, tb, idx, Range{}, false, 0)
				if len(ids) != 250 {
					t.Fatalf("index %d scan: %d rows", idx, len(ids))
				}
				for _, id := range ids {
					if id%2 == 0 {
						t.Fatalf("index %d scan returns deleted row %d", idx, id)
					}
				}
			}
			// The keys are free again.
			autocommit(t, e, func(w *Tx) { ins(t, w, tb, 2, 2, "back") })
		})
	}
}

// TestPurgeInterleavedIDs: a transaction with a smaller id may commit after
// one with a larger id on the same row (ids are taken at the first write,
// not at commit). Purge must keep the version every view sees.
func TestPurgeInterleavedIDs(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 2, func(id int) int { return id * 10 })

	early := e.Begin(txn.RepeatableRead)
	upd(t, early, tb, 2, 20, "early") // takes an id now
	late := e.Begin(txn.RepeatableRead)
	upd(t, late, tb, 1, 11, "late") // larger id
	commit(t, late)
	v := e.Begin(txn.RepeatableRead)
	if got := get(t, v, tb, 1, 0); got != "k=11;v=late" {
		t.Fatal(got)
	}
	upd(t, early, tb, 1, 12, "early") // smaller id on top of a larger one
	commit(t, early)
	e.Purge()
	if got := get(t, v, tb, 1, 0); got != "k=11;v=late" {
		t.Fatalf("view after purge: %q", got)
	}
	if got := scan(t, v, tb, 0, kEq(11), false, 0); len(got) != 1 {
		t.Fatalf("view finds %q under k=11 after purge", got)
	}
	v.Rollback()
	e.Purge()
	r := e.Begin(txn.RepeatableRead)
	defer r.Rollback()
	if got := scan(t, r, tb, 0, Range{}, false, 0); !slices.Equal(got, []string{"1:k=12;v=early", "2:k=20;v=early"}) {
		t.Fatalf("after purge: %q", got)
	}
	if n := chainLen(tb, 1); n != 1 {
		t.Fatalf("%d versions left", n)
	}
}

// TestBackgroundPurgeUnderLoad is a bank: transfers between accounts in
// read-write transactions (X-locking reads, k = balance so every transfer
// moves two rows in the "k" index) while RR readers check that every
// consistent scan — clustered or secondary, either direction — sees each
// account exactly once and the constant total, with the background purge
// running every millisecond. Run with -race.
func TestBackgroundPurgeUnderLoad(t *testing.T) {
	e := New(Options{PurgeInterval: time.Millisecond})
	defer e.Close()
	tb := newKTable(e, false)
	const accounts, initial = 50, 1000
	seed(t, e, tb, accounts, func(int) int { return initial })

	balance := func(row []byte) int {
		k, _, _, err := parseRow(row)
		if err != nil {
			t.Error(err)
		}
		return k
	}
	deadline := time.Now().Add(400 * time.Millisecond)
	if testing.Short() {
		deadline = time.Now().Add(100 * time.Millisecond)
	}
	var wg sync.WaitGroup
	var transfers, checks atomic.Int64
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 1))
			for time.Now().Before(deadline) {
				a, b := 1+rng.IntN(accounts), 1+rng.IntN(accounts)
				if a == b {
					continue
				}
				if a > b {
					a, b = b, a // lock order: no deadlocks
				}
				tx := e.Begin(txn.RepeatableRead)
				ra, _, err := tx.Get(bg, tb, tpk(a), txn.LockX)
				if err != nil {
					t.Error(err)
					return
				}
				rb, _, err := tx.Get(bg, tb, tpk(b), txn.LockX)
				if err != nil {
					t.Error(err)
					return
				}
				amt := rng.IntN(100)
				if err := tx.Update(bg, tb, 0, tpk(a), tpk(a), trow(balance(ra)-amt, "x")); err != nil {
					t.Error(err)
					return
				}
				if err := tx.Update(bg, tb, 0, tpk(b), tpk(b), trow(balance(rb)+amt, "x")); err != nil {
					t.Error(err)
					return
				}
				if rng.IntN(10) == 0 {
					tx.Rollback()
					continue
				}
				if err := tx.Commit(); err != nil {
					t.Error(err)
					return
				}
				transfers.Add(1)
			}
		}(uint64(w))
	}
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				tx := e.Begin(txn.RepeatableRead)
				for _, c := range []struct {
					idx int
					rev bool
				}{{PrimaryIndex, false}, {0, false}, {PrimaryIndex, true}, {0, true}} {
					sum, n := 0, 0
					seen := map[int]bool{}
					err := tx.Scan(bg, tb, c.idx, Range{}, c.rev, 0, func(pk, row []byte) (bool, error) {
						if seen[tid(pk)] {
							t.Errorf("index %d: account %d twice", c.idx, tid(pk))
						}
						seen[tid(pk)] = true
						sum += balance(row)
						n++
						return true, nil
					})
					if err != nil {
						t.Error(err)
						return
					}
					if n != accounts || sum != accounts*initial {
						t.Errorf("index %d reverse=%v: %d accounts, total %d; want %d, %d", c.idx, c.rev, n, sum, accounts, accounts*initial)
						return
					}
					if r == 1 {
						time.Sleep(time.Millisecond) // hold the view across purges
					}
				}
				tx.Rollback()
				checks.Add(1)
			}
		}(r)
	}
	wg.Wait()
	if transfers.Load() == 0 || checks.Load() == 0 {
		t.Fatalf("no work done: %d transfers, %d checks", transfers.Load(), checks.Load())
	}
	// With everything finished, purge catches up completely.
	waitFor(t, "purge to catch up", func() bool { return e.Stats().HistoryLength.Load() == 0 })
	for id := 1; id <= accounts; id++ {
		if n := chainLen(tb, id); n != 1 {
			t.Fatalf("account %d: %d versions after purge", id, n)
		}
	}
	if n := secLen(tb, 0); n != accounts {
		t.Fatalf("index has %d entries after purge, want %d", n, accounts)
	}
	t.Logf("%d transfers, %d consistency checks, %d purge runs, %d versions purged",
		transfers.Load(), checks.Load(), e.Stats().PurgeRuns.Load(), e.Stats().PurgedVersion.Load())
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
