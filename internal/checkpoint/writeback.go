package checkpoint

import "os"

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
// (docs/benchmarks/notes.md). Writing into ever-new page-cache pages was also the
// larger part of a checkpoint's CPU (write(2) 11 s of its 15 s in a 40 s
// profile), where writing into a bounded, recycled set costs a fraction.
//
// Every threshold bytes, writeback starts the chunk just written on its way
// to disk (without waiting) and waits for the chunk before it, whose pages
// it then drops from the cache: at most two chunks are dirty or in flight,
// and the final fsync has almost nothing left to do. Where the platform has
// no sync_file_range, each chunk is fdatasynced instead. (The pacing of
// --checkpoint-rate-limit is pacer's, above it.)
type writeback struct {
	f         *os.File
	threshold int64 // 0: off
	off       int64 // bytes written
	started   int64 // chunks before this offset have been started
	prev      int64 // start of the chunk started last (waited for at the next one)
	chunks    int64 // chunks started

	// start and finish are startWriteback and finishWriteback (tests
	// record the calls).
	start, finish func(f *os.File, off, n int64) error
}

func newWriteback(f *os.File, threshold int64) *writeback {
	return &writeback{f: f, threshold: threshold, start: startWriteback, finish: finishWriteback}
}

func (w *writeback) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.off += int64(n)
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
