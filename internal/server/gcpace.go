package server

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// GC pacing for table memory (issue 35 item 3; docs/coldrows.md, "Pacing").
//
// Go's collector starts a cycle when the heap has grown by GOGC% of the
// heap live after the last one. The tables' rows, keys and index nodes are
// most of a loaded server's live heap, and they sit in large pointer-free
// chunks (storage/rows.go) that a mark does not scan: counting them in the
// growth allowance let the process hold twice its tables in RSS for nothing
// (the old layout's marks were expensive enough to want that headroom; the
// slab's are not). The pacer gives the rest of the heap — sessions, plans,
// buffers — the allowance it would have without the tables: every second
// it sets the GC percent to base% of the heap outside the tables, as a
// share of the whole live heap, never below minGCPercent and never above
// base. RSS then tracks the tables plus twice the rest, while collections
// come about as often as a server without the tables would run them.

const (
	// minGCPercent bounds how often the collector may run: at 10% a 4 GB
	// heap collects every 400 MB allocated.
	minGCPercent = 10
	// minGCHeadroom is the least growth allowed between collections: a
	// server's collections come at most every 256 MiB of allocation. With
	// 64 MiB, TPC-C at 64 threads (640 of 780 MB live heap in tables, 140
	// MB elsewhere) collected every ~140 MB and spent 9% more CPU per
	// transaction than with the pacer off (benchmarks/notes.md, "The GC
	// pacer's floor").
	minGCHeadroom = 256 << 20
)

// gcPacer computes the GC percent from the live heap and the tables' part
// of it; I/O (reading the runtime, setting the percent) is at the edge,
// injected for tests.
type gcPacer struct {
	base    int           // the percent without tables (GOGC; <0: off, the pacer does nothing)
	live    func() uint64 // heap live after the last collection
	tables  func() int64  // the tables' row memory (arenas, slots, tree nodes)
	set     func(pct int) // applies a percent
	percent atomic.Int64  // the percent last set (SHOW STATUS)
	last    int
}

// step sets the percent for the current figures and returns it.
func (p *gcPacer) step() int {
	if p.base < 0 {
		return p.base
	}
	live := p.live()
	if live == 0 {
		return p.base
	}
	other := int64(live) - p.tables()
	if other < 0 {
		other = 0
	}
	head := max(other*int64(p.base)/100, minGCHeadroom)
	pct := int(head * 100 / int64(live))
	pct = min(max(pct, minGCPercent), p.base)
	if pct != p.last {
		p.set(pct)
		p.last = pct
	}
	p.percent.Store(int64(pct))
	return pct
}

// run steps the pacer every interval until ctx ends, then puts back the
// base percent.
func (p *gcPacer) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if p.base >= 0 && p.last != p.base {
				p.set(p.base)
			}
			return
		case <-t.C:
			p.step()
		}
	}
}

// gogc is the GC percent the environment's GOGC asks for (the runtime's
// reading: 100 unset, -1 "off"). It is read from the environment, not from
// the runtime, whose percent another server's pacer in the same process
// (tests) may have changed.
func gogc(v string) int {
	if v == "" {
		return 100
	}
	if strings.EqualFold(v, "off") {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 100
	}
	return n
}

// newGCPacer returns a pacer of the process's collector over tables.
func newGCPacer(tables func() int64) *gcPacer {
	base := gogc(os.Getenv("GOGC"))
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	return &gcPacer{
		base:   base,
		last:   base,
		tables: tables,
		live: func() uint64 {
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return 0
			}
			return sample[0].Value.Uint64()
		},
		set: func(pct int) { debug.SetGCPercent(pct) },
	}
}
