package sysbench

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lockstep/internal/bench/oltp"
)

// The testdata files are sysbench 1.0.20's standard output of
// `sysbench oltp_WORKLOAD --db-driver=mysql ... --tables=2 --table-size=1000
// --threads=4 --time=3 --report-interval=1 --percentile=95 --histogram=on run`
// against a lockstep server (Debian's sysbench package, 2026-11-27);
// fatal.txt had sbtest2 dropped in the middle of the run, noconnect.txt
// had no server on its port (stdout and stderr).
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		file                         string
		txns, queries, reads, writes int64
		other, ignored               int64
		tps, qps, p95, min, max      float64
		total                        time.Duration
		series                       []oltp.Second // first and last
		nseries                      int
	}{
		{file: "point_select", txns: 144355, queries: 144355, reads: 144355, tps: 48059.89, qps: 48059.89,
			p95: 0.20, min: 0.02, max: 20.92, total: 3003300 * time.Microsecond, nseries: 3,
			series: []oltp.Second{{T: 1, TPS: 47822.11, QPS: 47822.11, P95: 0.22}, {T: 3, TPS: 52222.47, QPS: 52222.47, P95: 0.17}}},
		{file: "read_only", txns: 4054, queries: 64864, reads: 56756, other: 8108, tps: 1347.44, qps: 21559.09,
			p95: 7.17, min: 0.52, max: 73.95, total: 3008300 * time.Microsecond, nseries: 3,
			series: []oltp.Second{{T: 1, TPS: 1353.01, QPS: 21689.02, P95: 6.09}, {T: 3, TPS: 1377.59, QPS: 22033.43, P95: 7.04}}},
		{file: "write_only", txns: 7096, queries: 42708, writes: 28468, other: 14240, ignored: 48, tps: 2358.15, qps: 14192.76,
			p95: 3.62, min: 0.26, max: 85.92, total: 3008800 * time.Microsecond, nseries: 3,
			series: []oltp.Second{{T: 1, TPS: 2569.92, QPS: 15482.49, P95: 2.81, Retries: 17}, {T: 3, TPS: 2321.06, QPS: 13973.36, P95: 3.89, Retries: 15}}},
		{file: "read_write", txns: 1800, queries: 36050, reads: 25242, writes: 7205, other: 3603, ignored: 3, tps: 589.20, qps: 11800.37,
			p95: 18.95, min: 0.78, max: 264.73, total: 3054600 * time.Microsecond, nseries: 3,
			series: []oltp.Second{{T: 1, TPS: 465.71, QPS: 9396.25, P95: 24.38, Retries: 1}, {T: 3, TPS: 757.77, QPS: 15136.96, P95: 12.52, Retries: 1}}},
		{file: "insert", txns: 6536, queries: 6536, writes: 6536, tps: 2174.88, qps: 2174.88,
			p95: 4.41, min: 0.26, max: 288.23, total: 3004800 * time.Microsecond, nseries: 3,
			series: []oltp.Second{{T: 1, TPS: 2385.96, QPS: 2385.96, P95: 2.61}, {T: 3, TPS: 2563.18, QPS: 2563.18, P95: 3.96}}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tc.file+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			o, err := Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			if o.Threads != 4 || o.Transactions != tc.txns || o.Events != tc.txns || o.Queries != tc.queries || o.Reads != tc.reads ||
				o.Writes != tc.writes || o.Other != tc.other || o.Ignored != tc.ignored || o.Reconnects != 0 {
				t.Errorf("counts: threads %d, txns %d, events %d, queries %d (r/w/o %d/%d/%d), ignored %d, reconnects %d; want 4, %d, %d, %d (%d/%d/%d), %d, 0",
					o.Threads, o.Transactions, o.Events, o.Queries, o.Reads, o.Writes, o.Other, o.Ignored, o.Reconnects,
					tc.txns, tc.txns, tc.queries, tc.reads, tc.writes, tc.other, tc.ignored)
			}
			if o.TPS != tc.tps || o.QPS != tc.qps || o.TotalTime != tc.total {
				t.Errorf("tps %v qps %v time %v, want %v %v %v", o.TPS, o.QPS, o.TotalTime, tc.tps, tc.qps, tc.total)
			}
			if o.PercentileOf != 95 || o.Latency.P95 != tc.p95 || o.Latency.Min != tc.min || o.Latency.Max != tc.max || o.Latency.Avg <= 0 {
				t.Errorf("latency %+v (percentile %v), want p95 %v min %v max %v", o.Latency, o.PercentileOf, tc.p95, tc.min, tc.max)
			}
			if len(o.Series) != tc.nseries || o.Series[0] != tc.series[0] || o.Series[len(o.Series)-1] != tc.series[1] {
				t.Errorf("series %+v, want %d seconds from %+v to %+v", o.Series, tc.nseries, tc.series[0], tc.series[1])
			}
			// The histogram holds every event, and the 95th percentile
			// computed from it is the one sysbench printed.
			var n int64
			for i, b := range o.Histogram {
				n += b.Count
				if i > 0 && b.Value < o.Histogram[i-1].Value { // printed to 0.001 ms: neighbours can print alike
					t.Fatalf("histogram decreasing at %d: %+v", i, o.Histogram[i-1:i+1])
				}
			}
			if n != tc.txns {
				t.Errorf("histogram counts %d events, want %d", n, tc.txns)
			}
			if got := math.Round(o.Percentile(95)*100) / 100; got != tc.p95 {
				t.Errorf("p95 from the histogram %v, sysbench printed %v", o.Percentile(95), tc.p95)
			}
			r := o.Result()
			l := r.Latency
			if !(l.Min <= l.P50 && l.P50 <= l.P95 && l.P95 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
				t.Errorf("percentiles out of order: %+v", l)
			}
			if r.TPS != tc.tps || r.Transactions != tc.txns || r.Retries != tc.ignored || r.Errors != 0 || r.Duration != tc.total || len(r.Series) != tc.nseries {
				t.Errorf("result %+v", r)
			}
		})
	}
}

// TestParseStopped: sysbench stops at an error it does not ignore, or
// when it cannot connect, without a summary; Parse says why.
func TestParseStopped(t *testing.T) {
	for file, want := range map[string]string{
		"fatal":     "sysbench stopped: mysql_stmt_execute() returned error 1146 (Table 'sbtest2.sbtest2' doesn't exist)",
		"noconnect": "sysbench stopped: unable to connect to MySQL server on host '127.0.0.1', port 3599",
	} {
		f, err := os.Open(filepath.Join("testdata", file+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		o, err := Parse(f)
		f.Close()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want one containing %q", file, err, want)
		}
		if o == nil || len(o.Fatal) == 0 {
			t.Errorf("%s: no FATAL lines kept", file)
		}
	}
	if _, err := Parse(strings.NewReader("hello\nworld: 3\n")); err == nil || !strings.Contains(err.Error(), "no summary") {
		t.Errorf("not sysbench's output: err = %v", err)
	}
	if _, err := Parse(strings.NewReader("SQL statistics:\n    transactions:     12 (x per sec.)\n")); err == nil {
		t.Error("a malformed rate parsed")
	}
}

// TestPercentile: sysbench's rule, the first bucket at which the running
// count reaches p% of the events, rounded to the nearest event.
func TestPercentile(t *testing.T) {
	o := &Output{Histogram: []Bucket{{1, 10}, {2, 5}, {3, 4}, {5, 1}}} // 20 events
	for _, c := range []struct{ p, want float64 }{{50, 1}, {51, 1}, {53, 2}, {75, 2}, {76, 2}, {78, 3}, {95, 3}, {97.5, 5}, {99, 5}, {100, 5}} {
		if got := o.Percentile(c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if got := (&Output{}).Percentile(95); got != 0 {
		t.Errorf("no histogram: %v", got)
	}
}

// TestArgs: the connection from the DSN, the options and the run's
// settings as sysbench's flags.
func TestArgs(t *testing.T) {
	cfg := oltp.Config{DSN: "bench:pw@tcp(127.0.0.1:3407)/", Workload: oltp.ReadOnly, Threads: 16, Options: oltp.DefaultOptions(), Seed: 42}
	cfg.Options.Tables, cfg.Options.TableSize = 4, 100000
	a, err := Args(cfg, 20)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(a, " ")
	for _, want := range []string{"oltp_read_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3407 --mysql-user=bench --mysql-password=pw --mysql-db=sbtest ",
		" --tables=4 --table-size=100000 --range_size=100 --point_selects=10 ", " --range_selects=on --skip_trx=off --rand-type=special --rand-spec-iter=12 --rand-spec-pct=1 --rand-spec-res=75 ",
		" --threads=16 --time=20 --report-interval=1 --percentile=95 --histogram=on --rand-seed=43 run"} {
		if !strings.Contains(got, want) {
			t.Errorf("args lack %q:\n%s", want, got)
		}
	}
	cfg.DSN, cfg.Seed = "root@unix(/tmp/m.sock)/db1", 0
	a, err = Args(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(a, " "); !strings.Contains(got, " --mysql-socket=/tmp/m.sock --mysql-user=root --mysql-password= --mysql-db=db1 ") || strings.Contains(got, "rand-seed") {
		t.Errorf("unix socket: %s", got)
	}
	if wholeSeconds(1500*time.Millisecond) != 2 || wholeSeconds(0) != 1 || wholeSeconds(20*time.Second) != 20 {
		t.Error("wholeSeconds")
	}
}

// TestFindMissing: without sysbench on PATH the error says how to install it.
func TestFindMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), "apt-get install -y sysbench") {
		t.Errorf("err = %v", err)
	}
}
