package compare

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"lockstep/internal/bench/oltp"
)

// Measurement is one measured run of the schedule.
type Measurement struct {
	Seq    int // position in the schedule, from 1
	Round  int
	Target string
	Cell   Cell
	Client string // what ran the transactions: "lockstep bench oltp", "sysbench 1.0.20", "lockstep bench tpcc"
	Result *oltp.Result
	// Checkpoints are the seconds into the measured window at which the
	// target (a lockstep server) had finished a checkpoint; only for the
	// cell of the throughput-over-time plot.
	Checkpoints []float64
}

// Stat is a figure's median and range over a cell's rounds.
type Stat struct{ Median, Min, Max float64 }

func stat(v []float64) Stat {
	if len(v) == 0 {
		return Stat{}
	}
	return Stat{Median: median(v), Min: slices.Min(v), Max: slices.Max(v)}
}

// median of v (v is not changed).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Row is one target in one cell of the results table.
type Row struct {
	Cell     Cell
	Target   string
	Runs     int
	TPS, P95 Stat
	P50, P99 float64 // medians, ms
	// Ratio is the median over rounds of this target's TPS divided by the
	// first target's TPS in the same round (the pair scripts' paired
	// ratio); 1 for the first target, 0 when no round has both.
	Ratio  float64
	Errors int64 // events abandoned after an error, all rounds
}

// Summarize makes the table's rows, cell by cell in the given order and
// the targets in theirs. A target with no run in a cell has no row.
func Summarize(targets []string, cells []Cell, runs []Measurement) []Row {
	type key struct {
		c Cell
		t string
	}
	by := map[key][]Measurement{}
	for _, r := range runs {
		if r.Result != nil {
			by[key{r.Cell, r.Target}] = append(by[key{r.Cell, r.Target}], r)
		}
	}
	var rows []Row
	for _, c := range cells {
		base := map[int]float64{}
		for _, r := range by[key{c, targets[0]}] {
			base[r.Round] = r.Result.TPS
		}
		for _, t := range targets {
			rs := by[key{c, t}]
			if len(rs) == 0 {
				continue
			}
			var tps, p95, p50, p99, ratios []float64
			row := Row{Cell: c, Target: t, Runs: len(rs)}
			for _, r := range rs {
				res := r.Result
				tps = append(tps, res.TPS)
				p95 = append(p95, res.Latency.P95)
				p50 = append(p50, res.Latency.P50)
				p99 = append(p99, res.Latency.P99)
				row.Errors += res.Errors
				if b, ok := base[r.Round]; ok && b > 0 {
					ratios = append(ratios, res.TPS/b)
				}
			}
			row.TPS, row.P95 = stat(tps), stat(p95)
			row.P50, row.P99 = median(p50), median(p99)
			row.Ratio = median(ratios)
			rows = append(rows, row)
		}
	}
	return rows
}

func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// WriteTable writes rows as a Markdown table: per cell and target the
// median TPS and p95 over the rounds with their ranges, and the ratio to
// the first target.
func WriteTable(w io.Writer, first string, rows []Row) error {
	var b strings.Builder
	fmt.Fprintf(&b, "| workload | threads | target | TPS (median) | TPS min–max | p95 ms (median) | p95 min–max | TPS vs %s | errors |\n", first)
	b.WriteString("|---|--:|---|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		ratio := "—"
		if r.Ratio > 0 {
			ratio = strconv.FormatFloat(r.Ratio, 'f', 2, 64)
		}
		name := r.Cell.Name()
		if r.Cell.TPCC {
			name = "tpcc (tpmC, New-Order p95)"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s–%s | %s | %s–%s | %s | %d |\n",
			name, r.Cell.Threads, r.Target, num(r.TPS.Median), num(r.TPS.Min), num(r.TPS.Max),
			num(r.P95.Median), num(r.P95.Min), num(r.P95.Max), ratio, r.Errors)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var runsHeader = []string{"seq", "round", "target", "workload", "threads", "tps", "qps", "p50_ms", "p95_ms", "p99_ms", "max_ms",
	"errors", "retries", "reconnects", "duration_s", "server", "client"}

// WriteRunsCSV writes every run, in the order they ran.
func WriteRunsCSV(w io.Writer, runs []Measurement) error {
	cw := csv.NewWriter(w)
	cw.Write(runsHeader) //nolint:errcheck // cw.Error below
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, r := range runs {
		res := r.Result
		if res == nil {
			continue
		}
		cw.Write([]string{strconv.Itoa(r.Seq), strconv.Itoa(r.Round), r.Target, r.Cell.Name(), strconv.Itoa(r.Cell.Threads), //nolint:errcheck // cw.Error below
			f(res.TPS), f(res.QPS), f(res.Latency.P50), f(res.Latency.P95), f(res.Latency.P99), f(res.Latency.Max),
			strconv.FormatInt(res.Errors, 10), strconv.FormatInt(res.Retries, 10), strconv.FormatInt(res.Reconnects, 10),
			f(res.Duration.Seconds()), res.Server, r.Client})
	}
	cw.Flush()
	return cw.Error()
}

// WriteSeriesCSV writes every run's per-second series.
func WriteSeriesCSV(w io.Writer, runs []Measurement) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"seq", "round", "target", "workload", "threads", "t", "tps", "p95_ms", "errors", "client"}) //nolint:errcheck // cw.Error below
	for _, r := range runs {
		if r.Result == nil {
			continue
		}
		for _, s := range r.Result.Series {
			cw.Write([]string{strconv.Itoa(r.Seq), strconv.Itoa(r.Round), r.Target, r.Cell.Name(), strconv.Itoa(r.Cell.Threads), //nolint:errcheck // cw.Error below
				strconv.Itoa(s.T), strconv.FormatFloat(s.TPS, 'f', 0, 64), strconv.FormatFloat(s.P95, 'f', 3, 64), strconv.FormatInt(s.Errors, 10), r.Client})
		}
	}
	cw.Flush()
	return cw.Error()
}
