package ptree_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/tidwall/btree"

	"lockstep/internal/storage/ptree"
	"lockstep/internal/storage/slab"
)

// BenchmarkTableMemory compares two layouts of the same sysbench-like
// table data (issue 35 item 3; docs/storage.md, "Memory per row"): rows
// ids 1..rows inserted in id order, a 9-byte memcomparable primary key, a
// 190-byte row, one secondary index k (random in 1..rows) whose entry key
// is the 5-byte index key followed by the primary key.
//
//   - layout=heap reproduces internal/storage today: per row an 80-byte
//     record with 4 pointer words (key slice, head, and the embedded first
//     version's row slice and prev link), one byte slice holding the
//     primary key and the k entry key, the row bytes in an allocation of
//     their own, and tidwall/btree BTreeG trees (Degree 64, no locks) of
//     {key string, *record} entries for the primary key and for k;
//   - layout=slab: per row one slab item holding the primary key, the k
//     entry key and the row, and two ptree trees of {prefix, slab.Loc}
//     entries.
//
// Metrics, after the build, from the same process: heap-B/row (HeapAlloc
// after runtime.GC, added by the build), objs/row (HeapObjects added),
// scan-B/row (/gc/scan/heap:bytes added: bytes of objects up to their last
// pointer, what a mark must read), gc-cpu-ms (/cpu/classes/gc/total delta
// around one forced runtime.GC, median of 5) and base-gc-cpu-ms (the same
// before the build), k-get-ns (the first k entry at a random index key
// and its row: mean of 1M), k-keyOf/get and pk-keyOf/op (the trees'
// keyOf calls per k lookup and per pk lookup; 0 for the heap layout),
// pk-keyOf/set and k-keyOf/set (the same per insert, during the build);
// ns/op is a point lookup of a random primary key that reads its row.
//
//	go test -run '^$' -bench TableMemory -benchtime 2000000x ./internal/storage/ptree
func BenchmarkTableMemory(b *testing.B) {
	for _, rows := range []int{100_000, 1_000_000} {
		for _, layout := range []string{"heap", "slab"} {
			b.Run(fmt.Sprintf("rows=%d/layout=%s", rows, layout), func(b *testing.B) {
				benchLayout(b, rows, layout)
			})
		}
	}
}

// table is what the benchmark asks of a layout.
type table interface {
	get(pk []byte) []byte  // the row of pk
	getK(ik []byte) []byte // the row of the first k entry at or after index key ik
	stats() map[string]float64
	resolved() (pk, k int) // keys resolved by the trees so far (slab), 0 (heap)
}

func benchLayout(b *testing.B, rows int, layout string) {
	baseGC := gcCPU()
	before := heapNow()
	var tb table
	if layout == "heap" {
		tb = buildHeap(rows)
	} else {
		tb = buildSlab(rows)
	}
	after := heapNow()
	gc := gcCPU()
	n := float64(rows)
	// Reported after the loop: b.Loop's first call resets the timer, which
	// deletes metrics reported before it.
	ms := map[string]float64{
		"heap-B/row":     float64(after.alloc-before.alloc) / n,
		"objs/row":       float64(after.objects-before.objects) / n,
		"scan-B/row":     float64(after.scan-before.scan) / n,
		"gc-cpu-ms":      gc.Seconds() * 1000,
		"base-gc-cpu-ms": baseGC.Seconds() * 1000,
	}
	for k, v := range tb.stats() {
		ms[k] = v
	}

	rng := rand.New(rand.NewPCG(11, 12))
	const probes = 1 << 16
	pks := make([]byte, 9*probes)
	iks := make([]byte, 5*probes)
	for i := range probes {
		putPK(pks[9*i:], 1+rng.IntN(rows))
		putIK(iks[5*i:], 1+rng.IntN(rows))
	}
	sink := 0
	const kGets = 1_000_000
	_, k0 := tb.resolved()
	t0 := time.Now()
	for i := range kGets {
		j := i & (probes - 1)
		if r := tb.getK(iks[5*j : 5*j+5]); r != nil {
			sink += int(r[0])
		}
	}
	ms["k-get-ns"] = float64(time.Since(t0).Nanoseconds()) / kGets
	_, k1 := tb.resolved()
	ms["k-keyOf/get"] = float64(k1-k0) / kGets
	p0, _ := tb.resolved()
	gets := 0
	for i := 0; b.Loop(); i++ {
		j := i & (probes - 1)
		r := tb.get(pks[9*j : 9*j+9])
		sink += int(r[0]) + int(r[len(r)-1])
		gets++
	}
	b.StopTimer()
	p1, _ := tb.resolved()
	ms["pk-keyOf/op"] = float64(p1-p0) / float64(gets)
	for k, v := range ms {
		b.ReportMetric(v, k)
	}
	if sink == 0 {
		b.Log("all rows start with 0")
	}
	runtime.KeepAlive(tb)
}

// putPK encodes id as a 9-byte memcomparable key (storage's integer key:
// a tag byte, then the sign-flipped value big-endian).
func putPK(b []byte, id int) {
	b[0] = 0x01
	binary.BigEndian.PutUint64(b[1:9], uint64(int64(id))^(1<<63))
}

// putIK encodes k as the 5-byte index key (tag byte, sign-flipped int32).
func putIK(b []byte, k int) {
	b[0] = 0x01
	binary.BigEndian.PutUint32(b[1:5], uint32(int32(k))^(1<<31))
}

const (
	pkLen  = 9
	ekLen  = 5 + pkLen
	rowLen = 190
)

// loadRows calls add for rows ids in order with the row's k and a fill
// for its bytes: the same data for both layouts.
func loadRows(rows int, add func(id, k int, fill func(row []byte))) {
	rng := rand.New(rand.NewPCG(1, 2))
	pattern := make([]byte, 1<<16)
	for i := range pattern {
		pattern[i] = byte('0' + rng.IntN(10))
	}
	for id := 1; id <= rows; id++ {
		k := 1 + rng.IntN(rows)
		off := rng.IntN(len(pattern) - rowLen)
		add(id, k, func(row []byte) { copy(row, pattern[off:off+rowLen]) })
	}
}

// The heap layout: internal/storage's record and version (table.go).
type hVersion struct {
	trx  uint64
	row  []byte
	prev *hVersion
	stmt uint32
	del  bool
}

type hRecord struct {
	key   []byte
	head  *hVersion
	first hVersion
}

type hEntry struct {
	key string
	rec *hRecord
}

func hLess(a, b hEntry) bool { return a.key < b.key }

func keyStr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

type heapTable struct {
	pk, k *btree.BTreeG[hEntry]
}

func buildHeap(rows int) *heapTable {
	if s := unsafe.Sizeof(hRecord{}); s != 80 {
		panic(fmt.Sprintf("record is %d bytes, not 80", s))
	}
	opts := btree.Options{NoLocks: true, Degree: 64}
	t := &heapTable{pk: btree.NewBTreeGOptions(hLess, opts), k: btree.NewBTreeGOptions(hLess, opts)}
	loadRows(rows, func(id, k int, fill func([]byte)) {
		row := make([]byte, rowLen)
		fill(row)
		b := make([]byte, pkLen+ekLen)
		putPK(b, id)
		putIK(b[pkLen:], k)
		copy(b[pkLen+5:], b[:pkLen])
		r := &hRecord{key: b[:pkLen:pkLen], first: hVersion{trx: uint64(id), row: row}}
		r.head = &r.first
		t.pk.Set(hEntry{key: keyStr(r.key), rec: r})
		t.k.Set(hEntry{key: keyStr(b[pkLen:]), rec: r})
	})
	return t
}

func (t *heapTable) get(pk []byte) []byte {
	e, ok := t.pk.Get(hEntry{key: keyStr(pk)})
	if !ok {
		panic("missing key")
	}
	return e.rec.head.row
}

func (t *heapTable) getK(ik []byte) []byte {
	var row []byte
	t.k.Ascend(hEntry{key: keyStr(ik)}, func(e hEntry) bool {
		row = e.rec.head.row
		return false
	})
	return row
}

func (t *heapTable) stats() map[string]float64 { return nil }

func (t *heapTable) resolved() (int, int) { return 0, 0 }

// The slab layout: one item per row, [pk][entry key][row] (fixed lengths
// here; a table would put lengths in the item), two trees of slab.Locs.
type slabTable struct {
	a     *slab.Arena
	pk, k *ptree.Tree
	rows  int
	// pkKeys and kKeys count the trees' keyOf calls.
	pkKeys, kKeys int
}

func buildSlab(rows int) *slabTable {
	t := &slabTable{a: slab.New(0), rows: rows}
	t.pk = ptree.New(func(ref uint64) []byte {
		t.pkKeys++
		return t.a.Bytes(slab.Loc(ref))[:pkLen]
	})
	t.k = ptree.New(func(ref uint64) []byte {
		t.kKeys++
		return t.a.Bytes(slab.Loc(ref))[pkLen : pkLen+ekLen]
	})
	loadRows(rows, func(id, k int, fill func([]byte)) {
		loc, b := t.a.Alloc(pkLen + ekLen + rowLen)
		putPK(b, id)
		putIK(b[pkLen:], k)
		copy(b[pkLen+5:], b[:pkLen])
		fill(b[pkLen+ekLen:])
		t.pk.Set(b[:pkLen], uint64(loc))
		t.k.Set(b[pkLen:pkLen+ekLen], uint64(loc))
	})
	return t
}

func (t *slabTable) get(pk []byte) []byte {
	ref, ok := t.pk.Get(pk)
	if !ok {
		panic("missing key")
	}
	return t.a.Bytes(slab.Loc(ref))[pkLen+ekLen:]
}

func (t *slabTable) getK(ik []byte) []byte {
	var row []byte
	t.k.Ascend(ik, func(ref uint64) bool {
		row = t.a.Bytes(slab.Loc(ref))[pkLen+ekLen:]
		return false
	})
	return row
}

func (t *slabTable) resolved() (int, int) { return t.pkKeys, t.kKeys }

func (t *slabTable) stats() map[string]float64 {
	ps, ks, as := t.pk.Stats(), t.k.Stats(), t.a.Stats()
	n := float64(t.rows)
	return map[string]float64{
		"pk-fill":     ps.LeafFill,
		"k-fill":      ks.LeafFill,
		"pk-B/row":    float64(ps.Bytes) / n,
		"k-B/row":     float64(ks.Bytes) / n,
		"slab-B/row":  float64(as.Bytes) / n,
		"slab-chunks": float64(as.Chunks),
		// stats runs right after the build: keys resolved by inserts
		"pk-keyOf/set": float64(t.pkKeys) / n,
		"k-keyOf/set":  float64(t.kKeys) / n,
	}
}

type heapFig struct{ alloc, objects, scan uint64 }

func heapNow() heapFig {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}}
	metrics.Read(s)
	return heapFig{ms.HeapAlloc, ms.HeapObjects, s[0].Value.Uint64()}
}

// gcCPU is the median GC CPU time of 5 forced full collections.
func gcCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	var ds []float64
	for range 5 {
		metrics.Read(s)
		t0 := s[0].Value.Float64()
		runtime.GC()
		metrics.Read(s)
		ds = append(ds, s[0].Value.Float64()-t0)
	}
	slices.Sort(ds)
	return time.Duration(ds[2] * float64(time.Second))
}
