package certify

import (
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

func mustStatic(t testing.TB, cfg Config) *Static {
	t.Helper()
	c, err := NewStatic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// step is one scripted transaction and the last_committed it must get.
type step struct {
	seq  int64
	ws   []uint64
	want int64
}

func runSteps(t *testing.T, c Certifier, steps []step) {
	t.Helper()
	for _, s := range steps {
		if got := c.Certify(s.seq, s.ws); got != s.want {
			t.Fatalf("Certify(%d, %x) = %d, want %d; %v", s.seq, s.ws, got, s.want, stats(c))
		}
	}
}

func TestStaticScripted(t *testing.T) {
	a, b, c, d := rowKey(0, 1), rowKey(0, 2), rowKey(0, 3), rowKey(0, 4)
	tests := []struct {
		name  string
		cfg   Config
		steps []step
		stats Stats // fields compared: Resets*, Serial*
	}{
		{
			name: "conflicts-take-the-latest-writer",
			cfg:  Config{Buckets: 4, EntriesPerBucket: 8},
			steps: []step{
				{1, []uint64{a}, 0},
				{2, []uint64{b}, 0},
				{3, []uint64{a, b}, 2},
				{4, []uint64{c}, 0},
				{5, []uint64{c, a}, 4},
				{6, []uint64{d}, 0},
			},
		},
		{
			name: "duplicate-keys-are-not-self-dependencies",
			cfg:  Config{Buckets: 1, EntriesPerBucket: 4},
			steps: []step{
				{1, []uint64{a, a, a}, 0},
				{2, []uint64{b, a, b, a}, 1},
				{3, []uint64{b}, 2},
			},
		},
		{
			name: "full-bucket-resets-and-goes-serial",
			cfg:  Config{Buckets: 1, EntriesPerBucket: 3},
			steps: []step{
				{1, []uint64{a}, 0},
				{2, []uint64{b}, 0},
				{3, []uint64{c}, 0},
				{4, []uint64{a}, 1}, // an update in place needs no room
				{5, []uint64{d}, 4}, // a fourth key does: reset, serial
				{6, []uint64{a}, 5}, // a was forgotten: the floor (5) covers it
				{7, []uint64{a}, 6},
				{8, []uint64{d}, 5}, // d was never stored; the floor covers it
			},
			stats: Stats{Resets: 1, ResetsBucketFull: 1, SerialReset: 1},
		},
		{
			name: "reset-mid-writeset-discards-partial-updates",
			cfg:  Config{Buckets: 1, EntriesPerBucket: 2},
			steps: []step{
				{1, []uint64{a}, 0},
				{2, []uint64{a, b, c}, 1}, // b fills the bucket, c overflows
				{3, []uint64{a}, 2},
				{4, []uint64{b}, 2},
				{5, []uint64{c}, 4}, // a and b fill the bucket again
			},
			stats: Stats{Resets: 2, ResetsBucketFull: 2, SerialReset: 2},
		},
		{
			name: "relative-number-overflow",
			cfg:  Config{Buckets: 2, EntriesPerBucket: 4},
			steps: []step{
				{1, []uint64{a}, 0},
				{MaxRelative, []uint64{a}, 1},               // rel 65535 still fits
				{MaxRelative + 1, []uint64{b}, MaxRelative}, // 65536 does not
				{MaxRelative + 2, []uint64{a}, MaxRelative + 1},
				{3 * MaxRelative, []uint64{c}, 3*MaxRelative - 1}, // a jump past the window
			},
			stats: Stats{Resets: 2, ResetsRelOverflow: 2, SerialReset: 2},
		},
		{
			name: "ddl-is-a-barrier-both-ways",
			cfg:  Config{Buckets: 4, EntriesPerBucket: 4},
			steps: []step{
				{1, []uint64{a}, 0},
				{2, []uint64{b}, 0},
				{3, nil, 2},
				{4, []uint64{c}, 3},
				{5, []uint64{a}, 3},
				{6, []uint64{a}, 5},
				{7, []uint64{}, 6},
				{8, []uint64{d}, 7},
			},
			stats: Stats{SerialDDL: 2},
		},
		{
			name: "start-after-base",
			cfg:  Config{Buckets: 4, EntriesPerBucket: 4, Base: 1000},
			steps: []step{
				{1001, []uint64{a}, 1000},
				{1005, []uint64{a}, 1001},
				{1006, []uint64{b}, 1000},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustStatic(t, tt.cfg)
			runSteps(t, c, tt.steps)
			s := stats(c)
			if s.Resets != tt.stats.Resets || s.ResetsBucketFull != tt.stats.ResetsBucketFull ||
				s.ResetsRelOverflow != tt.stats.ResetsRelOverflow || s.SerialReset != tt.stats.SerialReset ||
				s.SerialDDL != tt.stats.SerialDDL {
				t.Errorf("stats %v, want %v", s, tt.stats)
			}
			if s.Certifications != int64(len(tt.steps)) {
				t.Errorf("certifications %d, want %d", s.Certifications, len(tt.steps))
			}
		})
	}
}

// TestStaticEdgeHashes: hashes whose low 48 bits are zero (so the packed
// entry can be the all-zero word), hashes that differ only in the bucket
// bits, and the extremes, must all be told apart with the full 16-bit
// bucket index.
func TestStaticEdgeHashes(t *testing.T) {
	keys := []uint64{0, 1 << 48, 2 << 48, 0xffff << 48, math.MaxUint64, keyMask, 1, 1<<48 | 1}
	c := mustStatic(t, Config{Buckets: 1 << 16, EntriesPerBucket: 4})
	seq := int64(0)
	first := map[uint64]int64{}
	for _, k := range keys {
		seq++
		if got := c.Certify(seq, []uint64{k}); got != 0 {
			t.Fatalf("key %#x, first write: last_committed %d, want 0", k, got)
		}
		first[k] = seq
	}
	for _, k := range keys {
		seq++
		if got := c.Certify(seq, []uint64{k}); got != first[k] {
			t.Fatalf("key %#x: last_committed %d, want %d", k, got, first[k])
		}
	}
	if s := stats(c); s.Resets != 0 {
		t.Fatalf("unexpected reset: %v", s)
	}
}

// TestStaticAliasingIsConservative: with fewer buckets, hashes equal in their
// bucket bits and low 48 bits share an entry. That may add a dependency but
// never loses one.
func TestStaticAliasingIsConservative(t *testing.T) {
	c := mustStatic(t, Config{Buckets: 1, EntriesPerBucket: 4})
	x, y := uint64(0x1234)<<48|42, uint64(0x4321)<<48|42
	runSteps(t, c, []step{
		{1, []uint64{x}, 0},
		{2, []uint64{y}, 1}, // spurious but safe
		{3, []uint64{x}, 2},
	})
}

func TestCertifyCheckedRejectsOrder(t *testing.T) {
	impls := map[string]func() Certifier{
		"static":  func() Certifier { return mustStatic(t, Config{Buckets: 4, EntriesPerBucket: 4}) },
		"hashmap": func() Certifier { return NewHashMap(HashMapConfig{}) },
		"certdb":  func() Certifier { return NewCertDB(CertDBConfig{GCEvery: 3}) },
	}
	for name, mk := range impls {
		t.Run(name, func(t *testing.T) {
			c := mk()
			k := rowKey(0, 7)
			if lc, err := c.CertifyChecked(5, []uint64{k}); err != nil || lc != 0 {
				t.Fatalf("CertifyChecked(5) = %d, %v", lc, err)
			}
			for _, seq := range []int64{5, 4, 0, -1, math.MinInt64} {
				lc, err := c.CertifyChecked(seq, []uint64{k})
				if !errors.Is(err, ErrSequenceOrder) {
					t.Errorf("CertifyChecked(%d): err %v, want ErrSequenceOrder", seq, err)
				}
				if lc >= seq && seq != math.MinInt64 {
					t.Errorf("CertifyChecked(%d) = %d", seq, lc)
				}
				if got := c.Certify(seq, []uint64{k}); got != predecessor(seq) {
					t.Errorf("Certify(%d) = %d, want %d", seq, got, predecessor(seq))
				}
			}
			// The rejected calls changed nothing.
			if lc, err := c.CertifyChecked(6, []uint64{k}); err != nil || lc != 5 {
				t.Fatalf("CertifyChecked(6) = %d, %v; want 5", lc, err)
			}
			s := stats(c)
			if s.Rejected != 10 || s.Certifications != 2 {
				t.Errorf("stats %v", s)
			}
		})
	}
}

func TestStaticConfig(t *testing.T) {
	bad := []Config{
		{Buckets: 3}, {Buckets: -1}, {Buckets: 1 << 17}, {EntriesPerBucket: -1},
		{EntriesPerBucket: maxEntriesPerBucket + 1}, {Base: -1},
		{Buckets: 1 << 16, EntriesPerBucket: 1 << 13}, // 4 GiB + 128 KiB
	}
	for _, cfg := range bad {
		if _, err := NewStatic(cfg); err == nil {
			t.Errorf("NewStatic(%+v) accepted", cfg)
		}
	}
	c := mustStatic(t, Config{Buckets: 16, EntriesPerBucket: 7})
	if got, want := c.SizeBytes(), int64(16*7*8+16*2); got != want {
		t.Errorf("SizeBytes = %d, want %d", got, want)
	}
	if got := c.Config(); got.Buckets != 16 || got.EntriesPerBucket != 7 {
		t.Errorf("Config = %+v", got)
	}
}

// TestStaticDefaultGeometry allocates the production size once: 65,536
// buckets of 4 KiB, 256 MiB, and checks a real reset at full scale.
func TestStaticDefaultGeometry(t *testing.T) {
	c := mustStatic(t, Config{})
	if got, want := c.SizeBytes(), int64(65536*511*8+128<<10); got != want {
		t.Fatalf("SizeBytes = %d, want %d", got, want)
	}
	if cfg := c.Config(); cfg != DefaultConfig() {
		t.Fatalf("Config = %+v, want %+v", cfg, DefaultConfig())
	}
	r := rand.New(rand.NewPCG(1, 2))
	s := runOracle(t, c, 0, newSysbench(r, 1<<24), 70000, nil)
	if s.ResetsRelOverflow != 1 || s.ResetsBucketFull != 0 {
		t.Fatalf("want exactly one rel-overflow reset at 65,536: %v", s)
	}
}

func TestStaticZeroAllocs(t *testing.T) {
	c := mustStatic(t, Config{Buckets: 256, EntriesPerBucket: 31})
	r := rand.New(rand.NewPCG(3, 4))
	w := newSysbench(r, 1<<20)
	wss := make([][]uint64, 1024)
	for i := range wss {
		wss[i] = w.next(nil)
	}
	seq, i := int64(0), 0
	allocs := testing.AllocsPerRun(5000, func() {
		seq++
		c.Certify(seq, wss[i%len(wss)])
		i++
	})
	if allocs != 0 {
		t.Fatalf("Certify allocates %.1f times per call", allocs)
	}
	if stats(c).Resets == 0 {
		t.Fatalf("the run did not include a reset")
	}
}

// TestStatsConcurrentRead reads Stats from another goroutine while the owner
// certifies; run with -race.
func TestStatsConcurrentRead(t *testing.T) {
	for name, c := range map[string]Certifier{
		"static":  mustStatic(t, Config{Buckets: 16, EntriesPerBucket: 7}),
		"hashmap": NewHashMap(HashMapConfig{HistorySize: 50}),
		"certdb":  NewCertDB(CertDBConfig{GCEvery: 100, GCKeep: 10}),
	} {
		t.Run(name, func(t *testing.T) {
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				var last int64
				for {
					select {
					case <-stop:
						return
					default:
					}
					s := c.Stats()
					if s.Certifications < last {
						t.Errorf("certifications went back: %d < %d", s.Certifications, last)
						return
					}
					last = s.Certifications
				}
			}()
			r := rand.New(rand.NewPCG(5, 6))
			w := &withDDL{r: r, pct: 1, w: &uniform{r: r, space: 200, lo: 1, hi: 5}}
			var ws []uint64
			for seq := int64(1); seq <= 20000; seq++ {
				ws = w.next(ws)
				c.Certify(seq, ws)
			}
			close(stop)
			wg.Wait()
			if s := stats(c); s.Certifications != 20000 {
				t.Fatalf("stats %v", s)
			}
		})
	}
}

func TestStatsMean(t *testing.T) {
	tests := []struct {
		s      Stats
		mean   float64
		serial int64
	}{
		{Stats{}, 0, 0},
		{Stats{Certifications: 4, DistanceSum: 10, SerialDDL: 1, SerialReset: 2}, 2.5, 3},
	}
	for _, tt := range tests {
		if got := tt.s.Mean(); got != tt.mean {
			t.Errorf("%v: Mean = %v, want %v", tt.s, got, tt.mean)
		}
		if got := tt.s.SerialFallbacks(); got != tt.serial {
			t.Errorf("%v: SerialFallbacks = %v, want %v", tt.s, got, tt.serial)
		}
	}
}

func TestHashMapHistory(t *testing.T) {
	a, b, c := rowKey(0, 1), rowKey(0, 2), rowKey(0, 3)
	h := NewHashMap(HashMapConfig{HistorySize: 2})
	runSteps(t, h, []step{
		{1, []uint64{a}, 0},
		{2, []uint64{b}, 0},
		{3, []uint64{a, c}, 1}, // would hold 3 keys: answered, then cleared
		{4, []uint64{a}, 3},    // floor
		{5, []uint64{a}, 4},
	})
	if s := stats(h); s.Resets != 1 || s.SerialReset != 0 {
		t.Fatalf("stats %v", s)
	}
	if h.Len() != 1 {
		t.Fatalf("Len = %d, want 1", h.Len())
	}
}

// TestStaticFullBucket fills one bucket to exactly EntriesPerBucket (its
// entries span several cache lines): every entry must still be found, and
// one more key must reset.
func TestStaticFullBucket(t *testing.T) {
	const entries = 21
	c := mustStatic(t, Config{Buckets: 32, EntriesPerBucket: entries})
	const bucket = 17
	key := func(i int) uint64 { return uint64(bucket)<<59 | uint64(i)*0x1_0000_0001 }
	seq := int64(0)
	for i := range entries {
		seq++
		if got := c.Certify(seq, []uint64{key(i)}); got != 0 {
			t.Fatalf("insert %d: last_committed %d", i, got)
		}
	}
	if n := c.count(bucket); n != entries {
		t.Fatalf("count = %d, want %d", n, entries)
	}
	for i := entries - 1; i >= 0; i-- {
		seq++
		if got, want := c.Certify(seq, []uint64{key(i)}), int64(i+1); got != want {
			t.Fatalf("key %d: last_committed %d, want %d", i, got, want)
		}
	}
	seq++
	if got := c.Certify(seq, []uint64{key(entries)}); got != seq-1 {
		t.Fatalf("overflowing insert: last_committed %d, want serial %d", got, seq-1)
	}
	if s := stats(c); s.ResetsBucketFull != 1 || c.count(bucket) != 0 {
		t.Fatalf("after overflow: %v, count %d", s, c.count(bucket))
	}
}

// stats publishes c's counters and returns them: tests read them from the
// owning goroutine right after certifying and want them exact.
func stats(c Certifier) Stats {
	c.(interface{ publish() }).publish()
	return c.Stats()
}
