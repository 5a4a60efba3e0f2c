package txlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeLog writes n records of size bytes (term 1) to a new log, closes it
// and returns the options and the entries.
func writeLog(t *testing.T, opts Options, n, size int) []Entry {
	t.Helper()
	l, _ := mustOpen(t, opts)
	var ps [][]byte
	for i := range n {
		ps = append(ps, payload(uint64(i), size, false))
	}
	appendAll(t, l, 1, ps)
	mustClose(t, l)
	return entries(1, ps)
}

func TestTornTail(t *testing.T) {
	const n, size = 20, 100
	// Cut points relative to the start of the last record, and zeros
	// appended after the cut.
	type tc struct {
		cut   int64 // bytes of the last record kept
		zeros int
	}
	var cases []tc
	for _, cut := range []int64{1, 5, 31, 32, 33, 80, recHeaderSize + size - 1} {
		for _, zeros := range []int{0, 7, 500} {
			cases = append(cases, tc{cut, zeros})
		}
	}
	cases = append(cases, tc{cut: 0, zeros: 64}) // whole record, then zeros
	for _, c := range cases {
		t.Run(fmt.Sprintf("cut=%d/zeros=%d", c.cut, c.zeros), func(t *testing.T) {
			opts := Options{Dir: t.TempDir()}
			// A crash while the last record was being written: log.state
			// says the records before it were durable.
			want := writeLogCrashed(t, opts, n, size)
			files := segFiles(t, opts.Dir)
			path := files[len(files)-1]
			offs := recordOffsets(t, path)
			lastOff := offs[len(offs)-1]
			keep := lastOff + c.cut
			wantLast := n - 1
			if c.cut == 0 {
				keep = lastOff + recHeaderSize + size // the whole record
				wantLast = n
			}
			if err := os.Truncate(path, keep); err != nil {
				t.Fatal(err)
			}
			if c.zeros > 0 {
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.Write(make([]byte, c.zeros))
				f.Close()
			}
			// Torn bytes run from the bad record to the last non-zero
			// byte: zeros at the end of a segment are unused space (a
			// preallocated segment's, or blocks a crash left unwritten),
			// and a whole record followed by zeros is no tear at all.
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			wantTorn, wantFile := int64(0), ""
			for i := int64(len(raw)) - 1; i >= lastOff; i-- {
				if raw[i] != 0 {
					if c.cut != 0 {
						wantTorn, wantFile = i+1-lastOff, filepath.Base(path)
					}
					break
				}
			}
			l, rec := mustOpen(t, opts)
			if rec.Clean || rec.DurableIndex != n-1 {
				t.Fatalf("recovery %+v; want an unclean close, durable through %d", rec, n-1)
			}
			if rec.LastIndex != uint64(wantLast) || rec.TornBytes != wantTorn || rec.TornFile != wantFile {
				t.Fatalf("recovery %+v; want last %d, %d torn bytes in %q", rec, wantLast, wantTorn, wantFile)
			}
			checkEntries(t, l, 1, want[:wantLast])
			// New appends continue at the right index, and survive.
			appendAll(t, l, 2, [][]byte{[]byte("after the tear")})
			want = append(want[:wantLast:wantLast], Entry{Term: 2, Payload: []byte("after the tear")})
			checkEntries(t, l, 1, want)
			mustClose(t, l)
			l, rec = mustOpen(t, opts)
			if rec.TornBytes != 0 {
				t.Fatalf("second reopen: %+v", rec)
			}
			checkEntries(t, l, 1, want)
			mustClose(t, l)
		})
	}
}

// flip inverts one byte of a file.
func flip(t *testing.T, path string, off int64) {
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
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptRecord(t *testing.T) {
	const size = 100
	type tc struct {
		name      string
		segSize   int64
		n         int
		file      int   // which segment file (index into segFiles; -1 = last)
		record    int   // which record in it
		at        int64 // byte within the record to flip
		reason    string
		countable bool // else Dropped is "unknown"
	}
	cases := []tc{
		{"payload, one segment", 0, 20, -1, 9, recHeaderSize + 50, "payload checksum mismatch", true},
		{"header length, one segment", 0, 20, -1, 9, 1, "header checksum mismatch", false},
		{"header index, one segment", 0, 20, -1, 9, 17, "header checksum mismatch", false},
		{"header CRC, one segment", 0, 20, -1, 9, 29, "header checksum mismatch", false},
		{"payload, earlier segment", 16 << 10, 300, 0, 50, recHeaderSize + 3, "payload checksum mismatch", true},
		{"last record of an earlier segment", 16 << 10, 300, 0, -1, recHeaderSize + 3, "payload checksum mismatch", true},
		{"header, earlier segment", 16 << 10, 300, 1, 3, 5, "header checksum mismatch", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := Options{Dir: t.TempDir(), SegmentSize: c.segSize}
			want := writeLog(t, opts, c.n, size)
			files := segFiles(t, opts.Dir)
			fi := c.file
			if fi < 0 {
				fi = len(files) - 1
			}
			offs := recordOffsets(t, files[fi])
			ri := c.record
			if ri < 0 {
				ri = len(offs) - 1
			}
			off := offs[ri]
			flip(t, files[fi], off+c.at)
			// The index of the damaged record.
			l0 := uint64(1)
			for _, f := range files[:fi] {
				l0 += uint64(len(recordOffsets(t, f)))
			}
			bad := l0 + uint64(ri)

			_, _, err := Open(opts)
			name := filepath.Base(files[fi])
			wantMsg := fmt.Sprintf("txlog: %s offset %d: corrupt record (%s); start with --recover-truncate to drop it and everything after it",
				name, off, c.reason)
			if err == nil || err.Error() != wantMsg || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v\nwant: %s", err, wantMsg)
			}

			opts.RecoverTruncate = true
			l, rec := mustOpen(t, opts)
			wantDropped := "unknown"
			if c.countable {
				wantDropped = fmt.Sprint(uint64(c.n) - bad + 1)
			}
			if rec.Dropped != wantDropped || rec.LastIndex != bad-1 ||
				rec.Corruption != fmt.Sprintf("%s offset %d: %s", name, off, c.reason) {
				t.Fatalf("recovery %+v; want %s dropped, last index %d", rec, wantDropped, bad-1)
			}
			if got := len(segFiles(t, opts.Dir)); got != fi+1 {
				t.Errorf("%d segment files left, want %d", got, fi+1)
			}
			checkEntries(t, l, 1, want[:bad-1])
			appendAll(t, l, 3, [][]byte{[]byte("x")})
			mustClose(t, l)

			opts.RecoverTruncate = false
			l, rec = mustOpen(t, opts)
			if rec.LastIndex != bad || rec.Dropped != "" {
				t.Fatalf("reopen: %+v", rec)
			}
			mustClose(t, l)
		})
	}
}

func TestSegmentGapAndHeader(t *testing.T) {
	t.Run("missing middle segment", func(t *testing.T) {
		opts := Options{Dir: t.TempDir(), SegmentSize: 16 << 10}
		writeLog(t, opts, 400, 100)
		files := segFiles(t, opts.Dir)
		if len(files) < 3 {
			t.Fatalf("%d segments", len(files))
		}
		os.Remove(files[1])
		_, _, err := Open(opts)
		if err == nil || !strings.Contains(err.Error(), filepath.Base(files[2])+" offset 0: corrupt record (first index") {
			t.Fatalf("Open: %v", err)
		}
		opts.RecoverTruncate = true
		l, rec := mustOpen(t, opts)
		if rec.LastIndex != uint64(len(recordOffsets(t, files[0]))) || rec.Segments != 1 || rec.Dropped == "unknown" {
			t.Fatalf("recovery %+v", rec)
		}
		mustClose(t, l)
	})
	t.Run("bad segment header", func(t *testing.T) {
		opts := Options{Dir: t.TempDir(), SegmentSize: 16 << 10}
		writeLog(t, opts, 400, 100)
		files := segFiles(t, opts.Dir)
		flip(t, files[1], 14)
		_, _, err := Open(opts)
		want := "txlog: " + filepath.Base(files[1]) + " offset 0: corrupt record (segment header checksum mismatch)"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("Open: %v\nwant: %s", err, want)
		}
		opts.RecoverTruncate = true
		l, rec := mustOpen(t, opts)
		if rec.Dropped != "unknown" || rec.Segments != 1 {
			t.Fatalf("recovery %+v", rec)
		}
		mustClose(t, l)
	})
}

func TestNewerFormatVersion(t *testing.T) {
	opts := Options{Dir: t.TempDir()}
	writeLog(t, opts, 3, 10)
	path := segFiles(t, opts.Dir)[0]
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	var v [2]byte
	binary.LittleEndian.PutUint16(v[:], 3)
	f.WriteAt(v[:], 8)
	f.Close()
	_, _, err = Open(opts)
	want := "txlog: log-00000000000000000001.seg: format version 3 is newer than this binary supports (2)"
	var verr *VersionError
	if err == nil || err.Error() != want || !errors.As(err, &verr) {
		t.Fatalf("Open: %v\nwant: %s", err, want)
	}
	// RecoverTruncate does not drop data it cannot read.
	opts.RecoverTruncate = true
	if _, _, err := Open(opts); err == nil || err.Error() != want {
		t.Fatalf("Open with RecoverTruncate: %v", err)
	}
}

func TestRecoveryProgress(t *testing.T) {
	old := progressInterval
	progressInterval = 0
	defer func() { progressInterval = old }()
	opts := Options{Dir: t.TempDir(), SegmentSize: 64 << 10}
	writeLog(t, opts, 3000, 100)
	var calls []Progress
	opts.Progress = func(p Progress) { calls = append(calls, p) }
	l, rec := mustOpen(t, opts)
	mustClose(t, l)
	if len(calls) == 0 {
		t.Fatal("no progress reported")
	}
	for i, p := range calls {
		if p.Percent <= 0 || p.Percent > 100 || p.BytesPerSec <= 0 || p.Total != rec.Bytes {
			t.Fatalf("progress %d: %+v (log %d bytes)", i, p, rec.Bytes)
		}
		if i > 0 && p.Done <= calls[i-1].Done {
			t.Fatalf("progress went backwards: %+v after %+v", p, calls[i-1])
		}
	}
}

func TestLeftoverTempSegment(t *testing.T) {
	opts := Options{Dir: t.TempDir()}
	want := writeLog(t, opts, 5, 10)
	tmp := filepath.Join(opts.Dir, segName(6)+".tmp")
	if err := os.WriteFile(tmp, []byte("half a hea"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, _ := mustOpen(t, opts)
	defer mustClose(t, l)
	checkEntries(t, l, 1, want)
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("temporary segment left: %v", err)
	}
}
