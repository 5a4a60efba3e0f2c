package txlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	type tc struct {
		name      string
		opts      func(*Options)
		n, size   int
		perAppend int // payloads per Append call
		compress  bool
		check     func(t *testing.T, l *Log, st Stats)
	}
	cases := []tc{
		{name: "small", n: 300, size: 100, perAppend: 1},
		{name: "empty payloads", n: 50, size: 0, perAppend: 1},
		{name: "batches", n: 400, size: 60, perAppend: 7},
		{name: "compressed", n: 40, size: 20000, perAppend: 1, compress: true,
			opts: func(o *Options) { o.Compression, o.CompressThreshold = true, 4096 },
			check: func(t *testing.T, l *Log, st Stats) {
				if st.Compressed != 40 {
					t.Errorf("Compressed = %d, want 40", st.Compressed)
				}
				if st.Bytes >= 40*20000/4 {
					t.Errorf("%d bytes appended for 800000 bytes of payload: not compressed", st.Bytes)
				}
			}},
		{name: "below threshold not compressed", n: 20, size: 4096, perAppend: 1, compress: true,
			opts: func(o *Options) { o.Compression = true },
			check: func(t *testing.T, l *Log, st Stats) {
				if st.Compressed != 0 {
					t.Errorf("Compressed = %d, want 0", st.Compressed)
				}
			}},
		{name: "incompressible stays raw", n: 20, size: 9000, perAppend: 1,
			opts: func(o *Options) { o.Compression = true },
			check: func(t *testing.T, l *Log, st Stats) {
				if st.Compressed != 0 {
					t.Errorf("Compressed = %d, want 0", st.Compressed)
				}
			}},
		{name: "rotation", n: 600, size: 200, perAppend: 3,
			check: func(t *testing.T, l *Log, st Stats) {
				if n := len(segFiles(t, l.dir)); n < 5 {
					t.Errorf("%d segment files for 600*232 bytes in 16 KiB segments", n)
				}
			}},
		{name: "larger than the buffer", n: 6, size: 200 << 10, perAppend: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := smallOpts(t)
			if c.opts != nil {
				c.opts(&opts)
			}
			l, rec := mustOpen(t, opts)
			if rec.FirstIndex != 1 || rec.LastIndex != 0 {
				t.Fatalf("new log: recovery %+v", rec)
			}
			var want []Entry
			var lsn uint64
			for i := 0; i < c.n; i += c.perAppend {
				var ps [][]byte
				for j := i; j < min(i+c.perAppend, c.n); j++ {
					ps = append(ps, payload(uint64(j), c.size, c.compress))
				}
				term := uint64(1 + i/100)
				var err error
				if lsn, err = l.Append(term, ps...); err != nil {
					t.Fatal(err)
				}
				want = append(want, entries(term, ps)...)
			}
			if err := l.WaitDurable(lsn); err != nil {
				t.Fatal(err)
			}
			checkEntries(t, l, 1, want)
			st := l.Stats()
			if st.Records != uint64(c.n) || st.Appends != uint64((c.n+c.perAppend-1)/c.perAppend) {
				t.Errorf("stats: %d records, %d appends", st.Records, st.Appends)
			}
			if c.check != nil {
				c.check(t, l, st)
			}
			mustClose(t, l)

			l, rec = mustOpen(t, opts)
			if rec.LastIndex != uint64(c.n) || rec.TornBytes != 0 || rec.Dropped != "" || rec.Records != uint64(c.n) {
				t.Fatalf("reopen: recovery %+v", rec)
			}
			checkEntries(t, l, 1, want)
			// Appends continue at the right index.
			lsn = appendAll(t, l, 9, [][]byte{payload(1e6, c.size, c.compress)})
			want = append(want, Entry{Term: 9, Payload: payload(1e6, c.size, c.compress)})
			checkEntries(t, l, 1, want)
			mustClose(t, l)
		})
	}
}

func TestReadLimits(t *testing.T) {
	l, _ := mustOpen(t, smallOpts(t))
	defer mustClose(t, l)
	var ps [][]byte
	for i := range 10 {
		ps = append(ps, payload(uint64(i), 100, false))
	}
	appendAll(t, l, 1, ps)
	for _, c := range []struct {
		lo, hi   uint64
		maxBytes int
		want     int
	}{
		{1, 11, -1, 10},
		{1, 11, 250, 2},
		{1, 11, 0, 1}, // at least one
		{3, 5, 1 << 20, 2},
		{5, 5, 100, 0},
		{10, 11, 1, 1},
	} {
		es, err := l.Read(c.lo, c.hi, c.maxBytes)
		if err != nil || len(es) != c.want {
			t.Errorf("Read(%d, %d, %d) = %d entries, %v; want %d", c.lo, c.hi, c.maxBytes, len(es), err, c.want)
		}
		for i, e := range es {
			if e.Index != c.lo+uint64(i) {
				t.Errorf("Read(%d,...)[%d].Index = %d", c.lo, i, e.Index)
			}
		}
	}
	if _, err := l.Read(1, 12, -1); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Read past the end: %v, want ErrUnavailable", err)
	}
	if _, err := l.Term(11); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Term past the end: %v, want ErrUnavailable", err)
	}
	if term, err := l.Term(0); err != nil || term != 0 {
		t.Errorf("Term(FirstIndex-1) = %d, %v; want 0", term, err)
	}
}

// concPayload encodes who appended it and a checksum of itself.
func concPayload(g, seq uint32, size int) []byte {
	p := make([]byte, max(size, 16))
	binary.LittleEndian.PutUint32(p[0:], g)
	binary.LittleEndian.PutUint32(p[4:], seq)
	for i := 16; i < len(p); i++ {
		p[i] = byte(uint32(i)*7 + g*13 + seq)
	}
	binary.LittleEndian.PutUint32(p[8:], crc32.ChecksumIEEE(p[16:]))
	binary.LittleEndian.PutUint32(p[12:], uint32(len(p)))
	return p
}

func checkConcPayload(p []byte) (g, seq uint32, err error) {
	if len(p) < 16 || binary.LittleEndian.Uint32(p[12:]) != uint32(len(p)) ||
		binary.LittleEndian.Uint32(p[8:]) != crc32.ChecksumIEEE(p[16:]) {
		return 0, 0, fmt.Errorf("payload of %d bytes damaged", len(p))
	}
	return binary.LittleEndian.Uint32(p[0:]), binary.LittleEndian.Uint32(p[4:]), nil
}

// verifyConcurrent checks a log written by goroutines appending concPayloads
// with sequence numbers 0, 1, ...: dense, every record intact, each
// goroutine's records in its order, none missing.
func verifyConcurrent(t *testing.T, l *Log, goroutines, perG int) {
	t.Helper()
	all := readAll(t, l)
	if len(all) != goroutines*perG {
		t.Fatalf("%d records, want %d", len(all), goroutines*perG)
	}
	next := make([]uint32, goroutines)
	for i, e := range all {
		if e.Index != uint64(i+1) {
			t.Fatalf("record %d has index %d", i, e.Index)
		}
		g, seq, err := checkConcPayload(e.Payload)
		if err != nil {
			t.Fatalf("index %d: %v", e.Index, err)
		}
		if e.Term != uint64(g)+1 {
			t.Fatalf("index %d: term %d for goroutine %d", e.Index, e.Term, g)
		}
		if seq != next[g] {
			t.Fatalf("index %d: goroutine %d's record %d, want %d", e.Index, g, seq, next[g])
		}
		next[g]++
	}
}

func TestConcurrentAppenders(t *testing.T) {
	for _, mode := range []SyncMode{SyncAlways, SyncPeriodic} {
		t.Run(mode.String(), func(t *testing.T) {
			opts := smallOpts(t)
			opts.SyncMode, opts.SyncInterval = mode, 5*time.Millisecond
			opts.Compression, opts.CompressThreshold = true, 2000
			l, _ := mustOpen(t, opts)
			const goroutines, perG = 64, 150
			var wg sync.WaitGroup
			errs := make(chan error, goroutines)
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(g), 1))
					for seq := 0; seq < perG; {
						// Mostly single records, some batches, some large.
						n := 1
						if rng.IntN(8) == 0 {
							n = min(1+rng.IntN(5), perG-seq)
						}
						var ps [][]byte
						for range n {
							size := 16 + rng.IntN(300)
							if rng.IntN(50) == 0 {
								size = 5000 + rng.IntN(40000)
							}
							ps = append(ps, concPayload(uint32(g), uint32(seq), size))
							seq++
						}
						lsn, err := l.Append(uint64(g)+1, ps...)
						if err == nil && rng.IntN(4) == 0 {
							err = l.WaitDurable(lsn)
						}
						if err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			// Not every append was waited for.
			if err := l.WaitWritten(l.Stats().Bytes); err != nil {
				t.Fatal(err)
			}
			verifyConcurrent(t, l, goroutines, perG)
			st := l.Stats()
			if st.Wakeups != st.WakeupsDone {
				t.Errorf("wake-ups %d, of which found done %d", st.Wakeups, st.WakeupsDone)
			}
			t.Logf("%+v", st)
			mustClose(t, l)
			l, rec := mustOpen(t, opts)
			if rec.LastIndex != goroutines*perG || rec.TornBytes != 0 {
				t.Fatalf("reopen: %+v", rec)
			}
			verifyConcurrent(t, l, goroutines, perG)
			mustClose(t, l)
		})
	}
}

// Readers see every written record, intact, while appends continue.
func TestReadWhileAppending(t *testing.T) {
	opts := smallOpts(t)
	l, _ := mustOpen(t, opts)
	defer mustClose(t, l)
	const goroutines, perG = 8, 300
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := range perG {
				if _, err := l.Append(uint64(g)+1, concPayload(uint32(g), uint32(seq), 100+seq%200)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	reads := 0
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		last := l.LastIndex()
		if last == 0 {
			continue
		}
		lo := uint64(1) + uint64(rand.IntN(int(last)))
		es, err := l.Read(lo, last+1, 64<<10)
		if err != nil {
			t.Fatalf("Read(%d, %d): %v", lo, last+1, err)
		}
		for i, e := range es {
			if e.Index != lo+uint64(i) {
				t.Fatalf("Read(%d): entry %d has index %d", lo, i, e.Index)
			}
			if _, _, err := checkConcPayload(e.Payload); err != nil {
				t.Fatalf("index %d: %v", e.Index, err)
			}
		}
		reads++
	}
	if err := l.WaitWritten(l.Stats().Bytes); err != nil {
		t.Fatal(err)
	}
	verifyConcurrent(t, l, goroutines, perG)
	t.Logf("%d reads during the appends", reads)
}

func TestSyncPeriodic(t *testing.T) {
	fs := &faultFS{}
	opts := smallOpts(t)
	opts.FS, opts.SyncMode, opts.SyncInterval = fs, SyncPeriodic, 30*time.Millisecond
	l, _ := mustOpen(t, opts)
	base := fs.syncCalls.Load()
	lsn, err := l.Append(1, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WaitDurable(lsn); err != nil {
		t.Fatal(err)
	}
	// WaitDurable returned on write(2); the flusher fsyncs within an interval.
	deadline := time.Now().Add(5 * time.Second)
	for fs.syncCalls.Load() == base {
		if time.Now().After(deadline) {
			t.Fatal("no fsync within 5s in periodic mode")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for l.Stats().DurableLSN < lsn {
		if time.Now().After(deadline) {
			t.Fatal("durable LSN did not advance")
		}
		time.Sleep(5 * time.Millisecond)
	}
	mustClose(t, l)
}

func TestClosed(t *testing.T) {
	l, _ := mustOpen(t, smallOpts(t))
	lsn := appendAll(t, l, 1, [][]byte{[]byte("a"), []byte("b")})
	mustClose(t, l)
	if err := l.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	if _, err := l.Append(1, []byte("c")); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	if err := l.WaitDurable(lsn); err != nil {
		t.Errorf("WaitDurable of a durable LSN after Close: %v", err)
	}
	if _, err := l.Read(1, 2, -1); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	if err := l.TruncateSuffix(1); !errors.Is(err, ErrClosed) {
		t.Errorf("TruncateSuffix after Close: %v", err)
	}
}

func TestOptionsErrors(t *testing.T) {
	if _, _, err := Open(Options{}); err == nil {
		t.Error("Open without Dir succeeded")
	}
	if _, _, err := Open(Options{Dir: t.TempDir(), BufferSize: -1}); err == nil {
		t.Error("negative BufferSize accepted")
	}
	// Unknown files in the directory are left alone.
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/README", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, _ := mustOpen(t, Options{Dir: dir})
	mustClose(t, l)
}
