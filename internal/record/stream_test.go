package record

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// bytesOpener opens b as a payload, counting the opens.
func bytesOpener(b []byte, opens *int) Opener {
	return func() (io.ReadCloser, error) {
		*opens++
		return io.NopCloser(bytes.NewReader(b)), nil
	}
}

// TestStreamEntryTxn: a transaction with more changes than the chunk,
// read through a stream, is checked in one pass and its changes are read
// again, chunk by chunk, on each ChangeChunks: the same changes (kind,
// images, an empty image not taken for a delete) and counters as
// DecodeTxn's, in chunks of at most chunk changes and, past the first
// change, StreamChunkBytes bytes.
func TestStreamEntryTxn(t *testing.T) {
	for _, minimal := range []bool{false, true} {
		tx := bigTxn(3000, minimal)
		tx.Changes[7].After = []byte{} // an update to an empty row
		tx.Changes[100].After = bytes.Repeat([]byte("x"), StreamChunkBytes)
		b := AppendTxn(nil, tx)
		whole, err := DecodeTxn(b)
		if err != nil {
			t.Fatal(err)
		}
		opens := 0
		payload, got, err := StreamEntry(bytesOpener(b, &opens), 256)
		if err != nil || payload != nil || got == nil {
			t.Fatalf("StreamEntry: payload %d bytes, txn %v, %v", len(payload), got != nil, err)
		}
		if !got.Chunked() || got.NumChanges() != 3000 || got.Position != whole.Position || got.Minimal != minimal || !reflect.DeepEqual(got.AutoInc, whole.AutoInc) || opens != 1 {
			t.Fatalf("streamed txn %+v, %d changes, %d opens", got.Position, got.NumChanges(), opens)
		}
		for pass := 0; pass < 2; pass++ { // a retried step reads it again
			var all []Change
			var sizes []int
			err := got.ChangeChunks(func(cs []Change) error {
				sizes = append(sizes, len(cs))
				for _, c := range cs {
					c.PK, c.Before, c.After = clone(c.PK), clone(c.Before), clone(c.After)
					all = append(all, c)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(all, whole.Changes) {
				t.Fatalf("minimal %v pass %d: streamed changes differ from DecodeTxn's", minimal, pass)
			}
			if all[7].After == nil || len(all[7].After) != 0 {
				t.Fatalf("an empty after-image came back as %v", all[7].After)
			}
			// 256 a chunk, except that the chunk holding change 100's
			// 256 KiB image ends with it.
			if len(sizes) != 13 || sizes[0] != 101 || sizes[1] != 256 {
				t.Fatalf("chunk sizes %v", sizes)
			}
		}
		if opens != 3 {
			t.Fatalf("%d opens, want 3 (the check, then one per ChangeChunks)", opens)
		}
	}
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// TestStreamEntryWhole: a batch, a DDL record, a small transaction and a
// transaction when chunk is 0 come back whole, as they were stored.
func TestStreamEntryWhole(t *testing.T) {
	small := AppendTxn(nil, bigTxn(10, false))
	ddl := AppendDDL(nil, &DDL{Position: Position{Seq: 1, GNO: 1}, Query: "CREATE TABLE t (a INT)"})
	for _, tc := range []struct {
		name  string
		b     []byte
		chunk int
	}{{"batch", AppendBatch(nil, small, ddl), 4}, {"DDL", ddl, 4}, {"small txn", small, 10}, {"chunk 0", AppendTxn(nil, bigTxn(100, false)), 0}, {"empty", nil, 4}} {
		opens := 0
		payload, txn, err := StreamEntry(bytesOpener(tc.b, &opens), tc.chunk)
		if err != nil || txn != nil || !bytes.Equal(payload, tc.b) {
			t.Errorf("%s: payload equal %v, txn %v, %v", tc.name, bytes.Equal(payload, tc.b), txn != nil, err)
		}
	}
}

// errAtEnd is a payload reader whose last read fails (as txlog's does
// when the stored bytes' checksum turns out wrong).
type errAtEnd struct {
	r   io.Reader
	err error
}

func (e *errAtEnd) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		return n, e.err
	}
	return n, err
}

func (e *errAtEnd) Close() error { return nil }

// TestStreamEntryErrors: a truncated payload is corrupt; the reader's own
// error at the end (a checksum mismatch) fails the check, and fails
// ChangeChunks after its last chunk when it happens on the second pass.
func TestStreamEntryErrors(t *testing.T) {
	b := AppendTxn(nil, bigTxn(500, false))
	opens := 0
	if _, _, err := StreamEntry(bytesOpener(b[:len(b)-3], &opens), 64); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated: %v", err)
	}
	if _, _, err := StreamEntry(bytesOpener(append(append([]byte{}, b...), 0), &opens), 64); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a trailing byte: %v", err)
	}
	crc := errors.New("payload checksum mismatch")
	bad := func() (io.ReadCloser, error) { return &errAtEnd{bytes.NewReader(b), crc}, nil }
	if _, _, err := StreamEntry(bad, 64); !errors.Is(err, crc) {
		t.Fatalf("checksum error at the end: %v", err)
	}
	n := 0
	open := func() (io.ReadCloser, error) {
		if n++; n == 1 {
			return io.NopCloser(bytes.NewReader(b)), nil
		}
		return &errAtEnd{bytes.NewReader(b), crc}, nil
	}
	_, txn, err := StreamEntry(open, 64)
	if err != nil {
		t.Fatal(err)
	}
	chunks := 0
	err = txn.ChangeChunks(func([]Change) error { chunks++; return nil })
	if !errors.Is(err, crc) || chunks != 8 {
		t.Fatalf("second pass: %v after %d chunks", err, chunks)
	}
}
