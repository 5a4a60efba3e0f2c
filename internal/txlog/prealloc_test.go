package txlog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"testing"
	"time"
)

func preallocOpts(t *testing.T) Options {
	return Options{Dir: t.TempDir(), Preallocate: true, PreallocAfter: 1 << 10, SegmentSize: 64 << 10}
}

// appendUntil appends numbered payloads until cond holds (or 2,000
// records), and returns everything appended.
func appendUntil(t *testing.T, l *Log, term uint64, from int, cond func() bool) [][]byte {
	t.Helper()
	var ps [][]byte
	deadline := time.Now().Add(10 * time.Second)
	for i := from; !cond(); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("condition not reached after %d appends; stats %+v", len(ps), l.Stats())
		}
		p := payload(uint64(i), 300, false)
		appendAll(t, l, term, [][]byte{p})
		ps = append(ps, p)
		if len(ps)%50 == 0 {
			time.Sleep(time.Millisecond) // let the preallocator run
		}
	}
	return ps
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

func spares(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), spareNamePrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestPreallocate: the writer leaves the first (unpreallocated) segment as
// soon as a spare is ready, writes into zeros, cuts a finished segment's
// zeros off, and recovery reads the zeros as the end of the log.
func TestPreallocate(t *testing.T) {
	opts := preallocOpts(t)
	l, _ := mustOpen(t, opts)
	// 1. The first segment is left for a spare long before it is full.
	ps := appendUntil(t, l, 1, 0, func() bool { return l.Stats().PreallocUsed >= 1 })
	files := segFiles(t, opts.Dir)
	if len(files) != 2 {
		t.Fatalf("segments %v, want 2 after the first spare was used", files)
	}
	if got := fileSize(t, files[0]); got >= opts.SegmentSize {
		t.Fatalf("first segment %d bytes: it should have been left early", got)
	}
	if got := fileSize(t, files[1]); got != opts.SegmentSize {
		t.Fatalf("preallocated segment is %d bytes, want %d", got, opts.SegmentSize)
	}
	// 2. A full preallocated segment hands over to the next spare, and its
	// zeros are cut off.
	more := appendUntil(t, l, 1, len(ps), func() bool { return len(segFiles(t, opts.Dir)) >= 3 })
	ps = append(ps, more...)
	files = segFiles(t, opts.Dir)
	offs := recordOffsets(t, files[1])
	if got := fileSize(t, files[1]); got < opts.SegmentSize-1000 || got > opts.SegmentSize+1000 {
		t.Fatalf("second segment is %d bytes; want about %d", got, opts.SegmentSize)
	}
	raw, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	if last := offs[len(offs)-1]; int64(len(raw)) != last+recHeaderSize+300 {
		t.Fatalf("finished segment %d bytes, its last record ends at %d: zeros left behind", len(raw), last+recHeaderSize+300)
	}
	st := l.Stats()
	if st.Preallocated < 2 || st.PreallocUsed < 2 || st.PreallocFailures != 0 {
		t.Fatalf("stats %+v", st)
	}
	mustClose(t, l)
	if s := spares(t, opts.Dir); len(s) != 0 {
		t.Fatalf("spares left after Close: %v", s)
	}

	// 3. Reopen: nothing torn, everything there; appends continue in the
	// zeros and survive another reopen.
	want := entries(1, ps)
	l, rec := mustOpen(t, opts)
	if rec.TornBytes != 0 || rec.Records != uint64(len(ps)) || rec.LastIndex != uint64(len(ps)) {
		t.Fatalf("recovery %+v; want %d records, nothing torn", rec, len(ps))
	}
	checkEntries(t, l, 1, want)
	files = segFiles(t, opts.Dir)
	if got := fileSize(t, files[len(files)-1]); got != opts.SegmentSize {
		t.Fatalf("last segment %d bytes after reopen, want still %d (preallocated)", got, opts.SegmentSize)
	}
	after := [][]byte{[]byte("after reopen 1"), []byte("after reopen 2")}
	appendAll(t, l, 2, after)
	want = append(want, entries(2, after)...)
	mustClose(t, l)
	l, rec = mustOpen(t, opts)
	if rec.TornBytes != 0 || rec.LastIndex != uint64(len(want)) {
		t.Fatalf("second reopen %+v", rec)
	}
	checkEntries(t, l, 1, want)
	mustClose(t, l)
}

// fillPrealloc writes records until the log writes into a preallocated
// segment, "crashes" (crashClose, log.state recording the durable index
// before the last three records at most) and returns the entries and that
// segment's path.
func fillPrealloc(t *testing.T, opts Options) ([]Entry, string) {
	t.Helper()
	opts.MarkInterval = -1
	l, _ := mustOpen(t, opts)
	ps := appendUntil(t, l, 1, 0, func() bool { return l.Stats().PreallocUsed >= 1 })
	tail := [][]byte{payload(9001, 300, false), payload(9002, 300, false), payload(9003, 300, false)}
	appendAll(t, l, 1, tail)
	crashClose(t, l)
	files := segFiles(t, opts.Dir)
	path := files[len(files)-1]
	if fileSize(t, path) != opts.SegmentSize {
		t.Fatalf("%s is not preallocated", path)
	}
	return entries(1, append(ps, tail...)), path
}

// TestPreallocTornTail: a torn write into a preallocated segment's zeros
// is cut, counting only its non-zero bytes.
func TestPreallocTornTail(t *testing.T) {
	opts := preallocOpts(t)
	want, path := fillPrealloc(t, opts)
	offs := recordOffsets(t, path)
	end := offs[len(offs)-1] + recHeaderSize + 300
	// Half a record's header and payload where the next record would go.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	junk := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35}
	f.WriteAt(junk, end)
	f.Close()
	l, rec := mustOpen(t, opts)
	if rec.TornBytes != int64(len(junk)) || rec.TornFile != filepath.Base(path) || rec.LastIndex != uint64(len(want)) {
		t.Fatalf("recovery %+v; want %d torn bytes in %s, last %d", rec, len(junk), filepath.Base(path), len(want))
	}
	checkEntries(t, l, 1, want)
	appendAll(t, l, 2, [][]byte{[]byte("after the tear")})
	want = append(want, Entry{Term: 2, Payload: []byte("after the tear")})
	mustClose(t, l)
	l, rec = mustOpen(t, opts)
	if rec.TornBytes != 0 {
		t.Fatalf("second reopen %+v", rec)
	}
	checkEntries(t, l, 1, want)
	mustClose(t, l)
}

// TestPreallocZeroedRecord: a record in the middle of a preallocated
// segment that reads as zeros, with valid records after it, is corruption,
// not the end of the log.
func TestPreallocZeroedRecord(t *testing.T) {
	opts := preallocOpts(t)
	want, path := fillPrealloc(t, opts)
	offs := recordOffsets(t, path)
	if len(offs) < 3 {
		t.Fatalf("only %d records in %s", len(offs), path)
	}
	mid := offs[len(offs)-2]
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(make([]byte, recHeaderSize+300), mid)
	f.Close()
	_, _, err = Open(opts)
	var cerr *CorruptError
	if !errors.As(err, &cerr) || cerr.Offset != mid || cerr.File != filepath.Base(path) {
		t.Fatalf("Open: %v; want a CorruptError at %s offset %d", err, filepath.Base(path), mid)
	}
	// RecoverTruncate cuts there (the count is unknown: the header that
	// would say where the next record starts is gone).
	opts.RecoverTruncate = true
	l, rec := mustOpen(t, opts)
	if rec.Dropped != "unknown" || rec.LastIndex != uint64(len(want)-2) {
		t.Fatalf("recover-truncate %+v; want last %d", rec, len(want)-2)
	}
	checkEntries(t, l, 1, want[:len(want)-2])
	mustClose(t, l)
}

// TestPreallocLostSegmentEnd: the records at the end of a segment that is
// not the last one reading as zeros is corruption: the next segment does
// not start where the zeros begin.
func TestPreallocLostSegmentEnd(t *testing.T) {
	opts := preallocOpts(t)
	l, _ := mustOpen(t, opts)
	appendUntil(t, l, 1, 0, func() bool { return len(segFiles(t, opts.Dir)) >= 3 })
	mustClose(t, l)
	files := segFiles(t, opts.Dir)
	path := files[1]
	offs := recordOffsets(t, path)
	last := offs[len(offs)-1]
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(make([]byte, recHeaderSize+300), last)
	f.Close()
	_, _, err = Open(opts)
	var cerr *CorruptError
	if !errors.As(err, &cerr) || cerr.File != filepath.Base(files[2]) {
		t.Fatalf("Open: %v; want a CorruptError naming %s", err, filepath.Base(files[2]))
	}
}

// TestPreallocFailure: when the preallocator cannot write a spare (disk
// full), it counts the failure, leaves no file behind, and the log goes on
// growing its segment as before.
func TestPreallocFailure(t *testing.T) {
	fs := &faultFS{}
	opts := preallocOpts(t)
	opts.FS = fs
	fs.spareRoom.Store(8 << 10) // a spare fills the disk after 8 KiB
	l, _ := mustOpen(t, opts)
	ps := appendUntil(t, l, 1, 0, func() bool { return l.Stats().PreallocFailures >= 1 })
	if s := spares(t, opts.Dir); len(s) != 0 {
		t.Fatalf("failed spare left behind: %v", s)
	}
	fs.spareRoom.Store(0)
	// A second later it tries again, and succeeds.
	more := appendUntil(t, l, 1, len(ps), func() bool { return l.Stats().PreallocUsed >= 1 })
	ps = append(ps, more...)
	mustClose(t, l)
	l, rec := mustOpen(t, Options{Dir: opts.Dir})
	if rec.LastIndex != uint64(len(ps)) || rec.TornBytes != 0 {
		t.Fatalf("recovery %+v", rec)
	}
	checkEntries(t, l, 1, entries(1, ps))
	mustClose(t, l)
}

// TestSpareRemovedAtOpen: a spare left by a crash is removed at Open.
func TestSpareRemovedAtOpen(t *testing.T) {
	opts := preallocOpts(t)
	l, _ := mustOpen(t, opts)
	appendAll(t, l, 1, [][]byte{[]byte("x")})
	mustClose(t, l)
	if err := os.WriteFile(filepath.Join(opts.Dir, spareNamePrefix+"7.seg.tmp"), make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	l, _ = mustOpen(t, opts)
	if s := spares(t, opts.Dir); len(s) != 0 {
		t.Fatalf("spares after Open: %v", s)
	}
	mustClose(t, l)
}
