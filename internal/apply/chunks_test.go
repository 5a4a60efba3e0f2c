package apply

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"lockstep/internal/record"
)

// emptyTxnCost is what a decoded transaction without changes adds to its
// entry's pending bytes.
const emptyTxnCost = int64(unsafe.Sizeof(Step{}) + unsafe.Sizeof(record.Txn{}))

// entryCost is what an entry costs while pending: its bytes and its
// records decoded whole.
func entryCost(t *testing.T, payload []byte) int64 {
	t.Helper()
	recs, err := record.EntryRecords(payload)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(payload))
	for _, b := range recs {
		var s Step
		switch k, _ := record.PeekKind(b); k {
		case record.KindTxn:
			s.Txn, err = record.DecodeTxn(b)
		case record.KindDDL:
			s.DDL, err = record.DecodeDDL(b)
		case record.KindAccounts:
			s.Accounts, err = record.DecodeAccounts(b)
		}
		if err != nil {
			t.Fatal(err)
		}
		n += stepBytes(&s)
	}
	return n
}

// largeTxn is a transaction record of n inserts.
func largeTxn(seq int64, n int) []byte {
	tx := &record.Txn{Position: record.Position{Seq: seq, GNO: seq, LastCommitted: seq - 1}}
	for i := 0; i < n; i++ {
		tx.Changes = append(tx.Changes, record.Change{Op: record.OpInsert, Table: 1, Version: 1,
			PK: []byte(fmt.Sprintf("%08d", i)), After: []byte("row")})
		tx.Writeset = append(tx.Writeset, uint64(i))
	}
	return record.AppendTxn(nil, tx)
}

// chunkExec records the chunks of each transaction it applies.
type chunkExec struct {
	fakeExec
	chunked []bool
	chunks  [][]int // per transaction, the chunk sizes
}

func (x *chunkExec) Txn(t *record.Txn) error {
	var sizes []int
	err := t.ChangeChunks(func(cs []record.Change) error {
		sizes = append(sizes, len(cs))
		return nil
	})
	x.chunked = append(x.chunked, t.Chunked())
	x.chunks = append(x.chunks, sizes)
	return err
}

// TestLargeTxnChunks: a transaction with more changes than ChunkChanges
// reaches the executor with its changes encoded and is applied chunk by
// chunk; while it is pending it costs its entry's bytes, not a decoded
// change per row (what MaxPendingBytes bounds). A smaller one is decoded
// whole, as before; ChunkChanges < 0 decodes every one whole.
func TestLargeTxnChunks(t *testing.T) {
	const rows = 10_000
	big, small := largeTxn(1, rows), largeTxn(2, 50)
	for _, tc := range []struct {
		name        string
		chunk       int
		wantChunked bool
		wantChunks  int
	}{
		{"chunks of 100", 100, true, 100},
		{"default", 0, true, (rows + DefaultChunkChanges - 1) / DefaultChunkChanges},
		{"never", -1, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Options{ChunkChanges: tc.chunk})
			if err := m.Entry(1, big); err != nil {
				t.Fatal(err)
			}
			pending := m.PendingBytes()
			whole := int64(len(big)) + rows*int64(unsafe.Sizeof(record.Change{}))
			if tc.wantChunked && pending > int64(len(big))+4096 {
				t.Errorf("a chunked transaction of %d bytes is pending as %d bytes", len(big), pending)
			}
			if !tc.wantChunked && pending < whole {
				t.Errorf("a transaction decoded whole is pending as %d bytes, less than its %d bytes and its changes (%d)", pending, len(big), whole)
			}
			if err := m.Entry(2, small); err != nil {
				t.Fatal(err)
			}
			x := &chunkExec{}
			if err := Drain(m, x); err != nil {
				t.Fatal(err)
			}
			if len(x.chunks) != 2 || x.chunked[0] != tc.wantChunked || len(x.chunks[0]) != tc.wantChunks || x.chunked[1] || len(x.chunks[1]) != 1 || x.chunks[1][0] != 50 {
				t.Fatalf("chunked %v, chunks %v", x.chunked, x.chunks)
			}
			sum := 0
			for _, n := range x.chunks[0] {
				sum += n
			}
			if sum != rows {
				t.Fatalf("%d changes applied, want %d", sum, rows)
			}
			if m.PendingBytes() != 0 {
				t.Fatalf("pending after everything applied: %d", m.PendingBytes())
			}
		})
	}
}

// TestAppliedEntryReleased: once its records are applied, the machine
// keeps nothing of an entry: its bytes can be collected while the machine
// lives on (a step handed out left a copy in the queue's backing array,
// which kept a 1,000,000-row transaction's entry for as long as the
// queue did not grow).
func TestAppliedEntryReleased(t *testing.T) {
	m := New(Options{ChunkChanges: 100})
	released := make(chan struct{})
	func() {
		b := append(make([]byte, 0, 1<<20), largeTxn(1, 1000)...)
		runtime.SetFinalizer(&b[:1][0], func(*byte) { close(released) })
		if err := m.Entry(1, b); err != nil {
			t.Fatal(err)
		}
		if err := Drain(m, &chunkExec{}); err != nil {
			t.Fatal(err)
		}
	}()
	for i := 0; i < 10; i++ {
		runtime.GC()
		select {
		case <-released:
			runtime.KeepAlive(m)
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	runtime.KeepAlive(m)
	t.Fatal("an applied entry's bytes are still reachable from the machine")
}
