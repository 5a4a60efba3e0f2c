package compare

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"lockstep/internal/bench/oltp"
)

// fake is a run of a target in a cell and round with a TPS and a p95.
type fake struct {
	round  int
	target string
	cell   Cell
	tps    float64
	p95    float64
	errors int64
}

func fakeRuns(fs []fake) []Measurement {
	out := make([]Measurement, len(fs))
	for i, f := range fs {
		out[i] = Measurement{Seq: i + 1, Round: f.round, Target: f.target, Cell: f.cell, Result: &oltp.Result{
			Workload: f.cell.Name(), Threads: f.cell.Threads, TPS: f.tps, QPS: 2 * f.tps, Errors: f.errors,
			Duration: 10 * time.Second, Server: "v-" + f.target,
			Latency: oltp.Latency{P50: f.p95 / 2, P95: f.p95, P99: f.p95 * 2},
			Series:  []oltp.Second{{T: 1, TPS: f.tps}, {T: 2, TPS: f.tps}},
		}}
	}
	return out
}

func TestSummarize(t *testing.T) {
	ps, wo, tp := Cell{Workload: oltp.PointSelect, Threads: 16}, Cell{Workload: oltp.WriteOnly, Threads: 64}, Cell{Threads: 16, TPCC: true}
	cases := []struct {
		name    string
		targets []string
		cells   []Cell
		runs    []fake
		want    string // WriteTable's rows
	}{
		{
			name: "three rounds, medians and paired ratios", targets: []string{"A", "B"}, cells: []Cell{ps},
			runs: []fake{
				{1, "A", ps, 1000, 2, 0}, {1, "B", ps, 500, 4, 0},
				{2, "B", ps, 900, 3, 0}, {2, "A", ps, 1200, 1.5, 0},
				{3, "A", ps, 800, 2.5, 0}, {3, "B", ps, 1000, 5, 1},
			},
			// B/A per round: 0.5, 0.75, 1.25 -> 0.75 (not 900/1000)
			want: "| point_select | 16 | A | 1000 | 800–1200 | 2.00 | 1.50–2.50 | 1.00 | 0 |\n" +
				"| point_select | 16 | B | 900 | 500–1000 | 4.00 | 3.00–5.00 | 0.75 | 1 |\n",
		},
		{
			name: "even rounds: the mean of the middle two", targets: []string{"A", "B"}, cells: []Cell{ps},
			runs: []fake{
				{1, "A", ps, 100, 1, 0}, {1, "B", ps, 300, 1, 0},
				{2, "B", ps, 100, 3, 0}, {2, "A", ps, 100, 2, 0},
			},
			want: "| point_select | 16 | A | 100 | 100–100 | 1.50 | 1.00–2.00 | 1.00 | 0 |\n" +
				"| point_select | 16 | B | 200 | 100–300 | 2.00 | 1.00–3.00 | 2.00 | 0 |\n",
		},
		{
			name: "cells and targets in the order given, not the runs'", targets: []string{"B", "A"}, cells: []Cell{wo, ps},
			runs: []fake{
				{1, "A", ps, 10, 1, 0}, {1, "B", ps, 20, 1, 0},
				{1, "A", wo, 30, 1, 0}, {1, "B", wo, 15, 1, 0},
			},
			want: "| write_only | 64 | B | 15.0 | 15.0–15.0 | 1.00 | 1.00–1.00 | 1.00 | 0 |\n" +
				"| write_only | 64 | A | 30.0 | 30.0–30.0 | 1.00 | 1.00–1.00 | 2.00 | 0 |\n" +
				"| point_select | 16 | B | 20.0 | 20.0–20.0 | 1.00 | 1.00–1.00 | 1.00 | 0 |\n" +
				"| point_select | 16 | A | 10.0 | 10.0–10.0 | 1.00 | 1.00–1.00 | 0.50 | 0 |\n",
		},
		{
			name: "TPC-C: tpmC, apart from the oltp cell at the same threads", targets: []string{"A", "B"}, cells: []Cell{ps, tp},
			runs: []fake{
				{1, "A", tp, 30000, 9, 0}, {1, "B", tp, 24000, 12, 0},
				{1, "A", ps, 100, 1, 0}, {1, "B", ps, 100, 1, 0},
			},
			want: "| point_select | 16 | A | 100 | 100–100 | 1.00 | 1.00–1.00 | 1.00 | 0 |\n" +
				"| point_select | 16 | B | 100 | 100–100 | 1.00 | 1.00–1.00 | 1.00 | 0 |\n" +
				"| tpcc (tpmC, New-Order p95) | 16 | A | 30000 | 30000–30000 | 9.00 | 9.00–9.00 | 1.00 | 0 |\n" +
				"| tpcc (tpmC, New-Order p95) | 16 | B | 24000 | 24000–24000 | 12.0 | 12.0–12.0 | 0.80 | 0 |\n",
		},
		{
			name: "a round without the base has no ratio", targets: []string{"A", "B"}, cells: []Cell{ps},
			runs: []fake{{1, "B", ps, 10, 1, 0}},
			want: "| point_select | 16 | B | 10.0 | 10.0–10.0 | 1.00 | 1.00–1.00 | — | 0 |\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := Summarize(c.targets, c.cells, fakeRuns(c.runs))
			var b bytes.Buffer
			if err := WriteTable(&b, c.targets[0], rows); err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfterN(b.String(), "\n", 3)
			if !strings.Contains(lines[0], "TPS vs "+c.targets[0]) {
				t.Errorf("header %q does not name the base %s", lines[0], c.targets[0])
			}
			if got := lines[2]; got != c.want {
				t.Errorf("rows:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestMedianRun(t *testing.T) {
	ps := Cell{Workload: oltp.PointSelect, Threads: 16}
	runs := fakeRuns([]fake{{1, "A", ps, 300, 1, 0}, {2, "A", ps, 100, 1, 0}, {3, "A", ps, 200, 1, 0}, {1, "B", ps, 5, 1, 0}})
	if r := medianRun(runs, ps, "A"); r == nil || r.Round != 3 {
		t.Errorf("medianRun = %+v, want round 3 (TPS 200)", r)
	}
	if r := medianRun(runs, ps, "C"); r != nil {
		t.Errorf("medianRun of a target without runs = %+v", r)
	}
}

func TestWriteCSV(t *testing.T) {
	ps := Cell{Workload: oltp.PointSelect, Threads: 16}
	runs := fakeRuns([]fake{{1, "A", ps, 1000, 2, 0}, {1, "B", ps, 500, 4, 3}})
	for i := range runs {
		runs[i].Client = "sysbench 1.0.20"
	}
	var b bytes.Buffer
	if err := WriteRunsCSV(&b, runs); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || strings.Join(recs[0], ",") != strings.Join(runsHeader, ",") {
		t.Fatalf("runs.csv: %v", recs)
	}
	if got := strings.Join(recs[2], ","); got != "2,1,B,point_select,16,500.000,1000.000,2.000,4.000,8.000,0.000,3,0,0,10.000,v-B,sysbench 1.0.20" {
		t.Errorf("runs.csv row: %s", got)
	}
	b.Reset()
	if err := WriteSeriesCSV(&b, runs); err != nil {
		t.Fatal(err)
	}
	recs, err = csv.NewReader(&b).ReadAll()
	if err != nil || len(recs) != 5 {
		t.Fatalf("series.csv: %d records (%v), want a header and 2 seconds x 2 runs", len(recs), err)
	}
	if h, r := recs[0], recs[1]; h[len(h)-1] != "client" || r[len(r)-1] != "sysbench 1.0.20" {
		t.Errorf("series.csv does not name the client: %v, %v", h, r)
	}
}
