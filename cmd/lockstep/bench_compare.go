package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"lockstep/internal/bench/compare"
	"lockstep/internal/bench/oltp"
)

func newBenchCompareCmd() *cobra.Command {
	cfg := compare.Config{
		Threads:  []int{16, 64},
		Duration: 30 * time.Second,
		Warmup:   5 * time.Second,
		Rounds:   3,
		Options:  oltp.DefaultOptions(),
		Out:      "bench-compare",
		QuietMax: 2 * time.Minute,
	}
	cfg.Options.Tables = 4
	cfg.Options.TableSize = 100000
	var targets []string
	workloads := "point_select,read_only,write_only,read_write,insert"
	var timeline string
	var seed int64
	client := "lockstep"
	cmd := &cobra.Command{
		Use:   "compare --target NAME=KIND[:...] --target ... [matrix]",
		Short: "sysbench-style OLTP matrix against two or more servers, interleaved, with a table and plots",
		Long: "Run a matrix of lockstep bench oltp cells (--workloads x --threads) against two or\n" +
			"more targets and write a Markdown table of medians and ratios, CSV of every run and\n" +
			"PNG plots to --out.\n\n" +
			"Targets (--target, repeated; the first is the base of the ratios):\n" +
			"  NAME=dsn:USER[:PASSWORD]@tcp(HOST:PORT)/[DB]  a running server (DB defaults to sbtest;\n" +
			"                                                its sbtest1..N tables are dropped first)\n" +
			"  NAME=lockstep:BINARY[:FLAGS]                  BINARY serve on a free port of 127.0.0.1 with a\n" +
			"                                                fresh temporary data directory (durable defaults),\n" +
			"                                                FLAGS (space-separated serve flags) added; an item\n" +
			"                                                @VAR=VALUE is SET GLOBAL VAR = VALUE once it is up\n" +
			"  NAME=mariadb[:SETTINGS]                       MariaDB from Debian's mariadb-server (installed with\n" +
			"                                                apt-get if missing), a temporary data directory,\n" +
			"                                                innodb_flush_log_at_trx_commit=1, log-bin, sync_binlog=1;\n" +
			"                                                SETTINGS: extra my.cnf lines (key=value, space-separated)\n\n" +
			"--client picks what runs the oltp cells' transactions: lockstep (default) is\n" +
			"lockstep bench oltp's Go client in this process; sysbench runs Debian's sysbench\n" +
			"1.0.20 (oltp_WORKLOAD ... run, --report-interval=1 --percentile=95 --histogram=on),\n" +
			"the reference client, which must be installed (apt-get install -y sysbench); its\n" +
			"warm-up is a separate unmeasured run. results.md, runs.csv and the plots name the client.\n\n" +
			"--tpcc-warehouses N adds TPC-C (lockstep bench tpcc's five transactions) at each\n" +
			"thread count after the oltp cells, on a database tpcc loaded once per target; its\n" +
			"rows give tpmC and New-Order's latency.\n\n" +
			"Each target is started and prepared once (--tables of --table-size rows). Then\n" +
			"--rounds rounds: in each, every cell runs on every target back to back, the targets\n" +
			"in their given order in odd rounds and reversed in even ones (ABBA), each run\n" +
			"--warmup then --time measured; before each run compare waits (at most --quiet-max)\n" +
			"until the servers it started are idle. Targets it started are stopped at the end.\n\n" +
			"Output in --out: results.md (the table, the plots), runs.csv, series.csv (per second),\n" +
			"tps-WORKLOAD.png (throughput against threads), latency-WORKLOAD-THREADS.png (p50, p95,\n" +
			"p99) and timeline.png (per-second throughput of the --timeline cell's median run of\n" +
			"each target, lockstep's checkpoints marked).\n\n" +
			"Exit status: 0 when every run completed without errors; 1 when a target or a run\n" +
			"failed or events failed; 2 for a usage error.",
		Example: "  lockstep bench compare --target lockstep=lockstep:./lockstep --target mariadb=mariadb \\\n" +
			"      --workloads point_select,read_only,write_only --threads 16 --time 20s --rounds 2 --out /tmp/cmp\n" +
			"  lockstep bench compare --target new=lockstep:/tmp/ls-new --target old=lockstep:/tmp/ls-old:'--sync-binlog=0' \\\n" +
			"      --workloads write_only --threads 16,64 --rounds 5\n" +
			"  lockstep bench compare --target a='dsn:root@tcp(10.0.0.1:3306)/' --target b='dsn:root@tcp(10.0.0.2:3306)/'",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			specs, err := compare.ParseSpecs(targets)
			if err != nil {
				return fmt.Errorf("bench compare: %v", err)
			}
			for i, s := range specs {
				if s.Kind == compare.Lockstep {
					abs, err := filepath.Abs(s.Binary)
					if err != nil {
						return fmt.Errorf("bench compare: %v", err)
					}
					specs[i].Binary = abs
				}
			}
			cfg.Targets = specs
			cfg.Workloads = nil
			for _, w := range strings.Split(workloads, ",") {
				if strings.TrimSpace(w) == "" {
					continue
				}
				wl, err := oltp.ParseWorkload(strings.TrimSpace(w))
				if err != nil {
					return fmt.Errorf("bench compare: --workloads: %v", err)
				}
				cfg.Workloads = append(cfg.Workloads, wl)
			}
			if timeline != "" {
				c, err := parseCell(timeline)
				if err != nil {
					return fmt.Errorf("bench compare: --timeline: %v", err)
				}
				cfg.Timeline = c
			}
			c, err := compare.ParseClient(client)
			if err != nil {
				return fmt.Errorf("bench compare: %v", err)
			}
			cfg.Client = c
			cfg.Seed = uint64(seed)
			cfg.Progress = cmd.ErrOrStderr()
			cfg.Command = commandLine(os.Args)
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("bench compare: %v", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := compare.Run(ctx, cfg)
			if rep != nil {
				for _, f := range rep.Files {
					if strings.HasSuffix(f, "results.md") {
						fmt.Fprintf(cmd.OutOrStdout(), "results: %s\n", f)
					}
				}
			}
			if err != nil {
				return runtimeError{fmt.Errorf("bench compare: %v", err)}
			}
			for _, r := range rep.Rows {
				if r.Errors > 0 {
					return runtimeError{fmt.Errorf("bench compare: %d events failed on %s in %s (see runs.csv)", r.Errors, r.Target, r.Cell)}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&targets, "target", nil, "NAME=dsn:DSN, NAME=lockstep:BINARY[:FLAGS] or NAME=mariadb[:SETTINGS] (two or more)")
	f.StringVar(&workloads, "workloads", workloads, "comma-separated oltp workloads")
	f.IntSliceVar(&cfg.Threads, "threads", cfg.Threads, "comma-separated thread counts")
	f.Var(secondsFlag{&cfg.Duration}, "time", "measured window of each run")
	f.Var(secondsFlag{&cfg.Warmup}, "warmup", "warm-up before each run's window, not counted")
	f.StringVar(&client, "client", client, "client of the oltp cells: lockstep (the built-in bench oltp client) or sysbench (Debian's sysbench 1.0.20 binary, apt-get install -y sysbench)")
	f.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "rounds (the targets' order reverses every other round)")
	f.IntVar(&cfg.Options.Tables, "tables", cfg.Options.Tables, "number of tables")
	f.IntVar(&cfg.Options.TableSize, "table-size", cfg.Options.TableSize, "rows per table")
	f.IntVar(&cfg.TPCCWarehouses, "tpcc-warehouses", 0, "also run TPC-C (lockstep bench tpcc) at each thread count on this many warehouses (0: no TPC-C)")
	f.IntVar(&cfg.TPCCScaleDown, "tpcc-scale-down", 1, "TPC-C: divide items and customers by this (1: full scale)")
	f.StringVar(&cfg.Out, "out", cfg.Out, "directory for results.md, CSV and PNG files")
	f.StringVar(&timeline, "timeline", "", "WORKLOAD/THREADS: the cell plotted over time (default: the first workload at the most threads)")
	f.Var(secondsFlag{&cfg.QuietMax}, "quiet-max", "wait at most this long before each run for the started servers to go idle (0: no wait)")
	f.Int64Var(&seed, "rand-seed", 0, "random seed (0: a random one)")
	f.SortFlags = false
	return cmd
}

// parseCell parses WORKLOAD/THREADS.
func parseCell(s string) (compare.Cell, error) {
	w, t, ok := strings.Cut(s, "/")
	if !ok {
		return compare.Cell{}, fmt.Errorf("%q: want WORKLOAD/THREADS", s)
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 1 {
		return compare.Cell{}, fmt.Errorf("%q: threads must be a positive number", s)
	}
	if strings.EqualFold(w, "tpcc") {
		return compare.Cell{Threads: n, TPCC: true}, nil
	}
	wl, err := oltp.ParseWorkload(w)
	if err != nil {
		return compare.Cell{}, err
	}
	return compare.Cell{Workload: wl, Threads: n}, nil
}

// commandLine is the command as typed, quoted for a shell where needed.
func commandLine(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if i == 0 {
			a = filepath.Base(a)
		}
		if a == "" || strings.ContainsAny(a, " \t'\"()$*?;&|<>\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
