package compare

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"lockstep/internal/bench/oltp"
)

func TestCells(t *testing.T) {
	got := fmt.Sprint(Cells([]oltp.Workload{oltp.PointSelect, oltp.WriteOnly}, []int{16, 64}, false))
	if want := "[point_select/16 point_select/64 write_only/16 write_only/64]"; got != want {
		t.Errorf("Cells = %s, want %s", got, want)
	}
	got = fmt.Sprint(Cells([]oltp.Workload{oltp.PointSelect}, []int{16, 64}, true))
	if want := "[point_select/16 point_select/64 tpcc/16 tpcc/64]"; got != want {
		t.Errorf("Cells with TPC-C = %s, want %s", got, want)
	}
}

// order renders a schedule as "round:cell:target" steps, targets as letters.
func order(steps []Step) string {
	var b strings.Builder
	for i, s := range steps {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%s:%c", s.Round, s.Cell, 'A'+s.Target)
	}
	return b.String()
}

func TestSchedule(t *testing.T) {
	ps16, ps64 := Cell{Workload: oltp.PointSelect, Threads: 16}, Cell{Workload: oltp.PointSelect, Threads: 64}
	cases := []struct {
		rounds, targets int
		cells           []Cell
		want            string
	}{
		{4, 2, []Cell{ps16}, "1:point_select/16:A 1:point_select/16:B 2:point_select/16:B 2:point_select/16:A " +
			"3:point_select/16:A 3:point_select/16:B 4:point_select/16:B 4:point_select/16:A"},
		{2, 2, []Cell{ps16, ps64}, "1:point_select/16:A 1:point_select/16:B 1:point_select/64:A 1:point_select/64:B " +
			"2:point_select/16:B 2:point_select/16:A 2:point_select/64:B 2:point_select/64:A"},
		{2, 3, []Cell{ps16}, "1:point_select/16:A 1:point_select/16:B 1:point_select/16:C " +
			"2:point_select/16:C 2:point_select/16:B 2:point_select/16:A"},
		{1, 2, []Cell{ps16}, "1:point_select/16:A 1:point_select/16:B"},
	}
	for _, c := range cases {
		got := order(Schedule(c.rounds, c.cells, c.targets))
		if got != c.want {
			t.Errorf("Schedule(%d rounds, %v, %d targets):\n got %s\nwant %s", c.rounds, c.cells, c.targets, got, c.want)
		}
	}
	// Over an even number of rounds the first and the last target each open
	// a cell's turn in half the rounds.
	for _, targets := range []int{2, 3, 4} {
		steps := Schedule(6, []Cell{ps16}, targets)
		firsts := map[int]int{}
		for i := 0; i < len(steps); i += targets {
			firsts[steps[i].Target]++
		}
		if firsts[0] != 3 || firsts[targets-1] != 3 {
			t.Errorf("%d targets over 6 rounds: first in a cell %v, want targets 0 and %d three times each", targets, firsts, targets-1)
		}
	}
}

func TestCPUTicks(t *testing.T) {
	if _, err := cpuTicks(os.Getpid()); err != nil {
		t.Errorf("cpuTicks of this process: %v", err)
	}
	if _, err := cpuTicks(1 << 30); err == nil {
		t.Error("cpuTicks of a missing process: no error")
	}
}
