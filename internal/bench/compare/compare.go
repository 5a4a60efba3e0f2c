// Package compare is lockstep bench compare: a matrix of sysbench-style
// OLTP cells (internal/bench/oltp) run against two or more targets —
// running servers, lockstep binaries or a MariaDB it starts itself —
// interleaved in rounds, with a Markdown table of medians and ratios, CSV
// of every run and PNG plots (internal/bench/plot).
package compare

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"lockstep/internal/bench"
	"lockstep/internal/bench/oltp"
)

// Config is one comparison.
type Config struct {
	Targets   []Spec
	Workloads []oltp.Workload
	Threads   []int
	Duration  time.Duration // measured window of each run
	Warmup    time.Duration // before each run's window, not counted
	Rounds    int
	Options   oltp.Options // tables, table size and the workloads' options
	// Client runs the oltp cells: the built-in client (the default) or
	// sysbench 1.0.20, which must be installed.
	Client Client
	// TPCCWarehouses > 0 adds TPC-C (lockstep bench tpcc: the five
	// transactions, no think times) at each thread count, after the oltp
	// cells, on a database tpcc of that many warehouses loaded once per
	// target; TPCCScaleDown divides its items and customers (1: full scale).
	TPCCWarehouses int
	TPCCScaleDown  int
	Out            string // results.md, runs.csv, series.csv, *.png
	// Timeline is the cell whose per-second throughput is plotted; its zero
	// value is the first workload at the highest thread count.
	Timeline Cell
	// QuietMax bounds the wait, before each run, for the servers compare
	// started to go idle (below 5% of a core for a second); 0: no wait.
	QuietMax time.Duration
	// WorkDir is where the servers' temporary directories (data, logs) are
	// made; "" is the system's temporary directory.
	WorkDir  string
	Seed     uint64    // oltp's --rand-seed; 0: random
	Progress io.Writer // a line per run; nil for none
	Command  string    // the command line, recorded in results.md
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case len(c.Targets) < 2:
		return errors.New("--target: need two or more targets")
	case len(c.Workloads) == 0 && c.TPCCWarehouses == 0:
		return errors.New("--workloads: none (and no --tpcc-warehouses)")
	case c.TPCCWarehouses < 0 || c.TPCCWarehouses > 1000:
		return fmt.Errorf("--tpcc-warehouses must be 0..1000, not %d", c.TPCCWarehouses)
	case c.TPCCWarehouses > 0 && (c.TPCCScaleDown < 1 || c.TPCCScaleDown > bench.MaxScaleDown):
		return fmt.Errorf("--tpcc-scale-down must be 1..%d, not %d", bench.MaxScaleDown, c.TPCCScaleDown)
	case len(c.Threads) == 0:
		return errors.New("--threads: none")
	case c.Rounds < 1:
		return fmt.Errorf("--rounds must be at least 1, not %d", c.Rounds)
	case c.Duration < time.Second:
		return errors.New("--time must be at least 1s")
	case c.Warmup < 0:
		return errors.New("--warmup must not be negative")
	case c.Out == "":
		return errors.New("--out: name a directory")
	case c.Client != BuiltinClient && c.Client != SysbenchClient:
		return fmt.Errorf("unknown client %v", c.Client)
	}
	for _, t := range c.Threads {
		if t < 1 || t > 10000 {
			return fmt.Errorf("--threads: %d is not in 1..10000", t)
		}
	}
	if c.Timeline != (Cell{}) && !containsCell(Cells(c.Workloads, c.Threads, c.TPCCWarehouses > 0), c.Timeline) {
		return fmt.Errorf("--timeline %s is not a cell of the matrix", c.Timeline)
	}
	return c.Options.Validate()
}

func containsCell(cs []Cell, c Cell) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

func (c *Config) timeline() Cell {
	if c.Timeline != (Cell{}) {
		return c.Timeline
	}
	if len(c.Workloads) == 0 {
		return Cell{Threads: maxInt(c.Threads), TPCC: true}
	}
	return Cell{Workload: c.Workloads[0], Threads: maxInt(c.Threads)}
}

func maxInt(v []int) int {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

func (c *Config) printf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format, args...)
	}
}

// Report is what a comparison produced.
type Report struct {
	Runs     []Measurement
	Rows     []Row
	Versions map[string]string // target name: SELECT VERSION()
	Started  time.Time
	Files    []string // written to Config.Out
	// Client is the oltp cells' client as runs.csv names it ("lockstep
	// bench oltp", "sysbench 1.0.20"), ClientDesc its line in results.md.
	Client, ClientDesc string
}

// Run starts the targets, prepares each once (dropping sbtest1..N first),
// runs the schedule, stops the targets it started and writes the results
// to cfg.Out. On an error after some runs, what was measured is written
// before the error is returned.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	kind := cfg.Client
	if len(cfg.Workloads) == 0 {
		kind = BuiltinClient // TPC-C only: nothing for sysbench to run
	}
	client, err := newOLTPClient(ctx, kind)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(cfg.WorkDir, "lockstep-compare-")
	if err != nil {
		return nil, err
	}
	rep := &Report{Versions: map[string]string{}, Started: time.Now(), Client: client.Name(), ClientDesc: client.describe()}
	servers := make([]*server, len(cfg.Targets))
	keepWork := false
	defer func() {
		for _, s := range servers {
			if s != nil {
				if err := s.stop(); err != nil {
					cfg.printf("compare: stopping %s: %v\n", s.spec.Name, err)
					keepWork = true
				}
			}
		}
		if keepWork {
			cfg.printf("compare: servers' logs kept in %s\n", work)
		} else {
			os.RemoveAll(work)
		}
	}()
	for i, spec := range cfg.Targets {
		dir := filepath.Join(work, spec.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		cfg.printf("compare: starting %s\n", spec)
		s, err := start(ctx, spec, dir)
		if err != nil {
			keepWork = true
			return nil, err
		}
		servers[i] = s
	}
	for _, s := range servers {
		oc := cfg.oltpConfig(s.dsn, oltp.ReadWrite, max(1, min(cfg.Options.Tables, 8)))
		cfg.printf("compare: preparing %s: %d tables of %d rows\n", s.spec.Name, cfg.Options.Tables, cfg.Options.TableSize)
		if err := ensureDatabase(ctx, s.dsn); err != nil {
			keepWork = true
			return nil, fmt.Errorf("target %s: %w", s.spec.Name, err)
		}
		if err := oltp.Cleanup(ctx, oc); err != nil {
			keepWork = true
			return nil, fmt.Errorf("target %s: cleanup: %w", s.spec.Name, err)
		}
		if err := oltp.Prepare(ctx, oc); err != nil {
			keepWork = true
			return nil, fmt.Errorf("target %s: prepare: %w", s.spec.Name, err)
		}
		if cfg.TPCCWarehouses > 0 {
			cfg.printf("compare: loading TPC-C into %s: %d warehouses (scale-down %d)\n", s.spec.Name, cfg.TPCCWarehouses, cfg.TPCCScaleDown)
			if err := cfg.loadTPCC(ctx, s.dsn); err != nil {
				keepWork = true
				return nil, fmt.Errorf("target %s: TPC-C load: %w", s.spec.Name, err)
			}
		}
	}
	var pids []int
	for _, s := range servers {
		if s.pid != 0 {
			pids = append(pids, s.pid)
		}
	}
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.spec.Name
	}
	cells := Cells(cfg.Workloads, cfg.Threads, cfg.TPCCWarehouses > 0)
	steps := Schedule(cfg.Rounds, cells, len(servers))
	tl := cfg.timeline()
	var runErr error
	for i, st := range steps {
		if err := ctx.Err(); err != nil {
			runErr = err
			break
		}
		s := servers[st.Target]
		if !waitQuiet(pids, cfg.QuietMax) {
			cfg.printf("compare: servers still busy after %s; running anyway\n", cfg.QuietMax)
		}
		var cps *checkpointWatch
		if st.Cell == tl && s.spec.Kind != MariaDB {
			cps = watchCheckpoints(ctx, s.dsn, cfg.Warmup)
		}
		var res *oltp.Result
		var err error
		who := client.Name()
		if st.Cell.TPCC {
			who = tpccClient
			res, err = cfg.runTPCC(ctx, s.dsn, st.Cell.Threads)
		} else {
			res, err = client.run(ctx, cfg.oltpConfig(s.dsn, st.Cell.Workload, st.Cell.Threads))
		}
		run := Measurement{Seq: i + 1, Round: st.Round, Target: s.spec.Name, Cell: st.Cell, Client: who, Result: res}
		if cps != nil {
			run.Checkpoints = cps.stop()
		}
		if err != nil {
			runErr = fmt.Errorf("round %d, %s on %s: %w", st.Round, st.Cell, s.spec.Name, err)
			break
		}
		rep.Runs = append(rep.Runs, run)
		rep.Versions[s.spec.Name] = res.Server
		unit := "tps"
		if st.Cell.TPCC {
			unit = "tpmC"
		}
		cfg.printf("[%d/%d] round %d %-12s %s threads %d: %.1f %s, p95 %.2f ms, %d errors, %d retries\n",
			i+1, len(steps), st.Round, s.spec.Name, st.Cell.Name(), st.Cell.Threads, res.TPS, unit, res.Latency.P95, res.Errors, res.Retries)
	}
	rep.Rows = Summarize(names, cells, rep.Runs)
	if len(rep.Runs) > 0 {
		if err := cfg.write(rep, names, cells); err != nil {
			return rep, errors.Join(runErr, err)
		}
	}
	if runErr != nil {
		keepWork = true
	}
	return rep, runErr
}

// ensureDatabase creates the DSN's database (sbtest if it names none)
// if it is missing, so that the tables of an earlier run can be dropped.
func ensureDatabase(ctx context.Context, dsn string) error {
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		return err
	}
	db := mc.DBName
	if db == "" {
		db = "sbtest"
	}
	mc.DBName = ""
	return execSQL(ctx, mc.FormatDSN(), "CREATE DATABASE IF NOT EXISTS `"+strings.ReplaceAll(db, "`", "``")+"`")
}

func (c *Config) oltpConfig(dsn string, w oltp.Workload, threads int) oltp.Config {
	return oltp.Config{DSN: dsn, Workload: w, Threads: threads, Duration: c.Duration, Warmup: c.Warmup, Options: c.Options, Seed: c.Seed}
}

// checkpointWatch polls a lockstep server's Lockstep_checkpoints during a
// run and notes when it grows, in seconds since the run's measured window
// began (reckoned from the call, so late by the run's connection set-up).
type checkpointWatch struct {
	done chan struct{}
	out  chan []float64
}

func watchCheckpoints(ctx context.Context, dsn string, warmup time.Duration) *checkpointWatch {
	w := &checkpointWatch{done: make(chan struct{}), out: make(chan []float64, 1)}
	begin := time.Now().Add(warmup)
	go func() {
		var marks []float64
		defer func() { w.out <- marks }()
		mc, err := mysql.ParseDSN(dsn)
		if err != nil {
			return
		}
		conn, err := mysql.NewConnector(mc)
		if err != nil {
			return
		}
		db := sql.OpenDB(conn)
		defer db.Close()
		db.SetMaxOpenConns(1)
		count := func() (int64, bool) {
			var name, v string
			if err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Lockstep_checkpoints'").Scan(&name, &v); err != nil {
				return 0, false
			}
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
		last, ok := count()
		if !ok {
			return // not a lockstep server
		}
		tk := time.NewTicker(250 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-tk.C:
				if n, ok := count(); ok && n > last {
					last = n
					if t := time.Since(begin).Seconds(); t >= 0 {
						marks = append(marks, t)
					}
				}
			}
		}
	}()
	return w
}

func (w *checkpointWatch) stop() []float64 {
	close(w.done)
	return <-w.out
}

// tpccDSN is the target's DSN with the database tpcc.
func tpccDSN(dsn string) (string, error) {
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", err
	}
	mc.DBName = "tpcc"
	return mc.FormatDSN(), nil
}

func (c *Config) tpccConfig(dsn string, threads int) (bench.Config, error) {
	d, err := tpccDSN(dsn)
	return bench.Config{DSN: d, Warehouses: c.TPCCWarehouses, Threads: threads, ScaleDown: c.TPCCScaleDown, Seed: c.Seed}, err
}

// loadTPCC creates and loads TPC-C's nine tables (lockstep bench tpcc
// --load --duration 0).
func (c *Config) loadTPCC(ctx context.Context, dsn string) error {
	bc, err := c.tpccConfig(dsn, min(c.TPCCWarehouses, 4))
	if err != nil {
		return err
	}
	bc.Load = true
	_, err = bench.Run(ctx, bc)
	return err
}

// runTPCC runs TPC-C's mix at threads terminals and reports it as an oltp
// Result: TPS holds tpmC (New-Order transactions per minute), the
// latencies are New-Order's, Transactions all five types' completed ones,
// Retries the deadlocks and lock wait timeouts retried.
func (c *Config) runTPCC(ctx context.Context, dsn string, threads int) (*oltp.Result, error) {
	bc, err := c.tpccConfig(dsn, threads)
	if err != nil {
		return nil, err
	}
	bc.Duration, bc.Warmup = c.Duration, c.Warmup
	r, err := bench.Run(ctx, bc)
	if err != nil {
		return nil, err
	}
	no := &r.Types[bench.NewOrder]
	ms := func(p float64) float64 { return float64(no.Percentile(p)) / float64(time.Millisecond) }
	res := &oltp.Result{Workload: "tpcc", Server: r.Server, Threads: threads, Warmup: r.Warmup, Duration: r.Measured, TPS: r.TpmC,
		Latency: oltp.Latency{P50: ms(50), P95: ms(95), P99: ms(99), P999: ms(99.9), Max: ms(100)}}
	tot := r.Total()
	res.Transactions = tot.Completed()
	res.Retries = tot.Deadlocks + tot.LockTimeouts
	res.Errors = tot.Errors
	if s := r.Measured.Seconds(); s > 0 {
		res.QPS = float64(res.Transactions) / s // transactions of all five types per second
	}
	for _, e := range r.Errors {
		res.ErrorMessages = append(res.ErrorMessages, oltp.ErrorCount{Message: e.Message, Count: e.Count})
	}
	return res, nil
}
