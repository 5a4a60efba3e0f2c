// Package stat updates the server's statistics counters: the ones SHOW
// STATUS and /metrics only display, as opposed to counters the code reads
// to decide something (ids, reference counts, active counts), which never
// go through it.
//
// In the default build each helper is one inlined atomic add. Built with
// -tags nocounters, On is false and every helper is empty, so the hot
// paths pay nothing for statistics (docs/metrics.md "Cost"); callers guard
// work done only for a counter (a clock read) with `if stat.On`.
package stat

import "sync/atomic"

// Inc adds 1 to c.
func Inc(c *atomic.Int64) {
	if On {
		c.Add(1)
	}
}

// Add adds n to c.
func Add(c *atomic.Int64, n int64) {
	if On {
		c.Add(n)
	}
}

// IncU adds 1 to c.
func IncU(c *atomic.Uint64) {
	if On {
		c.Add(1)
	}
}

// AddU adds n to c.
func AddU(c *atomic.Uint64, n uint64) {
	if On {
		c.Add(n)
	}
}
