package commit

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// bigTxn is a transaction whose record is sizes[seq-1] bytes (seq and
// last_committed first, as payload makes them; by sequence number, since
// the order of concurrent arrivals is not known); it records its Publish.
func bigTxn(sizes []int, ws uint64, published *[]int64, mu *sync.Mutex) *Txn {
	var seq int64
	return &Txn{
		Writeset: []uint64{ws},
		Encode: func(pos Position) ([]byte, error) {
			seq = pos.Seq
			b := make([]byte, sizes[pos.Seq-1])
			copy(b, payload(pos.Seq, pos.LastCommitted))
			return b, nil
		},
		Publish: func() {
			mu.Lock()
			*published = append(*published, seq)
			mu.Unlock()
		},
	}
}

// splitPipeline is a pipeline over log that holds its leader (the sync
// delay) until n commits are queued, so that they form one group, with
// its groups capped at max bytes.
func splitPipeline(t *testing.T, log Log, n int, max int64) *Pipeline {
	t.Helper()
	p, err := New(Options{Log: log, SyncDelay: 2 * time.Second, SyncNoDelayCount: n, MaxGroupBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestSplitGroup: a group of three transactions of 100 bytes, capped at
// 150 bytes, is appended as three entries, in sequence order, each only
// once every record before it is published (a group member's log applies
// its own entries only after they are published: an Append before that
// would wait forever); one of 40 and one of 60 bytes share an entry.
func TestSplitGroup(t *testing.T) {
	for _, tc := range []struct {
		sizes   []int
		appends int64
	}{
		{[]int{100, 100, 100}, 3},
		{[]int{40, 60, 100}, 2},
		{[]int{300, 20, 20}, 2}, // a record over the cap is an entry of its own
	} {
		t.Run(fmt.Sprint(tc.sizes), func(t *testing.T) {
			log := newFakeLog(time.Millisecond)
			var p *Pipeline
			log.appendFn = func(call int64, payloads [][]byte) error {
				if call == 1 {
					return nil
				}
				// Every record already in the log is published.
				if n, last := int64(len(log.records)), p.LastPublished(); last != n {
					t.Errorf("append %d: %d records in the log, %d published", call, n, last)
				}
				return nil
			}
			p = splitPipeline(t, log, len(tc.sizes), 150)
			var mu sync.Mutex
			var published []int64
			txns := make([]*Txn, len(tc.sizes))
			for i := range tc.sizes {
				txns[i] = bigTxn(tc.sizes, uint64(i+1), &published, &mu)
			}
			commitAll(t, p, txns)
			s := p.Stats()
			if s.Groups != 1 || s.Splits != 1 || s.SplitEntries != tc.appends || log.appends.Load() != tc.appends {
				t.Fatalf("groups %d, splits %d, split entries %d, appends %d; want 1 group split into %d entries",
					s.Groups, s.Splits, s.SplitEntries, log.appends.Load(), tc.appends)
			}
			for i, rec := range log.snapshot() {
				if seq, lc := decode(rec); seq != int64(i+1) || lc != 0 {
					t.Errorf("record %d: seq %d, last_committed %d; want %d, 0", i+1, seq, lc, i+1)
				}
			}
			if fmt.Sprint(published) != "[1 2 3]" {
				t.Errorf("published %v, want [1 2 3]", published)
			}
		})
	}
}

// TestSplitGroupUnderCap: a group within the cap is one entry.
func TestSplitGroupUnderCap(t *testing.T) {
	log := newFakeLog(0)
	p := splitPipeline(t, log, 3, 1000)
	var mu sync.Mutex
	var published []int64
	sizes := []int{100, 100, 100}
	commitAll(t, p, []*Txn{bigTxn(sizes, 1, &published, &mu), bigTxn(sizes, 2, &published, &mu), bigTxn(sizes, 3, &published, &mu)})
	if s := p.Stats(); s.Splits != 0 || log.appends.Load() != 1 {
		t.Fatalf("splits %d, appends %d; want one entry", s.Splits, log.appends.Load())
	}
}

// TestSplitGroupPartNotCommitted: the second entry of a split group is
// certainly not committed; the first entry's transaction is published, the
// second's and the third's fail (ErrNotCommitted) and the third entry is
// never appended.
func TestSplitGroupPartNotCommitted(t *testing.T) {
	log := newFakeLog(0)
	log.syncFn = func(call int64, lsn uint64) error {
		if call == 2 {
			return fmt.Errorf("%w: the entry was lost", ErrNotCommitted)
		}
		return nil
	}
	p := splitPipeline(t, log, 3, 150)
	var mu sync.Mutex
	var published []int64
	sizes := []int{100, 100, 100}
	txns := []*Txn{bigTxn(sizes, 1, &published, &mu), bigTxn(sizes, 2, &published, &mu), bigTxn(sizes, 3, &published, &mu)}
	res := make([]result, len(txns))
	var wg sync.WaitGroup
	for i, tx := range txns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seq, err := p.Commit(tx)
			res[i] = result{seq, err}
		}()
	}
	wg.Wait()
	ok, notCommitted := 0, 0
	for _, r := range res {
		switch {
		case r.err == nil && r.seq == 1:
			ok++
		case errors.Is(r.err, ErrNotCommitted):
			notCommitted++
		default:
			t.Errorf("commit: seq %d, %v", r.seq, r.err)
		}
	}
	if ok != 1 || notCommitted != 2 {
		t.Errorf("%d committed, %d not committed; want 1 and 2 (%v)", ok, notCommitted, res)
	}
	if n := log.appends.Load(); n != 2 {
		t.Errorf("%d appends, want 2 (the third entry is not appended after the second failed)", n)
	}
	if fmt.Sprint(published) != "[1]" {
		t.Errorf("published %v, want [1]", published)
	}
}
