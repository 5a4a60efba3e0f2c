package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"

	"lockstep/internal/testutil"
)

// TestBenchUsage: bad `lockstep bench` command lines fail with exit code 2
// and one line on stderr, before any connection is made.
func TestBenchUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench"}, "name a benchmark"},
		{[]string{"bench", "tpcb"}, `unknown benchmark "tpcb"`},
		{[]string{"bench", "tpcc", "--warehouses", "0"}, "--warehouses must be"},
		{[]string{"bench", "tpcc", "--threads", "-1"}, "--threads must be"},
		{[]string{"bench", "tpcc", "--scale-down", "1000"}, "--scale-down must be"},
		{[]string{"bench", "tpcc", "--duration", "soon"}, "not a duration"},
		{[]string{"bench", "tpcc", "--dsn", "root@tcp(127.0.0.1:3306"}, "--dsn"},
		{[]string{"bench", "tpcc", "--nosuchflag"}, "unknown flag"},
		{[]string{"bench", "tpcc", "extra"}, "unknown command"},
		{[]string{"bench", "oltp"}, "accepts between 1 and 2 arg(s)"},
		{[]string{"bench", "oltp", "oltp_delete"}, `unknown workload "oltp_delete"`},
		{[]string{"bench", "oltp", "read_write", "prewarm"}, `unknown command "prewarm"`},
		{[]string{"bench", "oltp", "point_select", "--output", "xml"}, "--output must be"},
		{[]string{"bench", "oltp", "point_select", "--rand-type", "zipfian"}, "--rand-type must be"},
		{[]string{"bench", "oltp", "point_select", "--table_size", "-1"}, "--table-size must be"},
		{[]string{"bench", "oltp", "point_select", "--threads", "0"}, "--threads must be"},
		{[]string{"bench", "oltp", "point_select", "--time", "soon"}, "not a duration"},
		{[]string{"bench", "compare"}, "need two or more targets"},
		{[]string{"bench", "compare", "--target", "a=mariadb"}, "need two or more targets"},
		{[]string{"bench", "compare", "--target", "a=mariadb", "--target", "a=mariadb"}, `name "a" given twice`},
		{[]string{"bench", "compare", "--target", "a=mariadb", "--target", "b=pg:x"}, `unknown kind "pg"`},
		{[]string{"bench", "compare", "--target", "a=dsn:root@tcp(127.0.0.1:1)/", "--target", "b=dsn:root@tcp(127.0.0.1:1)/", "--workloads", "delete"}, `unknown workload "delete"`},
		{[]string{"bench", "compare", "--target", "a=dsn:root@tcp(127.0.0.1:1)/", "--target", "b=dsn:root@tcp(127.0.0.1:1)/", "--rounds", "0"}, "--rounds must be"},
		{[]string{"bench", "compare", "--target", "a=dsn:root@tcp(127.0.0.1:1)/", "--target", "b=dsn:root@tcp(127.0.0.1:1)/", "--threads", "0"}, "--threads: 0"},
		{[]string{"bench", "compare", "--target", "a=dsn:root@tcp(127.0.0.1:1)/", "--target", "b=dsn:root@tcp(127.0.0.1:1)/", "--threads", "16", "--timeline", "insert/32"}, "not a cell"},
		{[]string{"bench", "compare", "--target", "a=dsn:root@tcp(127.0.0.1:1)/", "--target", "b=dsn:root@tcp(127.0.0.1:1)/", "--timeline", "x"}, "WORKLOAD/THREADS"},
		{[]string{"bench", "compare", "--target", "a=dsn:root@tcp(127.0.0.1:1)/", "--target", "b=dsn:root@tcp(127.0.0.1:1)/", "--tpcc-warehouses", "1", "--tpcc-scale-down", "0"}, "--tpcc-scale-down must be"},
		{[]string{"bench", "compare", "--target", "a=dsn:root@tcp(127.0.0.1:1)/", "--target", "b=dsn:root@tcp(127.0.0.1:1)/", "--client", "mysqlslap"}, "--client must be lockstep or sysbench"},
		{[]string{"bench", "replay"}, "--datadir is required"},
		{[]string{"bench", "replay", "--datadir", "x", "--workers", "0"}, "--workers must be at least 1"},
		{[]string{"bench", "replay", "--datadir", "x", "--make-log", "--conflict-rate", "2"}, "--conflict-rate must be"},
		{[]string{"bench", "replay", "--datadir", "x", "--make-log", "--hot-rows", "0"}, "--hot-rows must be"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		msg := stderr.String()
		if code != exitUsage || !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "lockstep: ") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, msg, tc.want)
		}
	}
}

// TestBenchUnreachable: a server that cannot be reached is a runtime error
// (exit code 1), reported in one line.
func TestBenchUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"bench", "tpcc", "--dsn", fmt.Sprintf("root@tcp(%s)/tpcc", addr), "--duration", "1"}, &stdout, &stderr)
	msg := stderr.String()
	if code != exitRuntime || !strings.Contains(msg, "bench tpcc: connecting to "+addr) || strings.Count(msg, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want exit 1 and one line about connecting", code, msg)
	}
}

// TestBenchReplay: `lockstep bench replay --make-log` writes a data
// directory, and `lockstep bench replay` replays it, prints progress on
// stderr and ends with the result line; the tables are the source's.
func TestBenchReplay(t *testing.T) {
	dir := t.TempDir() + "/data"
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"bench", "replay", "--make-log", "--datadir", dir, "--transactions", "200",
		"--rows", "100", "--threads", "2", "--seed", "3"}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "then 200 transactions") {
		t.Fatalf("--make-log: exit %d\nstdout %s\nstderr %s", code, stdout.String(), stderr.String())
	}
	for _, args := range [][]string{{"--workers", "1"}, {"--workers", "3"}, {"--workers", "3", "--scheduler", "coordinator"}} {
		stdout.Reset()
		stderr.Reset()
		code = run(context.Background(), append([]string{"bench", "replay", "--datadir", dir}, args...), &stdout, &stderr)
		out := stdout.String()
		if code != 0 || !strings.Contains(out, "sbtest.sbtest1") || !strings.Contains(out, " same\n") ||
			!regexp.MustCompile(`replayed 201 transactions in [0-9.]+ s: [0-9]+ transactions/s\n$`).MatchString(out) {
			t.Fatalf("replay %v: exit %d\nstdout %s\nstderr %s", args, code, out, stderr.String())
		}
		if len(args) == 4 && !strings.Contains(out, "scheduler coordinator") {
			t.Errorf("replay %v: the scheduler is not named:\n%s", args, out)
		}
	}
	stdout.Reset()
	stderr.Reset()
	code = run(context.Background(), []string{"bench", "replay", "--datadir", dir, "--workers", "2", "--scheduler", "fifo"}, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), `unknown scheduler "fifo"`) {
		t.Fatalf("--scheduler fifo: exit %d\nstderr %s", code, stderr.String())
	}
}

// TestBenchOLTP: `lockstep bench oltp` prepares, runs with progress lines
// on stderr and the result in the format asked for (csv on stdout, json in
// --output-file), and cleans up, against a lockstep server.
func TestBenchOLTP(t *testing.T) {
	s := testutil.StartServer(t)
	common := []string{"--dsn", s.DSN("sbtest"), "--table_size", "200", "--tables", "2", "--threads", "2", "--rand-seed", "9"}
	bench := func(args ...string) (string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), append(append([]string{"bench", "oltp"}, args...), common...), &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d\nstdout %s\nstderr %s", args, code, stdout.String(), stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	if _, errOut := bench("read_write", "prepare"); !strings.Contains(errOut, "Creating a secondary index on 'sbtest2'") {
		t.Errorf("prepare: stderr %s", errOut)
	}
	out, errOut := bench("oltp_read_write", "--time", "2", "--output", "csv")
	if !regexp.MustCompile(`(?m)^\[ 1s \] thds: 2 tps: [0-9.]+ qps: `).MatchString(errOut) {
		t.Errorf("no progress line on stderr:\n%s", errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "workload,threads,") || !strings.HasPrefix(lines[1], "read_write,2,2,200,") {
		t.Errorf("csv output:\n%s", out)
	}
	file := t.TempDir() + "/ps.json"
	// (3 s: a 1 s run on a loaded machine could end before its first whole
	// second was recorded, leaving Series empty.)
	if out, _ := bench("point_select", "--time", "3", "--report-interval", "0", "--output", "json", "--output-file", file); out != "" {
		t.Errorf("stdout with --output-file: %q", out)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Workload string
		TPS      float64
		Latency  struct {
			P95 float64 `json:"p95_ms"`
		}
		Series []struct{ TPS float64 }
	}
	if err := json.Unmarshal(data, &res); err != nil || res.Workload != "point_select" || res.TPS <= 0 || res.Latency.P95 <= 0 || len(res.Series) == 0 {
		t.Errorf("json result %+v, %v:\n%s", res, err, data)
	}
	bench("point_select", "cleanup")
	var n int
	if err := s.DB(t, "sbtest").QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'sbtest'").Scan(&n); err != nil || n != 0 {
		t.Errorf("after cleanup: %d tables, %v", n, err)
	}
}
