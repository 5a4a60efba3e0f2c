package server

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"lockstep/internal/config"
)

// withMetrics turns the metrics endpoint on, on a free port.
func withMetrics(c *config.Config) { c.MetricsAddress = "127.0.0.1:0" }

// scrape reads the server's /metrics and parses it as Prometheus' text
// format (a parse error fails the test: the exposition must be valid).
func (s *procServer) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	addr := MetricsAddress(s.datadir)
	if addr == "" {
		t.Fatalf("server on %s has no metrics endpoint", s.addr)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type %q, want Prometheus' text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not valid exposition format: %v", err)
	}
	return fams
}

// metricValue is the value of an unlabelled counter or gauge, or a
// histogram's sample count; ok is false when the family is missing.
func metricValue(fams map[string]*dto.MetricFamily, name string) (float64, bool) {
	f, ok := fams[name]
	if !ok || len(f.Metric) == 0 {
		return 0, false
	}
	m := f.Metric[0]
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount()), true
	case m.Summary != nil:
		return float64(m.Summary.GetSampleCount()), true
	}
	return 0, false
}

func mustMetric(t *testing.T, fams map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	v, ok := metricValue(fams, name)
	if !ok {
		t.Fatalf("/metrics has no %s", name)
	}
	return v
}

// TestMetricsEndpoint: after a workload, /metrics is valid exposition
// format, counts exactly the transactions committed, and agrees with SHOW
// GLOBAL STATUS on a sample of counters (read after the writes, with
// nothing else writing); histograms carry commit latency and group sizes.
func TestMetricsEndpoint(t *testing.T) {
	s := startInProcess(t, withMetrics)
	s.exec(t, "CREATE DATABASE m")
	s.exec(t, "CREATE TABLE m.t (id INT PRIMARY KEY, v VARCHAR(5000))")
	before := mustMetric(t, s.scrape(t), "lockstep_commits_total")
	const n = 25
	for i := 0; i < n; i++ {
		// Every fifth row is large enough to be compressed in the log.
		v := "x"
		if i%5 == 0 {
			v = strings.Repeat("abcd", 1200)
		}
		s.exec(t, "INSERT INTO m.t VALUES (?, ?)", i, v)
	}
	fams := s.scrape(t)
	if got := mustMetric(t, fams, "lockstep_commits_total") - before; got != n {
		t.Errorf("lockstep_commits_total grew by %v, want the %d transactions committed", got, n)
	}
	for _, c := range []struct {
		status, metric string
		scale          float64
	}{
		{"Lockstep_commits", "lockstep_commits_total", 1},
		{"Binlog_commits", "lockstep_group_commit_transactions_total", 1},
		{"Binlog_commits", "lockstep_commit_latency_seconds", 1}, // its sample count
		{"Binlog_group_commits", "lockstep_group_commit_groups_total", 1},
		{"Binlog_group_commits", "lockstep_group_commit_size_transactions", 1},
		{"Innodb_rows_inserted", "lockstep_rows_inserted_total", 1},
		{"Lockstep_log_bytes", "lockstep_log_written_bytes_total", 1},
		{"Lockstep_log_fsyncs", "lockstep_log_fsyncs_total", 1},
		{"Lockstep_log_records_compressed", "lockstep_log_records_compressed_total", 1},
		{"Lockstep_trx_read_write", "lockstep_trx_read_write_total", 1},
		{"Lockstep_mdl_acquires", "lockstep_mdl_acquires_total", 1},
		{"Lockstep_fast_path_hits", "lockstep_fast_path_hits_total", 1},
		{"Threads_connected", "lockstep_connections_open", 1},
	} {
		want := float64(s.status(t, "GLOBAL", c.status)) * c.scale
		if got := mustMetric(t, fams, c.metric); got != want {
			t.Errorf("%s = %v, SHOW GLOBAL STATUS %s = %v", c.metric, got, c.status, want)
		}
	}
	if r := mustMetric(t, fams, "lockstep_log_compression_ratio"); r <= 1 {
		t.Errorf("lockstep_log_compression_ratio = %v after compressible rows, want > 1", r)
	}
	h := fams["lockstep_commit_latency_seconds"].Metric[0].Histogram
	if h.GetSampleSum() <= 0 || h.GetSampleSum() > float64(h.GetSampleCount())*10 {
		t.Errorf("commit latency sum %v s for %d commits: implausible", h.GetSampleSum(), h.GetSampleCount())
	}
	for _, name := range []string{"go_gc_duration_seconds", "go_memstats_heap_alloc_bytes", "go_cpu_classes_gc_total_cpu_seconds_total",
		"go_sched_latencies_seconds"} {
		mustMetric(t, fams, name)
	}
	// Statement latency by kind: the 25 INSERTs (prepared, executed
	// below the protocol layer or through it) and nothing else in
	// "insert"; the scrape equals SHOW STATUS. A statement is counted
	// once its answer is written, so the last one may be counted just
	// after the client has it: wait for it first.
	for deadline := time.Now().Add(5 * time.Second); s.status(t, "GLOBAL", "Lockstep_statement_latency_us_insert_count") < n && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	fams = s.scrape(t)
	kinds := map[string]float64{}
	for _, m := range fams["lockstep_statement_latency_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "kind" {
				kinds[l.GetValue()] = float64(m.GetHistogram().GetSampleCount())
				if h := m.GetHistogram(); h.GetSampleSum() < 0 || h.GetSampleSum() > float64(h.GetSampleCount())*10 {
					t.Errorf("statement latency of %s: sum %v s for %d statements", l.GetValue(), h.GetSampleSum(), h.GetSampleCount())
				}
			}
		}
	}
	if len(kinds) != len(stmtKinds) {
		t.Errorf("statement latency kinds exported: %v, want %v", kinds, stmtKinds)
	}
	if kinds["insert"] != n {
		t.Errorf("statement latency of insert counts %v statements, want %d", kinds["insert"], n)
	}
	if want := float64(s.status(t, "GLOBAL", "Lockstep_statement_latency_us_insert_count")); kinds["insert"] != want {
		t.Errorf("statement latency of insert: endpoint %v, SHOW STATUS %v", kinds["insert"], want)
	}
	if kinds["other"] < 2 { // CREATE DATABASE, CREATE TABLE
		t.Errorf("statement latency of other counts %v statements, want at least 2", kinds["other"])
	}
}

// TestMetricsTwoServers: two servers in one process have registries of
// their own: each endpoint shows its server's counters.
func TestMetricsTwoServers(t *testing.T) {
	a := startInProcess(t, withMetrics)
	b := startInProcess(t, withMetrics)
	if MetricsAddress(a.datadir) == MetricsAddress(b.datadir) {
		t.Fatal("two servers share a metrics address")
	}
	a.exec(t, "CREATE DATABASE m")
	a.exec(t, "CREATE TABLE m.t (id INT PRIMARY KEY)")
	for i := 0; i < 10; i++ {
		a.exec(t, "INSERT INTO m.t VALUES (?)", i)
	}
	fa, fb := a.scrape(t), b.scrape(t)
	ra, rb := mustMetric(t, fa, "lockstep_rows_inserted_total"), mustMetric(t, fb, "lockstep_rows_inserted_total")
	if ra != 10 || rb != 0 {
		t.Errorf("rows inserted: %v on the server written, %v on the other; want 10 and 0", ra, rb)
	}
	if got, want := mustMetric(t, fb, "lockstep_commits_total"), float64(b.status(t, "GLOBAL", "Lockstep_commits")); got != want {
		t.Errorf("second server: lockstep_commits_total %v, SHOW STATUS %v", got, want)
	}
}

// TestMetricsOff: without --metrics-address there is no endpoint.
func TestMetricsOff(t *testing.T) {
	s := startInProcess(t, nil)
	if addr := MetricsAddress(s.datadir); addr != "" {
		t.Fatalf("metrics endpoint on %s without --metrics-address", addr)
	}
}

// TestMetricsAddressTaken: an address the endpoint cannot listen on is a
// start-up error that names the option; the server does not start.
func TestMetricsAddressTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := config.Default()
	cfg.Datadir, cfg.Port, cfg.MetricsAddress = t.TempDir(), 0, ln.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	started := false
	err = Run(ctx, cfg, func(string) { started = true; cancel() })
	if started || err == nil {
		t.Fatalf("server started (error %v) with its metrics address taken", err)
	}
	if !strings.Contains(err.Error(), "metrics-address "+ln.Addr().String()) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("error %q does not name metrics-address and the cause", err)
	}
}

// TestMetricsCoverStatus: every counter SHOW GLOBAL STATUS shows for
// lockstep (a group member's, which has them all) is on the endpoint, or
// said in statusNotExported not to be; the group's metrics are there,
// per-peer send queues labelled by peer.
func TestMetricsCoverStatus(t *testing.T) {
	ms := startGroupInProcess(t, 3, withMetrics)
	p := ms[0]
	p.exec(t, "CREATE DATABASE m")
	p.exec(t, "CREATE TABLE m.t (id INT PRIMARY KEY)")
	p.exec(t, "INSERT INTO m.t VALUES (1)")
	// The map SHOW GLOBAL STATUS adds lockstep's counters from (the
	// rest are go-mysql-server's, process-wide).
	v, _ := metricsAddrs.Load(p.datadir)
	seen := 0
	for k := range v.(metricsEntry).values() {
		seen++
		if !statusExported(k) {
			t.Errorf("SHOW STATUS %s is not on the metrics endpoint (metricstable.go)", k)
		}
	}
	if seen < 150 {
		t.Fatalf("only %d lockstep status counters seen", seen)
	}
	fams := p.scrape(t)
	if v := mustMetric(t, fams, "lockstep_group_replication_primary"); v != 1 {
		t.Errorf("primary's lockstep_group_replication_primary = %v", v)
	}
	if v := mustMetric(t, fams, "lockstep_group_replication_proposals_total"); v < 1 {
		t.Errorf("lockstep_group_replication_proposals_total = %v after writes", v)
	}
	elections := 0.0
	for _, m := range ms {
		elections += mustMetric(t, m.scrape(t), "lockstep_group_replication_elections_total")
	}
	if elections < 1 {
		t.Errorf("no member counted the election that made the primary")
	}
	peers := fams["lockstep_group_replication_peer_send_queued_bytes"]
	if peers == nil || len(peers.Metric) != 2 {
		t.Fatalf("per-peer send queues: %v, want one series per other member", peers)
	}
	for _, m := range peers.Metric {
		if len(m.Label) != 1 || m.Label[0].GetName() != "peer" {
			t.Errorf("peer series labels %v", m.Label)
		}
	}
	t.Run("dashboard", func(t *testing.T) { checkDashboard(t, fams) })
	// A secondary's endpoint is its own: not the primary.
	if v := mustMetric(t, ms[1].scrape(t), "lockstep_group_replication_primary"); v != 0 {
		t.Errorf("secondary's lockstep_group_replication_primary = %v", v)
	}
}

// TestMetricsNotFound: only /metrics is served.
func TestMetricsNotFound(t *testing.T) {
	s := startInProcess(t, withMetrics)
	resp, err := http.Get("http://" + MetricsAddress(s.datadir) + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /: %s, want 404", resp.Status)
	}
}

// dashboardMetric finds the metric names in a PromQL expression.
var dashboardMetric = regexp.MustCompile(`\b(?:lockstep|go|process)_[a-zA-Z0-9_]+`)

// checkDashboard: every metric docs/grafana/lockstep.json names exists in
// fams (a histogram's _bucket, _sum and _count by its family).
func checkDashboard(t *testing.T, fams map[string]*dto.MetricFamily) {
	text, err := os.ReadFile("../../docs/grafana/lockstep.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct{ Query any }
		}
	}
	if err := json.Unmarshal(text, &dash); err != nil {
		t.Fatalf("docs/grafana/lockstep.json: %v", err)
	}
	var exprs []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if q, ok := v.Query.(string); ok {
			exprs = append(exprs, q)
		}
	}
	named := 0
	for _, e := range exprs {
		for _, name := range dashboardMetric.FindAllString(e, -1) {
			named++
			if _, ok := fams[name]; ok {
				continue
			}
			base := name
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				base = strings.TrimSuffix(base, suf)
			}
			if f, ok := fams[base]; !ok || (f.GetType() != dto.MetricType_HISTOGRAM && f.GetType() != dto.MetricType_SUMMARY) {
				t.Errorf("the dashboard names %s (in %q), which /metrics does not have", name, e)
			}
		}
	}
	if named < 40 {
		t.Errorf("the dashboard names only %d metrics", named)
	}
}
