package certify

import (
	"math"
	"math/rand/v2"
	"testing"
)

// oracle remembers every key ever written, exactly, and the floor the
// certifier under test should be at. It predicts last_committed exactly:
//
//   - DDL, or a transaction whose certification reset the structure (seen as
//     SerialReset going up): seq-1, and the floor moves to seq;
//   - otherwise max(floor, latest earlier writer of any key); a HashMap that
//     cleared itself after this transaction (Resets going up without a serial
//     fallback) still answers that, then moves the floor to seq.
//
// "Never below the exact value" is checked separately and unconditionally:
// last_committed >= latest earlier writer of any key, and < seq.
type oracle struct {
	last  map[uint64]int64
	floor int64
}

func newOracle(base int64) *oracle {
	return &oracle{last: make(map[uint64]int64), floor: base}
}

// exact is the largest earlier sequence number that wrote any key of ws, or
// math.MinInt64 when there is none.
func (o *oracle) exact(ws []uint64) int64 {
	lc := int64(math.MinInt64)
	for _, k := range ws {
		if v, ok := o.last[k]; ok && v > lc {
			lc = v
		}
	}
	return lc
}

func (o *oracle) record(seq int64, ws []uint64) {
	for _, k := range ws {
		o.last[k] = seq
	}
}

// step certifies one transaction on c and checks it; it returns false after
// reporting a failure.
func (o *oracle) step(t testing.TB, c Certifier, seq int64, ws []uint64) bool {
	t.Helper()
	before := stats(c)
	got := c.Certify(seq, ws)
	after := stats(c)
	exact := o.exact(ws)
	ok := true
	if got >= seq {
		t.Errorf("seq %d: last_committed %d not below seq", seq, got)
		ok = false
	}
	if got < exact {
		t.Errorf("seq %d: last_committed %d misses a dependency on %d (writeset %x)", seq, got, exact, ws)
		ok = false
	}
	var want int64
	switch {
	case len(ws) == 0:
		want = seq - 1
		o.floor = seq
		if after.SerialDDL != before.SerialDDL+1 {
			t.Errorf("seq %d: DDL not counted: %v -> %v", seq, before, after)
			ok = false
		}
	case after.SerialReset > before.SerialReset:
		want = seq - 1
		o.floor = seq
		if after.Resets != before.Resets+1 {
			t.Errorf("seq %d: serial reset without a reset: %v -> %v", seq, before, after)
			ok = false
		}
	default:
		want = max(o.floor, exact)
		if after.Resets > before.Resets {
			o.floor = seq
		}
	}
	if got != want {
		t.Errorf("seq %d: last_committed %d, oracle %d (floor %d, exact %d)", seq, got, want, o.floor, exact)
		ok = false
	}
	if after.Certifications != before.Certifications+1 || after.DistanceSum != before.DistanceSum+seq-got {
		t.Errorf("seq %d: counters off: %v -> %v", seq, before, after)
		ok = false
	}
	o.record(seq, ws)
	return ok
}

// run certifies txns transactions from w, with sequence gaps drawn by gap
// (nil: always 1), and returns the final stats.
func runOracle(t testing.TB, c Certifier, base int64, w workload, txns int, gap func() int64) Stats {
	t.Helper()
	o := newOracle(base)
	seq := base
	var ws []uint64
	for i := 0; i < txns; i++ {
		if gap != nil {
			seq += gap()
		} else {
			seq++
		}
		ws = w.next(ws)
		if !o.step(t, c, seq, ws) {
			t.Fatalf("stopped after transaction %d; stats %v", i, stats(c))
		}
	}
	return stats(c)
}

type oracleCase struct {
	name string
	cfg  Config
	txns int
	work func(r *rand.Rand) workload
	gap  func(r *rand.Rand) func() int64
	// check inspects the final stats (nil: nothing more).
	check func(t *testing.T, s Stats)
}

// run drives c through the case's workload, drawn from r, under the oracle.
func (tc oracleCase) run(t testing.TB, c Certifier, r *rand.Rand) Stats {
	t.Helper()
	var gap func() int64
	if tc.gap != nil {
		gap = tc.gap(r)
	}
	return runOracle(t, c, tc.cfg.Base, tc.work(r), tc.txns, gap)
}

func oracleCases() []oracleCase {
	tiny := Config{Buckets: 16, EntriesPerBucket: 7}
	small := Config{Buckets: 256, EntriesPerBucket: 31}
	medium := Config{Buckets: 4096, EntriesPerBucket: 511}
	wantResets := func(t *testing.T, s Stats) {
		if s.Resets == 0 {
			t.Errorf("no reset happened; the case does not exercise resets: %v", s)
		}
	}
	wantNoResets := func(t *testing.T, s Stats) {
		if s.Resets != 0 {
			t.Errorf("unexpected resets: %v", s)
		}
	}
	return []oracleCase{
		{name: "uniform/tiny", cfg: tiny, txns: 20000, check: wantResets,
			work: func(r *rand.Rand) workload { return &uniform{r: r, space: 500, lo: 1, hi: 6} }},
		{name: "uniform/small", cfg: small, txns: 30000, check: wantResets,
			work: func(r *rand.Rand) workload { return &uniform{r: r, space: 20000, lo: 4, hi: 10} }},
		{name: "uniform/medium-no-reset", cfg: medium, txns: 30000, check: wantNoResets,
			work: func(r *rand.Rand) workload { return &uniform{r: r, space: 1 << 20, lo: 4, hi: 10} }},
		{name: "zipf/tiny", cfg: tiny, txns: 20000, check: wantResets,
			work: func(r *rand.Rand) workload { return newZipfian(r, 1<<16, 1, 8) }},
		{name: "zipf/small", cfg: small, txns: 30000, check: wantResets,
			work: func(r *rand.Rand) workload { return newZipfian(r, 1<<20, 2, 12) }},
		{name: "hot/tiny", cfg: tiny, txns: 20000, check: wantResets,
			work: func(r *rand.Rand) workload {
				return &hotKeys{r: r, hot: 4, hotPct: 50, space: 1 << 30, lo: 1, hi: 5}
			}},
		{name: "hot/single-bucket", cfg: Config{Buckets: 1, EntriesPerBucket: 64}, txns: 20000, check: wantResets,
			work: func(r *rand.Rand) workload {
				return &hotKeys{r: r, hot: 8, hotPct: 90, space: 1 << 30, lo: 1, hi: 3}
			}},
		{name: "hot/medium-rel-overflow", cfg: medium, txns: 140000,
			work: func(r *rand.Rand) workload { return &hotKeys{r: r, hot: 16, hotPct: 100, lo: 1, hi: 3} },
			check: func(t *testing.T, s Stats) {
				// 16 hot keys never fill a bucket: only the relative number
				// runs out, at 65,536 and 131,072.
				if s.ResetsRelOverflow != 2 || s.ResetsBucketFull != 0 {
					t.Errorf("want exactly 2 rel-overflow resets: %v", s)
				}
			}},
		{name: "large/tiny", cfg: tiny, txns: 30, check: wantResets,
			work: func(r *rand.Rand) workload { return &uniform{r: r, space: 1 << 40, lo: 10000, hi: 12000} }},
		{name: "large/medium", cfg: Config{Buckets: 1024, EntriesPerBucket: 511}, txns: 120,
			work: func(r *rand.Rand) workload { return &uniform{r: r, space: 1 << 22, lo: 10000, hi: 12000} },
			check: func(t *testing.T, s Stats) {
				if s.ResetsBucketFull == 0 {
					t.Errorf("want bucket-full resets: %v", s)
				}
			}},
		{name: "ddl/tiny", cfg: tiny, txns: 20000, check: wantResets,
			work: func(r *rand.Rand) workload {
				return &withDDL{r: r, pct: 5, w: &uniform{r: r, space: 300, lo: 1, hi: 6}}
			}},
		{name: "ddl/medium", cfg: medium, txns: 20000,
			work: func(r *rand.Rand) workload {
				return &withDDL{r: r, pct: 2, w: newZipfian(r, 1<<20, 1, 10)}
			},
			check: func(t *testing.T, s Stats) {
				if s.SerialDDL == 0 {
					t.Errorf("no DDL: %v", s)
				}
			}},
		{name: "duplicates/small", cfg: small, txns: 20000,
			work: func(r *rand.Rand) workload {
				return &withDuplicates{r: r, w: &uniform{r: r, space: 5000, lo: 1, hi: 8}}
			}},
		{name: "edge-keys/full-width", cfg: Config{Buckets: 1 << 16, EntriesPerBucket: 3}, txns: 20000,
			work: func(r *rand.Rand) workload { return newEdgeKeys(r) }},
		{name: "tpcc/small", cfg: small, txns: 20000, check: wantResets,
			work: func(r *rand.Rand) workload { return newTPCC(r, 2) }},
		{name: "tpcc/medium", cfg: medium, txns: 20000,
			work: func(r *rand.Rand) workload { return newTPCC(r, 4) }},
		{name: "gaps/small", cfg: small, txns: 20000, check: wantResets,
			work: func(r *rand.Rand) workload { return &uniform{r: r, space: 2000, lo: 1, hi: 5} },
			gap: func(r *rand.Rand) func() int64 {
				return func() int64 {
					if r.IntN(1000) == 0 {
						return 70000 // past the 16-bit window in one step
					}
					return 1 + r.Int64N(20)
				}
			}},
		{name: "base/nonzero", cfg: Config{Buckets: 64, EntriesPerBucket: 15, Base: 1 << 40}, txns: 10000,
			work: func(r *rand.Rand) workload { return &uniform{r: r, space: 3000, lo: 1, hi: 6} }},
	}
}

// TestStaticMatchesOracle is the property test: for every workload and
// geometry, Static never misses a dependency and returns exactly the
// oracle's value unless a reset made the transaction serial.
func TestStaticMatchesOracle(t *testing.T) {
	for i, tc := range oracleCases() {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 0x5eed))
			c, err := NewStatic(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := tc.run(t, c, r)
			if s.Certifications != int64(tc.txns) || s.Rejected != 0 {
				t.Errorf("stats %v after %d transactions", s, tc.txns)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
			t.Logf("%v", s)
		})
	}
}

// TestHashMapMatchesOracle holds the baseline to the same oracle, with a
// history small enough to be cleared often and with no limit.
func TestHashMapMatchesOracle(t *testing.T) {
	for _, history := range []int{100, -1} {
		for i, tc := range oracleCases() {
			t.Run(tc.name+"/history="+itoa(history), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(i), 0x5eed))
				c := NewHashMap(HashMapConfig{HistorySize: history, Base: tc.cfg.Base})
				s := tc.run(t, c, r)
				if s.SerialReset != 0 {
					t.Errorf("baseline made a transaction serial on clear: %v", s)
				}
				if history < 0 && s.Resets != 0 {
					t.Errorf("unlimited history was cleared: %v", s)
				}
			})
		}
	}
}

// TestCertDBMatchesOracle holds the certification-database baseline to the
// oracle, with frequent garbage collection and with none.
func TestCertDBMatchesOracle(t *testing.T) {
	for _, every := range []int64{50, 0} {
		for i, tc := range oracleCases() {
			t.Run(tc.name+"/gc-every="+itoa(int(every)), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(i), 0xdb))
				c := NewCertDB(CertDBConfig{GCEvery: every, GCKeep: 20, Base: tc.cfg.Base})
				s := tc.run(t, c, r)
				if s.SerialReset != 0 {
					t.Errorf("baseline made a transaction serial on collection: %v", s)
				}
				if want := every > 0 && int64(tc.txns) >= every; want != (s.Resets > 0) {
					t.Errorf("collections %d with GCEvery %d", s.Resets, every)
				}
			})
		}
	}
}

func itoa(v int) string {
	if v < 0 {
		return "unlimited"
	}
	const digits = "0123456789"
	if v < 10 {
		return digits[v : v+1]
	}
	return itoa(v/10) + digits[v%10:v%10+1]
}
