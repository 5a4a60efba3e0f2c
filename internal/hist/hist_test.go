package hist

import "testing"

func TestObserveBuckets(t *testing.T) {
	h := New(10, 100, 1000)
	for _, v := range []int64{0, 10, 11, 100, 999, 1000, 1001, 5000} {
		h.Observe(v)
	}
	s := h.Snapshot()
	want := []int64{2, 4, 6}
	for i, w := range want {
		if s.Cumulative[i] != w {
			t.Errorf("le %d: %d, want %d", s.Bounds[i], s.Cumulative[i], w)
		}
	}
	if s.Count != 8 || s.Sum != 0+10+11+100+999+1000+1001+5000 {
		t.Errorf("count %d sum %d", s.Count, s.Sum)
	}
	m := map[string]int64{}
	s.Status(m, "X")
	if m["X_le_100"] != 4 || m["X_count"] != 8 || len(m) != 5 {
		t.Errorf("status map %v", m)
	}
}

func BenchmarkObserve(b *testing.B) {
	h := New(50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000)
	b.RunParallel(func(pb *testing.PB) {
		v := int64(0)
		for pb.Next() {
			v = (v + 777) % 3000
			h.Observe(v)
		}
	})
}
