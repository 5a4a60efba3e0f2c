//go:build !nocounters

package server

import "testing"

// TestCountersMove: in the default build every counter TestNoCounters
// expects at 0 under the nocounters tag moves under the same workload, so
// that test's zeros mean the tag removed the updates.
func TestCountersMove(t *testing.T) {
	s := startInProcess(t, nil)
	counterWorkload(t, s)
	for _, name := range append(statCounters, keptCounters...) {
		if v := s.status(t, "GLOBAL", name); v <= 0 {
			t.Errorf("%s = %d after the workload, want > 0", name, v)
		}
	}
}
