package txn

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// viewSlots is the registry of open read views that purge scans. Each open
// view owns one slot holding its low-water mark (0 = free). Slots are
// claimed with a CAS and freed with a store; the registry only takes its
// mutex to grow, which happens when more views are open at once than ever
// before.
type viewSlots struct {
	mu   sync.Mutex
	segs atomic.Pointer[[]*slotSeg]
}

const segSlots = 128

type slotSeg [segSlots]struct {
	v atomic.Uint64
	_ [56]byte
}

func (r *viewSlots) init() {
	segs := []*slotSeg{new(slotSeg)}
	r.segs.Store(&segs)
}

func (r *viewSlots) at(i int) *atomic.Uint64 {
	segs := *r.segs.Load()
	return &segs[i/segSlots][i%segSlots].v
}

// acquire claims a free slot, storing val (> 0) in it. hint is the slot the
// caller used last, tried first.
func (r *viewSlots) acquire(hint int, val uint64) int {
	for {
		segs := *r.segs.Load()
		n := len(segs) * segSlots
		if hint >= 0 && hint < n && segs[hint/segSlots][hint%segSlots].v.CompareAndSwap(0, val) {
			return hint
		}
		start := int(rand.Uint32N(uint32(n)))
		for k := 0; k < n; k++ {
			i := start + k
			if i >= n {
				i -= n
			}
			if segs[i/segSlots][i%segSlots].v.CompareAndSwap(0, val) {
				return i
			}
		}
		r.mu.Lock()
		if cur := *r.segs.Load(); len(cur) == len(segs) {
			grown := append(append([]*slotSeg(nil), cur...), new(slotSeg))
			r.segs.Store(&grown)
		}
		r.mu.Unlock()
		hint = n // first slot of the new segment
	}
}

func (r *viewSlots) set(i int, val uint64) { r.at(i).Store(val) }
func (r *viewSlots) release(i int)         { r.at(i).Store(0) }

// min returns the smallest registered value, or MaxUint64 if none.
func (r *viewSlots) min() uint64 {
	m := ^uint64(0)
	for _, s := range *r.segs.Load() {
		for i := range s {
			if v := s[i].v.Load(); v != 0 && v < m {
				m = v
			}
		}
	}
	return m
}

func (r *viewSlots) count() int64 {
	var n int64
	for _, s := range *r.segs.Load() {
		for i := range s {
			if s[i].v.Load() != 0 {
				n++
			}
		}
	}
	return n
}
