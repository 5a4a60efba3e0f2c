package server

import "testing"

// TestGCPacerStep: the percent gives the heap outside the tables the base
// allowance, within [minGCPercent, base]; it is applied only when it
// changes; GOGC=off leaves the collector alone.
func TestGCPacerStep(t *testing.T) {
	const mb = 1 << 20
	tests := []struct {
		name   string
		base   int
		live   uint64
		tables int64
		want   int
	}{
		{"no tables", 100, 1000 * mb, 0, 100},
		{"tables half the heap", 100, 1000 * mb, 500 * mb, 50},
		{"tables most of the heap", 100, 4000 * mb, 3800 * mb, 10},
		{"headroom floor", 100, 1600 * mb, 1520 * mb, 16},
		{"TPC-C's heap: the floor", 100, 780 * mb, 640 * mb, 32},
		{"small heap keeps base", 100, 200 * mb, 160 * mb, 100},
		{"GOGC 200", 200, 1000 * mb, 500 * mb, 100},
		{"tables above live (between GCs)", 100, 1000 * mb, 1200 * mb, 25},
		{"GOGC off", -1, 1000 * mb, 500 * mb, -1},
		{"before the first GC", 100, 0, 500 * mb, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var set []int
			p := &gcPacer{base: tt.base, last: tt.base,
				live:   func() uint64 { return tt.live },
				tables: func() int64 { return tt.tables },
				set:    func(pct int) { set = append(set, pct) }}
			if got := p.step(); got != tt.want {
				t.Fatalf("step = %d, want %d", got, tt.want)
			}
			p.step()
			wantSets := 0
			if tt.want != tt.base {
				wantSets = 1
			}
			if len(set) != wantSets {
				t.Fatalf("percent applied %v, want %d time(s)", set, wantSets)
			}
		})
	}
}

// TestGOGC: the pacer's base is the environment's GOGC as the runtime
// reads it.
func TestGOGC(t *testing.T) {
	for v, want := range map[string]int{"": 100, "off": -1, "OFF": -1, "50": 50, "200": 200, "junk": 100} {
		if got := gogc(v); got != want {
			t.Errorf("gogc(%q) = %d, want %d", v, got, want)
		}
	}
}
