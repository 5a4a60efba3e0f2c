// Package sysbench runs Debian's sysbench 1.0.20 binary as the client of
// an oltp cell (the reference client of lockstep bench compare's
// --client sysbench) and reads what it prints: the summary, the
// per-second progress lines of --report-interval=1 and the latency
// histogram of --histogram=on, as an oltp.Result.
package sysbench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"lockstep/internal/bench/oltp"
)

// Bucket is one line of sysbench's latency histogram: the bucket's value
// in milliseconds and how many events fell in it.
type Bucket struct {
	Value float64
	Count int64
}

// Output is what one `sysbench ... run` printed.
type Output struct {
	Threads      int           // "Number of threads"
	Series       []oltp.Second // the progress lines, one per --report-interval
	Reads        int64         // queries performed
	Writes       int64
	Other        int64
	Queries      int64
	Transactions int64
	TPS, QPS     float64
	Ignored      int64 // "ignored errors": events restarted after 1213, 1205 or 1020
	Reconnects   int64
	TotalTime    time.Duration
	Events       int64
	// Latency has min, avg and max from the summary and, when the summary's
	// percentile is the 95th, P95 from it; PercentileOf and PercentileMS are
	// the summary's "NNth percentile" line whatever NN is.
	Latency      oltp.Latency
	PercentileOf float64
	PercentileMS float64
	Histogram    []Bucket // --histogram=on, in increasing value
	Fatal        []string // FATAL: lines, in order
}

var (
	// [ 3s ] thds: 4 tps: 1059.87 qps: 21216.22 (r/w/o: 14855.99/4238.51/2121.72) lat (ms,95%): 7.04 err/s: 1.97 reconn/s: 0.00
	progressRE = regexp.MustCompile(`^\[ *(\d+)s \] thds: \d+ tps: ([0-9.]+) qps: ([0-9.]+) \(r/w/o: [0-9./]+\) lat \(ms,[0-9.]+%\): ([0-9.]+) err/s: ([0-9.]+) reconn/s: ([0-9.]+)`)
	// "       0.556 |**************************               16"
	bucketRE = regexp.MustCompile(`^ *([0-9.]+) \|\** *(\d+)$`)
	// "95th percentile:"
	percentileRE = regexp.MustCompile(`^([0-9.]+)th percentile$`)
)

// Parse reads sysbench 1.0.20's output of an oltp run (--report-interval
// and --histogram optional). It is an error when the output has no
// summary: sysbench stopped (the error names its first FATAL line) or the
// output is not sysbench's.
func Parse(r io.Reader) (*Output, error) {
	o := &Output{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	section := ""
	var haveTxns, haveTime bool
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "FATAL: ") {
			o.Fatal = append(o.Fatal, line)
			continue
		}
		if m := progressRE.FindStringSubmatch(line); m != nil {
			s, err := progress(m)
			if err != nil {
				return nil, fmt.Errorf("sysbench progress line %q: %w", line, err)
			}
			o.Series = append(o.Series, s)
			continue
		}
		if m := bucketRE.FindStringSubmatch(line); m != nil && section == "histogram" {
			v, err1 := strconv.ParseFloat(m[1], 64)
			n, err2 := strconv.ParseInt(m[2], 10, 64)
			if err := errors.Join(err1, err2); err != nil {
				return nil, fmt.Errorf("sysbench histogram line %q: %w", line, err)
			}
			o.Histogram = append(o.Histogram, Bucket{Value: v, Count: n})
			continue
		}
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "Latency histogram"):
			section = "histogram"
			continue
		case t == "SQL statistics:":
			section = "sql"
			continue
		case t == "General statistics:":
			section = "general"
			continue
		case t == "Latency (ms):":
			section = "latency"
			continue
		case t == "Threads fairness:":
			section = "fairness"
			continue
		}
		key, val, ok := strings.Cut(t, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		if key == "Number of threads" {
			n, err := strconv.Atoi(val)
			if err != nil {
				return nil, fmt.Errorf("sysbench line %q: %w", line, err)
			}
			o.Threads = n
			continue
		}
		var err error
		switch section {
		case "sql":
			switch key {
			case "read":
				o.Reads, err = count(val)
			case "write":
				o.Writes, err = count(val)
			case "other":
				o.Other, err = count(val)
			case "total":
				o.Queries, err = count(val)
			case "transactions":
				o.Transactions, o.TPS, err = countRate(val)
				haveTxns = err == nil
			case "queries":
				if val != "" { // not "queries performed:"
					_, o.QPS, err = countRate(val)
				}
			case "ignored errors":
				o.Ignored, _, err = countRate(val)
			case "reconnects":
				o.Reconnects, _, err = countRate(val)
			}
		case "general":
			switch key {
			case "total time":
				var s float64
				s, err = strconv.ParseFloat(strings.TrimSuffix(val, "s"), 64)
				o.TotalTime = time.Duration(s * float64(time.Second))
				haveTime = err == nil
			case "total number of events":
				o.Events, err = count(val)
			}
		case "latency":
			var v float64
			v, err = strconv.ParseFloat(val, 64)
			switch key {
			case "min":
				o.Latency.Min = v
			case "avg":
				o.Latency.Avg = v
			case "max":
				o.Latency.Max = v
			default:
				if m := percentileRE.FindStringSubmatch(key); m != nil && err == nil {
					o.PercentileOf, err = strconv.ParseFloat(m[1], 64)
					o.PercentileMS = v
					if o.PercentileOf == 95 {
						o.Latency.P95 = v
					}
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("sysbench line %q: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading sysbench's output: %w", err)
	}
	if !haveTxns || !haveTime {
		if len(o.Fatal) > 0 {
			return o, fmt.Errorf("sysbench stopped: %s", strings.TrimPrefix(o.Fatal[0], "FATAL: "))
		}
		return o, errors.New("no summary in sysbench's output (no \"transactions:\" and \"total time:\" lines)")
	}
	return o, nil
}

func progress(m []string) (oltp.Second, error) {
	t, err := strconv.Atoi(m[1])
	if err != nil {
		return oltp.Second{}, err
	}
	var f [5]float64
	for i := range f {
		if f[i], err = strconv.ParseFloat(m[2+i], 64); err != nil {
			return oltp.Second{}, err
		}
	}
	// err/s counts the ignored errors, after which sysbench restarts the
	// event: bench oltp's retries.
	return oltp.Second{T: t, TPS: f[0], QPS: f[1], P95: f[2], Retries: int64(math.Round(f[3]))}, nil
}

func count(v string) (int64, error) { return strconv.ParseInt(strings.Fields(v + " x")[0], 10, 64) }

// countRate reads "2827   (934.94 per sec.)".
func countRate(v string) (int64, float64, error) {
	f := strings.Fields(v)
	if len(f) < 2 || !strings.HasPrefix(f[1], "(") {
		return 0, 0, fmt.Errorf("want COUNT (RATE per sec.), got %q", v)
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, 0, err
	}
	r, err := strconv.ParseFloat(strings.TrimPrefix(f[1], "("), 64)
	return n, r, err
}

// Percentile is the p-th percentile (0 < p <= 100) of the histogram, in
// milliseconds, as sysbench computes its own from the same buckets: the
// value of the first bucket at which the running count reaches p% of the
// events (rounded to the nearest event). 0 without a histogram.
func (o *Output) Percentile(p float64) float64 {
	var total int64
	for _, b := range o.Histogram {
		total += b.Count
	}
	if total == 0 {
		return 0
	}
	want := int64(math.Floor(float64(total)*p/100 + 0.5))
	var run int64
	for _, b := range o.Histogram {
		run += b.Count
		if run >= want {
			return b.Value
		}
	}
	return o.Histogram[len(o.Histogram)-1].Value
}

// Result is the output as an oltp.Result (Workload, Server, Tables,
// TableSize and Warmup are the caller's): the summary's counts and rates,
// min, avg, p95 and max from the summary, p50, p99 and p99.9 from the
// histogram, the ignored errors as Retries, no Errors (sysbench stops at
// any other error), the progress lines as the Series.
func (o *Output) Result() *oltp.Result {
	l := o.Latency
	if o.PercentileOf != 95 {
		l.P95 = o.Percentile(95)
	}
	l.P50, l.P99, l.P999 = o.Percentile(50), o.Percentile(99), o.Percentile(99.9)
	return &oltp.Result{
		Threads: o.Threads, Duration: o.TotalTime,
		Transactions: o.Transactions, Queries: o.Queries, Reads: o.Reads, Writes: o.Writes, Other: o.Other,
		TPS: o.TPS, QPS: o.QPS, Latency: l,
		Retries: o.Ignored, Reconnects: o.Reconnects,
		Series: o.Series,
	}
}
