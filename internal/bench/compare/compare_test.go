package compare_test

import (
	"context"
	"encoding/csv"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lockstep/internal/bench/compare"
	"lockstep/internal/bench/oltp"
	"lockstep/internal/testutil"
)

// TestCompareTwoLockstepTargets runs a whole comparison, 2 s cells, of the
// same lockstep binary under two names: both servers started by compare,
// prepared, run in ABBA rounds and stopped; results.md with a row per cell
// and target (TPC-C's too), runs.csv in schedule order and plots that
// decode as PNG.
func TestCompareTwoLockstepTargets(t *testing.T) {
	bin := testutil.BuildBinary(t)
	out := t.TempDir()
	cfg := compare.Config{
		Targets:   []compare.Spec{{Name: "first", Kind: compare.Lockstep, Binary: bin}, {Name: "second", Kind: compare.Lockstep, Binary: bin, Args: []string{"--sync-binlog=1"}}},
		Workloads: []oltp.Workload{oltp.PointSelect},
		Threads:   []int{1, 2},
		Duration:  2 * time.Second,
		Rounds:    2,
		Options:   oltp.DefaultOptions(),
		Out:       out,
		WorkDir:   t.TempDir(),
		QuietMax:  time.Second,
		// TPC-C at 1 and 2 threads too, on one warehouse scaled down 100x
		TPCCWarehouses: 1,
		TPCCScaleDown:  100,
		Command:        "lockstep bench compare (test)",
	}
	cfg.Options.Tables, cfg.Options.TableSize = 1, 1000
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := compare.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 16 {
		t.Fatalf("%d runs, want 4 cells x 2 targets x 2 rounds", len(rep.Runs))
	}

	md, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| workload | threads | target | TPS (median) | TPS min–max | p95 ms (median) | p95 min–max | TPS vs first | errors |",
		"| point_select | 1 | first |", "| point_select | 1 | second |",
		"| point_select | 2 | first |", "| point_select | 2 | second |",
		"| tpcc (tpmC, New-Order p95) | 1 | first |", "| tpcc (tpmC, New-Order p95) | 2 | second |",
		"server version 8.0.33-lockstep", "lockstep bench compare (test)",
		"![tps-point_select](tps-point_select.png)", "![timeline](timeline.png)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("results.md lacks %q:\n%s", want, md)
		}
	}
	for _, line := range strings.Split(string(md), "\n") {
		if strings.HasPrefix(line, "| point_select | ") || strings.HasPrefix(line, "| tpcc ") {
			f := strings.Split(line, "|")
			if tps := strings.TrimSpace(f[4]); tps == "0.00" || tps == "" {
				t.Errorf("no throughput: %s", line)
			}
			if errs := strings.TrimSpace(f[9]); errs != "0" {
				t.Errorf("errors: %s", line)
			}
			if strings.Contains(line, "| first |") && strings.TrimSpace(f[8]) != "1.00" {
				t.Errorf("the base's ratio is not 1: %s", line)
			}
		}
	}

	f, err := os.Open(filepath.Join(out, "runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range recs[1:] {
		order = append(order, r[1]+":"+r[3]+":"+r[4]+":"+r[2]) // round:workload:threads:target
	}
	if got, want := strings.Join(order, " "), "1:point_select:1:first 1:point_select:1:second 1:point_select:2:first 1:point_select:2:second "+
		"1:tpcc:1:first 1:tpcc:1:second 1:tpcc:2:first 1:tpcc:2:second "+
		"2:point_select:1:second 2:point_select:1:first 2:point_select:2:second 2:point_select:2:first "+
		"2:tpcc:1:second 2:tpcc:1:first 2:tpcc:2:second 2:tpcc:2:first"; got != want {
		t.Errorf("runs.csv order:\n got %s\nwant %s", got, want)
	}

	for _, name := range []string{"tps-point_select.png", "tps-tpcc.png", "latency-point_select-1.png", "latency-point_select-2.png", "latency-tpcc-2.png", "timeline.png"} {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Error(err)
			continue
		}
		if _, err := png.Decode(f); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		f.Close()
	}
}

// TestCompareTargetFails: a lockstep target that cannot start fails the
// comparison with its name, and the server already started is stopped.
func TestCompareTargetFails(t *testing.T) {
	bin := testutil.BuildBinary(t)
	cfg := compare.Config{
		Targets:   []compare.Spec{{Name: "good", Kind: compare.Lockstep, Binary: bin}, {Name: "bad", Kind: compare.Lockstep, Binary: filepath.Join(t.TempDir(), "missing")}},
		Workloads: []oltp.Workload{oltp.PointSelect}, Threads: []int{1}, Duration: time.Second, Rounds: 1,
		Options: oltp.DefaultOptions(), Out: t.TempDir(), WorkDir: t.TempDir(), // the logs kept after the failure go with the test
	}
	_, err := compare.Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "target bad") {
		t.Fatalf("err = %v, want one naming target bad", err)
	}
}

// TestCompareSysbenchClient runs one short cell with sysbench 1.0.20 as
// the client (--client sysbench) against two lockstep targets: its output
// parsed into the table, runs.csv and series.csv naming the client, the
// per-second series and the percentiles from sysbench's histogram.
// scripts/test.sh installs sysbench; under CI a missing one fails.
func TestCompareSysbenchClient(t *testing.T) {
	_, err := exec.LookPath("sysbench")
	testutil.RequireInstalled(t, "sysbench (apt-get install -y sysbench)", err == nil)
	bin := testutil.BuildBinary(t)
	out := t.TempDir()
	cfg := compare.Config{
		Targets: []compare.Spec{{Name: "first", Kind: compare.Lockstep, Binary: bin},
			{Name: "second", Kind: compare.Lockstep, Binary: bin, Globals: []string{"lockstep_fast_path=OFF"}}},
		Workloads: []oltp.Workload{oltp.ReadWrite},
		Threads:   []int{2},
		Duration:  3 * time.Second,
		Warmup:    time.Second,
		Rounds:    1,
		Options:   oltp.DefaultOptions(),
		Client:    compare.SysbenchClient,
		Out:       out,
		WorkDir:   t.TempDir(),
		QuietMax:  time.Second,
		Seed:      7,
	}
	cfg.Options.Tables, cfg.Options.TableSize = 2, 1000
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := compare.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(rep.Runs))
	}
	for _, r := range rep.Runs {
		res := r.Result
		l := res.Latency
		if !strings.HasPrefix(r.Client, "sysbench 1.0.") || res.TPS <= 0 || res.Transactions <= 0 || res.Errors != 0 ||
			res.Queries < 18*res.Transactions || res.Server != "8.0.33-lockstep" || res.Duration < 3*time.Second || res.Duration > 4*time.Second {
			t.Errorf("%s: client %q, %+v", r.Target, r.Client, res)
		}
		if !(l.Min > 0 && l.Min <= l.P50 && l.P50 <= l.P95 && l.P95 <= l.P99 && l.P99 <= l.Max) {
			t.Errorf("%s: latency %+v", r.Target, l)
		}
		if len(res.Series) < 2 || res.Series[0].T != 1 || res.Series[0].TPS <= 0 {
			t.Errorf("%s: series %+v", r.Target, res.Series)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Client of the oltp cells: sysbench 1.0.", "`--client sysbench`", "| read_write | 2 | first |", "| read_write | 2 | second |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("results.md lacks %q:\n%s", want, md)
		}
	}
	for _, name := range []string{"runs.csv", "series.csv"} {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil || len(recs) < 3 {
			t.Fatalf("%s: %d records, %v", name, len(recs), err)
		}
		last := len(recs[0]) - 1
		if recs[0][last] != "client" || !strings.HasPrefix(recs[1][last], "sysbench 1.0.") {
			t.Errorf("%s does not name the client: %v / %v", name, recs[0], recs[1])
		}
	}
}

// TestCompareSysbenchMissing: --client sysbench without sysbench installed
// fails before any target starts, saying how to install it.
func TestCompareSysbenchMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	cfg := compare.Config{
		Targets:   []compare.Spec{{Name: "a", Kind: compare.Lockstep, Binary: "/nonexistent/a"}, {Name: "b", Kind: compare.Lockstep, Binary: "/nonexistent/b"}},
		Workloads: []oltp.Workload{oltp.PointSelect}, Threads: []int{1}, Duration: time.Second, Rounds: 1,
		Options: oltp.DefaultOptions(), Client: compare.SysbenchClient, Out: t.TempDir(), WorkDir: t.TempDir(),
	}
	_, err := compare.Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "apt-get install -y sysbench") || strings.Contains(err.Error(), "target") {
		t.Fatalf("err = %v, want the install hint before any target starts", err)
	}
	// TPC-C only: sysbench has nothing to run, so it is not looked for
	// (the first target's missing binary is the error).
	cfg.Workloads, cfg.TPCCWarehouses, cfg.TPCCScaleDown = nil, 1, 100
	if _, err := compare.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "target a") {
		t.Fatalf("TPC-C only: err = %v, want target a's", err)
	}
}

// TestCompareGlobalFails: a lockstep target's @VAR=VALUE is SET GLOBAL
// once it answers; one the server refuses fails the target by name.
func TestCompareGlobalFails(t *testing.T) {
	bin := testutil.BuildBinary(t)
	cfg := compare.Config{
		Targets: []compare.Spec{{Name: "good", Kind: compare.Lockstep, Binary: bin},
			{Name: "bad", Kind: compare.Lockstep, Binary: bin, Globals: []string{"no_such_variable=1"}}},
		Workloads: []oltp.Workload{oltp.PointSelect}, Threads: []int{1}, Duration: time.Second, Rounds: 1,
		Options: oltp.DefaultOptions(), Out: t.TempDir(), WorkDir: t.TempDir(),
	}
	_, err := compare.Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "target bad: @no_such_variable=1") {
		t.Fatalf("err = %v, want one naming target bad and its @no_such_variable=1", err)
	}
}
