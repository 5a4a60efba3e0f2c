package txlog

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// smallOpts: a 64 KiB buffer and 16 KiB segments, so that tests wrap the
// ring, copy large appends in pieces and rotate segments.
func smallOpts(t *testing.T) Options {
	return Options{Dir: t.TempDir(), BufferSize: 64 << 10, SegmentSize: 16 << 10}
}

func mustOpen(t *testing.T, opts Options) (*Log, *Recovery) {
	t.Helper()
	l, rec, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l, rec
}

func mustClose(t *testing.T, l *Log) {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// payload is a deterministic payload for key: the key, then a pattern.
// compressible payloads repeat a short text.
func payload(key uint64, size int, compressible bool) []byte {
	p := make([]byte, size)
	if compressible {
		for i := range p {
			p[i] = "lockstep log record "[i%20]
		}
	} else {
		x := key*0x9E3779B97F4A7C15 + 1
		for i := range p {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			p[i] = byte(x)
		}
	}
	if size >= 8 {
		binary.LittleEndian.PutUint64(p, key)
	}
	return p
}

// appendAll appends payloads one per Append with term and waits for
// durability; it returns the last LSN.
func appendAll(t *testing.T, l *Log, term uint64, ps [][]byte) uint64 {
	t.Helper()
	var lsn uint64
	for _, p := range ps {
		var err error
		if lsn, err = l.Append(term, p); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	if err := l.WaitDurable(lsn); err != nil {
		t.Fatalf("WaitDurable: %v", err)
	}
	return lsn
}

func readAll(t *testing.T, l *Log) []Entry {
	t.Helper()
	first, last := l.FirstIndex(), l.LastIndex()
	var out []Entry
	for lo := first; lo <= last; {
		es, err := l.Read(lo, last+1, 1<<20)
		if err != nil {
			t.Fatalf("Read(%d, %d): %v", lo, last+1, err)
		}
		if len(es) == 0 {
			t.Fatalf("Read(%d, %d) returned nothing", lo, last+1)
		}
		out = append(out, es...)
		lo = es[len(es)-1].Index + 1
	}
	return out
}

// checkEntries verifies that the log holds exactly want, from index first.
func checkEntries(t *testing.T, l *Log, first uint64, want []Entry) {
	t.Helper()
	if got := l.FirstIndex(); got != first {
		t.Fatalf("FirstIndex = %d, want %d", got, first)
	}
	if got, w := l.LastIndex(), first+uint64(len(want))-1; got != w {
		t.Fatalf("LastIndex = %d, want %d", got, w)
	}
	got := readAll(t, l)
	if len(got) != len(want) {
		t.Fatalf("read %d entries, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Index != first+uint64(i) || g.Term != w.Term || !bytes.Equal(g.Payload, w.Payload) {
			t.Fatalf("entry %d: index %d term %d len %d, want index %d term %d len %d (payload equal: %v)",
				i, g.Index, g.Term, len(g.Payload), first+uint64(i), w.Term, len(w.Payload), bytes.Equal(g.Payload, w.Payload))
		}
		if term, err := l.Term(g.Index); err != nil || term != w.Term {
			t.Fatalf("Term(%d) = %d, %v; want %d", g.Index, term, err, w.Term)
		}
	}
}

func entries(term uint64, ps [][]byte) []Entry {
	es := make([]Entry, len(ps))
	for i, p := range ps {
		es[i] = Entry{Term: term, Payload: p}
	}
	return es
}

// segFiles lists the segment files in dir, in index order.
func segFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "log-*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

// recordOffsets walks a segment file and returns each record's offset. It
// stops at zeros (a preallocated segment's unused part).
func recordOffsets(t *testing.T, path string) []int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for off := int64(segHeaderSize); off+recHeaderSize <= int64(len(b)); {
		h, ok := parseRecHeader(b[off:])
		if !ok && allZero(b[off:off+recHeaderSize]) {
			break
		}
		if !ok {
			t.Fatalf("%s: bad header at %d", path, off)
		}
		offs = append(offs, off)
		off += recHeaderSize + int64(h.length)
	}
	return offs
}

// crashClose stops l as Close does but leaves log.state as a crash would:
// it does not record the clean close. (Everything written is on disk, as
// after a process crash; what a crash tears, the tests tear by hand.)
func crashClose(t *testing.T, l *Log) {
	t.Helper()
	if err := l.close(false); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// writeLogCrashed writes n records of size bytes (term 1) to a new log,
// with log.state recording the first n-1 as durable, and "crashes"
// (crashClose): the last record is where a crash could have torn it.
func writeLogCrashed(t *testing.T, opts Options, n, size int) []Entry {
	t.Helper()
	opts.MarkInterval = -1 // only the explicit mark below
	l, _ := mustOpen(t, opts)
	var ps [][]byte
	for i := range n {
		ps = append(ps, payload(uint64(i), size, false))
	}
	appendAll(t, l, 1, ps[:n-1])
	l.recordMark()
	if got := l.state.cur.durable; got != uint64(n-1) {
		t.Fatalf("log.state durable %d after %d durable records", got, n-1)
	}
	appendAll(t, l, 1, ps[n-1:])
	crashClose(t, l)
	return entries(1, ps)
}
