package txlog

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// writeTerms appends n records of 100 bytes, term 1 for the first half and
// term 2 for the rest, and returns them.
func writeTerms(t *testing.T, l *Log, n int) []Entry {
	t.Helper()
	var want []Entry
	for i := range n {
		term := uint64(1 + 2*i/n)
		p := payload(uint64(i), 100, false)
		appendAll(t, l, term, [][]byte{p})
		want = append(want, Entry{Term: term, Payload: p})
	}
	return want
}

func TestTruncateSuffix(t *testing.T) {
	const n = 400 // about 4 segments of 16 KiB
	for _, c := range []struct {
		name string
		from func(l *Log) uint64
	}{
		{"middle of the last segment", func(l *Log) uint64 { return l.LastIndex() - 5 }},
		{"last record", func(l *Log) uint64 { return l.LastIndex() }},
		{"start of the last segment", func(l *Log) uint64 { return l.segs[len(l.segs)-1].first }},
		{"earlier segment", func(l *Log) uint64 { return l.segs[1].first + 3 }},
		{"first segment, sparse boundary", func(l *Log) uint64 { return 1 + sparseEvery }},
		{"everything", func(l *Log) uint64 { return 1 }},
		{"nothing", func(l *Log) uint64 { return l.LastIndex() + 1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := smallOpts(t)
			l, _ := mustOpen(t, opts)
			want := writeTerms(t, l, n)
			from := c.from(l)
			if err := l.TruncateSuffix(from); err != nil {
				t.Fatalf("TruncateSuffix(%d): %v", from, err)
			}
			want = want[:from-1]
			checkEntries(t, l, 1, want)
			wantPrev := uint64(0)
			if from > 1 {
				wantPrev = want[from-2].Term
			}
			if term, err := l.Term(from - 1); err != nil || term != wantPrev {
				t.Fatalf("Term(%d) = %d, %v; want %d", from-1, term, err, wantPrev)
			}
			// A new leader's entries replace the tail.
			for i := range 150 {
				p := []byte(fmt.Sprintf("term 3 entry %d", i))
				lsn, err := l.AppendAt(from+uint64(i), 3, p)
				if err != nil {
					t.Fatalf("AppendAt(%d): %v", from+uint64(i), err)
				}
				if err := l.WaitDurable(lsn); err != nil {
					t.Fatal(err)
				}
				want = append(want, Entry{Term: 3, Payload: p})
			}
			checkEntries(t, l, 1, want)
			mustClose(t, l)
			l, rec := mustOpen(t, opts)
			if rec.TornBytes != 0 || rec.Dropped != "" {
				t.Fatalf("reopen: %+v", rec)
			}
			checkEntries(t, l, 1, want)
			mustClose(t, l)
		})
	}
}

func TestTruncateSuffixErrors(t *testing.T) {
	opts := smallOpts(t)
	l, _ := mustOpen(t, opts)
	defer mustClose(t, l)
	writeTerms(t, l, 300)
	if err := l.TruncatePrefix(200); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateSuffix(l.FirstIndex() - 1); !errors.Is(err, ErrCompacted) {
		t.Fatalf("TruncateSuffix before FirstIndex: %v", err)
	}
}

func TestTruncatePrefix(t *testing.T) {
	opts := smallOpts(t)
	l, _ := mustOpen(t, opts)
	want := writeTerms(t, l, 500)
	segs := segFiles(t, opts.Dir)
	if len(segs) < 4 {
		t.Fatalf("%d segments", len(segs))
	}
	second, third := l.segs[1].first, l.segs[2].first

	for _, c := range []struct {
		before    uint64
		wantFirst uint64
	}{
		{1, 1},
		{second - 1, 1},  // the first segment still holds second-1
		{second, second}, // first segment all < second: removed
		{third + 10, third},
		{1 << 40, 0}, // everything but the segment being written
	} {
		if err := l.TruncatePrefix(c.before); err != nil {
			t.Fatalf("TruncatePrefix(%d): %v", c.before, err)
		}
		wantFirst := c.wantFirst
		if wantFirst == 0 {
			wantFirst = l.segs[len(l.segs)-1].first
		}
		if got := l.FirstIndex(); got != wantFirst {
			t.Fatalf("TruncatePrefix(%d): FirstIndex %d, want %d", c.before, got, wantFirst)
		}
		checkEntries(t, l, wantFirst, want[wantFirst-1:])
		if term, err := l.Term(wantFirst - 1); wantFirst > 1 && (err != nil || term != want[wantFirst-2].Term) {
			t.Fatalf("Term(FirstIndex-1) = %d, %v; want %d", term, err, want[wantFirst-2].Term)
		}
		if wantFirst > 1 {
			if _, err := l.Read(wantFirst-1, wantFirst, -1); !errors.Is(err, ErrCompacted) {
				t.Fatalf("Read before FirstIndex: %v", err)
			}
			if _, err := l.Term(wantFirst - 2); wantFirst > 2 && !errors.Is(err, ErrCompacted) {
				t.Fatalf("Term before FirstIndex-1: %v", err)
			}
		}
	}
	first := l.FirstIndex()
	want = append(want, Entry{Term: 4, Payload: []byte("after")})
	appendAll(t, l, 4, [][]byte{[]byte("after")})
	mustClose(t, l)
	l, rec := mustOpen(t, opts)
	defer mustClose(t, l)
	if rec.FirstIndex != first {
		t.Fatalf("reopen: %+v, want first index %d", rec, first)
	}
	checkEntries(t, l, first, want[first-1:])
	if term, err := l.Term(first - 1); err != nil || term != want[first-2].Term {
		t.Fatalf("after reopen Term(FirstIndex-1) = %d, %v", term, err)
	}
}

// TruncatePrefix while appenders run.
func TestTruncatePrefixConcurrent(t *testing.T) {
	opts := smallOpts(t)
	l, _ := mustOpen(t, opts)
	defer mustClose(t, l)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 3000 {
			if _, err := l.Append(1, payload(uint64(i), 100, false)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for {
		select {
		case <-done:
			lsn := l.Stats().Bytes
			if err := l.WaitDurable(lsn); err != nil {
				t.Fatal(err)
			}
			if l.LastIndex() != 3000 {
				t.Fatalf("LastIndex %d", l.LastIndex())
			}
			all := readAll(t, l)
			for i, e := range all {
				if e.Index != l.FirstIndex()+uint64(i) {
					t.Fatalf("index %d at %d", e.Index, i)
				}
			}
			return
		default:
		}
		if err := l.TruncatePrefix(l.LastIndex()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAppendAt(t *testing.T) {
	opts := smallOpts(t)
	l, _ := mustOpen(t, opts)
	if _, err := l.AppendAt(2, 1, []byte("gap")); !errors.Is(err, ErrNotDense) {
		t.Fatalf("AppendAt(2) on an empty log: %v", err)
	}
	lsn, err := l.AppendAt(1, 1, []byte("a"), []byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendEntries([]Entry{{Index: 3, Term: 1}, {Index: 5, Term: 2}}); !errors.Is(err, ErrNotDense) {
		t.Fatalf("AppendEntries with a hole: %v", err)
	}
	if _, err := l.AppendAt(2, 1, []byte("overlap")); !errors.Is(err, ErrNotDense) {
		t.Fatalf("AppendAt over an existing index: %v", err)
	}
	if lsn, err = l.AppendEntries([]Entry{{Index: 3, Term: 1, Payload: []byte("c")}, {Index: 4, Term: 2, Payload: []byte("d")}}); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitDurable(lsn); err != nil {
		t.Fatal(err)
	}
	want := []Entry{{Term: 1, Payload: []byte("a")}, {Term: 1, Payload: []byte("b")}, {Term: 1, Payload: []byte("c")}, {Term: 2, Payload: []byte("d")}}
	checkEntries(t, l, 1, want)
	mustClose(t, l)
}

func TestReset(t *testing.T) {
	for _, c := range []struct {
		name string
		next uint64
	}{
		{"beyond the end", 1000},
		{"inside the log", 150},
		{"at a segment's first index", 0}, // filled in below
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := smallOpts(t)
			l, _ := mustOpen(t, opts)
			writeTerms(t, l, 300)
			next := c.next
			if next == 0 {
				next = l.segs[1].first
			}
			old := map[string][]byte{}
			for _, p := range segFiles(t, opts.Dir) {
				b, _ := os.ReadFile(p)
				old[p] = b
			}
			if err := l.Reset(next, 7); err != nil {
				t.Fatal(err)
			}
			check := func(l *Log, extra []Entry) {
				t.Helper()
				if l.FirstIndex() != next || l.LastIndex() != next-1+uint64(len(extra)) {
					t.Fatalf("first %d last %d, want %d, %d", l.FirstIndex(), l.LastIndex(), next, next-1+uint64(len(extra)))
				}
				if term, err := l.Term(next - 1); err != nil || term != 7 {
					t.Fatalf("Term(next-1) = %d, %v", term, err)
				}
				checkEntries(t, l, next, extra)
			}
			check(l, nil)
			lsn, err := l.AppendAt(next, 8, []byte("after the snapshot"))
			if err != nil {
				t.Fatal(err)
			}
			if err := l.WaitDurable(lsn); err != nil {
				t.Fatal(err)
			}
			extra := []Entry{{Term: 8, Payload: []byte("after the snapshot")}}
			check(l, extra)
			mustClose(t, l)
			l, _ = mustOpen(t, opts)
			check(l, extra)
			mustClose(t, l)

			// A crash before Reset removed the older segments: put back the
			// old segments that sort before the reset segment.
			for p, b := range old {
				if first, _ := parseSegName(p[len(opts.Dir)+1:]); first < next {
					if err := os.WriteFile(p, b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			l, rec := mustOpen(t, opts)
			if !rec.ResetCompleted {
				t.Errorf("recovery %+v: reset not completed", rec)
			}
			check(l, extra)
			mustClose(t, l)
		})
	}
}
