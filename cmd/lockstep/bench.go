package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"lockstep/internal/apply"
	"lockstep/internal/bench"
)

// secondsFlag is a duration flag that also takes a plain number of seconds
// ("60" or "60s", "1m30s").
type secondsFlag struct{ d *time.Duration }

func (f secondsFlag) String() string {
	if f.d == nil {
		return "0s"
	}
	return f.d.String()
}

func (f secondsFlag) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		*f.d = time.Duration(n * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration (60, 60s, 1m30s)", s)
	}
	*f.d = d
	return nil
}

func (f secondsFlag) Type() string { return "duration" }

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run a benchmark against a MySQL-protocol server (lockstep or another)",
		Long: "Run a benchmark client against any server that speaks the MySQL protocol.\n\n" +
			"Benchmarks:\n  tpcc    TPC-C's five transactions, with the specification's consistency checks\n" +
			"  oltp    sysbench's oltp_* workloads (point_select, read_only, write_only, read_write, insert)\n" +
			"  replay  replay a stopped server's log into a fresh in-memory engine (--make-log writes one)\n" +
			"  compare an oltp matrix against two or more servers (lockstep binaries, MariaDB, DSNs), interleaved, with a table and plots",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("bench: name a benchmark (tpcc, oltp, replay, compare); see 'lockstep bench --help'")
			}
			return fmt.Errorf("bench: unknown benchmark %q (available: tpcc, oltp, replay, compare)", args[0])
		},
	}
	cmd.AddCommand(newBenchTPCCCmd())
	cmd.AddCommand(newBenchOLTPCmd())
	cmd.AddCommand(newBenchReplayCmd())
	cmd.AddCommand(newBenchCompareCmd())
	return cmd
}

func newBenchTPCCCmd() *cobra.Command {
	cfg := bench.Config{
		DSN:            "root@tcp(127.0.0.1:3306)/tpcc",
		Warehouses:     1,
		Threads:        4,
		Duration:       60 * time.Second,
		Warmup:         10 * time.Second,
		ReportInterval: 10 * time.Second,
		ScaleDown:      1,
		Check:          true,
	}
	var seed int64
	cmd := &cobra.Command{
		Use:   "tpcc",
		Short: "TPC-C: load, run the five transactions, check consistency",
		Long: "Run TPC-C's five transactions (New-Order, Payment, Order-Status, Delivery,\n" +
			"Stock-Level) in the 45/43/4/4/4 mix against the database named in --dsn, one\n" +
			"connection per thread, with server-side prepared statements and no think\n" +
			"times. Reports tpmC (New-Order transactions per minute of the measured\n" +
			"window), latency percentiles per transaction type, retries on deadlock (1213)\n" +
			"and lock wait timeout (1205), errors, and the consistency conditions of the\n" +
			"specification's Clause 3.3.2 with PASS/FAIL.\n\n" +
			"Exit status: 0 when every check passed and no transaction failed; 1 when a\n" +
			"check failed, a transaction failed with an unexpected error, or the server\n" +
			"could not be used; 2 for a usage error.",
		Example: "  lockstep bench tpcc --dsn 'root@tcp(127.0.0.1:3306)/tpcc' --warehouses 4 --load --duration 0\n" +
			"  lockstep bench tpcc --dsn 'root@tcp(127.0.0.1:3306)/tpcc' --warehouses 4 --threads 16 --duration 60s --warmup 10s\n" +
			"  lockstep bench tpcc --scale-down 100 --warehouses 2 --load --duration 10",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Seed = uint64(seed)
			cfg.Out = cmd.OutOrStdout()
			if err := cfg.Validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := bench.Run(ctx, cfg)
			if err != nil {
				return runtimeError{fmt.Errorf("bench tpcc: %v", err)}
			}
			if err := res.Err(); err != nil {
				return runtimeError{fmt.Errorf("bench tpcc: %v", err)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DSN, "dsn", cfg.DSN, "go-sql-driver/mysql DSN of the server and database (user:password@tcp(host:port)/db)")
	f.IntVar(&cfg.Warehouses, "warehouses", cfg.Warehouses, "number of warehouses")
	f.IntVar(&cfg.Threads, "threads", cfg.Threads, "terminals: connections running transactions")
	f.Var(secondsFlag{&cfg.Duration}, "duration", "measured window (0: no run, only --load and the checks)")
	f.Var(secondsFlag{&cfg.Warmup}, "warmup", "warm-up before the measured window")
	f.BoolVar(&cfg.Load, "load", false, "drop and create the nine tables and load the initial population first")
	f.IntVar(&cfg.LoadThreads, "load-threads", 0, "connections loading in parallel (default: --threads)")
	f.Var(secondsFlag{&cfg.ReportInterval}, "report-interval", "print a progress line this often (0: never)")
	f.IntVar(&cfg.ScaleDown, "scale-down", cfg.ScaleDown, "divide the item and customer counts by this, for tests (1: the specification's sizes)")
	f.BoolVar(&cfg.Check, "check", cfg.Check, "run the consistency checks at the end (--check=false to skip)")
	f.Int64Var(&seed, "seed", 0, "random seed (0: a random one)")
	f.SortFlags = false
	return cmd
}

func newBenchReplayCmd() *cobra.Command {
	rc := bench.ReplayConfig{Workers: 1, PreserveCommitOrder: true, ReportInterval: time.Second}
	mc := bench.MakeLogConfig{Transactions: 100000, ConflictRate: 0.1, HotRows: 16, Rows: 10000, Threads: 16, ReportInterval: time.Second}
	var makeLog bool
	var cpuProfile, scheduler string
	var seed int64
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Replay a stopped server's log into a fresh in-memory engine",
		Long: "Replay every transaction in the log of a stopped lockstep server's data\n" +
			"directory (from its newest checkpoint, or from empty when the log reaches back\n" +
			"to the start) into a fresh in-memory engine, through the apply state machine\n" +
			"and the executor crash recovery uses (internal/apply, Drain). Progress goes to\n" +
			"stderr; at the end a table (with table checksums, compared with the source's\n" +
			"when the data directory was written by --make-log) and the line\n" +
			"'replayed T transactions in S s: R transactions/s'. The time is reading and\n" +
			"applying the log, not loading the checkpoint.\n\n" +
			"--workers 1 applies serially (apply.Drain); more runs the parallel applier\n" +
			"(apply.Parallel: workers wait for each transaction's last_committed, and\n" +
			"with --preserve-commit-order, the default, publish in commit order).\n" +
			"--scheduler coordinator makes the one dispatching thread wait for each\n" +
			"transaction's last_committed before handing it out instead (MySQL's\n" +
			"LOGICAL_CLOCK coordinator), as a baseline.\n\n" +
			"--recertify ignores the records' last_committed and computes it from their\n" +
			"writesets with a certifier, as the commit pipeline does (a source without it).\n\n" +
			"--make-log writes a new data directory instead: a lockstep server run in\n" +
			"process on --datadir, a sysbench table of --rows rows, then --transactions\n" +
			"oltp_write_only-like transactions (an index update, a non-index update, a\n" +
			"delete and an insert) from --threads connections, a --conflict-rate fraction\n" +
			"of them on the --hot-rows first rows; then the server is stopped cleanly.\n" +
			"The rate it committed at and the table checksums go to " + bench.SourceFile + ".",
		Example: "  lockstep bench replay --make-log --datadir /tmp/replay-log --transactions 100000 --threads 16 --conflict-rate 0.1\n" +
			"  lockstep bench replay --datadir /tmp/replay-log --workers 1",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rc.Datadir == "" {
				return errors.New("bench replay: --datadir is required")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if makeLog {
				mc.Datadir, mc.Seed, mc.ReportInterval = rc.Datadir, uint64(seed), rc.ReportInterval
				mc.Out, mc.Progress = cmd.OutOrStdout(), cmd.ErrOrStderr()
				if err := mc.Validate(); err != nil {
					return fmt.Errorf("bench replay: %v", err)
				}
				if _, err := bench.MakeLog(ctx, mc); err != nil {
					return runtimeError{fmt.Errorf("bench replay --make-log: %v", err)}
				}
				return nil
			}
			if rc.Workers < 1 {
				return fmt.Errorf("bench replay: --workers must be at least 1, not %d", rc.Workers)
			}
			var err error
			if rc.Scheduler, err = apply.ParseScheduler(scheduler); err != nil {
				return fmt.Errorf("bench replay: --scheduler: %v", err)
			}
			rc.Out, rc.Progress = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return runtimeError{fmt.Errorf("bench replay: %v", err)}
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return runtimeError{fmt.Errorf("bench replay: %v", err)}
				}
				defer pprof.StopCPUProfile()
			}
			res, err := bench.Replay(ctx, rc)
			if err != nil {
				return runtimeError{fmt.Errorf("bench replay: %v", err)}
			}
			if res.Source != nil && !res.ChecksumsMatch() {
				return runtimeError{errors.New("bench replay: the replayed tables differ from the source's (" + bench.SourceFile + ")")}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&rc.Datadir, "datadir", "", "the data directory of a stopped server (with --make-log: a new one to write)")
	f.IntVar(&rc.Workers, "workers", rc.Workers, "apply workers: 1 is the serial applier (apply.Drain), more the parallel one (apply.Parallel)")
	f.BoolVar(&rc.PreserveCommitOrder, "preserve-commit-order", rc.PreserveCommitOrder, "with --workers > 1: make transactions visible in commit order (replica_preserve_commit_order)")
	f.StringVar(&scheduler, "scheduler", "lockstep", "with --workers > 1: lockstep (each worker waits for its transaction's last_committed) or coordinator (the dispatching thread waits, as MySQL's LOGICAL_CLOCK coordinator)")
	f.BoolVar(&rc.Recertify, "recertify", false, "ignore the records' last_committed and compute it from their writesets (internal/certify)")
	f.Var(secondsFlag{&rc.ReportInterval}, "report-interval", "print a progress line this often (0: never)")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the replay to this file (go tool pprof)")
	f.BoolVar(&makeLog, "make-log", false, "write a new data directory with a sysbench-like log instead of replaying")
	f.IntVar(&mc.Transactions, "transactions", mc.Transactions, "--make-log: transactions after the load")
	f.Float64Var(&mc.ConflictRate, "conflict-rate", mc.ConflictRate, "--make-log: fraction of transactions on the hot rows (0..1)")
	f.IntVar(&mc.HotRows, "hot-rows", mc.HotRows, "--make-log: the hot set (ids 1..N)")
	f.IntVar(&mc.Rows, "rows", mc.Rows, "--make-log: table size")
	f.IntVar(&mc.Threads, "threads", mc.Threads, "--make-log: connections committing transactions")
	f.Int64Var(&mc.CheckpointLogSize, "checkpoint-log-size", 0, "--make-log: the server's --checkpoint-log-size (0: no checkpoint, the log reaches back to the start)")
	f.IntVar(&mc.LargeTxnRows, "large-txn-rows", 0, "--make-log: then one transaction inserting this many rows (INSERT ... SELECT into sbtest.large)")
	f.Int64Var(&seed, "seed", 0, "--make-log: random seed (0: a random one)")
	f.SortFlags = false
	return cmd
}
