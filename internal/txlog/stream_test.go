package txlog

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
)

// digits is a payload of size random decimal digits: compressible, not
// trivially (about 2.4x with the log's zstd).
func digits(seed uint64, size int) []byte {
	r := rand.New(rand.NewPCG(seed, 2))
	p := make([]byte, size)
	for i := range p {
		p[i] = '0' + byte(r.IntN(10))
	}
	return p
}

// streamAll reads r to its end in reads of an odd size.
func streamAll(r io.Reader) ([]byte, error) {
	var out bytes.Buffer
	buf := make([]byte, 4093)
	_, err := io.CopyBuffer(&out, struct{ io.Reader }{r}, buf)
	return out.Bytes(), err
}

// lastRecordPayload returns the file and the offset of the stored payload
// of the last record in the log's last segment.
func lastRecordPayload(t *testing.T, l *Log) (string, int64) {
	t.Helper()
	segs := segFiles(t, l.Dir())
	path := segs[len(segs)-1]
	offs := recordOffsets(t, path)
	return path, offs[len(offs)-1] + recHeaderSize
}

// flipBit flips the low bit of the byte at off in path.
func flipBit(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 1
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// TestStreamLargeEntry: ReadStreaming returns the entries before a large
// one whole and the large one without its payload, last; OpenPayload
// reads its bytes (a compressed one and one stored as it is), equal to
// what was appended and to what Read returns whole; reading it does not
// allocate the payload's size.
func TestStreamLargeEntry(t *testing.T) {
	l, _ := mustOpen(t, Options{Dir: t.TempDir(), Compression: true})
	defer mustClose(t, l)
	small := payload(1, 100, false)
	zipped := digits(1, 24<<20)       // stored compressed, about 10 MiB
	plain := payload(2, 3<<20, false) // incompressible: stored as it is
	appendAll(t, l, 1, [][]byte{small, zipped, small, plain, small})

	es, err := l.ReadStreaming(1, 6, -1, StreamFrom)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || !bytes.Equal(es[0].Payload, small) || es[0].Streamed || !es[1].Streamed || es[1].Payload != nil || es[1].Index != 2 {
		t.Fatalf("ReadStreaming(1, 6) = %d entries: %+v", len(es), es)
	}
	if es, err = l.ReadStreaming(3, 6, -1, StreamFrom); err != nil || len(es) != 2 || es[0].Index != 3 || !es[1].Streamed || es[1].Index != 4 {
		t.Fatalf("ReadStreaming(3, 6) = %+v, %v", es, err)
	}
	for _, tc := range []struct {
		index uint64
		want  []byte
	}{{2, zipped}, {4, plain}, {5, small}} {
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := l.OpenPayload(tc.index)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		buf := make([]byte, 4093)
		n, err := io.CopyBuffer(io.Discard, io.TeeReader(struct{ io.Reader }{r}, &hashOnly{&got, tc.want}), buf)
		r.Close()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if err != nil || n != int64(len(tc.want)) || got.Len() != 0 {
			t.Fatalf("entry %d: streamed %d bytes (%v), want %d; %d bytes differ", tc.index, n, err, len(tc.want), got.Len())
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; len(tc.want) > StreamFrom && alloc > uint64(len(tc.want))/2 {
			t.Errorf("entry %d: streaming %d bytes allocated %d", tc.index, len(tc.want), alloc)
		}
		if r.Term != 1 || r.Index != tc.index {
			t.Errorf("entry %d: reader says index %d term %d", tc.index, r.Index, r.Term)
		}
	}
	whole, err := l.Read(2, 3, -1)
	if err != nil || len(whole) != 1 || !bytes.Equal(whole[0].Payload, zipped) {
		t.Fatalf("Read(2) = %v", err)
	}
}

// hashOnly compares what is written to it with want, in order, without
// keeping it: differing bytes are written to diff.
type hashOnly struct {
	diff *bytes.Buffer
	want []byte
}

func (h *hashOnly) Write(b []byte) (int, error) {
	for i, c := range b {
		if i >= len(h.want) || h.want[i] != c {
			h.diff.WriteByte(c)
		}
	}
	h.want = h.want[min(len(b), len(h.want)):]
	return len(b), nil
}

// TestStreamCorruptPayload: a bit flipped in a large entry's stored bytes
// makes OpenPayload fail with ErrCorrupt before it hands out any byte;
// a bit flipped after OpenPayload verified them makes the reader end in
// ErrCorrupt instead of io.EOF.
func TestStreamCorruptPayload(t *testing.T) {
	for _, compressed := range []bool{true, false} {
		l, _ := mustOpen(t, Options{Dir: t.TempDir(), Compression: true})
		p := payload(3, 3<<20, false)
		if compressed {
			p = digits(3, 8<<20)
		}
		appendAll(t, l, 1, [][]byte{payload(1, 100, false), p})
		path, off := lastRecordPayload(t, l)
		if r, err := l.OpenPayload(2); err != nil {
			t.Fatal(err)
		} else {
			r.Close()
		}

		flipBit(t, path, off+(1<<20)+12345)
		r, err := l.OpenPayload(2)
		var ce *CorruptError
		if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || r != nil {
			t.Fatalf("compressed %v: OpenPayload of a flipped entry: %v, reader %v", compressed, err, r)
		}
		t.Logf("compressed %v: %v", compressed, err)
		if es, err := l.ReadStreaming(2, 3, -1, StreamFrom); err != nil || len(es) != 1 || !es[0].Streamed {
			t.Fatalf("ReadStreaming of a flipped entry (its header is good): %+v, %v", es, err)
		}
		if _, err := l.Read(2, 3, -1); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Read of a flipped entry: %v", err)
		}

		// Flipped back, verified, then flipped again while it is read.
		flipBit(t, path, off+(1<<20)+12345)
		r, err = l.OpenPayload(2)
		if err != nil {
			t.Fatal(err)
		}
		flipBit(t, path, off+r.Stored/4*3) // past what the first read buffered
		got, err := streamAll(r)
		r.Close()
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("compressed %v: a payload flipped after its check read to the end with %v (%d bytes)", compressed, err, len(got))
		}
		t.Logf("compressed %v, flipped during the read: %v", compressed, err)
		crashClose(t, l)
	}
}

// TestStreamSkipsLargeBefore: reading an entry after a large one in the
// same segment walks the large one's header, not its payload.
func TestStreamSkipsLargeBefore(t *testing.T) {
	l, _ := mustOpen(t, Options{Dir: t.TempDir()})
	defer mustClose(t, l)
	big := payload(4, 4<<20, false)
	appendAll(t, l, 1, [][]byte{big, payload(5, 10, false)})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	es, err := l.ReadStreaming(2, 3, -1, StreamFrom)
	runtime.ReadMemStats(&after)
	if err != nil || len(es) != 1 || es[0].Index != 2 {
		t.Fatalf("%+v, %v", es, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
		t.Errorf("reading the entry after a 4 MiB one allocated %d bytes", alloc)
	}
}
