// Package hist is a fixed-bucket histogram of int64 observations kept in
// atomic counters: cheap enough to update on a hot path (a short scan of
// the bounds and two atomic adds), read at any time without a lock. SHOW
// STATUS shows a histogram as cumulative counters (Status), and the
// metrics endpoint exports the same counters as a Prometheus histogram.
package hist

import (
	"strconv"
	"sync/atomic"

	"lockstep/internal/stat"
)

// Hist counts observations into buckets with the given upper bounds
// (inclusive, ascending), plus one for everything above the last.
type Hist struct {
	bounds []int64
	counts []atomic.Int64 // len(bounds)+1, not cumulative
	sum    atomic.Int64
}

// New returns a histogram with the given ascending upper bounds.
func New(bounds ...int64) *Hist {
	for i := 1; i < len(bounds); i++ {
		if bounds[i] <= bounds[i-1] {
			panic("hist: bounds must ascend") // a programming error, never user input
		}
	}
	return &Hist{bounds: bounds, counts: make([]atomic.Int64, len(bounds)+1)}
}

// Observe counts v (nothing under the nocounters build tag).
func (h *Hist) Observe(v int64) {
	if !stat.On {
		return
	}
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(v)
}

// Bounds returns the upper bounds (not to be modified).
func (h *Hist) Bounds() []int64 { return h.bounds }

// Snapshot is a histogram's counters read at one time (each atomically,
// not all together).
type Snapshot struct {
	Bounds     []int64
	Cumulative []int64 // observations <= Bounds[i]
	Count      int64   // all observations
	Sum        int64
}

// Snapshot reads the counters.
func (h *Hist) Snapshot() Snapshot {
	s := Snapshot{Bounds: h.bounds, Cumulative: make([]int64, len(h.bounds))}
	var run int64
	for i := range h.bounds {
		run += h.counts[i].Load()
		s.Cumulative[i] = run
	}
	s.Count = run + h.counts[len(h.bounds)].Load()
	s.Sum = h.sum.Load()
	return s
}

// Status adds the snapshot to a SHOW STATUS map as prefix_count,
// prefix_sum and prefix_le_<bound> (cumulative, as Prometheus has them).
func (s Snapshot) Status(m map[string]int64, prefix string) {
	m[prefix+"_count"] = s.Count
	m[prefix+"_sum"] = s.Sum
	for i, b := range s.Bounds {
		m[BucketName(prefix, b)] = s.Cumulative[i]
	}
}

// BucketName is the SHOW STATUS name of the bucket with upper bound b.
func BucketName(prefix string, b int64) string {
	return prefix + "_le_" + strconv.FormatInt(b, 10)
}
