package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"lockstep/internal/bench/oltp"
)

func newBenchOLTPCmd() *cobra.Command {
	cfg := oltp.DefaultConfig()
	var seed int64
	var output, outputFile, cpuProfile string
	cmd := &cobra.Command{
		Use:   "oltp WORKLOAD [prepare|run|cleanup]",
		Short: "sysbench's oltp_* workloads: prepare, run, cleanup",
		Long: "Run sysbench 1.0.20's OLTP workloads (point_select, read_only, write_only,\n" +
			"read_write, insert; the oltp_ prefix may be given) against the database named\n" +
			"in --dsn: the scripts' tables (sbtestN with the index k_N), statements,\n" +
			"statement counts, random distributions (--rand-type special by default) and\n" +
			"server-side prepared statements, one connection per thread.\n\n" +
			"prepare creates the database if missing and the --tables tables of\n" +
			"--table-size rows (multi-row INSERTs); run (the default) runs the workload for\n" +
			"--warmup then --time, with a progress line every --report-interval on stderr\n" +
			"and the result at the end (--output table, csv or json, to stdout or\n" +
			"--output-file); cleanup drops the tables.\n\n" +
			"As sysbench (--mysql-ignore-errors=1213,1020,1205), an event that fails with\n" +
			"a deadlock, a lock wait timeout or 1020 is run again (counted as a retry;\n" +
			"its latency includes the retries); unlike sysbench, its transaction is\n" +
			"rolled back first. Any other error abandons the event and is counted; a lost\n" +
			"connection is replaced. Options take sysbench's spellings too (--table_size).\n\n" +
			"Exit status: 0 when the run had no errors; 1 when an event failed or the\n" +
			"server could not be used; 2 for a usage error.",
		Example: "  lockstep bench oltp read_write prepare --dsn 'root@tcp(127.0.0.1:3306)/sbtest' --tables 4 --table-size 100000\n" +
			"  lockstep bench oltp read_write --threads 16 --time 60 --warmup 10\n" +
			"  lockstep bench oltp point_select --threads 16 --time 30 --output json --output-file ps.json\n" +
			"  lockstep bench oltp read_write cleanup --tables 4",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, err := oltp.ParseWorkload(args[0])
			if err != nil {
				return fmt.Errorf("bench oltp: %v", err)
			}
			cfg.Workload = w
			mode := "run"
			if len(args) == 2 {
				mode = args[1]
			}
			format, err := oltp.ParseFormat(output)
			if err != nil {
				return fmt.Errorf("bench oltp: %v", err)
			}
			cfg.Seed = uint64(seed)
			cfg.Progress = cmd.ErrOrStderr()
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("bench oltp: %v", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			switch mode {
			case "prepare":
				if err := oltp.Prepare(ctx, cfg); err != nil {
					return runtimeError{fmt.Errorf("bench oltp prepare: %v", err)}
				}
				return nil
			case "cleanup":
				if err := oltp.Cleanup(ctx, cfg); err != nil {
					return runtimeError{fmt.Errorf("bench oltp cleanup: %v", err)}
				}
				return nil
			case "run":
			default:
				return fmt.Errorf("bench oltp: unknown command %q (prepare, run, cleanup)", mode)
			}
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return runtimeError{fmt.Errorf("bench oltp: %v", err)}
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return runtimeError{fmt.Errorf("bench oltp: %v", err)}
				}
				defer pprof.StopCPUProfile()
			}
			res, err := oltp.Run(ctx, cfg)
			if err != nil {
				return runtimeError{fmt.Errorf("bench oltp %s: %v", w, err)}
			}
			if err := writeOLTPResult(res, format, cmd.OutOrStdout(), outputFile); err != nil {
				return runtimeError{fmt.Errorf("bench oltp: writing the result: %v", err)}
			}
			if res.Errors > 0 {
				return runtimeError{fmt.Errorf("bench oltp %s: %d events failed with errors (see the result)", w, res.Errors)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	o := &cfg.Options
	f.StringVar(&cfg.DSN, "dsn", cfg.DSN, "go-sql-driver/mysql DSN of the server and database (user:password@tcp(host:port)/db)")
	f.IntVar(&cfg.Threads, "threads", cfg.Threads, "connections running events")
	f.Var(secondsFlag{&cfg.Duration}, "time", "measured window (seconds or a duration)")
	f.Var(secondsFlag{&cfg.Warmup}, "warmup", "warm-up before the measured window, not counted")
	f.Var(secondsFlag{&cfg.ReportInterval}, "report-interval", "print a progress line on stderr this often (0: never)")
	f.IntVar(&o.Tables, "tables", o.Tables, "number of tables")
	f.IntVar(&o.TableSize, "table-size", o.TableSize, "rows per table")
	f.IntVar(&o.RangeSize, "range-size", o.RangeSize, "rows in a range SELECT")
	f.IntVar(&o.PointSelects, "point-selects", o.PointSelects, "point SELECTs per transaction (point_select runs 1)")
	f.IntVar(&o.SimpleRanges, "simple-ranges", o.SimpleRanges, "simple range SELECTs per transaction")
	f.IntVar(&o.SumRanges, "sum-ranges", o.SumRanges, "SELECT SUM() ranges per transaction")
	f.IntVar(&o.OrderRanges, "order-ranges", o.OrderRanges, "SELECT ... ORDER BY ranges per transaction")
	f.IntVar(&o.DistinctRanges, "distinct-ranges", o.DistinctRanges, "SELECT DISTINCT ranges per transaction")
	f.IntVar(&o.IndexUpdates, "index-updates", o.IndexUpdates, "UPDATEs of the indexed column k per transaction")
	f.IntVar(&o.NonIndexUpdates, "non-index-updates", o.NonIndexUpdates, "UPDATEs of c per transaction")
	f.IntVar(&o.DeleteInserts, "delete-inserts", o.DeleteInserts, "DELETE/INSERT pairs per transaction")
	f.BoolVar(&o.RangeSelects, "range-selects", o.RangeSelects, "run the range SELECTs (--range-selects=false: none)")
	f.BoolVar(&o.SkipTrx, "skip-trx", o.SkipTrx, "no BEGIN/COMMIT: every statement in autocommit")
	f.StringVar(&o.Dist.Type, "rand-type", o.Dist.Type, "distribution of ids: special, uniform, gaussian, pareto")
	f.IntVar(&o.Dist.Iter, "rand-spec-iter", o.Dist.Iter, "uniforms summed for gaussian values")
	f.IntVar(&o.Dist.Pct, "rand-spec-pct", o.Dist.Pct, "special: percent of the range that is hot")
	f.IntVar(&o.Dist.Res, "rand-spec-res", o.Dist.Res, "special: percent of picks in the hot part")
	f.Float64Var(&o.Dist.ParetoH, "rand-pareto-h", o.Dist.ParetoH, "pareto: the parameter h")
	f.Int64Var(&seed, "rand-seed", 0, "random seed (0: a random one)")
	f.StringVar(&output, "output", "table", "result format: table, csv, json")
	f.StringVar(&outputFile, "output-file", "", "write the result to this file instead of stdout")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the client to this file (go tool pprof)")
	f.SortFlags = false
	// sysbench's script options are spelled with underscores
	f.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
	return cmd
}

// writeOLTPResult writes the result to stdout or, when file is named, to
// the file (created after the run, so a failed run leaves none).
func writeOLTPResult(res *oltp.Result, format oltp.Format, stdout io.Writer, file string) error {
	if file == "" {
		return res.Write(stdout, format)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := res.Write(f, format); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
