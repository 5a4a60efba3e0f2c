//go:build nocounters

package server

import "testing"

// TestNoCounters: built with -tags nocounters, the statistics counters stay
// at 0 under a workload that moves each of them in the default build
// (TestCountersMove), while the counters the code reads still move.
func TestNoCounters(t *testing.T) {
	s := startInProcess(t, nil)
	counterWorkload(t, s)
	for _, name := range statCounters {
		if v := s.status(t, "GLOBAL", name); v != 0 {
			t.Errorf("%s = %d under nocounters, want 0", name, v)
		}
	}
	for _, name := range keptCounters {
		if v := s.status(t, "GLOBAL", name); v <= 0 {
			t.Errorf("%s = %d under nocounters, want > 0 (not a statistic)", name, v)
		}
	}
}
