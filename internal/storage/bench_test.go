package storage

// Benchmarks of the storage engine over sysbench-shaped data.
//
// Rows are encoded the way internal/storage/rowenc encodes a sysbench sbtest row
// (id INT, k INT, c CHAR(120), pad CHAR(60)): per column a type tag, ints
// as zig-zag varints, strings length-prefixed. With c of 119 characters and
// pad of 59 that is 190 bytes for ids below 2^20. Primary and secondary
// keys are 9 bytes (0x01 then 8 big-endian bytes, sign bit flipped), as
// rowenc's key encoding gives for a non-NULL INT.
//
//	go test -run '^$' -bench . -benchtime ... -cpu 1,2 ./internal/storage
//
// See docs/benchmarks/notes.md ("## storage") for recorded numbers.

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/txn"
)

const (
	sbRows    = 100_000
	sbTagI32  = 3  // rowenc's tagInt32
	sbTagStr  = 11 // rowenc's tagString
	sbCLen    = 119
	sbPadLen  = 59
	sbLoadTxn = 1000 // rows per loading transaction
)

// sbKey is the 9-byte memcomparable key of a non-NULL INT.
func sbKey(v int) []byte {
	b := make([]byte, 9)
	b[0] = 0x01
	binary.BigEndian.PutUint64(b[1:], uint64(int64(v))^(1<<63))
	return b
}

// sbFill holds random sysbench-style digit groups ("12345678901-...") that
// sbRow copies from, so generating a row costs little beside the engine.
var sbFill = func() []byte {
	rng := rand.New(rand.NewPCG(7, 7))
	b := make([]byte, 1<<16)
	for i := range b {
		if i%12 == 11 {
			b[i] = '-'
		} else {
			b[i] = byte('0' + rng.IntN(10))
		}
	}
	return b
}()

// sbRow encodes (id, k, c, pad) with c and pad taken from random offsets of
// sbFill, in one allocation of exactly the row's size (as sqlfront stores
// it).
func sbRow(rng *rand.Rand, id, k int) []byte {
	var tmp [2 * binary.MaxVarintLen64]byte
	n := binary.PutVarint(tmp[:], int64(id))
	m := binary.PutVarint(tmp[n:], int64(k))
	size := 1 + n + 1 + m + 2 + sbCLen + 2 + sbPadLen
	b := make([]byte, 0, size)
	b = append(b, sbTagI32)
	b = append(b, tmp[:n]...)
	b = append(b, sbTagI32)
	b = append(b, tmp[n:n+m]...)
	off := rng.IntN(len(sbFill) - sbCLen - sbPadLen)
	b = append(b, sbTagStr, sbCLen)
	b = append(b, sbFill[off:off+sbCLen]...)
	b = append(b, sbTagStr, sbPadLen)
	b = append(b, sbFill[off+sbCLen:off+sbCLen+sbPadLen]...)
	return b
}

var errSbRow = errors.New("bad sysbench row")

// sbDesc describes sbtest1 (id INT, k INT, c CHAR(120), pad CHAR(60)),
// with the k_1 index on k when withK.
func sbDesc(withK bool) *TableDesc {
	d := &TableDesc{
		Columns: []ColumnDesc{
			{Name: "id", Kind: KindInt, Type: "int"},
			{Name: "k", Kind: KindInt, Type: "int"},
			{Name: "c", Kind: KindText, Collation: sql.Collation_Default, Type: "char(120)"},
			{Name: "pad", Kind: KindText, Collation: sql.Collation_Default, Type: "char(60)"},
		},
		PrimaryKey: []KeyPart{{Column: 0}},
	}
	if withK {
		d.Indexes = []IndexDesc{{Name: "k_1", Parts: []KeyPart{{Column: 1}}}}
	}
	return d
}

// loadSysbench creates sbtest with rows ids 1..rows, k random in 1..rows,
// committed sbLoadTxn rows per transaction, then purges.
func loadSysbench(b testing.TB, e *Engine, rows int, withK bool) *Table {
	tb, err := e.NewTable("sbtest1", sbDesc(withK))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for lo := 1; lo <= rows; lo += sbLoadTxn {
		tx := e.Begin(txn.RepeatableRead)
		for id := lo; id < lo+sbLoadTxn && id <= rows; id++ {
			if err := tx.Insert(bg, tb, 0, sbKey(id), sbRow(rng, id, 1+rng.IntN(rows))); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	e.Purge()
	return tb
}

type heapStat struct{ inuse, alloc uint64 }

func readHeap() heapStat {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return heapStat{ms.HeapInuse, ms.HeapAlloc}
}

const mb = 1 << 20

// gcProbe measures GC CPU share and pauses over an interval.
type gcProbe struct {
	samples []metrics.Sample
	numGC   uint32
	pause   uint64
}

func startGCProbe() *gcProbe {
	p := &gcProbe{samples: []metrics.Sample{
		{Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/cpu/classes/total:cpu-seconds"},
	}}
	metrics.Read(p.samples)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	p.numGC, p.pause = ms.NumGC, ms.PauseTotalNs
	return p
}

// stop returns the GC share of CPU time, the number of GCs and the largest
// stop-the-world pause since start (from the last 256 pauses).
func (p *gcProbe) stop() (cpuShare float64, gcs uint32, maxPause time.Duration) {
	now := []metrics.Sample{{Name: p.samples[0].Name}, {Name: p.samples[1].Name}}
	metrics.Read(now)
	gc := now[0].Value.Float64() - p.samples[0].Value.Float64()
	all := now[1].Value.Float64() - p.samples[1].Value.Float64()
	if all > 0 {
		cpuShare = gc / all
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gcs = ms.NumGC - p.numGC
	for i := uint32(0); i < gcs && i < 256; i++ {
		d := time.Duration(ms.PauseNs[(ms.NumGC-i+255)%256])
		maxPause = max(maxPause, d)
	}
	return cpuShare, gcs, maxPause
}

// BenchmarkMemoryFlatUnderUpdates loads 100k sysbench rows, then runs b.N
// update transactions (random row, commit each; half change k, the indexed
// column, half change c, as oltp_update_index / oltp_update_non_index do).
// purge=on uses the engine's default purge interval; purge=off disables
// purge and is the baseline that shows what purge saves. Heap in use is
// measured after runtime.GC() before and after the updates.
func BenchmarkMemoryFlatUnderUpdates(b *testing.B) {
	for _, c := range []struct {
		name     string
		interval time.Duration
	}{{"purge=on", 0}, {"purge=off", -1}} {
		b.Run(c.name, func(b *testing.B) {
			e := New(Options{PurgeInterval: c.interval})
			defer e.Close()
			tb := loadSysbench(b, e, sbRows, true)
			before := readHeap()
			rng := rand.New(rand.NewPCG(3, 4))
			probe := startGCProbe()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id := 1 + rng.IntN(sbRows)
				tx := e.Begin(txn.RepeatableRead)
				old, ok, err := tx.Get(bg, tb, sbKey(id), txn.LockX)
				if err != nil || !ok {
					b.Fatalf("get %d: %v %v", id, ok, err)
				}
				k, _ := decodeSbK(old)
				if i%2 == 0 {
					k++
				}
				pk := sbKey(id)
				if err := tx.Update(bg, tb, 0, pk, pk, sbRow(rng, id, k)); err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			gcShare, gcs, maxPause := probe.stop()
			after := readHeap()
			b.ReportMetric(float64(before.inuse)/mb, "MB-before")
			b.ReportMetric(float64(after.inuse)/mb, "MB-after")
			b.ReportMetric(float64(after.inuse)/float64(before.inuse), "after/before")
			b.ReportMetric(float64(before.alloc)/mb, "live-MB-before")
			b.ReportMetric(float64(after.alloc)/mb, "live-MB-after")
			b.ReportMetric(float64(e.Stats().HistoryLength.Load()), "history")
			b.ReportMetric(100*gcShare, "gc-cpu-%")
			b.ReportMetric(float64(gcs), "GCs")
			b.ReportMetric(float64(maxPause.Microseconds()), "max-pause-µs")
			runtime.KeepAlive(tb)
		})
	}
}

func decodeSbK(row []byte) (int, error) {
	_, n := binary.Varint(row[1:])
	if n <= 0 {
		return 0, errSbRow
	}
	k, m := binary.Varint(row[2+n:])
	if m <= 0 {
		return 0, errSbRow
	}
	return int(k), nil
}

// BenchmarkBytesPerRow loads 100k sysbench rows into a fresh engine and
// reports the live heap they cost per row (after GC, purge done), beside
// the payload: the encoded row plus its primary key, and the secondary key
// when the k index exists.
func BenchmarkBytesPerRow(b *testing.B) {
	for _, withK := range []bool{false, true} {
		name := "pk-only"
		if withK {
			name = "pk+k-index"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				before := readHeap()
				e := New(Options{PurgeInterval: -1})
				tb := loadSysbench(b, e, sbRows, withK)
				after := readHeap()
				rowLen := 0
				tx := e.Begin(txn.RepeatableRead)
				must(b, tx.Scan(bg, tb, PrimaryIndex, Range{}, false, 0, func(pk, row []byte) (bool, error) {
					rowLen += len(row) + len(pk)
					return true, nil
				}))
				tx.Rollback()
				payload := float64(rowLen) / sbRows
				if withK {
					payload += 9
				}
				b.ReportMetric(float64(after.alloc-before.alloc)/sbRows, "heap-B/row")
				b.ReportMetric(float64(after.inuse-before.inuse)/sbRows, "inuse-B/row")
				b.ReportMetric(payload, "payload-B/row")
				runtime.KeepAlive(tb)
				e.Close()
			}
		})
	}
}

var (
	readFixtureOnce sync.Once
	readFixtureE    *Engine
	readFixtureT    *Table
)

// readFixture is a 100k-row sysbench table shared by the read benchmarks
// (default purge interval; it stays open for the process).
func readFixture(b *testing.B) (*Engine, *Table) {
	readFixtureOnce.Do(func() {
		readFixtureE = New(Options{})
		readFixtureT = loadSysbench(b, readFixtureE, sbRows, true)
	})
	return readFixtureE, readFixtureT
}

// BenchmarkPointGet: a primary key lookup of a random row. autocommit is
// sysbench's point select (begin, read with a fresh view, commit); in-trx
// reads with one RR view per goroutine.
func BenchmarkPointGet(b *testing.B) {
	e, tb := readFixture(b)
	b.Run("autocommit", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				tx := e.Begin(txn.RepeatableRead)
				if _, ok, err := tx.Get(bg, tb, sbKey(1+rand.IntN(sbRows)), 0); !ok || err != nil {
					b.Error("miss", err)
				}
				_ = tx.Commit()
			}
		})
	})
	b.Run("in-trx", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			tx := e.Begin(txn.RepeatableRead)
			defer tx.Rollback()
			for pb.Next() {
				if _, ok, err := tx.Get(bg, tb, sbKey(1+rand.IntN(sbRows)), 0); !ok || err != nil {
					b.Error("miss", err)
				}
			}
		})
	})
}

// BenchmarkPointGetLarge is BenchmarkPointGet/in-trx on a table larger
// than the caches with TPC-C order_line's key shape: 1.2 million rows keyed
// by four integers (warehouse, district, order, line; 36 bytes).
func BenchmarkPointGetLarge(b *testing.B) {
	const w, d, o, n = 4, 10, 3000, 10
	key := func(i int) []byte {
		k := make([]byte, 0, 36)
		for _, v := range []int{i / (d * o * n), i / (o * n) % d, i / n % o, i % n} {
			k = append(k, 0x01)
			k = binary.BigEndian.AppendUint64(k, uint64(int64(v))^(1<<63))
		}
		return k
	}
	largeFixtureOnce.Do(func() {
		largeFixtureE = New(Options{})
		tb, err := largeFixtureE.NewTable("order_line", sbDesc(false))
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for lo := 0; lo < w*d*o*n; lo += sbLoadTxn {
			tx := largeFixtureE.Begin(txn.RepeatableRead)
			for i := lo; i < lo+sbLoadTxn && i < w*d*o*n; i++ {
				if err := tx.Insert(bg, tb, 0, key(i), sbRow(rng, i, 1)); err != nil {
					b.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		largeFixtureE.Purge()
		largeFixtureT = tb
	})
	e, tb := largeFixtureE, largeFixtureT
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		tx := e.Begin(txn.RepeatableRead)
		defer tx.Rollback()
		for pb.Next() {
			if _, ok, err := tx.Get(bg, tb, key(rand.IntN(w*d*o*n)), 0); !ok || err != nil {
				b.Error("miss", err)
			}
		}
	})
}

var (
	largeFixtureOnce sync.Once
	largeFixtureE    *Engine
	largeFixtureT    *Table
)

// BenchmarkRangeScan100: 100 consecutive rows per operation in an
// autocommit read: by primary key (sysbench's simple range, id BETWEEN
// n AND n+99) and through the k index from a random k.
func BenchmarkRangeScan100(b *testing.B) {
	e, tb := readFixture(b)
	b.Run("pk", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				lo := 1 + rand.IntN(sbRows-100)
				tx := e.Begin(txn.RepeatableRead)
				n := 0
				c := tx.Cursor(bg, tb, PrimaryIndex, Range{Lo: sbKey(lo), Hi: sbKey(lo + 100)}, false, 0)
				for {
					_, _, ok, err := c.Next()
					if err != nil {
						b.Error(err)
					}
					if !ok {
						break
					}
					n++
				}
				_ = tx.Commit()
				if n != 100 {
					b.Errorf("%d rows", n)
				}
			}
		})
	})
	b.Run("k-index", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				lo := 1 + rand.IntN(sbRows/2)
				tx := e.Begin(txn.RepeatableRead)
				n := 0
				err := tx.Scan(bg, tb, 0, Range{Lo: sbKey(lo)}, false, 0, func(_, _ []byte) (bool, error) {
					n++
					return n < 100, nil
				})
				_ = tx.Commit()
				if err != nil || n != 100 {
					b.Errorf("%d rows, %v", n, err)
				}
			}
		})
	})
}

// TestSysbenchRowShape keeps the benchmark's row encoding honest: 190-byte
// rows, 9-byte keys, k and id extracted through the descriptor.
func TestSysbenchRowShape(t *testing.T) {
	tb, err := newTestEngine(t).NewTable("sbtest1", sbDesc(true))
	must(t, err)
	rng := rand.New(rand.NewPCG(1, 1))
	for _, id := range []int{1, 63, 64, 99_999, 100_000} {
		row := sbRow(rng, id, 100_000)
		if len(row) > 190 || (id >= 1<<13 && len(row) != 190) {
			t.Fatalf("id %d: row is %d bytes", id, len(row))
		}
		k, _, err := tb.secs[0].key(row)
		if err != nil || string(k) != string(sbKey(100_000)) {
			t.Fatalf("id %d: k key %x, %v", id, k, err)
		}
		if pk, err := tb.PrimaryKeyOf(row); err != nil || string(pk) != string(sbKey(id)) {
			t.Fatalf("id %d: primary key %x, %v", id, pk, err)
		}
		if got, _ := decodeSbK(row); got != 100_000 {
			t.Fatalf("decodeSbK = %d", got)
		}
	}
	if len(sbKey(1)) != 9 {
		t.Fatal("key length")
	}
}

// BenchmarkUpdateAfterLockingRead is the OLTP read-modify-write: a
// transaction reads 10 random rows FOR UPDATE, updates each, and commits
// (TPC-C's stock rows, sysbench's index updates after a locking read).
func BenchmarkUpdateAfterLockingRead(b *testing.B) {
	e, tb := readFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		tx := e.Begin(txn.RepeatableRead)
		for range 10 {
			k := sbKey(1 + rand.IntN(sbRows))
			row, ok, err := tx.Get(bg, tb, k, txn.LockX)
			if !ok || err != nil {
				b.Fatal("miss", err)
			}
			if err := tx.Update(bg, tb, 0, k, k, row); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}
