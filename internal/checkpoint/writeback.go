package checkpoint

import (
	"errors"
	"os"
	"time"
)

// ErrStopped is returned by a paced checkpoint's writes once its stop
// channel is closed (the server is shutting down): a checkpoint is never
// needed for correctness — the log holds everything after the previous
// one — so it is abandoned rather than finished at its paced rate.
var ErrStopped = errors.New("checkpoint: stopped")

// writeback streams a checkpoint file to disk while it is written, so that
// the file's dirty pages never pile up (the option is InnoDB's
// innodb_fsync_threshold, here --checkpoint-fsync-threshold).
//
// Without it a checkpoint's whole file (hundreds of MiB) sits in the page
// cache until the final fsync, which then writes it all at once: the log's
// fdatasyncs queue behind that burst, and removing the previous checkpoint
// drops as many cached pages in one unlink. Measured on the sysbench
// checkpoint benchmark: the commit after the scan took 270-340 ms, the
// removal 150-170 ms, and commits in that second saw a p99 of 70-340 ms
// (docs/BENCHMARKS.md). Writing into ever-new page-cache pages was also the
// larger part of a checkpoint's CPU (write(2) 11 s of its 15 s in a 40 s
// profile), where writing into a bounded, recycled set costs a fraction.
//
// Every threshold bytes, writeback starts the chunk just written on its way
// to disk (without waiting) and waits for the chunk before it, whose pages
// it then drops from the cache: at most two chunks are dirty or in flight,
// and the final fsync has almost nothing left to do. Where the platform has
// no sync_file_range, each chunk is fdatasynced instead.
//
// With a rate (--checkpoint-rate-limit), writeback also paces the
// checkpoint: after each write it sleeps until the bytes written so far are
// due at that rate from the first write. A checkpoint's CPU (reading the
// rows, framing, checksums, the writes) then takes a bounded share of a core
// for longer instead of a whole core for its duration; on two cores a
// checkpoint running flat out halved what the commits had.
type writeback struct {
	f         *os.File
	threshold int64 // 0: off
	off       int64 // bytes written
	started   int64 // chunks before this offset have been started
	prev      int64 // start of the chunk started last (waited for at the next one)
	chunks    int64 // chunks started

	rate   int64       // bytes per second; 0: no pacing
	hurry  func() bool // when it returns true, no pacing (nil: never)
	begin  time.Time   // the first write
	paused time.Duration

	// start and finish are startWriteback and finishWriteback, now and
	// sleep the clock (tests record or fake them); sleep reports false when
	// stop closed first.
	start, finish func(f *os.File, off, n int64) error
	now           func() time.Time
	sleep         func(time.Duration) bool
}

func newWriteback(f *os.File, threshold, rate int64, stop <-chan struct{}) *writeback {
	return &writeback{f: f, threshold: threshold, rate: rate,
		start: startWriteback, finish: finishWriteback, now: time.Now, sleep: stoppableSleep(stop)}
}

// maxPause is the longest single sleep of the pacing: hurry is asked again
// after each.
const maxPause = 50 * time.Millisecond

// stoppableSleep sleeps for d unless stop closes first (nil: never).
func stoppableSleep(stop <-chan struct{}) func(time.Duration) bool {
	return func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-stop:
			return false
		}
	}
}

func (w *writeback) Write(p []byte) (int, error) {
	if w.rate > 0 && w.off == 0 {
		w.begin = w.now()
	}
	n, err := w.f.Write(p)
	w.off += int64(n)
	if err == nil && w.rate > 0 {
		due := w.begin.Add(time.Duration(float64(w.off) / float64(w.rate) * float64(time.Second)))
		// In slices, so that a hurry that comes up meanwhile ends it.
		for d := due.Sub(w.now()); d > 0 && (w.hurry == nil || !w.hurry()); d = due.Sub(w.now()) {
			d = min(d, maxPause)
			if !w.sleep(d) {
				return n, ErrStopped
			}
			w.paused += d
		}
	}
	if err != nil || w.threshold <= 0 || w.off-w.started < w.threshold {
		return n, err
	}
	if err := w.start(w.f, w.started, w.off-w.started); err != nil {
		return n, err
	}
	if w.chunks > 0 {
		if err := w.finish(w.f, w.prev, w.started-w.prev); err != nil {
			return n, err
		}
	}
	w.prev, w.started = w.started, w.off
	w.chunks++
	return n, nil
}
