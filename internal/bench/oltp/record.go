package oltp

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds from 1 µs to an hour with three
// significant digits (a value is off by at most 0.1%).
const (
	histMin    = 1
	histMax    = int64(time.Hour / time.Microsecond)
	histDigits = 3
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histDigits) }

// counts are one span's counters: events (transactions), statements by
// sysbench's class, and the ways an event can go wrong.
type counts struct {
	events     int64
	queries    [3]int64 // by Class: reads, writes, other
	retries    int64    // attempts restarted after 1213, 1205 or 1020 (sysbench's ignored errors)
	errors     int64    // events abandoned after another error
	reconnects int64
}

func (c *counts) add(o *counts) {
	c.events += o.events
	for i := range c.queries {
		c.queries[i] += o.queries[i]
	}
	c.retries += o.retries
	c.errors += o.errors
	c.reconnects += o.reconnects
}

func (c *counts) allQueries() int64 { return c.queries[0] + c.queries[1] + c.queries[2] }

// span is counters and a latency histogram over some time.
type span struct {
	counts
	h *hdrhistogram.Histogram
}

func newSpan() span { return span{h: newHist()} }

func (s *span) reset() {
	s.counts = counts{}
	s.h.Reset()
}

func (s *span) record(lat time.Duration) {
	us := max(histMin, min(histMax, int64(lat/time.Microsecond)))
	s.h.RecordValue(us) //nolint:errcheck // clamped into the histogram's range
}

// recorder collects what the workers report: the measured window's totals,
// the current second's (for the per-second series) and the current report
// interval's (for the progress lines). Workers do not take its mutex per
// event: each appends to its own shard, and the ticks and the end of the
// run move the shards' events in (flush). Sixteen threads sharing one
// mutex per event made the client park threads on it, a cost sysbench's
// per-thread counters do not have.
type recorder struct {
	shards []*shard
	mu     sync.Mutex
	total  span // the measured window
	second span // since the last one-second tick
	report span // since the last progress line
	// whole run, warm-up included: rows the committed events inserted and
	// deleted (RowsAffected), for checking a table's count afterwards
	inserted, deleted int64
}

func newRecorder() *recorder {
	return &recorder{total: newSpan(), second: newSpan(), report: newSpan()}
}

// shard is one worker's events since the last flush. Its mutex is taken
// by its worker once per event and by flush once per tick, so it is
// almost never contended.
type shard struct {
	mu     sync.Mutex
	events []shardEvent
	spare  []shardEvent // the buffer the last flush emptied, for reuse
}

type shardEvent struct {
	event
	inWindow bool
}

// newShard gives a worker its shard.
func (r *recorder) newShard() *shard {
	s := &shard{}
	r.mu.Lock()
	r.shards = append(r.shards, s)
	r.mu.Unlock()
	return s
}

func (s *shard) add(e *event, inWindow bool) {
	s.mu.Lock()
	s.events = append(s.events, shardEvent{*e, inWindow})
	s.mu.Unlock()
}

// flush moves every shard's events into the spans.
func (r *recorder) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.shards {
		s.mu.Lock()
		evs := s.events
		s.events, s.spare = s.spare[:0], nil
		s.mu.Unlock()
		for i := range evs {
			r.addLocked(&evs[i].event, evs[i].inWindow)
		}
		s.mu.Lock()
		if s.spare == nil {
			s.spare = evs[:0]
		}
		s.mu.Unlock()
	}
}

// event is what one event (with its retries) did.
type event struct {
	c                 counts // events is 1 if it completed
	lat               time.Duration
	inserted, deleted int64
}

func (r *recorder) addLocked(e *event, inWindow bool) {
	r.inserted += e.inserted
	r.deleted += e.deleted
	for _, s := range []*span{&r.second, &r.report, &r.total} {
		if s == &r.total && !inWindow {
			continue
		}
		s.counts.add(&e.c)
		if e.c.events > 0 {
			s.record(e.lat)
		}
	}
}

// take returns a copy of the span's counters and p95 and resets it.
func (r *recorder) take(s *span) (counts, time.Duration) {
	r.flush()
	r.mu.Lock()
	defer r.mu.Unlock()
	c := s.counts
	p95 := usToDuration(s.h.ValueAtQuantile(95))
	s.reset()
	return c, p95
}

func usToDuration(us int64) time.Duration { return time.Duration(us) * time.Microsecond }
