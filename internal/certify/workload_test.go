package certify

import (
	"math/rand/v2"
)

// Workload generators shared by the property tests and the benchmarks. Keys
// are (table, id) pairs turned into 64-bit hashes by mix, a bijection, so
// distinct rows always have distinct hashes and the oracle is exact.

// mix is the splitmix64 finalizer: a bijective 64-bit mixer.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// rowKey hashes a row identity; table uses the top 8 bits of the id space.
func rowKey(table, id uint64) uint64 { return mix(table<<56 | id&(1<<56-1)) }

// workload produces writesets; next reuses dst's storage.
type workload interface {
	next(dst []uint64) []uint64
}

// uniform: n keys per transaction, n in [lo, hi], drawn uniformly from space.
type uniform struct {
	r      *rand.Rand
	space  uint64
	lo, hi int
}

func (w *uniform) next(dst []uint64) []uint64 {
	dst = dst[:0]
	n := w.lo + w.r.IntN(w.hi-w.lo+1)
	for range n {
		dst = append(dst, rowKey(0, w.r.Uint64N(w.space)))
	}
	return dst
}

// zipfian: like uniform but ids follow a Zipf distribution (s = 1.1).
type zipfian struct {
	z      *rand.Zipf
	r      *rand.Rand
	lo, hi int
}

func newZipfian(r *rand.Rand, space uint64, lo, hi int) *zipfian {
	return &zipfian{z: rand.NewZipf(r, 1.1, 1, space-1), r: r, lo: lo, hi: hi}
}

func (w *zipfian) next(dst []uint64) []uint64 {
	dst = dst[:0]
	n := w.lo + w.r.IntN(w.hi-w.lo+1)
	for range n {
		dst = append(dst, rowKey(0, w.z.Uint64()))
	}
	return dst
}

// hotKeys: each key is one of a few hot rows with probability hotPct/100,
// otherwise uniform over space.
type hotKeys struct {
	r      *rand.Rand
	hot    uint64
	hotPct int
	space  uint64
	lo, hi int
}

func (w *hotKeys) next(dst []uint64) []uint64 {
	dst = dst[:0]
	n := w.lo + w.r.IntN(w.hi-w.lo+1)
	for range n {
		if w.r.IntN(100) < w.hotPct {
			dst = append(dst, rowKey(1, w.r.Uint64N(w.hot)))
		} else {
			dst = append(dst, rowKey(0, w.r.Uint64N(w.space)))
		}
	}
	return dst
}

// withDDL turns a transaction into DDL (empty writeset) with probability
// pct/100.
type withDDL struct {
	r   *rand.Rand
	pct int
	w   workload
}

func (w *withDDL) next(dst []uint64) []uint64 {
	if w.r.IntN(100) < w.pct {
		return dst[:0]
	}
	return w.w.next(dst)
}

// withDuplicates repeats keys inside a writeset (an update lists its row
// twice) and shuffles.
type withDuplicates struct {
	r *rand.Rand
	w workload
}

func (w *withDuplicates) next(dst []uint64) []uint64 {
	dst = w.w.next(dst)
	n := len(dst)
	for i := range n {
		if w.r.IntN(2) == 0 {
			dst = append(dst, dst[i])
		}
	}
	w.r.Shuffle(len(dst), func(i, j int) { dst[i], dst[j] = dst[j], dst[i] })
	return dst
}

// edgeKeys draws from hashes chosen to break careless encodings: low 48
// bits all zero or all one, 0 and MaxUint64, keys that differ only in their
// top 16 bits, only in bit 47, and so on.
type edgeKeys struct {
	r    *rand.Rand
	keys []uint64
}

func newEdgeKeys(r *rand.Rand) *edgeKeys {
	var ks []uint64
	for _, top := range []uint64{0, 1, 2, 0x7fff, 0x8000, 0xfffe, 0xffff} {
		for _, low := range []uint64{0, 1, 1 << 47, keyMask, keyMask - 1, 0x0000_5555_5555} {
			ks = append(ks, top<<48|low)
		}
	}
	return &edgeKeys{r: r, keys: ks}
}

func (w *edgeKeys) next(dst []uint64) []uint64 {
	dst = dst[:0]
	n := 1 + w.r.IntN(4)
	for range n {
		dst = append(dst, w.keys[w.r.IntN(len(w.keys))])
	}
	return dst
}

// sysbench: 4 to 10 keys uniform over space, like oltp_write_only's updates,
// delete and insert.
func newSysbench(r *rand.Rand, space uint64) workload {
	return &uniform{r: r, space: space, lo: 4, hi: 10}
}

// TPC-C-like tables. Keys in tables warehouse..stock exist before the run
// ("prefill"); orders, new orders, order lines and history rows are inserted
// with fresh ids, so the key space keeps growing as it does in TPC-C.
const (
	tWarehouse = iota + 2
	tDistrict
	tCustomer
	tStock
	tOrder
	tNewOrder
	tOrderLine
	tHistory
)

const (
	tpccDistricts = 10
	tpccCustomers = 3000   // per district
	tpccStock     = 100000 // per warehouse
	// rows per warehouse that exist before the run
	tpccRowsPerWarehouse = 1 + tpccDistricts + tpccDistricts*tpccCustomers + tpccStock
)

// tpcc generates New-Order (49%), Payment (47%) and Delivery (4%)
// writesets; the read-only transactions write nothing and are not certified.
// Every New-Order and Payment updates its district row, every Payment its
// warehouse row: those are the hot keys.
type tpcc struct {
	r          *rand.Rand
	warehouses uint64
	nextOrder  []uint64 // per district: next order id
	delivered  []uint64 // per district: oldest undelivered order id
	lines      []uint8  // order lines of order (district, id % len)
	history    uint64
}

const tpccOrderRing = 1 << 12 // remembered line counts per district

func newTPCC(r *rand.Rand, warehouses uint64) *tpcc {
	nd := warehouses * tpccDistricts
	return &tpcc{
		r: r, warehouses: warehouses,
		nextOrder: make([]uint64, nd), delivered: make([]uint64, nd),
		lines: make([]uint8, nd*tpccOrderRing),
	}
}

// tpccWarehousesFor sizes the database so the prefilled rows are close to n.
func tpccWarehousesFor(n uint64) uint64 { return max(1, n/tpccRowsPerWarehouse) }

// nurand is TPC-C's non-uniform random number in [x, y].
func (w *tpcc) nurand(a, x, y uint64) uint64 {
	return ((w.r.Uint64N(a+1)|(x+w.r.Uint64N(y-x+1)))+42)%(y-x+1) + x
}

func (w *tpcc) customer(wh, d uint64) uint64 {
	c := w.nurand(1023, 1, tpccCustomers) - 1
	return rowKey(tCustomer, (wh*tpccDistricts+d)*tpccCustomers+c)
}

func orderLineID(dist, order, line uint64) uint64 { return (dist<<32|order&(1<<32-1))<<4 | line }

func (w *tpcc) next(dst []uint64) []uint64 {
	dst = dst[:0]
	wh := w.r.Uint64N(w.warehouses)
	d := w.r.Uint64N(tpccDistricts)
	dist := wh*tpccDistricts + d
	switch p := w.r.IntN(100); {
	case p < 49: // New-Order
		dst = append(dst, rowKey(tDistrict, dist), w.customer(wh, d))
		o := w.nextOrder[dist]
		w.nextOrder[dist]++
		n := 5 + w.r.IntN(11)
		w.lines[dist*tpccOrderRing+o%tpccOrderRing] = uint8(n)
		dst = append(dst, rowKey(tOrder, dist<<32|o), rowKey(tNewOrder, dist<<32|o))
		for l := range uint64(n) {
			sw := wh
			if w.r.IntN(100) == 0 && w.warehouses > 1 {
				sw = w.r.Uint64N(w.warehouses)
			}
			item := w.nurand(8191, 1, tpccStock) - 1
			dst = append(dst, rowKey(tStock, sw*tpccStock+item), rowKey(tOrderLine, orderLineID(dist, o, l)))
		}
	case p < 96: // Payment
		dst = append(dst, rowKey(tWarehouse, wh), rowKey(tDistrict, dist), w.customer(wh, d),
			rowKey(tHistory, w.history))
		w.history++
	default: // Delivery: the oldest new order of each district of wh
		for d := range uint64(tpccDistricts) {
			dist := wh*tpccDistricts + d
			o := w.delivered[dist]
			if o >= w.nextOrder[dist] {
				continue
			}
			w.delivered[dist]++
			dst = append(dst, rowKey(tNewOrder, dist<<32|o), rowKey(tOrder, dist<<32|o), w.customer(wh, d))
			for l := range uint64(w.lines[dist*tpccOrderRing+o%tpccOrderRing]) {
				dst = append(dst, rowKey(tOrderLine, orderLineID(dist, o, l)))
			}
		}
		if len(dst) == 0 { // nothing to deliver yet: a Payment instead
			dst = append(dst, rowKey(tWarehouse, wh), rowKey(tDistrict, dist), w.customer(wh, d))
		}
	}
	return dst
}

// tpccPrefillKey is the i-th row that exists before the run, for i in
// [0, warehouses*tpccRowsPerWarehouse).
func tpccPrefillKey(i uint64) uint64 {
	wh, r := i/tpccRowsPerWarehouse, i%tpccRowsPerWarehouse
	switch {
	case r == 0:
		return rowKey(tWarehouse, wh)
	case r <= tpccDistricts:
		return rowKey(tDistrict, wh*tpccDistricts+r-1)
	case r <= tpccDistricts+tpccDistricts*tpccCustomers:
		return rowKey(tCustomer, wh*tpccDistricts*tpccCustomers+r-1-tpccDistricts)
	default:
		return rowKey(tStock, wh*tpccStock+r-1-tpccDistricts-tpccDistricts*tpccCustomers)
	}
}
