package compare

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"lockstep/internal/bench/oltp"
)

// Cell is one point of the matrix: a workload at a thread count. A TPC-C
// cell (lockstep bench tpcc's five transactions) has no oltp Workload.
type Cell struct {
	Workload oltp.Workload
	Threads  int
	TPCC     bool
}

// Name is the cell's workload: an oltp workload's name, or "tpcc".
func (c Cell) Name() string {
	if c.TPCC {
		return "tpcc"
	}
	return c.Workload.String()
}

func (c Cell) String() string { return fmt.Sprintf("%s/%d", c.Name(), c.Threads) }

// Step is one run: a cell on a target in a round (1-based).
type Step struct {
	Round  int
	Cell   Cell
	Target int // index into the targets
}

// Cells is the matrix in its order: each workload in turn at each thread
// count, then (tpcc) TPC-C at each thread count.
func Cells(workloads []oltp.Workload, threads []int, tpcc bool) []Cell {
	out := make([]Cell, 0, (len(workloads)+1)*len(threads))
	for _, w := range workloads {
		for _, t := range threads {
			out = append(out, Cell{Workload: w, Threads: t})
		}
	}
	if tpcc {
		for _, t := range threads {
			out = append(out, Cell{Threads: t, TPCC: true})
		}
	}
	return out
}

// Schedule is the order of the runs: rounds one after another; in each,
// the cells in order, and each cell on every target back to back, the
// targets in their given order in odd rounds and reversed in even ones
// (ABBA for two targets: A B, B A, A B, ...), so that a drift of the
// machine over a round, or the cost one run leaves to the next, falls on
// every target alike.
func Schedule(rounds int, cells []Cell, targets int) []Step {
	out := make([]Step, 0, rounds*len(cells)*targets)
	for r := 1; r <= rounds; r++ {
		for _, c := range cells {
			for i := range targets {
				t := i
				if r%2 == 0 {
					t = targets - 1 - i
				}
				out = append(out, Step{Round: r, Cell: c, Target: t})
			}
		}
	}
	return out
}

// cpuTicks is a process's user plus system CPU time so far in clock ticks
// (/proc/PID/stat's utime and stime).
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 { // fields 3.. after the name; utime is 14, stime 15
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return u + st, nil
}

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100

// waitQuiet waits, at most max, until none of the processes used more than
// 5% of a core over the last second (scripts/bench-turns-lib.sh's quiet),
// so that a checkpoint or purge left from one target's turn does not fall
// in the next one's. It reports whether they went quiet.
func waitQuiet(pids []int, max time.Duration) bool {
	if len(pids) == 0 || max <= 0 {
		return true
	}
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		before := make([]int64, len(pids))
		for i, p := range pids {
			before[i], _ = cpuTicks(p)
		}
		time.Sleep(time.Second)
		busy := false
		for i, p := range pids {
			if t, err := cpuTicks(p); err == nil && t-before[i] > clockTicks/20 {
				busy = true
			}
		}
		if !busy {
			return true
		}
	}
	return false
}
