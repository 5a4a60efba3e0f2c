package oltp

import (
	"math"
	"regexp"
	"slices"
	"testing"
)

// kindCounts counts an event's statements by kind.
func kindCounts(ops []Op) map[Kind]int {
	m := map[Kind]int{}
	for _, op := range ops {
		m[op.Kind]++
	}
	return m
}

// TestEventStatementCounts: each workload's event has the statements the
// Lua script's event() runs, as many of each as its options say, in the
// script's order; BEGIN/COMMIT go with --skip-trx and the ranges with
// --range-selects=false; every statement the event runs is one the thread
// prepared (Kinds), and only oltp_insert's INSERT is not prepared.
func TestEventStatementCounts(t *testing.T) {
	custom := DefaultOptions()
	custom.PointSelects, custom.SimpleRanges, custom.SumRanges, custom.OrderRanges = 3, 2, 0, 4
	custom.DistinctRanges, custom.IndexUpdates, custom.NonIndexUpdates, custom.DeleteInserts = 5, 2, 3, 2
	noTrx := DefaultOptions()
	noTrx.SkipTrx = true
	noRanges := DefaultOptions()
	noRanges.RangeSelects = false
	type want struct {
		order                []Kind // distinct kinds in order of first appearance
		counts               map[Kind]int
		reads, writes, other int
	}
	rw := []Kind{Begin, PointSel, SimpleRange, SumRange, OrderRange, DistinctRange, IndexUpdate, NonIndexUpdate, Delete, InsertRow, Commit}
	for _, tc := range []struct {
		name string
		w    Workload
		o    Options
		want want
	}{
		{"point_select", PointSelect, DefaultOptions(), want{[]Kind{PointSel}, map[Kind]int{PointSel: 1}, 1, 0, 0}},
		{"point_select ignores --point-selects", PointSelect, custom, want{[]Kind{PointSel}, map[Kind]int{PointSel: 1}, 1, 0, 0}},
		{"read_only", ReadOnly, DefaultOptions(), want{[]Kind{Begin, PointSel, SimpleRange, SumRange, OrderRange, DistinctRange, Commit},
			map[Kind]int{Begin: 1, PointSel: 10, SimpleRange: 1, SumRange: 1, OrderRange: 1, DistinctRange: 1, Commit: 1}, 14, 0, 2}},
		{"write_only", WriteOnly, DefaultOptions(), want{[]Kind{Begin, IndexUpdate, NonIndexUpdate, Delete, InsertRow, Commit},
			map[Kind]int{Begin: 1, IndexUpdate: 1, NonIndexUpdate: 1, Delete: 1, InsertRow: 1, Commit: 1}, 0, 4, 2}},
		{"read_write", ReadWrite, DefaultOptions(), want{rw,
			map[Kind]int{Begin: 1, PointSel: 10, SimpleRange: 1, SumRange: 1, OrderRange: 1, DistinctRange: 1,
				IndexUpdate: 1, NonIndexUpdate: 1, Delete: 1, InsertRow: 1, Commit: 1}, 14, 4, 2}},
		{"read_write custom counts", ReadWrite, custom, want{
			[]Kind{Begin, PointSel, SimpleRange, OrderRange, DistinctRange, IndexUpdate, NonIndexUpdate, Delete, InsertRow, Commit},
			map[Kind]int{Begin: 1, PointSel: 3, SimpleRange: 2, OrderRange: 4, DistinctRange: 5,
				IndexUpdate: 2, NonIndexUpdate: 3, Delete: 2, InsertRow: 2, Commit: 1}, 14, 9, 2}},
		{"read_write skip_trx", ReadWrite, noTrx, want{rw[1 : len(rw)-1],
			map[Kind]int{PointSel: 10, SimpleRange: 1, SumRange: 1, OrderRange: 1, DistinctRange: 1,
				IndexUpdate: 1, NonIndexUpdate: 1, Delete: 1, InsertRow: 1}, 14, 4, 0}},
		{"read_only range_selects off", ReadOnly, noRanges, want{[]Kind{Begin, PointSel, Commit},
			map[Kind]int{Begin: 1, PointSel: 10, Commit: 1}, 10, 0, 2}},
		{"insert", Insert, DefaultOptions(), want{[]Kind{InsertQuery}, map[Kind]int{InsertQuery: 1}, 0, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gen{w: tc.w, o: tc.o, r: newRNG(1, 2, tc.o.Dist)}
			ops := g.event(nil)
			got := kindCounts(ops)
			if len(got) != len(tc.want.counts) {
				t.Errorf("kinds %v, want %v", got, tc.want.counts)
			}
			for k, n := range tc.want.counts {
				if got[k] != n {
					t.Errorf("%s: %d statements, want %d", k, got[k], n)
				}
			}
			var order []Kind
			var classes [3]int
			for _, op := range ops {
				if len(order) == 0 || order[len(order)-1] != op.Kind {
					order = append(order, op.Kind)
				}
				classes[op.Kind.Class()]++
			}
			// delete_inserts alternate: collapse DELETE, INSERT, DELETE, INSERT
			order = collapsePairs(order)
			if !slices.Equal(order, tc.want.order) {
				t.Errorf("order %v, want %v", order, tc.want.order)
			}
			if classes != [3]int{tc.want.reads, tc.want.writes, tc.want.other} {
				t.Errorf("reads/writes/other %v, want %d/%d/%d", classes, tc.want.reads, tc.want.writes, tc.want.other)
			}
			prepared := tc.w.Kinds(&tc.o)
			for _, op := range ops {
				if op.Kind.prepared() != slices.Contains(prepared, op.Kind) {
					t.Errorf("%s: prepared %v, in the thread's prepared list %v", op.Kind, op.Kind.prepared(), prepared)
				}
			}
		})
	}
}

// collapsePairs turns a repeated DELETE, INSERT sequence into one pair.
func collapsePairs(ks []Kind) []Kind {
	var out []Kind
	for i := 0; i < len(ks); i++ {
		if i >= 2 && ks[i] == Delete && ks[i-1] == InsertRow && ks[i-2] == Delete && i+1 < len(ks) && ks[i+1] == InsertRow {
			i++
			continue
		}
		out = append(out, ks[i])
	}
	return out
}

// TestEventArguments: the parameters are the script's: ids in
// [1, table_size]; a range is [id, id+range_size-1]; each group of
// statements stays on one table (execute_* picks one per call); the
// DELETE and the INSERT of a pair share the id; c and pad follow the
// templates; the tables picked cover 1..tables.
func TestEventArguments(t *testing.T) {
	o := DefaultOptions()
	o.Tables, o.TableSize, o.RangeSize = 4, 500, 7
	g := gen{w: ReadWrite, o: o, r: newRNG(7, 1, o.Dist)}
	cRe := regexp.MustCompile(`^([0-9]{11}-){9}[0-9]{11}$`)
	padRe := regexp.MustCompile(`^([0-9]{11}-){4}[0-9]{11}$`)
	tables := map[int]bool{}
	var ops []Op
	for range 2000 {
		ops = g.event(ops)
		groupTable := map[Kind]int{}
		for i, op := range ops {
			if op.Kind == Begin || op.Kind == Commit {
				continue
			}
			tables[op.Table] = true
			if op.Table < 1 || op.Table > o.Tables {
				t.Fatalf("%s on table %d", op.Kind, op.Table)
			}
			group := op.Kind
			if group == InsertRow {
				group = Delete
			}
			if tt, ok := groupTable[group]; ok && tt != op.Table {
				t.Fatalf("%s on tables %d and %d in one event", op.Kind, tt, op.Table)
			}
			groupTable[group] = op.Table
			checkID := func(v any) int64 {
				id := v.(int64)
				if id < 1 || id > int64(o.TableSize) {
					t.Fatalf("%s: id %d outside 1..%d", op.Kind, id, o.TableSize)
				}
				return id
			}
			switch op.Kind {
			case PointSel, IndexUpdate, Delete:
				checkID(op.Args[0])
			case SimpleRange, SumRange, OrderRange, DistinctRange:
				if id := checkID(op.Args[0]); op.Args[1].(int64) != id+int64(o.RangeSize)-1 {
					t.Fatalf("%s: range %v", op.Kind, op.Args)
				}
			case NonIndexUpdate:
				if !cRe.MatchString(op.Args[0].(string)) {
					t.Fatalf("c %q", op.Args[0])
				}
				checkID(op.Args[1])
			case InsertRow:
				if prev := ops[i-1]; prev.Kind != Delete || prev.Args[0] != op.Args[0] {
					t.Fatalf("INSERT %v after %s %v", op.Args, prev.Kind, prev.Args)
				}
				checkID(op.Args[1])
				if !cRe.MatchString(op.Args[2].(string)) || !padRe.MatchString(op.Args[3].(string)) {
					t.Fatalf("c, pad %q %q", op.Args[2], op.Args[3])
				}
			}
		}
	}
	if len(tables) != o.Tables {
		t.Errorf("tables used %v, want all of 1..%d", tables, o.Tables)
	}
	ins := gen{w: Insert, o: o, r: newRNG(7, 1, o.Dist)}
	op := ins.event(nil)[0]
	want := regexp.MustCompile(`^INSERT INTO sbtest[1-4] \(id, k, c, pad\) VALUES \(0, [0-9]+, '([0-9]{11}-){9}[0-9]{11}', '([0-9]{11}-){4}[0-9]{11}'\)$`)
	if q := op.insertQuery(); !want.MatchString(q) {
		t.Errorf("oltp_insert statement %q", q)
	}
}

// sysbench 1.0.20's distribution over [1, 10000] in 20 buckets of 500,
// from 2,000,000 draws of sysbench.rand.default in a Lua script run by
// `sysbench script.lua --events=1 run` (with --rand-type=gaussian for the
// second), 2026-11-27.
var (
	sysbenchSpecial = []float64{0, 0, 0, 0.00002, 0.00022, 0.00165, 0.00712, 0.02035, 0.03979, 0.30571,
		0.55576, 0.04009, 0.02030, 0.00706, 0.00168, 0.00023, 0.00002, 0, 0, 0}
	sysbenchGaussian = []float64{0, 0, 0, 0.00007, 0.00093, 0.00658, 0.02848, 0.08110, 0.15979, 0.22321,
		0.22334, 0.15956, 0.08118, 0.02814, 0.00660, 0.00092, 0.00008, 0, 0, 0}
)

// TestDistributionsMatchSysbench: the ids drawn follow sysbench's own
// distributions: per bucket within 0.005 of sysbench's fractions; for
// special, 75.9% of draws (sysbench: 0.7588) in 4975..5051, the
// 1% of the range at its centre; uniform covers its range evenly.
func TestDistributionsMatchSysbench(t *testing.T) {
	const n = 1000000
	for _, tc := range []struct {
		typ  string
		want []float64
		hot  float64
	}{{"special", sysbenchSpecial, 0.7588}, {"gaussian", sysbenchGaussian, 0.0363}} {
		d := DefaultDist()
		d.Type = tc.typ
		r := newRNG(11, 0, d)
		buckets := make([]float64, 20)
		hot := 0
		for range n {
			v := r.def(1, 10000)
			if v < 1 || v > 10000 {
				t.Fatalf("%s: %d outside 1..10000", tc.typ, v)
			}
			buckets[(v-1)/500]++
			if v >= 4975 && v <= 5051 {
				hot++
			}
		}
		for i := range buckets {
			if f := buckets[i] / n; math.Abs(f-tc.want[i]) > 0.005 {
				t.Errorf("%s: bucket %d: %.5f of draws, sysbench %.5f", tc.typ, i, f, tc.want[i])
			}
		}
		if f := float64(hot) / n; math.Abs(f-tc.hot) > 0.005 {
			t.Errorf("%s: %.4f of draws in 4975..5051, sysbench %.4f", tc.typ, f, tc.hot)
		}
	}
	d := DefaultDist()
	d.Type = "uniform"
	r := newRNG(3, 0, d)
	var c [5]int
	for range 100000 {
		c[r.uniform(1, 4)]++
	}
	for v := 1; v <= 4; v++ {
		if c[v] < 24000 || c[v] > 26000 {
			t.Errorf("uniform(1, 4): %d drew %d of 100000", v, c[v])
		}
	}
	if c[0] != 0 {
		t.Errorf("uniform(1, 4) drew 0")
	}
}

// TestSeedRepeats: one seed and thread give the same events.
func TestSeedRepeats(t *testing.T) {
	o := DefaultOptions()
	a := gen{w: ReadWrite, o: o, r: newRNG(5, 1000, o.Dist)}
	b := gen{w: ReadWrite, o: o, r: newRNG(5, 1000, o.Dist)}
	c := gen{w: ReadWrite, o: o, r: newRNG(5, 1001, o.Dist)}
	ea, eb, ec := a.event(nil), b.event(nil), c.event(nil)
	same := func(x, y []Op) bool {
		return slices.EqualFunc(x, y, func(p, q Op) bool { return p.Kind == q.Kind && p.Table == q.Table && slices.Equal(p.Args, q.Args) })
	}
	if !same(ea, eb) {
		t.Error("the same seed and thread gave different events")
	}
	if same(ea, ec) {
		t.Error("two threads drew the same event")
	}
}

// TestParse: workload names with and without the oltp_ prefix; bad options.
func TestParse(t *testing.T) {
	for _, s := range []string{"read_write", "oltp_read_write", "OLTP_READ_WRITE"} {
		if w, err := ParseWorkload(s); err != nil || w != ReadWrite {
			t.Errorf("ParseWorkload(%q) = %v, %v", s, w, err)
		}
	}
	if _, err := ParseWorkload("oltp_delete"); err == nil {
		t.Error("oltp_delete accepted")
	}
	o := DefaultOptions()
	o.Dist.Type = "zipfian"
	if err := o.Validate(); err == nil {
		t.Error("--rand-type zipfian accepted")
	}
	o = DefaultOptions()
	o.Tables = 0
	if err := o.Validate(); err == nil {
		t.Error("--tables 0 accepted")
	}
}
