package txlog

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"lockstep/internal/stat"
)

// flusherLoop is one flusher goroutine (Options.Flushers of them run). In
// SyncAlways mode the writer kicks a flusher after every write and it
// fsyncs whatever has been written by then (so one fsync covers all the
// appends written while the previous one ran); in SyncPeriodic mode it
// fsyncs once per SyncInterval. On stop it fsyncs a last time.
func (l *Log) flusherLoop(fl *flusher) {
	defer l.flushersDone.Done()
	defer fl.close()
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
			l.flush(fl)
			return
		}
		l.flush(fl)
	}
}

// flusher is one flusher goroutine's state. With more than one flusher,
// each fsyncs through its own open file description of the current
// segment (own), never the writer's: Linux reports a write-back error once
// per file description, so two fsyncs in flight on one description could
// each leave the error to the other and both return success. A description
// opened later still sees an error nobody has seen yet.
type flusher struct {
	seg *segment // the segment own was opened for
	own File
}

func (fl *flusher) close() {
	if fl.own != nil {
		fl.own.Close()
		fl.own, fl.seg = nil, nil
	}
}

// syncOrder publishes durable positions in the order their fsyncs started.
// An fsync that finishes before one started earlier waits (in the ticket
// list) for it: a later fsync's success says nothing about pages an
// earlier one was responsible for, and if the earlier one fails, nothing
// above the durable position may be published.
type syncOrder struct {
	mu      sync.Mutex
	started uint64        // the highest position an fsync was started for
	next    uint64        // the next ticket
	tickets []flushTicket // started and not yet published, in start order
}

type flushTicket struct {
	n      uint64
	target uint64
	mark   durMark // records through mark.index are written before target was read
	done   bool
}

// flush fsyncs the current segment if something was written since the
// last fsync started, then publishes the durable position in fsync start
// order and wakes exactly the waiters it reached. The writer fsyncs a
// segment before it starts the next one, so syncing the current segment
// covers everything written.
func (l *Log) flush(fl *flusher) {
	if l.fsyncFailed.Load() {
		return
	}
	o := &l.order
	o.mu.Lock()
	// The durable mark this fsync will raise: the last index written,
	// read with written under segMu (publish stores both under it).
	mark := durMark{epoch: l.durMark.Load().epoch}
	l.segMu.RLock()
	mark.index = l.lastIndex.Load()
	target := l.written.Load()
	l.segMu.RUnlock()
	if target <= o.started || target <= l.durable.Load() {
		o.mu.Unlock() // an fsync started after these bytes were written covers them
		return
	}
	o.started = target
	n := o.next
	o.next++
	o.tickets = append(o.tickets, flushTicket{n: n, target: target, mark: mark})
	if len(o.tickets) > 1 {
		stat.IncU(&l.st.overlapped)
	}
	o.mu.Unlock()

	l.segMu.RLock()
	s := l.segs[len(l.segs)-1]
	s.acquire()
	l.segMu.RUnlock()
	f, err := fl.fileFor(l, s)
	if err == nil {
		err = l.syncFile(f, s.name)
	} else {
		l.failSync(s.name, err)
	}
	s.release()

	o.mu.Lock()
	// Tickets leave from the front only, so they stay numbered
	// consecutively and n's is at n - tickets[0].n.
	i := n - o.tickets[0].n
	o.tickets[i].done = true
	if i > 0 {
		stat.IncU(&l.st.heldBack)
	}
	var pub uint64
	var pubMark durMark
	k := 0
	for k < len(o.tickets) && o.tickets[k].done {
		pub, pubMark = o.tickets[k].target, o.tickets[k].mark
		k++
	}
	o.tickets = append(o.tickets[:0], o.tickets[k:]...)
	// Checked under o.mu: a failed fsync sets fsyncFailed before it takes
	// o.mu to mark its ticket, so a later ticket cannot be published
	// after an earlier one failed.
	d := l.durable.Load()
	publish := err == nil && !l.fsyncFailed.Load() && pub > 0 && storeMax(&l.durable, pub)
	o.mu.Unlock()
	if publish {
		l.raiseMark(pubMark)
		l.durableWaits.notify(d, pub)
	}
}

// fileFor returns the file to fsync s through: the segment's own with one
// flusher, else this flusher's description of it, opened by name on first
// use. A segment's name is reused only after the segment was removed
// (TruncateSuffix, Reset), when syncing it no longer matters.
func (fl *flusher) fileFor(l *Log, s *segment) (File, error) {
	if l.opts.Flushers <= 1 {
		return s.file, nil
	}
	if fl.seg == s {
		return fl.own, nil
	}
	fl.close()
	f, err := l.fs.OpenFile(filepath.Join(l.dir, s.name), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	fl.seg, fl.own = s, f
	return f, nil
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
