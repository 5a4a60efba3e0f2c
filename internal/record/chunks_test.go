package record

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"testing"
)

// bigTxn is a transaction of n changes of every kind.
func bigTxn(n int, minimal bool) *Txn {
	t := &Txn{Position: Position{Seq: 5, GNO: 6, LastCommitted: 2}, Minimal: minimal, AutoInc: []AutoInc{{Table: 3, Next: 99}}}
	for i := 0; i < n; i++ {
		c := Change{Op: Op(1 + i%3), Table: 3, Version: 1, PK: []byte(fmt.Sprintf("k%07d", i))}
		if c.Op != OpInsert && !minimal {
			c.Before = []byte(fmt.Sprintf("before-%d", i))
		}
		if c.Op != OpDelete {
			c.After = []byte(fmt.Sprintf("after-%d", i))
		}
		t.Changes = append(t.Changes, c)
		t.Writeset = append(t.Writeset, uint64(i)*7919)
	}
	return t
}

// TestTxnChunks: a transaction with more changes than the chunk is left
// encoded and handed out chunk by chunk, in order, the same changes as
// DecodeTxn's; one with fewer is decoded whole and handed out at once.
func TestTxnChunks(t *testing.T) {
	for _, tc := range []struct {
		n, chunk    int
		minimal     bool
		wantChunked bool
		wantCalls   int
	}{
		{n: 10, chunk: 0, wantCalls: 1},
		{n: 10, chunk: 10, wantCalls: 1},
		{n: 11, chunk: 10, wantChunked: true, wantCalls: 2},
		{n: 1000, chunk: 64, wantChunked: true, wantCalls: 16},
		{n: 1000, chunk: 64, minimal: true, wantChunked: true, wantCalls: 16},
		{n: 0, chunk: 4, wantCalls: 0},
	} {
		t.Run(fmt.Sprintf("n=%d,chunk=%d,minimal=%v", tc.n, tc.chunk, tc.minimal), func(t *testing.T) {
			b := AppendTxn(nil, bigTxn(tc.n, tc.minimal))
			whole, err := DecodeTxn(b)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeTxnChunked(b, tc.chunk)
			if err != nil {
				t.Fatal(err)
			}
			if got.Chunked() != tc.wantChunked || got.NumChanges() != tc.n || got.Position != whole.Position || !reflect.DeepEqual(got.AutoInc, whole.AutoInc) {
				t.Fatalf("chunked %v, %d changes, %+v %v; want %v, %d, %+v %v", got.Chunked(), got.NumChanges(), got.Position, got.AutoInc,
					tc.wantChunked, tc.n, whole.Position, whole.AutoInc)
			}
			if tc.wantChunked && (got.Changes != nil || got.Writeset != nil) {
				t.Fatalf("chunked, yet %d changes and %d writeset hashes decoded", len(got.Changes), len(got.Writeset))
			}
			var all []Change
			calls := 0
			err = got.ChangeChunks(func(cs []Change) error {
				calls++
				if tc.chunk > 0 && tc.wantChunked && len(cs) > tc.chunk {
					t.Errorf("a chunk of %d changes, chunk size %d", len(cs), tc.chunk)
				}
				all = append(all, cs...) // the structs are copied; the bytes alias b
				return nil
			})
			if err != nil || calls != tc.wantCalls {
				t.Fatalf("ChangeChunks: %v, %d calls, want %d", err, calls, tc.wantCalls)
			}
			if len(all) != len(whole.Changes) || (len(all) > 0 && !reflect.DeepEqual(all, whole.Changes)) {
				t.Fatalf("chunked changes differ from DecodeTxn's (%d, %d)", len(all), len(whole.Changes))
			}
		})
	}
}

// TestTxnChunksStop: ChangeChunks stops at f's first error.
func TestTxnChunksStop(t *testing.T) {
	txn, err := DecodeTxnChunked(AppendTxn(nil, bigTxn(100, false)), 10)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	calls := 0
	if err := txn.ChangeChunks(func([]Change) error { calls++; return boom }); err != boom || calls != 1 {
		t.Fatalf("%v after %d calls", err, calls)
	}
}

// TestTxnChunkedCorrupt: a large transaction is checked whole when it is
// decoded, before any chunk is handed out: a corrupt last change, a
// truncated writeset or trailing bytes fail DecodeTxnChunked.
func TestTxnChunkedCorrupt(t *testing.T) {
	b := AppendTxn(nil, bigTxn(100, false))
	for name, bad := range map[string][]byte{
		"truncated": b[:len(b)-20],
		"trailing":  append(append([]byte(nil), b...), 0),
	} {
		if _, err := DecodeTxnChunked(bad, 10); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The last change's op byte made invalid.
	last := bigTxn(100, false)
	last.Changes[99].Op = 9
	if _, err := DecodeTxnChunked(AppendTxn(nil, last), 10); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad op in the last change: %v", err)
	}
}

// TestTxnChunksMemory: decoding and walking a 200,000-change transaction
// in chunks of 1,000 allocates a chunk's buffer, not the transaction's
// changes (DecodeTxn allocates 96 bytes a change, about 18 MiB here).
func TestTxnChunksMemory(t *testing.T) {
	const n, chunk = 200_000, 1000
	b := AppendTxn(nil, bigTxn(n, false))
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	var seen int
	chunked := allocated(func() {
		txn, err := DecodeTxnChunked(b, chunk)
		if err != nil {
			t.Fatal(err)
		}
		if err := txn.ChangeChunks(func(cs []Change) error { seen += len(cs); return nil }); err != nil {
			t.Fatal(err)
		}
	})
	whole := allocated(func() {
		if _, err := DecodeTxn(b); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%d changes: chunked decoding allocated %d bytes, whole %d", n, chunked, whole)
	if seen != n {
		t.Fatalf("%d changes seen, want %d", seen, n)
	}
	if limit := uint64(4 * chunk * 96); chunked > limit {
		t.Errorf("chunked decoding allocated %d bytes, more than %d (a few chunks)", chunked, limit)
	}
	if whole < n*96 {
		t.Errorf("DecodeTxn allocated %d bytes for %d changes: the comparison measures nothing", whole, n)
	}
}
