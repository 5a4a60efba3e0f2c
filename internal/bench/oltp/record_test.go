package oltp

import (
	"sync"
	"testing"
	"time"
)

// TestRecorderShards: events that workers add to their own shards while
// the ticks take seconds concurrently all arrive, each once: the seconds
// taken add up to every event, and the result's totals (fill) have only
// the events marked in the measured window, the last one added included,
// with their latencies.
func TestRecorderShards(t *testing.T) {
	r := newRecorder()
	first := r.newShard()
	one := event{c: counts{events: 1}, lat: time.Millisecond}
	first.add(&one, false)
	if c, p95 := r.take(&r.second); c.events != 1 || p95 != time.Millisecond {
		t.Fatalf("a second with one event: %d events, p95 %s", c.events, p95)
	}
	const workers, perWorker = 4, 20000
	var wg sync.WaitGroup
	for i := range workers {
		s := r.newShard()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range perWorker {
				e := event{c: counts{events: 1, queries: [3]int64{2, 1, 0}}, lat: time.Duration(100+i) * time.Microsecond, inserted: 1}
				s.add(&e, j%2 == 0)
			}
		}()
	}
	var seconds counts
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		c, _ := r.take(&r.second)
		seconds.add(&c)
	}
	last := event{c: counts{events: 1, queries: [3]int64{2, 1, 0}}, lat: 100 * time.Microsecond, inserted: 1}
	r.shards[0].add(&last, true) // after the last take: only fill's flush brings it in
	res := &Result{Duration: time.Second}
	(&runner{rec: r}).fill(res)
	const all = workers*perWorker + 1
	if res.Transactions != all/2+1 || res.Queries != 3*(all/2+1) || res.Inserted != all {
		t.Errorf("measured window: %d transactions, %d queries, %d inserted; want %d, %d, %d", res.Transactions, res.Queries, res.Inserted, all/2+1, 3*(all/2+1), all)
	}
	if r.total.h.TotalCount() != all/2+1 || r.total.h.Min() != 100 || r.total.h.Max() != 100+workers-1 {
		t.Errorf("latencies: %d, %d..%d µs; want %d, 100..%d", r.total.h.TotalCount(), r.total.h.Min(), r.total.h.Max(), all/2+1, 100+workers-1)
	}
	c, _ := r.take(&r.second)
	seconds.add(&c)
	if seconds.events != all || seconds.queries != [3]int64{2 * all, all, 0} {
		t.Errorf("seconds add up to %d events, %v queries; want %d", seconds.events, seconds.queries, all)
	}
}

// TestLastSecondWithoutTick: when the workers end before the ticker's
// last tick (it starts after them, and a 1 s run ends at the moment its
// tick is due), the series still gets that second, as a rate.
func TestLastSecondWithoutTick(t *testing.T) {
	now := time.Now()
	rn := &runner{rec: newRecorder()}
	rn.start = now.Add(-900 * time.Millisecond)
	rn.warmupEnd, rn.end = rn.start, rn.start.Add(time.Second)
	sh := rn.rec.newShard()
	for range 450 {
		e := event{c: counts{events: 1, queries: [3]int64{1, 0, 0}}, lat: time.Millisecond}
		sh.add(&e, true)
	}
	stop := make(chan struct{})
	close(stop)
	res := &Result{}
	rn.ticks(stop, res)
	if len(res.Series) != 1 || res.Series[0].T != 1 || res.Series[0].TPS < 400 || res.Series[0].TPS > 510 || res.Series[0].QPS != res.Series[0].TPS {
		t.Fatalf("series %+v, want one second, T 1, about 500 transactions a second", res.Series)
	}
}
