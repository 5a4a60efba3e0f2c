package txlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The end of the log (state.go): after a clean Close the log must end
// exactly where Close left it, intact; after a crash a torn tail is
// accepted only past the index log.state knew durable, and the log must
// reach that index and the newest segment created. Segment files that are
// not this log's are refused, with or without RecoverTruncate.

// writeLogClean writes n records of size bytes (term 1) and closes the log
// cleanly.
func writeLogClean(t *testing.T, opts Options, n, size int) []Entry {
	t.Helper()
	return writeLog(t, opts, n, size)
}

// writeLogDurable writes n records and "crashes" with log.state recording
// all n as durable.
func writeLogDurable(t *testing.T, opts Options, n, size int) []Entry {
	t.Helper()
	opts.MarkInterval = -1
	l, _ := mustOpen(t, opts)
	var ps [][]byte
	for i := range n {
		ps = append(ps, payload(uint64(i), size, false))
	}
	appendAll(t, l, 1, ps)
	l.recordMark()
	if got := l.state.cur.durable; got != uint64(n) {
		t.Fatalf("log.state durable %d after %d durable records", got, n)
	}
	crashClose(t, l)
	return entries(1, ps)
}

// dirSnapshot returns every file's content in dir, to check that a refused
// Open changed nothing.
func dirSnapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}

func sameDir(t *testing.T, dir string, before map[string][]byte) {
	t.Helper()
	after := dirSnapshot(t, dir)
	if len(after) != len(before) {
		t.Fatalf("files changed: %d before, %d after", len(before), len(after))
	}
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Fatalf("%s changed by a refused Open", name)
		}
	}
}

// mustRefuse opens the log expecting an error whose text contains every
// one of parts, and checks that nothing in the directory changed.
func mustRefuse(t *testing.T, opts Options, target any, parts ...string) error {
	t.Helper()
	before := dirSnapshot(t, opts.Dir)
	l, _, err := Open(opts)
	if err == nil {
		l.Close()
		t.Fatalf("Open succeeded; want an error containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("Open: %v\nwant it to contain %q", err, p)
		}
	}
	if target != nil && !errors.As(err, target) {
		t.Fatalf("Open: %v (%T), want a %T", err, err, target)
	}
	sameDir(t, opts.Dir, before)
	return err
}

func TestCleanCloseDamagedLastRecord(t *testing.T) {
	const n, size = 20, 100
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, path string, lastOff int64)
		reason string
	}{
		{"payload bit flip", func(t *testing.T, path string, lastOff int64) { flip(t, path, lastOff+recHeaderSize+40) }, "payload checksum mismatch"},
		{"header bit flip", func(t *testing.T, path string, lastOff int64) { flip(t, path, lastOff+3) }, "header checksum mismatch"},
		{"cut inside", func(t *testing.T, path string, lastOff int64) { must(t, os.Truncate(path, lastOff+50)) }, "incomplete record"},
		{"bytes after the end", func(t *testing.T, path string, lastOff int64) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			must(t, err)
			f.Write([]byte("a torn write that no crash can explain"))
			f.Close()
		}, "header checksum mismatch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := Options{Dir: t.TempDir()}
			want := writeLogClean(t, opts, n, size)
			path := segFiles(t, opts.Dir)[0]
			offs := recordOffsets(t, path)
			lastOff := offs[len(offs)-1]
			c.damage(t, path, lastOff)
			errOff := lastOff
			if c.name == "bytes after the end" {
				errOff = lastOff + recHeaderSize + size
			}
			var cerr *CorruptError
			mustRefuse(t, opts, &cerr, filepath.Base(path), c.reason, "closed cleanly", "--recover-truncate")
			if cerr.Offset != errOff {
				t.Fatalf("error at offset %d, want %d", cerr.Offset, errOff)
			}
			// --recover-truncate drops what is damaged, and says so.
			opts.RecoverTruncate = true
			l, rec := mustOpen(t, opts)
			keep := n - 1
			if c.name == "bytes after the end" {
				keep = n
			}
			if rec.Corruption == "" || rec.LastIndex != uint64(keep) || rec.TornBytes != 0 {
				t.Fatalf("recover-truncate: %+v; want the log cut to %d with the corruption reported", rec, keep)
			}
			checkEntries(t, l, 1, want[:keep])
			mustClose(t, l)
			opts.RecoverTruncate = false
			l, rec = mustOpen(t, opts)
			if !rec.Clean || rec.LastIndex != uint64(keep) {
				t.Fatalf("reopen: %+v", rec)
			}
			mustClose(t, l)
		})
	}
}

func TestCleanCloseMissingTail(t *testing.T) {
	t.Run("last record cut at its start", func(t *testing.T) {
		opts := Options{Dir: t.TempDir()}
		want := writeLogClean(t, opts, 20, 100)
		path := segFiles(t, opts.Dir)[0]
		offs := recordOffsets(t, path)
		must(t, os.Truncate(path, offs[len(offs)-1]))
		var terr *TailError
		mustRefuse(t, opts, &terr, path, "ends at index 19", "closed log was durable through index 20", "records 20 to 20 are missing", "--recover-truncate")
		opts.RecoverTruncate = true
		l, rec := mustOpen(t, opts)
		if !strings.Contains(rec.EndProblem, "records 20 to 20 are missing") || rec.LastIndex != 19 {
			t.Fatalf("recover-truncate: %+v", rec)
		}
		checkEntries(t, l, 1, want[:19])
		mustClose(t, l)
	})
	t.Run("last segment removed", func(t *testing.T) {
		opts := Options{Dir: t.TempDir(), SegmentSize: 16 << 10}
		want := writeLogClean(t, opts, 400, 100)
		files := segFiles(t, opts.Dir)
		if len(files) < 3 {
			t.Fatalf("%d segments", len(files))
		}
		gone := files[len(files)-1]
		must(t, os.Remove(gone))
		var terr *TailError
		mustRefuse(t, opts, &terr, gone, "missing", "the cleanly closed log had created it", "--recover-truncate")
		opts.RecoverTruncate = true
		l, rec := mustOpen(t, opts)
		if rec.EndProblem == "" || !strings.Contains(rec.EndProblem, filepath.Base(gone)) {
			t.Fatalf("recover-truncate: %+v", rec)
		}
		last := rec.LastIndex
		checkEntries(t, l, 1, want[:last])
		// Appends go on at the next index, and a clean close then holds.
		appendAll(t, l, 2, [][]byte{[]byte("after")})
		mustClose(t, l)
		opts.RecoverTruncate = false
		l, rec = mustOpen(t, opts)
		if rec.LastIndex != last+1 || rec.EndProblem != "" {
			t.Fatalf("reopen: %+v", rec)
		}
		mustClose(t, l)
	})
	t.Run("every segment removed", func(t *testing.T) {
		opts := Options{Dir: t.TempDir()}
		writeLogClean(t, opts, 5, 100)
		for _, f := range segFiles(t, opts.Dir) {
			must(t, os.Remove(f))
		}
		var terr *TailError
		mustRefuse(t, opts, &terr, segName(1), "missing", "holds no segment")
	})
	t.Run("records after the clean end", func(t *testing.T) {
		// Something other than this log appended a valid record after the
		// clean close: nothing is lost, but the log is not as it was left.
		opts := Options{Dir: t.TempDir()}
		writeLogClean(t, opts, 5, 100)
		path := segFiles(t, opts.Dir)[0]
		rec := make([]byte, recHeaderSize+10)
		putRecHeader(rec, recHeader{length: 10, term: 1, index: 6, crc: crc32c(rec[recHeaderSize:])})
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		must(t, err)
		f.Write(rec)
		f.Close()
		var terr *TailError
		mustRefuse(t, opts, &terr, "closed cleanly at index 5", "holds records up to index 6")
	})
}

func TestCrashDamageBeforeDurable(t *testing.T) {
	// log.state says all 20 records were durable: a crash cannot tear the
	// last one.
	opts := Options{Dir: t.TempDir()}
	want := writeLogDurable(t, opts, 20, 100)
	path := segFiles(t, opts.Dir)[0]
	offs := recordOffsets(t, path)
	flip(t, path, offs[19]+recHeaderSize+10)
	var cerr *CorruptError
	mustRefuse(t, opts, &cerr, filepath.Base(path), "record 20 was durable", "durable through index 20")
	opts.RecoverTruncate = true
	l, rec := mustOpen(t, opts)
	if rec.Dropped != "1" || rec.LastIndex != 19 {
		t.Fatalf("recover-truncate: %+v", rec)
	}
	checkEntries(t, l, 1, want[:19])
	mustClose(t, l)
}

func TestCrashLogCutShort(t *testing.T) {
	opts := Options{Dir: t.TempDir()}
	writeLogDurable(t, opts, 20, 100)
	path := segFiles(t, opts.Dir)[0]
	offs := recordOffsets(t, path)
	must(t, os.Truncate(path, offs[15]))
	var terr *TailError
	mustRefuse(t, opts, &terr, path, "ends at index 15", "durable through index 20", "records 16 to 20 are missing")
}

func TestCrashMissingLastSegment(t *testing.T) {
	// No explicit mark: the writer kicks the mark loop at each new
	// segment, which records it in log.state.
	opts := Options{Dir: t.TempDir(), SegmentSize: 16 << 10, MarkInterval: -1}
	l, _ := mustOpen(t, opts)
	writeTerms(t, l, 400)
	newest := l.segs[len(l.segs)-1].first
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := readState(OSFS{}, opts.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if st.lastSeg == newest {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log.state says the newest segment is %d, want %d", st.lastSeg, newest)
		}
		time.Sleep(5 * time.Millisecond)
	}
	crashClose(t, l)
	files := segFiles(t, opts.Dir)
	gone := files[len(files)-1]
	must(t, os.Remove(gone))
	// The segment before it now ends the log; tearing its last record (as
	// if a crash had) is not accepted either: it was durable, and the log
	// had moved on.
	prev := files[len(files)-2]
	offs := recordOffsets(t, prev)
	must(t, os.Truncate(prev, offs[len(offs)-1]+7))
	var cerr *CorruptError
	mustRefuse(t, opts, &cerr, filepath.Base(prev), "a crash does not explain it")
	// Even if log.state knew fewer records durable, the log had moved on
	// to a newer segment, which the crash would have written to.
	rewriteState(t, opts.Dir, func(st *logState) { st.durable = 1 })
	mustRefuse(t, opts, &cerr, filepath.Base(prev), "the log had moved on to "+filepath.Base(gone))
	// Without the tear, the missing segment itself is named.
	must(t, os.Truncate(prev, offs[len(offs)-1]))
	var terr *TailError
	mustRefuse(t, opts, &terr, gone, "missing", "the log had created it")
}

// rewriteState changes log.state as the log would (a new generation in
// the other slot).
func rewriteState(t *testing.T, dir string, change func(*logState)) {
	t.Helper()
	st, err := readState(OSFS{}, dir)
	must(t, err)
	change(st)
	st.gen++
	f, err := os.OpenFile(filepath.Join(dir, stateName), os.O_RDWR, 0)
	must(t, err)
	defer f.Close()
	_, err = f.WriteAt(st.encode(), int64(st.gen%2)*stateSlot)
	must(t, err)
}

func TestMarkLoopRecordsDurableIndex(t *testing.T) {
	opts := Options{Dir: t.TempDir(), MarkInterval: 5 * time.Millisecond}
	l, _ := mustOpen(t, opts)
	defer mustClose(t, l)
	writeTerms(t, l, 30)
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := readState(OSFS{}, opts.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if st.kind == stateOpen && st.durable == 30 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log.state %+v; want open, durable through 30", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The creation, then at least one mark (the segment and the durable
	// index may go in one write when the appends finish before the first
	// tick: CI saw 2).
	if s := l.Stats(); s.StateWrites < 2 || s.StateWriteFailures != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestTruncationLowersMark: TruncateSuffix and Reset lower what log.state
// claims before they remove records, so a crash after them is not refused.
func TestTruncationLowersMark(t *testing.T) {
	for _, c := range []struct {
		name string
		op   func(l *Log) (first, last uint64, err error)
	}{
		{"TruncateSuffix", func(l *Log) (uint64, uint64, error) { return 1, 99, l.TruncateSuffix(100) }},
		{"TruncateSuffix earlier segment", func(l *Log) (uint64, uint64, error) {
			from := l.segs[1].first + 2
			return 1, from - 1, l.TruncateSuffix(from)
		}},
		{"Reset", func(l *Log) (uint64, uint64, error) { return 50, 49, l.Reset(50, 1) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := smallOpts(t)
			opts.MarkInterval = -1
			l, _ := mustOpen(t, opts)
			writeTerms(t, l, 400)
			l.recordMark()
			first, last, err := c.op(l)
			if err != nil {
				t.Fatal(err)
			}
			crashClose(t, l)
			l, rec := mustOpen(t, opts)
			if rec.FirstIndex != first || rec.LastIndex != last || rec.EndProblem != "" {
				t.Fatalf("reopen after %s and a crash: %+v; want %d..%d", c.name, rec, first, last)
			}
			mustClose(t, l)
		})
	}
}

func TestForeignSegment(t *testing.T) {
	setup := func(t *testing.T) (Options, []Entry) {
		opts := Options{Dir: t.TempDir(), SegmentSize: 16 << 10}
		return opts, writeLogClean(t, opts, 400, 100)
	}
	// Each is refused, also with RecoverTruncate, without touching any
	// file; once the file is moved away the log opens intact.
	check := func(t *testing.T, opts Options, want []Entry, planted string, parts ...string) {
		t.Helper()
		var ferr *ForeignError
		parts = append(parts, planted, "is not a segment of this log", "move it out of "+opts.Dir)
		mustRefuse(t, opts, &ferr, parts...)
		opts.RecoverTruncate = true
		mustRefuse(t, opts, &ferr, parts...)
		must(t, os.Remove(planted))
	}
	t.Run("garbage named as the first segment", func(t *testing.T) {
		opts, want := setup(t)
		planted := filepath.Join(opts.Dir, segName(0))
		must(t, os.WriteFile(planted, bytes.Repeat([]byte("not a log "), 10), 0o644))
		check(t, opts, want, planted, "no lockstep log segment magic")
		l, _ := mustOpen(t, opts)
		checkEntries(t, l, 1, want)
		mustClose(t, l)
	})
	t.Run("empty file after the last segment", func(t *testing.T) {
		opts, want := setup(t)
		planted := filepath.Join(opts.Dir, segName(100000))
		must(t, os.WriteFile(planted, nil, 0o644))
		check(t, opts, want, planted, "too short for a segment header")
		l, _ := mustOpen(t, opts)
		checkEntries(t, l, 1, want)
		mustClose(t, l)
	})
	t.Run("another log's segment", func(t *testing.T) {
		opts, want := setup(t)
		other := Options{Dir: t.TempDir(), SegmentSize: 16 << 10}
		writeLogClean(t, other, 400, 100)
		// The other log's second segment, under this log's name for it
		// (same first index: the two logs hold the same indexes).
		mine, theirs := segFiles(t, opts.Dir)[1], segFiles(t, other.Dir)[1]
		saved, err := os.ReadFile(mine)
		must(t, err)
		b, err := os.ReadFile(theirs)
		must(t, err)
		must(t, os.WriteFile(mine, b, 0o644))
		check(t, opts, want, mine, "log id")
		must(t, os.WriteFile(mine, saved, 0o644))
		l, _ := mustOpen(t, opts)
		checkEntries(t, l, 1, want)
		mustClose(t, l)
	})
	t.Run("segment under another name", func(t *testing.T) {
		opts, want := setup(t)
		files := segFiles(t, opts.Dir)
		b, err := os.ReadFile(files[1])
		must(t, err)
		planted := filepath.Join(opts.Dir, segName(0))
		must(t, os.WriteFile(planted, b, 0o644))
		check(t, opts, want, planted, "its name says 0")
		l, _ := mustOpen(t, opts)
		checkEntries(t, l, 1, want)
		mustClose(t, l)
	})
}

func TestStateFileLost(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		opts := Options{Dir: t.TempDir()}
		want := writeLogClean(t, opts, 20, 100)
		path := segFiles(t, opts.Dir)[0]
		id := segID(t, path)
		must(t, os.Remove(filepath.Join(opts.Dir, stateName)))
		var terr *TailError
		mustRefuse(t, opts, &terr, filepath.Join(opts.Dir, stateName), "missing", "was written with one", "--recover-truncate")
		opts.RecoverTruncate = true
		l, rec := mustOpen(t, opts)
		if !rec.StateCreated || rec.LastIndex != 20 || !strings.Contains(rec.EndProblem, "missing") {
			t.Fatalf("recover-truncate: %+v", rec)
		}
		checkEntries(t, l, 1, want)
		if l.id != id {
			t.Fatalf("log id %s, want the segments' %s", l.id, id)
		}
		mustClose(t, l)
		opts.RecoverTruncate = false
		l, rec = mustOpen(t, opts)
		if !rec.Clean || rec.StateCreated {
			t.Fatalf("reopen: %+v", rec)
		}
		mustClose(t, l)
	})
	t.Run("damaged", func(t *testing.T) {
		opts := Options{Dir: t.TempDir()}
		want := writeLogClean(t, opts, 20, 100)
		must(t, os.WriteFile(filepath.Join(opts.Dir, stateName), make([]byte, stateSize), 0o644))
		var terr *TailError
		mustRefuse(t, opts, &terr, stateName, "damaged")
		opts.RecoverTruncate = true
		l, rec := mustOpen(t, opts)
		if !rec.StateCreated || !strings.Contains(rec.EndProblem, "damaged") {
			t.Fatalf("recover-truncate: %+v", rec)
		}
		checkEntries(t, l, 1, want)
		mustClose(t, l)
	})
	t.Run("one copy damaged", func(t *testing.T) {
		// The newer copy torn: the older one is used.
		opts := Options{Dir: t.TempDir()}
		want := writeLogDurable(t, opts, 20, 100)
		st, err := readState(OSFS{}, opts.Dir)
		must(t, err)
		flip(t, filepath.Join(opts.Dir, stateName), int64(st.gen%2)*stateSlot+40)
		older, err := readState(OSFS{}, opts.Dir)
		must(t, err)
		if older.gen != st.gen-1 {
			t.Fatalf("gen %d after damaging %d", older.gen, st.gen)
		}
		l, _ := mustOpen(t, opts)
		checkEntries(t, l, 1, want)
		mustClose(t, l)
	})
	t.Run("log directory emptied", func(t *testing.T) {
		opts := Options{Dir: t.TempDir(), MustExist: true}
		var terr *TailError
		mustRefuse(t, opts, &terr, opts.Dir, "holds no log")
		opts.RecoverTruncate = true
		l, rec := mustOpen(t, opts)
		if !strings.Contains(rec.EndProblem, "holds no log") {
			t.Fatalf("recover-truncate: %+v", rec)
		}
		mustClose(t, l)
	})
}

func segID(t *testing.T, path string) logID {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	h, prob, err := decodeSegHeader(b, filepath.Base(path))
	if err != nil || prob != nil {
		t.Fatalf("%s: %v %v", path, prob, err)
	}
	return h.id
}

// writeV1Segment writes a version 1 segment (32-byte header, no log id)
// holding records first.. with payloads ps, as a binary before log.state
// wrote them.
func writeV1Segment(t *testing.T, dir string, first uint64, ps [][]byte) {
	t.Helper()
	b := make([]byte, segHeaderSizeV1)
	copy(b, segMagic)
	binary.LittleEndian.PutUint16(b[8:], 1)
	binary.LittleEndian.PutUint64(b[12:], first)
	binary.LittleEndian.PutUint64(b[20:], 1)
	binary.LittleEndian.PutUint32(b[28:], crc32c(b[:28]))
	for i, p := range ps {
		h := make([]byte, recHeaderSize)
		putRecHeader(h, recHeader{length: uint32(len(p)), term: 1, index: first + uint64(i), crc: crc32c(p)})
		b = append(append(b, h...), p...)
	}
	must(t, os.WriteFile(filepath.Join(dir, segName(first)), b, 0o644))
}

func TestVersion1Log(t *testing.T) {
	opts := Options{Dir: t.TempDir()}
	var ps [][]byte
	for i := range 10 {
		ps = append(ps, payload(uint64(i), 100, false))
	}
	writeV1Segment(t, opts.Dir, 1, ps[:5])
	writeV1Segment(t, opts.Dir, 6, ps[5:])
	want := entries(1, ps)
	l, rec := mustOpen(t, opts)
	if !rec.StateCreated || rec.LastIndex != 10 {
		t.Fatalf("open of a version 1 log: %+v", rec)
	}
	checkEntries(t, l, 1, want)
	// The writer does not append to a version 1 segment: the next record
	// starts a version 2 one.
	appendAll(t, l, 2, [][]byte{[]byte("v2")})
	want = append(want, Entry{Term: 2, Payload: []byte("v2")})
	files := segFiles(t, opts.Dir)
	if len(files) != 3 || filepath.Base(files[2]) != segName(11) || segID(t, files[2]) != l.id {
		t.Fatalf("segments %v; want a version 2 %s", files, segName(11))
	}
	mustClose(t, l)
	l, rec = mustOpen(t, opts)
	if !rec.Clean || rec.StateCreated {
		t.Fatalf("reopen: %+v", rec)
	}
	checkEntries(t, l, 1, want)
	mustClose(t, l)
	// A version 1 segment that was not there when log.state was created
	// is not this log's.
	writeV1Segment(t, opts.Dir, 12, ps[:1])
	var ferr *ForeignError
	mustRefuse(t, opts, &ferr, segName(12), "version 1 segment", segName(1)+" to "+segName(6))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
