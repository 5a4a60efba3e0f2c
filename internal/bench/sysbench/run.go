package sysbench

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"lockstep/internal/bench/oltp"
)

// InstallHint is how to get the binary this package runs.
const InstallHint = "install Debian's sysbench 1.0.20 with `apt-get install -y sysbench`"

// Find returns the path of sysbench on PATH, or an error that says how to
// install it.
func Find() (string, error) {
	p, err := exec.LookPath("sysbench")
	if err != nil {
		return "", fmt.Errorf("sysbench is not installed (not found on PATH): %s", InstallHint)
	}
	return p, nil
}

// Version is what `BIN --version` prints, e.g. "sysbench 1.0.20".
func Version(ctx context.Context, bin string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", bin, err)
	}
	v := strings.TrimSpace(string(out))
	if !strings.HasPrefix(v, "sysbench ") {
		return "", fmt.Errorf("%s --version printed %q, not sysbench's version", bin, v)
	}
	return v, nil
}

// Args are the arguments of `sysbench oltp_WORKLOAD ... run` for cfg's
// server, workload, threads and options, running for seconds, with
// progress every second, the 95th percentile and the latency histogram.
func Args(cfg oltp.Config, seconds int) ([]string, error) {
	mc, err := mysql.ParseDSN(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("--dsn: %v", err)
	}
	db := mc.DBName
	if db == "" {
		db = "sbtest"
	}
	a := []string{"oltp_" + cfg.Workload.String(), "--db-driver=mysql"}
	switch mc.Net {
	case "tcp", "tcp4", "tcp6":
		host, port, err := net.SplitHostPort(mc.Addr)
		if err != nil {
			return nil, fmt.Errorf("--dsn: address %q: %v", mc.Addr, err)
		}
		a = append(a, "--mysql-host="+host, "--mysql-port="+port)
	case "unix":
		a = append(a, "--mysql-socket="+mc.Addr)
	default:
		return nil, fmt.Errorf("--dsn: sysbench cannot connect over %q", mc.Net)
	}
	a = append(a, "--mysql-user="+mc.User, "--mysql-password="+mc.Passwd, "--mysql-db="+db)
	o := cfg.Options
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	a = append(a,
		"--tables="+strconv.Itoa(o.Tables), "--table-size="+strconv.Itoa(o.TableSize), "--range_size="+strconv.Itoa(o.RangeSize),
		"--point_selects="+strconv.Itoa(o.PointSelects), "--simple_ranges="+strconv.Itoa(o.SimpleRanges),
		"--sum_ranges="+strconv.Itoa(o.SumRanges), "--order_ranges="+strconv.Itoa(o.OrderRanges),
		"--distinct_ranges="+strconv.Itoa(o.DistinctRanges), "--index_updates="+strconv.Itoa(o.IndexUpdates),
		"--non_index_updates="+strconv.Itoa(o.NonIndexUpdates), "--delete_inserts="+strconv.Itoa(o.DeleteInserts),
		"--range_selects="+onOff(o.RangeSelects), "--skip_trx="+onOff(o.SkipTrx),
		"--rand-type="+o.Dist.Type, "--rand-spec-iter="+strconv.Itoa(o.Dist.Iter), "--rand-spec-pct="+strconv.Itoa(o.Dist.Pct),
		"--rand-spec-res="+strconv.Itoa(o.Dist.Res), "--rand-pareto-h="+strconv.FormatFloat(o.Dist.ParetoH, 'g', -1, 64),
		"--threads="+strconv.Itoa(cfg.Threads), "--time="+strconv.Itoa(seconds),
		"--report-interval=1", "--percentile=95", "--histogram=on")
	if cfg.Seed != 0 {
		// sysbench takes a signed int; 0 would mean "from the clock"
		a = append(a, "--rand-seed="+strconv.FormatUint(cfg.Seed%math.MaxInt32+1, 10))
	}
	return append(a, "run"), nil
}

// wholeSeconds is d rounded up to whole seconds (sysbench's --time), at
// least 1.
func wholeSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// Run runs cfg's cell with the sysbench binary bin against a server whose
// tables are prepared (oltp.Prepare makes sysbench's): first, when
// cfg.Warmup > 0, an unmeasured run of the warm-up's length (sysbench
// 1.0.20 has no warm-up option), then the measured run of cfg.Duration
// (both rounded up to whole seconds). Its output, parsed, is the Result;
// Server is the server's SELECT VERSION(). An error means sysbench did not
// complete a run: it could not connect, or it stopped at an error that
// is not one it ignores (it does not go on after one).
func Run(ctx context.Context, bin string, cfg oltp.Config) (*oltp.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	version, err := serverVersion(ctx, cfg.DSN)
	if err != nil {
		return nil, err
	}
	if cfg.Warmup > 0 {
		if _, err := runOnce(ctx, bin, cfg, wholeSeconds(cfg.Warmup)); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	out, err := runOnce(ctx, bin, cfg, wholeSeconds(cfg.Duration))
	if err != nil {
		return nil, err
	}
	res := out.Result()
	res.Workload, res.Server = cfg.Workload.String(), version
	res.Tables, res.TableSize, res.Warmup = cfg.Options.Tables, cfg.Options.TableSize, cfg.Warmup
	return res, nil
}

// runTimeout is how long after its --time a sysbench run may take (thread
// start-up, statements stuck on the server) before it is stopped.
const runTimeout = 2 * time.Minute

func runOnce(ctx context.Context, bin string, cfg oltp.Config, seconds int) (*Output, error) {
	args, err := Args(cfg, seconds)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(seconds)*time.Second+runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	runErr := cmd.Run()
	out, perr := Parse(bytes.NewReader(buf.Bytes()))
	switch {
	case ctx.Err() != nil && runErr != nil:
		return nil, fmt.Errorf("sysbench %s: stopped after %s: %w", args[0], time.Duration(seconds)*time.Second+runTimeout, ctx.Err())
	case perr != nil && out != nil && len(out.Fatal) > 0:
		return nil, fmt.Errorf("%s %s --threads=%d: %w", bin, args[0], cfg.Threads, perr)
	case perr != nil:
		return nil, fmt.Errorf("%s %s: %w%s", bin, strings.Join(args, " "), perr, tail(buf.Bytes()))
	case runErr != nil:
		return nil, fmt.Errorf("%s %s: %w%s", bin, strings.Join(args, " "), runErr, tail(buf.Bytes()))
	}
	return out, nil
}

// tail is the end of sysbench's output for an error message.
func tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return "; its output ended:\n" + strings.Join(lines, "\n")
}

func serverVersion(ctx context.Context, dsn string) (string, error) {
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", fmt.Errorf("--dsn: %v", err)
	}
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		return "", err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return "", fmt.Errorf("connecting to %s: %w", mc.Addr, err)
	}
	if v == "" {
		return "", errors.New("the server's VERSION() is empty")
	}
	return v, nil
}
