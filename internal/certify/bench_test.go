package certify

import (
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Benchmarks: the static array against the hash-map baseline, in one run.
// The exact command and the results are in docs/benchmarks/notes.md ("## certify").
//
// Each sub-benchmark first prefills its certifier with the pre-existing keys
// of the workload (N distinct keys, certified 8 per transaction), so the
// unlimited hash map really holds N keys (structures that forget are warmed
// with at most warmKeys keys, which leaves them in an equivalent state), then
// times one transaction per b.Loop iteration. Writesets come from a
// pregenerated pool that is regenerated with the timer stopped, so key
// generation is not timed.
//
// Metrics: ns/key (wall time per writeset key); cpu-ns/key (CPU time of the
// benchmark thread per key, steadier on a shared machine, but blind to work
// on other threads such as background GC); proc-cpu-ns/key (CPU time of the
// whole process per key, GC workers included, at 10 ms granularity);
// keys/txn; heap-MiB (Go HeapInuse
// after the run and a GC; the static array lives outside the Go heap);
// struct-MiB (size of the static array); rss-MiB (process resident set);
// entries (keys held by a hash map); dist (mean seq - last_committed over the
// timed transactions: larger means more replay parallelism); resets/Mtxn;
// gc/Mtxn (GC cycles during the timed part).

var benchKeyCounts = []struct {
	name string
	n    uint64
}{
	{"1M", 1_000_000},
	{"10M", 10_000_000},
	{"100M", 100_000_000},
}

type benchImpl struct {
	name string
	// make builds the certifier; n is the number of keys it will be
	// prefilled with.
	make func(tb testing.TB, n uint64) Certifier
	// forgets: the structure keeps only recent history, so prefilling more
	// than warmKeys keys would only repeat resets; it is warmed with at most
	// warmKeys keys.
	forgets bool
	// only, if set, restricts the implementation to these key counts.
	only []string
	// batch, if set, certifies that many transactions per call through
	// CertifyBatch (the commit pipeline's and the applier's way).
	batch int
}

// warmKeys bounds the prefill of structures that forget: the static array
// resets at least every 65,535 transactions (at most a few hundred thousand
// keys), the 25,000-key history far sooner.
const warmKeys = 4_000_000

var benchImpls = []benchImpl{
	{name: "static", forgets: true, make: func(tb testing.TB, _ uint64) Certifier {
		return mustStatic(tb, DefaultConfig())
	}},
	// The same, certifying 16 transactions per CertifyBatch call, which
	// prefetches the buckets of the next transactions.
	{name: "static-batch", forgets: true, batch: 16, make: func(tb testing.TB, _ uint64) Certifier {
		return mustStatic(tb, DefaultConfig())
	}},
	// The same array on the Go heap with 4 KiB pages (no huge-page advice),
	// at one key count: what the huge pages are worth.
	{name: "static-4k", forgets: true, only: []string{"10M"}, make: func(tb testing.TB, _ uint64) Certifier {
		c, err := newStatic(DefaultConfig(), false)
		if err != nil {
			tb.Fatal(err)
		}
		return c
	}},
	// The certification database of group replication: no history limit.
	// Preallocated for the prefill, which only makes the prefill faster.
	{name: "hashmap", make: func(_ testing.TB, n uint64) Certifier {
		return NewHashMap(HashMapConfig{HistorySize: -1, SizeHint: int(n)})
	}},
	// Group replication's certification database as it is built: string
	// keys, a pointer to a per-transaction snapshot object as the value.
	// Garbage collection (once a minute in group replication) does not run
	// during the timed part. Not run at 100M keys: it would need 6 GiB or
	// more.
	{name: "certdb", only: []string{"1M", "10M"}, make: func(_ testing.TB, n uint64) Certifier {
		return NewCertDB(CertDBConfig{SizeHint: int(n)})
	}},
	// The harness alone: answers floor for everything without looking at
	// the keys, to show how much of each figure is the benchmark loop
	// (reading the pregenerated writesets, the call, the counters).
	{name: "null", forgets: true, only: []string{"10M"}, make: func(testing.TB, uint64) Certifier {
		return &nullCertifier{}
	}},
	// MySQL's default writeset history (25,000 keys): small and cache
	// resident, but cleared every few thousand transactions.
	{name: "hashmap-h25k", forgets: true, make: func(testing.TB, uint64) Certifier {
		return NewHashMap(HashMapConfig{HistorySize: DefaultHistorySize})
	}},
}

type benchWorkload struct {
	name string
	// make returns the writeset generator and the pre-existing key count
	// and enumerator for a key space of about n keys.
	make func(r *rand.Rand, n uint64) (w workload, prefill uint64, key func(uint64) uint64)
}

var benchWorkloads = []benchWorkload{
	{"sysbench", func(r *rand.Rand, n uint64) (workload, uint64, func(uint64) uint64) {
		return newSysbench(r, n), n, func(i uint64) uint64 { return rowKey(0, i) }
	}},
	{"tpcc", func(r *rand.Rand, n uint64) (workload, uint64, func(uint64) uint64) {
		wh := tpccWarehousesFor(n)
		return newTPCC(r, wh), wh * tpccRowsPerWarehouse, tpccPrefillKey
	}},
}

// pool holds pregenerated writesets in one flat slice.
type pool struct {
	w    workload
	keys []uint64
	sets [][]uint64 // poolTxns writesets, slices of keys
	next int
	tmp  []uint64
	offs []int
}

const poolTxns = 1 << 16

func newPool(w workload) *pool {
	p := &pool{w: w, keys: make([]uint64, 0, poolTxns*32), sets: make([][]uint64, poolTxns),
		offs: make([]int, poolTxns+1)}
	p.fill()
	return p
}

func (p *pool) fill() {
	p.keys, p.next = p.keys[:0], 0
	for i := range poolTxns {
		p.offs[i] = len(p.keys)
		p.tmp = p.w.next(p.tmp)
		p.keys = append(p.keys, p.tmp...)
	}
	p.offs[poolTxns] = len(p.keys)
	for i := range p.sets {
		p.sets[i] = p.keys[p.offs[i]:p.offs[i+1]:p.offs[i+1]]
	}
}

// prefill certifies keys [0, n) eight per transaction and returns the last
// sequence number used.
func prefill(c Certifier, n uint64, key func(uint64) uint64) int64 {
	var ws [8]uint64
	seq := int64(0)
	for i := uint64(0); i < n; {
		k := 0
		for ; k < len(ws) && i < n; k++ {
			ws[k] = key(i)
			i++
		}
		seq++
		c.Certify(seq, ws[:k])
	}
	return seq
}

func BenchmarkCertify(b *testing.B) {
	for _, wl := range benchWorkloads {
		for _, kc := range benchKeyCounts {
			for _, impl := range benchImpls {
				if impl.only != nil && !slices.Contains(impl.only, kc.name) {
					continue
				}
				b.Run(impl.name+"/"+wl.name+"/keys="+kc.name, func(b *testing.B) {
					benchCertify(b, impl, wl, kc.n)
				})
			}
		}
	}
}

func benchCertify(b *testing.B, impl benchImpl, wl benchWorkload, n uint64) {
	defer freeMemory()
	r := rand.New(rand.NewPCG(n, 42))
	w, pre, key := wl.make(r, n)
	if impl.forgets {
		pre = min(pre, warmKeys)
	}
	c := impl.make(b, pre)
	seq := prefill(c, pre, key)
	p := newPool(w)
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	s0 := stats(c)
	keys := 0
	// CPU time of this thread, less the untimed pool refills: on a shared,
	// noisy machine it is steadier than wall time.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	out := make([]int64, max(impl.batch, 1))
	cpu0, proc0 := threadCPU(), processCPU()
	for b.Loop() {
		if p.next == poolTxns {
			b.StopTimer()
			f0, g0 := threadCPU(), processCPU()
			p.fill()
			cpu0 += threadCPU() - f0
			proc0 += processCPU() - g0
			b.StartTimer()
		}
		if impl.batch > 0 {
			sets := p.sets[p.next : p.next+impl.batch]
			p.next += impl.batch
			c.CertifyBatch(seq+1, sets, out)
			seq += int64(impl.batch)
			for _, ws := range sets {
				keys += len(ws)
			}
			continue
		}
		ws := p.sets[p.next]
		p.next++
		seq++
		c.Certify(seq, ws)
		keys += len(ws)
	}
	cpu, proc := threadCPU()-cpu0, processCPU()-proc0
	s1 := stats(c)
	runtime.ReadMemStats(&ms1)
	gcs := ms1.NumGC - ms0.NumGC
	runtime.GC()
	runtime.ReadMemStats(&ms1)
	txns := float64(s1.Certifications - s0.Certifications)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(keys), "ns/key")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(keys), "cpu-ns/key")
	}
	if proc > 0 {
		b.ReportMetric(float64(proc.Nanoseconds())/float64(keys), "proc-cpu-ns/key")
	}
	b.ReportMetric(float64(keys)/txns, "keys/txn")
	b.ReportMetric(float64(ms1.HeapInuse)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(s1.DistanceSum-s0.DistanceSum)/txns, "dist")
	b.ReportMetric(float64(s1.Resets-s0.Resets)/txns*1e6, "resets/Mtxn")
	b.ReportMetric(float64(gcs)/txns*1e6, "gc/Mtxn")
	if h, ok := c.(interface{ Len() int }); ok {
		b.ReportMetric(float64(h.Len()), "entries")
	}
	if st, ok := c.(*Static); ok {
		b.ReportMetric(float64(st.SizeBytes())/(1<<20), "struct-MiB")
	}
	if rss := residentBytes(); rss > 0 {
		b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
	}
	runtime.KeepAlive(c)
}

// freeMemory returns the previous sub-benchmark's memory, including the
// off-heap arrays of unreachable Static certifiers (released by a cleanup
// after a GC), so that rss-MiB describes the current one.
func freeMemory() {
	runtime.GC()
	time.Sleep(20 * time.Millisecond) // let cleanups run
	runtime.GC()
	debug.FreeOSMemory()
}

// threadCPU is the CPU time consumed by the calling OS thread (from
// /proc/thread-self/schedstat), or 0 when unknown.
func threadCPU() time.Duration {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0
	}
	return time.Duration(ns)
}

// residentBytes is the process's resident set size, or 0 when unknown.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// BenchmarkReset times one reset of the default structure: zeroing the
// 65,536 bucket counts (128 KiB); the 255.5 MiB of entries are not touched.
//
// hot: the same structure again and again, its counts cached.
// cold: rotating over 64 structures, so the 64 x 128 KiB of counts (8 MiB)
// do not stay in the cache share this machine gives us, as after a burst of
// certification traffic. Only the counts are made resident.
func BenchmarkReset(b *testing.B) {
	for _, v := range []struct {
		name string
		n    int
	}{{"hot", 1}, {"cold", 64}} {
		b.Run("static/"+v.name, func(b *testing.B) {
			defer freeMemory()
			cs := make([]*Static, v.n)
			for i := range cs {
				cs[i] = mustStatic(b, DefaultConfig())
				for bk := range cs[i].counts {
					cs[i].counts[bk] = 1
				}
			}
			b.ReportAllocs()
			i := 0
			seq := int64(1 << 20)
			for b.Loop() {
				seq++
				cs[i].reset(seq)
				i++
				if i == len(cs) {
					i = 0
				}
			}
			b.ReportMetric(float64(cs[0].SizeBytes())/(1<<20), "struct-MiB")
			for _, c := range cs {
				for bk := range uint64(c.cfg.Buckets) {
					if c.count(bk) != 0 {
						b.Fatal("reset left a count")
					}
				}
			}
		})
	}
}

// nullCertifier answers 0 (the base) without reading the keys: not a
// certifier, only the cost of the benchmark loop around one.
type nullCertifier struct {
	prev int64
	counters
}

func (c *nullCertifier) Certify(seq int64, _ []uint64) int64 {
	c.prev = seq
	c.done(seq, 0)
	return 0
}

func (c *nullCertifier) CertifyChecked(seq int64, ws []uint64) (int64, error) {
	return c.Certify(seq, ws), nil
}

func (c *nullCertifier) CertifyBatch(first int64, writesets [][]uint64, out []int64) {
	for i, ws := range writesets {
		out[i] = c.Certify(first+int64(i), ws)
	}
	c.publish()
}

func (c *nullCertifier) Stats() Stats { return c.snapshot() }
