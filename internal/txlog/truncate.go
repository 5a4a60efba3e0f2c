package txlog

import (
	"fmt"
)

// TruncateSuffix removes the records with index >= from (a deposed raft
// leader's uncommitted tail), durably: later segments are removed first,
// then the segment holding from is cut and fsynced, so that a crash at any
// point leaves a log that ends at some index >= from-1 and is still dense.
// The next record appended gets index from.
//
// Requirement: no Append, AppendAt or Read of the removed range may run
// concurrently. TruncateSuffix waits until everything appended before it is
// written; if an append then arrives while it runs it returns ErrBusy.
// from > LastIndex() is a no-op; from < FirstIndex() gives ErrCompacted.
func (l *Log) TruncateSuffix(from uint64) error {
	l.adminMu.Lock()
	defer l.adminMu.Unlock()
	if err := l.quiesce(); err != nil {
		return err
	}
	return l.control(func() error { return l.truncateSuffix(from) })
}

// quiesce waits until every append reserved so far is written.
func (l *Log) quiesce() error {
	r := l.reserved.Load()
	if r&closedBit != 0 {
		return ErrClosed
	}
	if err := l.Err(); err != nil {
		return err
	}
	return l.WaitWritten(r)
}

// idle reports, on the writer goroutine, whether no append is in flight.
func (l *Log) idle() bool {
	w := &l.w
	r := l.reserved.Load() &^ closedBit
	return w.ready == r && w.hdrPos == r && w.written == r && len(w.rots) == 0
}

// truncateSuffix runs on the writer goroutine.
func (l *Log) truncateSuffix(from uint64) error {
	if !l.idle() {
		return fmt.Errorf("%w: TruncateSuffix(%d) while appending", ErrBusy, from)
	}
	l.segMu.RLock()
	first, last := l.segs[0].first, l.lastIndex.Load()
	k := segmentFor(l.segs, from)
	segs := l.segs
	l.segMu.RUnlock()
	if from > last {
		return nil
	}
	if from < first {
		return fmt.Errorf("%w: TruncateSuffix(%d) before the first index %d", ErrCompacted, from, first)
	}
	s := segs[k]
	off, err := l.offsetOf(s, from)
	if err != nil {
		return err
	}
	// log.state first: it must not say the log reaches what is removed.
	if err := l.lowerMark(from-1, s.first); err != nil {
		return err
	}
	// Newest first: every intermediate state is a dense log.
	for j := len(segs) - 1; j > k; j-- {
		if err := l.fs.Remove(l.path(segs[j].name)); err != nil {
			return fmt.Errorf("txlog: TruncateSuffix: remove %s: %w", segs[j].name, err)
		}
	}
	if len(segs) > k+1 {
		if err := l.fs.SyncDir(l.dir); err != nil {
			return fmt.Errorf("txlog: TruncateSuffix: sync the log directory: %w", err)
		}
	}
	if err := s.file.Truncate(off); err != nil {
		return writeError("truncate", s.name, off, err)
	}
	if err := l.syncFile(s.file, s.name); err != nil {
		return err
	}

	prevTerm, _ := l.Term(from - 1)
	l.segMu.Lock()
	removed := l.segs[k+1:]
	l.segs = l.segs[: k+1 : k+1]
	s.last, s.size = from-1, off
	s.prealloc = false // the zeros went with the truncation
	s.trimSparse(from)
	l.terms = trimRunsFrom(l.terms, from)
	l.lastIndex.Store(from - 1)
	l.segMu.Unlock()
	for _, r := range removed {
		r.release()
	}

	w := &l.w
	w.cur, w.stampSeg = s, s
	s.baseLSN, s.baseOff = w.written, off
	w.nextIndex = from
	w.stampCount = from - s.first
	w.lastTerm = prevTerm
	return nil
}

// offsetOf finds the file offset of record i in s by walking from the
// nearest remembered offset.
func (l *Log) offsetOf(s *segment, i uint64) (int64, error) {
	l.segMu.RLock()
	if i > s.last {
		l.segMu.RUnlock()
		return s.size, nil
	}
	off, idx := s.seek(i)
	end := s.size
	l.segMu.RUnlock()
	r := newRecReader(s.file, end, 64<<10)
	for ; idx < i; idx++ {
		hb, err := r.at(off, recHeaderSize)
		if err != nil {
			return 0, fmt.Errorf("txlog: read %s at offset %d: %w", s.name, off, err)
		}
		if len(hb) < recHeaderSize {
			return 0, readError(s.name, off, "%v", recShort)
		}
		h, ok := parseRecHeader(hb)
		if !ok || h.index != idx {
			return 0, readError(s.name, off, "header of index %d does not verify", idx)
		}
		off += recHeaderSize + int64(h.length)
	}
	return off, nil
}

// TruncatePrefix removes the segments whose records all have indexes
// before `before` (after a checkpoint that covers them), oldest first, and
// fsyncs the directory. The segment being written is never removed, so
// FirstIndex() becomes the first index of the oldest remaining segment,
// which may still be < before. It may run while appends continue; reads
// of removed records fail with ErrCompacted (a read already in progress
// finishes: the files are closed when the last reader is done).
func (l *Log) TruncatePrefix(before uint64) error {
	l.adminMu.Lock()
	defer l.adminMu.Unlock()
	l.segMu.Lock()
	if l.closed {
		l.segMu.Unlock()
		return ErrClosed
	}
	k := 0
	for k < len(l.segs)-1 && l.segs[k+1].first <= before {
		k++
	}
	if k == 0 {
		l.segMu.Unlock()
		return nil
	}
	removed := append([]*segment(nil), l.segs[:k]...)
	l.segs = append([]*segment(nil), l.segs[k:]...)
	l.terms = trimRunsBefore(l.terms, l.segs[0].first)
	l.segMu.Unlock()

	var err error
	for _, s := range removed {
		if err == nil {
			if e := l.fs.Remove(l.path(s.name)); e != nil {
				err = fmt.Errorf("txlog: TruncatePrefix: remove %s: %w", s.name, e)
			}
		}
		s.release()
	}
	if err != nil {
		return err // the files left behind are a valid prefix: the next Open keeps them
	}
	if e := l.fs.SyncDir(l.dir); e != nil {
		return fmt.Errorf("txlog: TruncatePrefix: sync the log directory: %w", e)
	}
	return nil
}

// SegmentInfo describes one segment file.
type SegmentInfo struct {
	Name  string // file name, without the directory
	First uint64 // index of its first record
	Last  uint64 // index of its last record written (First-1 if none)
	Bytes int64  // file size up to the end of that record
}

// Segments lists the segments, oldest first; the last one is being
// written. A caller of TruncatePrefix can use it to keep more than it must
// (a retention size).
func (l *Log) Segments() []SegmentInfo {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	out := make([]SegmentInfo, len(l.segs))
	for i, s := range l.segs {
		out[i] = SegmentInfo{Name: s.name, First: s.first, Last: s.last, Bytes: s.size}
	}
	return out
}

// Reset empties the log so that the next record appended gets index next,
// with prevTerm as the term of next-1 (what Term(next-1) returns): a raft
// follower installing a snapshot at index next-1. In three durable steps,
// each leaving a log Open accepts: remove the segments whose first index is
// >= next (newest first: a shorter log), create the new segment flagged as
// a reset, remove every older segment (a crash here leaves the flag, and
// Open removes the segments before a reset segment). A crash before the
// second step leaves the old log, shortened: the caller (which persisted
// its snapshot first) must call Reset again. Same requirement as
// TruncateSuffix: no appends or reads concurrently.
func (l *Log) Reset(next, prevTerm uint64) error {
	if next == 0 {
		return fmt.Errorf("txlog: Reset(0): indexes start at 1")
	}
	l.adminMu.Lock()
	defer l.adminMu.Unlock()
	if err := l.quiesce(); err != nil {
		return err
	}
	return l.control(func() error { return l.reset(next, prevTerm) })
}

// reset runs on the writer goroutine.
func (l *Log) reset(next, prevTerm uint64) error {
	if !l.idle() {
		return fmt.Errorf("%w: Reset while appending", ErrBusy)
	}
	l.segMu.RLock()
	old := l.segs
	l.segMu.RUnlock()
	k := len(old)
	for k > 0 && old[k-1].first >= next {
		k--
	}
	// log.state first: until the reset segment exists, it claims nothing.
	if err := l.lowerMark(0, 0); err != nil {
		return err
	}
	if k < len(old) {
		for j := len(old) - 1; j >= k; j-- {
			if err := l.fs.Remove(l.path(old[j].name)); err != nil {
				return fmt.Errorf("txlog: Reset: remove %s: %w", old[j].name, err)
			}
		}
		if err := l.fs.SyncDir(l.dir); err != nil {
			return fmt.Errorf("txlog: Reset: sync the log directory: %w", err)
		}
	}
	s, err := l.createSegment(next, prevTerm, segReset, nil)
	if err != nil {
		if k < len(old) {
			// The log in memory no longer matches the files: stop here, a
			// restart recovers the shortened log.
			l.setFailure(err, l.durable.Load())
		}
		return err
	}
	l.segMu.Lock()
	l.segs = []*segment{s}
	l.terms = nil
	l.lastIndex.Store(next - 1)
	l.segMu.Unlock()
	w := &l.w
	w.cur, w.stampSeg = s, s
	s.baseLSN, s.baseOff = w.written, segHeaderSize
	w.nextIndex, w.stampCount, w.lastTerm = next, 0, prevTerm
	merr := l.setMark(next-1, next) // a failure leaves log.state claiming nothing

	var rerr error
	for j, o := range old {
		if j < k && rerr == nil {
			if e := l.fs.Remove(l.path(o.name)); e != nil {
				rerr = fmt.Errorf("txlog: Reset: remove %s: %w", o.name, e)
			}
		}
		o.release()
	}
	if rerr == nil && k > 0 {
		if e := l.fs.SyncDir(l.dir); e != nil {
			rerr = fmt.Errorf("txlog: Reset: sync the log directory: %w", e)
		}
	}
	if rerr == nil {
		rerr = merr
	}
	return rerr
}
