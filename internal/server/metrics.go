package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"lockstep/internal/commit"
	"lockstep/internal/sqlfront"
)

// The metrics endpoint (--metrics-address, docs/metrics.md): Prometheus'
// text format at /metrics, from a registry of the server's own (several
// servers share a test process, and `lockstep demo` runs a group in one).
// Nothing is counted for it: statusCollector reads, at scrape time, the
// map SHOW GLOBAL STATUS is built from (Frontend.StatusValues), so the two
// always show the same numbers; the Go collector adds the runtime's (GC
// CPU share, heap).

// metricsAddrs holds each running server's metrics endpoint, by data
// directory: the address it listens on (port 0 picks a free port) and
// the status source it reads.
var metricsAddrs sync.Map // datadir -> metricsEntry

type metricsEntry struct {
	addr   string
	values func() map[string]int64
}

// MetricsAddress returns the address the metrics endpoint of the server
// running on datadir listens on, or "" when it has none.
func MetricsAddress(datadir string) string {
	if v, ok := metricsAddrs.Load(datadir); ok {
		return v.(metricsEntry).addr
	}
	return ""
}

// metricsEndpoint is a running metrics endpoint.
type metricsEndpoint struct {
	srv     *http.Server
	datadir string
	done    chan struct{}
}

// startMetrics listens on addr and serves fe's metrics there until close.
// A bad or taken address is an error naming the option.
func startMetrics(addr, datadir string, fe *sqlfront.Frontend, log io.Writer) (*metricsEndpoint, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics-address %s: %w", addr, err)
	}
	reg := newMetricsRegistry(fe)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	m := &metricsEndpoint{
		srv:     &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		datadir: datadir,
		done:    make(chan struct{}),
	}
	bound := ln.Addr().String()
	metricsAddrs.Store(datadir, metricsEntry{addr: bound, values: fe.StatusValues})
	go func() {
		defer close(m.done)
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(log, "lockstep: metrics endpoint stopped: %v\n", err)
		}
	}()
	fmt.Fprintf(log, "lockstep: metrics at http://%s/metrics\n", bound)
	return m, nil
}

// close stops the endpoint (a nil endpoint is none).
func (m *metricsEndpoint) close() {
	if m == nil {
		return
	}
	metricsAddrs.Delete(m.datadir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := m.srv.Shutdown(ctx); err != nil {
		_ = m.srv.Close()
	}
	<-m.done
}

// newMetricsRegistry is a server's registry: its status counters and the
// Go runtime's.
func newMetricsRegistry(fe *sqlfront.Frontend) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.MetricsGC, collectors.MetricsMemory,
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/cpu/classes/`)},
			// How long goroutines wait runnable before they run, and the
			// collector's stop-the-world pauses: where a read's tail goes
			// with more sessions than CPUs (issue 35).
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/sched/latencies:seconds$|^/sched/pauses/total/gc:seconds$`)})),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		newStatusCollector(fe.StatusValues),
	)
	return reg
}

// statusHist is a histogram SHOW STATUS shows as prefix_count, prefix_sum
// and prefix_le_<bound> (internal/hist).
type statusHist struct {
	prefix string
	bounds []int64
	scale  float64
	desc   *prometheus.Desc
}

// groupSizeBounds are the upper bounds of commit.GroupSizeBuckets.
var groupSizeBounds = []float64{1, 2, 4, 8, 16, 32, 64}

// statusCollector exports SHOW STATUS's counters (metricstable.go).
type statusCollector struct {
	values    func() map[string]int64
	descs     []*prometheus.Desc // by statusMetrics' index
	peers     []*prometheus.Desc // by peerMetrics' index
	hists     []statusHist
	groupSize *prometheus.Desc
	compRatio *prometheus.Desc
}

func metricName(n string) string { return "lockstep_" + n }

func newStatusCollector(values func() map[string]int64) *statusCollector {
	c := &statusCollector{values: values}
	for _, s := range statusMetrics {
		c.descs = append(c.descs, prometheus.NewDesc(metricName(s.name), s.help+" (SHOW STATUS "+s.status+")", nil, nil))
	}
	for _, s := range peerMetrics {
		c.peers = append(c.peers, prometheus.NewDesc(metricName(s.name), s.help+" (SHOW STATUS Lockstep_group_replication_peer_<id>_"+s.status+")", []string{"peer"}, nil))
	}
	c.hists = []statusHist{
		{"Lockstep_commit_latency_us", commit.LatencyBoundsMicros, perUs, prometheus.NewDesc(metricName("commit_latency_seconds"),
			"Commit latency in the commit pipeline: queueing, log append and fsync, publishing (SHOW STATUS Lockstep_commit_latency_us_*).", nil, nil)},
		{"Lockstep_checkpoint_time_ms", checkpointBoundsMs, perMs, prometheus.NewDesc(metricName("checkpoint_duration_seconds"),
			"Time checkpoints took (SHOW STATUS Lockstep_checkpoint_time_ms_*).", nil, nil)},
	}
	for _, k := range stmtKinds { // stmtlatency.go
		c.hists = append(c.hists, statusHist{"Lockstep_statement_latency_us_" + k, stmtLatencyBoundsMicros, perUs,
			prometheus.NewDesc(metricName("statement_latency_seconds"),
				"Statement latency by kind, from the command's arrival to its answer (SHOW STATUS Lockstep_statement_latency_us_<kind>_*).",
				nil, prometheus.Labels{"kind": k})})
	}
	c.groupSize = prometheus.NewDesc(metricName("group_commit_size_transactions"),
		"Transactions per commit group, that is per log fsync wait (SHOW STATUS Lockstep_group_commit_size_*).", nil, nil)
	c.compRatio = prometheus.NewDesc(metricName("log_compression_ratio"),
		"Size of compressed log payloads before compression over after (1 before any was compressed).", nil, nil)
	return c
}

// Describe sends every metric's description.
func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
	for _, d := range c.peers {
		ch <- d
	}
	for _, h := range c.hists {
		ch <- h.desc
	}
	ch <- c.groupSize
	ch <- c.compRatio
}

func scaled(v int64, scale float64) float64 {
	if scale == 0 {
		return float64(v)
	}
	return float64(v) * scale
}

// Collect reads SHOW STATUS's map once and sends what it has (a
// standalone server has no group counters).
func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.values()
	for i, s := range statusMetrics {
		if v, ok := m[s.status]; ok {
			ch <- prometheus.MustNewConstMetric(c.descs[i], s.typ, scaled(v, s.scale))
		}
	}
	c.collectPeers(m, ch)
	for _, h := range c.hists {
		count, ok := m[h.prefix+"_count"]
		if !ok {
			continue
		}
		buckets := make(map[float64]uint64, len(h.bounds))
		for _, b := range h.bounds {
			buckets[scaled(b, h.scale)] = uint64(m[h.prefix+"_le_"+strconv.FormatInt(b, 10)])
		}
		ch <- prometheus.MustNewConstHistogram(h.desc, uint64(count), scaled(m[h.prefix+"_sum"], h.scale), buckets)
	}
	if _, ok := m["Lockstep_group_commit_size_1"]; ok {
		buckets := make(map[float64]uint64, len(groupSizeBounds))
		var run uint64
		for i, label := range commit.GroupSizeBuckets {
			run += uint64(m["Lockstep_group_commit_size_"+label])
			if i < len(groupSizeBounds) {
				buckets[groupSizeBounds[i]] = run
			}
		}
		ch <- prometheus.MustNewConstHistogram(c.groupSize, run, float64(m["Lockstep_group_commit_appended"]), buckets)
	}
	if in, ok := m["Lockstep_log_compressed_input_bytes"]; ok {
		ratio := 1.0
		if out := m["Lockstep_log_compressed_output_bytes"]; out > 0 {
			ratio = float64(in) / float64(out)
		}
		ch <- prometheus.MustNewConstMetric(c.compRatio, gauge, ratio)
	}
}

const peerPrefix = "Lockstep_group_replication_peer_"

// collectPeers sends the per-peer send queue counters, labelled by peer.
func (c *statusCollector) collectPeers(m map[string]int64, ch chan<- prometheus.Metric) {
	for k, v := range m {
		rest, ok := strings.CutPrefix(k, peerPrefix)
		if !ok {
			continue
		}
		id, suffix, ok := strings.Cut(rest, "_")
		if !ok {
			continue
		}
		for i, s := range peerMetrics {
			if s.status == suffix {
				ch <- prometheus.MustNewConstMetric(c.peers[i], s.typ, scaled(v, s.scale), id)
			}
		}
	}
}

// statusExported reports whether the endpoint carries SHOW STATUS counter
// name (TestMetricsCoverStatus).
func statusExported(name string) bool {
	for _, s := range statusMetrics {
		if s.status == name {
			return true
		}
	}
	if _, ok := statusNotExported[name]; ok {
		return true
	}
	for _, p := range []string{"Lockstep_commit_latency_us_", "Lockstep_checkpoint_time_ms_", "Lockstep_group_commit_size_", "Lockstep_statement_latency_us_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(name, peerPrefix); ok {
		if _, suffix, ok := strings.Cut(rest, "_"); ok {
			for _, s := range peerMetrics {
				if s.status == suffix {
					return true
				}
			}
		}
	}
	return false
}
