package txlog

import (
	"sync/atomic"
	"time"
)

// flusherLoop is the flusher goroutine. In SyncAlways mode the writer kicks
// it after every write and it fsyncs whatever has been written by then (so
// one fsync covers all the appends written while the previous one ran); in
// SyncPeriodic mode it fsyncs once per SyncInterval. On stop it fsyncs a
// last time.
func (l *Log) flusherLoop() {
	defer close(l.flusherDone)
	var tick <-chan time.Time
	if l.opts.SyncMode == SyncPeriodic {
		t := time.NewTicker(l.opts.SyncInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-l.flusherKick:
		case <-tick:
		case <-l.stop:
			l.flush()
			return
		}
		l.flush()
	}
}

// flush fsyncs the current segment if something was written since the
// last fsync, publishes the durable position and wakes exactly the waiters
// it reached. The writer fsyncs a segment before it starts the next one,
// so syncing the current segment covers everything written.
func (l *Log) flush() {
	if l.fsyncFailed.Load() {
		return
	}
	target := l.written.Load()
	d := l.durable.Load()
	if target <= d {
		return
	}
	l.segMu.RLock()
	s := l.segs[len(l.segs)-1]
	s.acquire()
	l.segMu.RUnlock()
	err := l.syncFile(s.file, s.name)
	s.release()
	if err != nil || l.fsyncFailed.Load() {
		return
	}
	if storeMax(&l.durable, target) {
		l.durableWaits.notify(d, target)
	}
}

// storeMax stores v in a if it is larger (ResumeAfterDiskFull moves the
// positions on while the flusher may be finishing an older fsync) and
// reports whether it did.
func storeMax(a *atomic.Uint64, v uint64) bool {
	for {
		old := a.Load()
		if v <= old {
			return false
		}
		if a.CompareAndSwap(old, v) {
			return true
		}
	}
}
