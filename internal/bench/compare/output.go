package compare

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"lockstep/internal/bench/oltp"
	"lockstep/internal/bench/plot"
)

// write writes results.md, runs.csv, series.csv and the plots to c.Out.
func (c *Config) write(rep *Report, names []string, cells []Cell) error {
	put := func(name string, data []byte) error {
		p := filepath.Join(c.Out, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		rep.Files = append(rep.Files, p)
		return nil
	}
	var b bytes.Buffer
	if err := WriteRunsCSV(&b, rep.Runs); err != nil {
		return err
	}
	if err := put("runs.csv", b.Bytes()); err != nil {
		return err
	}
	b.Reset()
	if err := WriteSeriesCSV(&b, rep.Runs); err != nil {
		return err
	}
	if err := put("series.csv", b.Bytes()); err != nil {
		return err
	}
	pngs, err := c.plots(rep, names, cells)
	rep.Files = append(rep.Files, pngs...)
	if err != nil {
		return err
	}
	b.Reset()
	c.markdown(&b, rep, names, pngs)
	return put("results.md", b.Bytes())
}

func (c *Config) markdown(b *bytes.Buffer, rep *Report, names []string, pngs []string) {
	fmt.Fprintf(b, "# lockstep bench compare, %s\n\n", rep.Started.Format("2006-01-02 15:04 MST"))
	if c.Command != "" {
		fmt.Fprintf(b, "    %s\n\n", c.Command)
	}
	host, _ := os.Hostname()
	fmt.Fprintf(b, "Machine: %s, %d CPUs (%s/%s); client and servers share it.\n\n", host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	b.WriteString("Targets:\n\n")
	for _, s := range c.Targets {
		desc := s.String()
		switch s.Kind {
		case MariaDB:
			desc += " (started by compare: innodb_flush_log_at_trx_commit=1, log-bin, sync_binlog=1, binlog_format=ROW, 2 GB buffer pool"
			if len(s.Args) > 0 {
				desc += "; the settings after the colon come last and override these"
			}
			desc += ")"
		case Lockstep:
			desc += " (started by compare on a fresh data directory"
			if len(s.Globals) > 0 {
				desc += "; the @ items SET GLOBAL once it was up"
			}
			desc += ")"
		}
		fmt.Fprintf(b, "- **%s**: %s, server version %s\n", s.Name, desc, rep.Versions[s.Name])
	}
	fmt.Fprintf(b, "\nMatrix: %s at %s threads; %d tables of %d rows per target (prepared once); each run %s warm-up then %s measured; %d rounds, the targets' order reversed every other round (ABBA); %d runs.\n",
		joinWorkloads(c.Workloads), joinInts(c.Threads), c.Options.Tables, c.Options.TableSize, c.Warmup, c.Duration, c.Rounds, len(rep.Runs))
	if len(c.Workloads) > 0 {
		fmt.Fprintf(b, "Client of the oltp cells: %s.\n", rep.ClientDesc)
	}
	if c.TPCCWarehouses > 0 {
		fmt.Fprintf(b, "TPC-C: lockstep bench tpcc's five transactions (45/43/4/4/4, no think times) on %d warehouses (scale-down %d), loaded once per target; its row gives tpmC and New-Order's p95, no consistency checks between runs.\n",
			c.TPCCWarehouses, c.TPCCScaleDown)
	}
	b.WriteString("\n")
	WriteTable(b, names[0], rep.Rows) //nolint:errcheck // a bytes.Buffer
	fmt.Fprintf(b, "\nTPS and p95 (ms): median over the rounds, with min–max. TPS vs %s: the median over rounds of the TPS ratio to %s in the same round. errors: events abandoned after an error (all rounds). Every run: runs.csv; per-second series: series.csv.\n", names[0], names[0])
	if len(pngs) > 0 {
		b.WriteString("\n## Plots\n\n")
		for _, p := range pngs {
			n := filepath.Base(p)
			fmt.Fprintf(b, "![%s](%s)\n", strings.TrimSuffix(n, ".png"), n)
		}
	}
}

func joinWorkloads(ws []oltp.Workload) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = w.String()
	}
	return strings.Join(s, ", ")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// plots draws, into c.Out: per workload, median TPS against threads (a line
// per target) and, per cell, median p50/p95/p99 (bars per target); and the
// per-second TPS of the timeline cell's median run of each target, its
// checkpoints marked.
func (c *Config) plots(rep *Report, names []string, cells []Cell) ([]string, error) {
	var files []string
	type key struct {
		c Cell
		t string
	}
	rows := map[key]Row{}
	for _, r := range rep.Rows {
		rows[key{r.Cell, r.Target}] = r
	}
	threads := slices.Clone(c.Threads)
	slices.Sort(threads)
	var kinds []Cell // a cell per workload, its Threads unset
	for _, w := range c.Workloads {
		kinds = append(kinds, Cell{Workload: w})
	}
	if c.TPCCWarehouses > 0 {
		kinds = append(kinds, Cell{TPCC: true})
	}
	for _, k := range kinds {
		w, unit := k.Name(), "transactions/s"
		if k.TPCC {
			unit = "tpmC (New-Order transactions/min)"
		}
		l := plot.Lines{Title: fmt.Sprintf("%s: throughput (median of %d rounds; %s)", w, c.Rounds, cellClient(rep, k)), XLabel: "threads", YLabel: unit,
			Points: true, LogX: len(threads) > 1 && threads[0] > 0}
		for _, n := range names {
			s := plot.Series{Name: n}
			for _, t := range threads {
				cell := k
				cell.Threads = t
				if r, ok := rows[key{cell, n}]; ok {
					s.X = append(s.X, float64(t))
					s.Y = append(s.Y, r.TPS.Median)
				}
			}
			if len(s.X) > 0 {
				l.Series = append(l.Series, s)
			}
		}
		if len(l.Series) == 0 {
			continue
		}
		p := filepath.Join(c.Out, fmt.Sprintf("tps-%s.png", w))
		if err := plot.SaveLines(p, l); err != nil {
			return files, err
		}
		files = append(files, p)
	}
	for _, cell := range cells {
		what := ""
		if cell.TPCC {
			what = " New-Order"
		}
		g := plot.GroupedBars{Title: fmt.Sprintf("%s, %d threads:%s latency (median of %d rounds; %s)", cell.Name(), cell.Threads, what, c.Rounds, cellClient(rep, cell)),
			YLabel: "ms", Groups: []string{"p50", "p95", "p99"}}
		for _, n := range names {
			if r, ok := rows[key{cell, n}]; ok {
				g.Bars = append(g.Bars, plot.Bars{Name: n, Values: []float64{r.P50, r.P95.Median, r.P99}})
			}
		}
		if len(g.Bars) == 0 {
			continue
		}
		p := filepath.Join(c.Out, fmt.Sprintf("latency-%s-%d.png", cell.Name(), cell.Threads))
		if err := plot.SaveBars(p, g); err != nil {
			return files, err
		}
		files = append(files, p)
	}
	tl := c.timeline()
	l := plot.Lines{Title: fmt.Sprintf("%s, %d threads: TPS per second, each target's median run (%s)", tl.Name(), tl.Threads, cellClient(rep, tl)),
		XLabel: "seconds into the measured window", YLabel: "transactions/s", MarkName: "checkpoint"}
	for _, n := range names {
		r := medianRun(rep.Runs, tl, n)
		if r == nil || len(r.Result.Series) == 0 {
			continue
		}
		s := plot.Series{Name: fmt.Sprintf("%s (round %d)", n, r.Round), Marks: r.Checkpoints}
		for _, sec := range r.Result.Series {
			s.X = append(s.X, float64(sec.T))
			s.Y = append(s.Y, sec.TPS)
		}
		l.Series = append(l.Series, s)
	}
	if len(l.Series) > 0 {
		p := filepath.Join(c.Out, "timeline.png")
		if err := plot.SaveLines(p, l); err != nil {
			return files, err
		}
		files = append(files, p)
	}
	return files, nil
}

// cellClient names the client of a cell's runs in a plot's title.
func cellClient(rep *Report, cell Cell) string {
	if cell.TPCC {
		return tpccClient
	}
	return rep.Client
}

// medianRun is the target's run of the cell with the median TPS (the lower
// of the two middle ones for an even count).
func medianRun(runs []Measurement, cell Cell, target string) *Measurement {
	var rs []*Measurement
	for i := range runs {
		if runs[i].Cell == cell && runs[i].Target == target && runs[i].Result != nil {
			rs = append(rs, &runs[i])
		}
	}
	if len(rs) == 0 {
		return nil
	}
	slices.SortStableFunc(rs, func(a, b *Measurement) int {
		switch {
		case a.Result.TPS < b.Result.TPS:
			return -1
		case a.Result.TPS > b.Result.TPS:
			return 1
		}
		return 0
	})
	return rs[(len(rs)-1)/2]
}
