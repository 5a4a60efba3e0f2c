package txlog

import (
	"errors"
	"fmt"

	"lockstep/internal/stat"
)

// Disk full.
//
// A write that fails puts the log in the failed state (see setFailure):
// the records written before it still become durable, the appends after
// it fail with the error, which wraps ErrDiskFull when the cause was
// ENOSPC. A failed fsync is never retried: after it nothing is known
// about what the kernel kept, so the log stays failed until a restart
// recovers from what is on disk. A write that found the disk full is
// different: the records it did not write are still whole in the buffer,
// nobody was told they are durable, and what part of them reached the
// file can be cut off again. ResumeAfterDiskFull does that, so that a
// caller can fail the appends it knows did not reach the log (MySQL's
// ER_DISK_FULL) and go on appending once there is space again.

// ResumeAfterDiskFull takes the log out of a failure caused by a full disk
// (an error wrapping ErrDiskFull, with no failed fsync). It discards every
// record not yet written in full: the segment being written is cut back
// to the end of its last complete record and fsynced, so that no part of a
// discarded record survives a crash; then the log takes appends again, the
// next record getting index LastIndex()+1. It returns nil at once for a
// log that has not failed, and the failure for any other failure (which
// stays).
//
// Requirement: no Append, AppendAt or AppendEntries runs concurrently, and
// the callers of the discarded appends have been told they failed (their
// WaitDurable and WaitWritten returned the failure). Typically the only
// appender calls it after its own append failed.
func (l *Log) ResumeAfterDiskFull() error {
	l.adminMu.Lock()
	defer l.adminMu.Unlock()
	f := l.fail.Load()
	if f == nil {
		return nil
	}
	if !resumable(f.err) || l.fsyncFailed.Load() {
		return f.err
	}
	return l.controlOp(ctlOp{fn: l.resume, reply: make(chan error, 1), whenFailed: true})
}

func resumable(err error) bool {
	return errors.Is(err, ErrDiskFull) && !errors.Is(err, ErrClosed)
}

// resume runs on the writer goroutine.
func (l *Log) resume() error {
	f := l.fail.Load()
	if f == nil {
		return nil
	}
	if !resumable(f.err) || l.fsyncFailed.Load() {
		return f.err
	}
	r := l.reserved.Load()
	if r&closedBit != 0 {
		return ErrClosed
	}
	// Let the flusher finish with what was written before the failure;
	// after that it has nothing to do until the positions move again.
	select {
	case l.flusherKick <- struct{}{}:
	default:
	}
	if err := l.durableWaits.wait(l.written.Load()); err != nil {
		return err // an fsync failed
	}
	w := &l.w
	s := w.cur
	l.segMu.RLock()
	end, last := s.size, s.last
	term := s.prevTerm
	if last >= s.first && len(l.terms) > 0 {
		term = l.terms[len(l.terms)-1].term // s is the last segment: its last record is LastIndex
	}
	l.segMu.RUnlock()
	if err := s.file.Truncate(end); err != nil {
		return fmt.Errorf("txlog: resume after disk full: truncate %s to %d: %w", s.name, end, err)
	}
	if err := l.syncFile(s.file, s.name); err != nil {
		return err // a failed fsync: the log stays failed
	}

	// Forget the discarded appends: their bytes in the ring, their
	// completion marks, the records stamped and the segments planned for
	// them. The LSNs up to r are skipped, not reused.
	for i := range l.done.slots {
		l.done.slots[i].Store(0)
	}
	w.ready, w.hdrPos, w.written = r, r, r
	for _, rs := range w.rots {
		if rs.spare != nil { // claimed for a segment that will not be created
			l.discard(rs.spare)
			rs.spare = nil
		}
	}
	s.prealloc = false
	w.queue, w.qhead, w.rots = w.queue[:0], 0, nil
	w.nextIndex, w.lastTerm = last+1, term
	w.stampSeg, w.stampCount = s, last+1-s.first
	s.baseLSN, s.baseOff = r, end

	oldWritten := l.written.Load()
	oldDurable := l.durable.Load()
	l.written.Store(r) // everything up to r is written or skipped,
	storeMax(&l.durable, r)
	if !l.fail.CompareAndSwap(f, nil) {
		return l.Err() // a new failure meanwhile (the flusher's fsync)
	}
	l.writtenWaits.notify(oldWritten, r)
	l.durableWaits.notify(oldDurable, r)
	stat.IncU(&l.st.resumes)
	return nil
}
