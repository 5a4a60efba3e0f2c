package apply

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"lockstep/internal/record"
	"lockstep/internal/txlog"
)

// stagedExec installs a transaction's chunks into a pending set and makes
// them its rows only when ChangeChunks ends without an error (the
// recovery executor's held storage transaction: a failure rolls every
// chunk back).
type stagedExec struct {
	fakeExec
	rows    map[string]string // pk -> after image
	chunks  int
	autoInc []record.AutoInc
}

func (x *stagedExec) Txn(t *record.Txn) error {
	held := map[string]string{}
	err := t.ChangeChunks(func(cs []record.Change) error {
		x.chunks++
		for _, c := range cs {
			held[string(c.PK)] = string(c.After) // the bytes are the chunk's: copied
		}
		return nil
	})
	if err != nil {
		return err // rolled back: nothing of t stays
	}
	for k, v := range held {
		x.rows[k] = v
	}
	x.autoInc = append(x.autoInc, t.AutoInc...)
	return nil
}

// streamLog writes payloads to a new log (stored as they are) and
// returns it.
func streamLog(t *testing.T, payloads ...[]byte) *txlog.Log {
	t.Helper()
	l, _, err := txlog.Open(txlog.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for _, p := range payloads {
		lsn, err := l.Append(1, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.WaitDurable(lsn); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// TestStreamedTxnInstallsRows: a transaction of 5,000 rows read from the
// log as a stream (txlog.OpenPayload) is installed chunk by chunk with
// exactly its rows and counters, serially and by the parallel driver;
// while it is pending it costs a bounded buffer, not its payload.
func TestStreamedTxnInstallsRows(t *testing.T) {
	const rows = 5000
	big := largeTxnAutoInc(1, rows)
	l := streamLog(t, big, largeTxn(2, 10))
	open := func(index uint64) record.Opener {
		return func() (io.ReadCloser, error) { return l.OpenPayload(index) }
	}
	want := map[string]string{}
	for i := 0; i < rows; i++ {
		want[fmt.Sprintf("%08d", i)] = "row"
	}
	t.Run("serial", func(t *testing.T) {
		m := New(Options{})
		if err := m.EntryStream(1, open(1), txlog.StreamMemory); err != nil {
			t.Fatal(err)
		}
		if p := m.PendingBytes(); p > txlog.StreamMemory+record.StreamMemory(DefaultChunkChanges)+4096 {
			t.Errorf("a streamed transaction of %d bytes is pending as %d bytes", len(big), p)
		}
		x := &stagedExec{rows: map[string]string{}}
		if err := Drain(m, x); err != nil {
			t.Fatal(err)
		}
		if len(x.rows) != rows || fmt.Sprint(x.rows) != fmt.Sprint(want) || x.chunks != (rows+DefaultChunkChanges-1)/DefaultChunkChanges {
			t.Fatalf("%d rows installed in %d chunks, want %d in %d", len(x.rows), x.chunks, rows, (rows+DefaultChunkChanges-1)/DefaultChunkChanges)
		}
		if len(x.autoInc) != 1 || x.autoInc[0] != (record.AutoInc{Table: 1, Next: rows + 1}) {
			t.Fatalf("counters %v", x.autoInc)
		}
		if m.Applied().Seq != 1 || m.PendingBytes() != 0 {
			t.Fatalf("applied %+v, pending %d", m.Applied(), m.PendingBytes())
		}
		if mt := m.Metrics(); mt.Streamed != 1 || mt.Entries != 1 {
			t.Fatalf("metrics: %d entries, %d streamed; want 1 and 1", mt.Entries, mt.Streamed)
		}
	})
	t.Run("parallel", func(t *testing.T) {
		m := New(Options{})
		x := &lockedHeld{h: stagedExec{rows: map[string]string{}}}
		p := NewParallel(m, x, ParallelOptions{Workers: 2})
		if err := p.EntryStream(1, open(1), txlog.StreamMemory); err != nil {
			t.Fatal(err)
		}
		e, err := l.Read(2, 3, -1)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Entry(2, e[0].Payload); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if len(x.h.rows) != rows || fmt.Sprint(x.h.rows) != fmt.Sprint(want) || m.Applied().Seq != 2 {
			t.Fatalf("%d rows, applied %+v", len(x.h.rows), m.Applied())
		}
		if mt := p.Metrics(); mt.Streamed != 1 || mt.Entries != 2 {
			t.Fatalf("metrics: %d entries, %d streamed; want 2 and 1", mt.Entries, mt.Streamed)
		}
	})
}

// lockedHeld is stagedExec for concurrent workers.
type lockedHeld struct {
	fakeExec
	h stagedExec
}

func (x *lockedHeld) Txn(t *record.Txn) error {
	if t.Chunked() {
		return x.h.Txn(t)
	}
	return nil
}

// largeTxnAutoInc is largeTxn with an AUTO_INCREMENT counter.
func largeTxnAutoInc(seq int64, n int) []byte {
	tx, err := record.DecodeTxn(largeTxn(seq, n))
	if err != nil {
		panic(err)
	}
	tx.AutoInc = []record.AutoInc{{Table: 1, Next: uint64(n) + 1}}
	return record.AppendTxn(nil, tx)
}

// TestStreamedTxnCorrupt: a bit flipped in the stored transaction before
// it is fed fails the entry (txlog's checksum pass) and nothing is
// handed out; one flipped after the check, while the executor reads it,
// fails the step at the end of its stream: the chunks it took are rolled
// back, nothing is installed, and the applied position stays before it.
func TestStreamedTxnCorrupt(t *testing.T) {
	const rows = 3000
	big := largeTxn(1, rows)
	l := streamLog(t, big)
	segs, _ := filepath.Glob(filepath.Join(l.Dir(), "log-*.seg"))
	sort.Strings(segs)
	// The payload starts after the segment and record headers; its
	// changes' keys are the digits "%08d": flip one near the end.
	raw, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	at := int64(bytes.LastIndex(raw, []byte(fmt.Sprintf("%08d", rows-2))))
	if at < 0 {
		t.Fatal("no key in the segment")
	}
	flip := func() {
		f, err := os.OpenFile(segs[0], os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := []byte{0}
		f.ReadAt(b, at)
		b[0] ^= 1
		if _, err := f.WriteAt(b, at); err != nil {
			t.Fatal(err)
		}
	}

	// Flipped before it is fed.
	flip()
	m := New(Options{})
	err = m.EntryStream(1, func() (io.ReadCloser, error) { return l.OpenPayload(1) }, txlog.StreamMemory)
	if !errors.Is(err, txlog.ErrCorrupt) {
		t.Fatalf("EntryStream of a flipped entry: %v", err)
	}
	if _, ok := m.Next(); ok {
		t.Fatal("a step was handed out from a corrupt entry")
	}
	flip()

	// Flipped after the checks, during the executor's read.
	opens := 0
	open := func() (io.ReadCloser, error) {
		r, err := l.OpenPayload(1)
		if opens++; opens == 2 && err == nil {
			flip() // after OpenPayload verified it, before it is read
		}
		return r, err
	}
	m = New(Options{})
	if err := m.EntryStream(1, open, txlog.StreamMemory); err != nil {
		t.Fatal(err)
	}
	x := &stagedExec{rows: map[string]string{}}
	err = Drain(m, x)
	if !errors.Is(err, txlog.ErrCorrupt) {
		t.Fatalf("Drain over a payload flipped while read: %v", err)
	}
	if x.chunks < 2 || len(x.rows) != 0 || m.Applied().Seq != 0 {
		t.Fatalf("%d chunks read, %d rows installed, applied %+v: want the chunks rolled back", x.chunks, len(x.rows), m.Applied())
	}
	t.Log(err)
}
