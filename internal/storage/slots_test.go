package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"lockstep/internal/txn"
)

// lockedCommitter is fakeCommitter for concurrent committers: records in
// commit order.
type lockedCommitter struct {
	mu   sync.Mutex
	recs []*CommitRecord
}

func (f *lockedCommitter) Commit(rec *CommitRecord, publish func()) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recs = append(f.recs, rec)
	publish()
	return nil
}

// TestSlotsReplayUnderPurge: concurrent transactions update, delete and
// re-insert a few hot rows (chains folded into bases by a purge that runs
// all the time, slots removed and reused), with savepoint rollbacks and
// whole rollbacks; the commit records applied to a second engine give the
// same rows and index entries, and a consistent read taken before the
// storm still sees the rows as they were.
func TestSlotsReplayUnderPurge(t *testing.T) {
	for _, seedN := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seedN), func(t *testing.T) {
			fc := &lockedCommitter{}
			src := New(Options{PurgeInterval: -1, Committer: fc})
			defer src.Close()
			st := newKTable(src, false)
			const ids = 40
			seed(t, src, st, ids, func(id int) int { return id % 7 })
			old := src.Begin(txn.RepeatableRead)
			before := scan(t, old, st, PrimaryIndex, Range{}, false, 0)
			stop := make(chan struct{})
			var pwg sync.WaitGroup
			pwg.Add(1)
			go func() {
				defer pwg.Done()
				for {
					select {
					case <-stop:
						return
					default:
						src.Purge()
					}
				}
			}()
			var wg sync.WaitGroup
			for w := 0; w < 4; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(seedN, uint64(w)))
					for i := 0; i < 300; i++ {
						tx := src.Begin(txn.RepeatableRead)
						tx.LockWait = 0
						err := func() error {
							for j := 0; j < 1+rng.IntN(4); j++ {
								tx.NewStatement()
								mark := tx.Savepoint()
								id := rng.IntN(ids)
								var err error
								switch rng.IntN(4) {
								case 0, 1:
									_, ok, gerr := tx.Get(bg, st, tpk(id), txn.LockX)
									if gerr != nil {
										return gerr
									}
									if ok {
										err = tx.Update(bg, st, 0, tpk(id), tpk(id), trow(rng.IntN(9), fmt.Sprint(w, i, j)))
									} else {
										err = tx.Insert(bg, st, 0, tpk(id), trow(rng.IntN(9), fmt.Sprint(w, i, j)))
									}
								case 2:
									err = tx.Delete(bg, st, 0, tpk(id))
								default:
									err = tx.Insert(bg, st, 0, tpk(id), trow(rng.IntN(9), "i"))
								}
								var dup *DuplicateKeyError
								if errors.As(err, &dup) {
									err = nil
								}
								if err != nil {
									return err
								}
								if rng.IntN(5) == 0 {
									tx.RollbackTo(mark)
								}
							}
							return nil
						}()
						if err != nil || rng.IntN(6) == 0 {
							tx.Rollback()
							continue
						}
						must(t, tx.Commit())
					}
				}(w)
			}
			wg.Wait()
			close(stop)
			pwg.Wait()
			if got := scan(t, old, st, PrimaryIndex, Range{}, false, 0); !slices.Equal(got, before) {
				t.Fatalf("the old snapshot changed:\n%q\nwant\n%q", got, before)
			}
			old.Rollback()
			src.Purge()

			dst := newTestEngine(t)
			dt := newKTable(dst, false)
			seed(t, dst, dt, ids, func(id int) int { return id % 7 })
			for i, rec := range fc.recs[1:] { // recs[0] is the seed
				if _, err := dst.ApplyTxn(rec.Changes); err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
			}
			r1, r2 := src.Begin(txn.RepeatableRead), dst.Begin(txn.RepeatableRead)
			defer r1.Rollback()
			defer r2.Rollback()
			for _, idx := range []int{PrimaryIndex, 0} {
				want, got := scan(t, r1, st, idx, Range{}, false, 0), scan(t, r2, dt, idx, Range{}, false, 0)
				if !slices.Equal(got, want) {
					t.Fatalf("index %d after apply:\n%q\nwant\n%q", idx, got, want)
				}
			}
			if n, m := secLen(st, 0), pkLen(st); n != m {
				t.Errorf("k index has %d entries for %d rows after purge", n, m)
			}
		})
	}
}

// TestCommitRecordRowsOfTwoTables: slot numbers are per table, so two
// tables' first rows have the same slot and generation; a transaction that
// changes both has both in its commit record (a record once deduplicated
// rows by slot alone and dropped the second table's change).
func TestCommitRecordRowsOfTwoTables(t *testing.T) {
	fc := &fakeCommitter{}
	e := New(Options{PurgeInterval: -1, Committer: fc})
	defer e.Close()
	a, b := newTable(e, "a"), newTable(e, "b")
	autocommit(t, e, func(tx *Tx) {
		ins(t, tx, a, 1, 1, "a")
		ins(t, tx, b, 1, 1, "b")
	})
	autocommit(t, e, func(tx *Tx) {
		upd(t, tx, a, 1, 2, "a2")
		upd(t, tx, b, 1, 2, "b2")
	})
	for i, rec := range fc.recs {
		if len(rec.Changes) != 2 {
			t.Errorf("record %d has %d changes, want 2", i, len(rec.Changes))
		}
	}
}

// TestCompactionUnderUpdates: rows updated over and over leave their old
// bases dead in the slab; purge compacts the arena, so its size stays
// within a small multiple of the live bytes, and every row and index entry
// still reads back right, through both indexes, after the moves. A third
// of the rows is never updated, so the chunks they were loaded into keep
// live rows, keys and entries that compaction must move. A slice read
// before the moves is unchanged.
func TestCompactionUnderUpdates(t *testing.T) {
	e := New(Options{PurgeInterval: -1})
	defer e.Close()
	tb := newKTable(e, false)
	const rows = 2000
	pad := strings.Repeat("x", 1000)
	autocommit(t, e, func(tx *Tx) {
		for id := 1; id <= rows; id++ {
			ins(t, tx, tb, id, id, fmt.Sprintf("0:%s", pad))
		}
	})
	r := e.Begin(txn.RepeatableRead)
	held, _, err := r.Get(bg, tb, tpk(7), 0) // a slice into the first chunk
	must(t, err)
	heldCopy := slices.Clone(held)
	r.Rollback()
	for round := 1; round <= 12; round++ {
		autocommit(t, e, func(tx *Tx) {
			for id := 1; id <= rows; id++ {
				if id%3 != 0 {
					upd(t, tx, tb, id, id+round*rows, fmt.Sprintf("%d:%s", round, pad))
				}
			}
		})
		e.Purge()
	}
	if n := e.Stats().SlabChunksCompacted.Load(); n == 0 {
		t.Fatal("no chunk compacted")
	}
	if !slices.Equal(held, heldCopy) {
		t.Fatal("a row slice read before compaction changed")
	}
	tb.mu.RLock()
	st := tb.rs.arena.Stats()
	tb.mu.RUnlock()
	if st.Bytes > 3*st.LiveBytes+8<<20 {
		t.Errorf("arena %d bytes for %d live bytes", st.Bytes, st.LiveBytes)
	}
	tx := e.Begin(txn.RepeatableRead)
	defer tx.Rollback()
	byPK := scan(t, tx, tb, PrimaryIndex, Range{}, false, 0)
	byK := scan(t, tx, tb, 0, Range{}, false, 0)
	slices.Sort(byPK)
	slices.Sort(byK)
	if len(byPK) != rows || !slices.Equal(byPK, byK) {
		t.Fatalf("after compaction: %d rows by pk, %d by k, equal %v", len(byPK), len(byK), slices.Equal(byPK, byK))
	}
	for id := 1; id <= rows; id++ {
		k, round := id+12*rows, 12
		if id%3 == 0 {
			k, round = id, 0
		}
		want := rowStr(trow(k, fmt.Sprintf("%d:%s", round, pad)))
		if got := get(t, tx, tb, id, 0); got != want {
			t.Fatalf("row %d: %.40q, want %.40q", id, got, want)
		}
		if !hasEntry(tb, k, id) || (round > 0 && hasEntry(tb, k-rows, id)) {
			t.Fatalf("row %d: k entries wrong after compaction", id)
		}
	}
	if n, m := secLen(tb, 0), pkLen(tb); n != rows || m != rows {
		t.Errorf("%d k entries, %d rows, want %d", n, m, rows)
	}
}

// TestSmallTableMemory: a table of a few rows costs a few KiB of arena and
// slots, not a 1 MiB chunk and 4,096 slots; a large one grows to full
// chunks.
func TestSmallTableMemory(t *testing.T) {
	e := newTestEngine(t)
	tb := newKTable(e, false)
	seed(t, e, tb, 3, func(id int) int { return id })
	m := e.RowMemory()
	if m.ArenaBytes > 4<<10 || m.SlotBytes > 1<<10 || m.Rows != 3 {
		t.Fatalf("3 rows: %+v", m)
	}
	seed2 := func(from, n int) {
		autocommit(t, e, func(tx *Tx) {
			for id := from; id < from+n; id++ {
				ins(t, tx, tb, id, id, "v")
			}
		})
	}
	seed2(100, 10_000)
	m = e.RowMemory()
	if m.Rows != 10_003 || m.SlotBytes != (2*4096+2048)*40 {
		t.Fatalf("10,003 rows: %+v (want two full slot chunks and one of 2,048)", m)
	}
}
