package txlog

import (
	"errors"
	"fmt"
	"os"

	"time"

	"lockstep/internal/stat"
)

// Preallocation (Options.Preallocate).
//
// A background goroutine, the preallocator, keeps at most one spare: a
// file named spare-N.seg.tmp, zero-filled to SegmentSize and synced. The
// writer claims it (Log.spare) when it decides to start a segment, and
// turns it into that segment by writing the segment header over its first
// bytes and renaming it (createSegment). The writer starts a new segment
// at the next record boundary when the current one reaches SegmentSize,
// or, when the current one is not preallocated (the first segment of a new
// log; one whose torn tail recovery cut), as soon as a spare is ready.
//
// Invariants:
//   - Bytes of a segment file past its last record are zeros, or the
//     remains of one torn write followed by zeros (a crash), nothing else:
//     spares are zero-filled before they are claimed, and the writer only
//     appends.
//   - Recovery reads a run of zeros to the end of a segment as its end
//     (scanSegment); index continuity across segments is still checked,
//     so lost records at the end of a segment are still found.
//   - A spare never holds records. Its name ends in .seg.tmp, which
//     recovery removes, so a crash leaves nothing to clean up by hand.
//   - When a preallocated segment stops being the last one, the writer cuts
//     its zeros off before it syncs it for the last time (rotate).

// spareFile is a zero-filled file ready to become a segment.
type spareFile struct {
	f    File
	name string
}

const (
	spareChunk      = 1 << 20
	preallocRetry   = time.Second
	spareNamePrefix = "spare-"
)

// preallocLoop is the preallocator goroutine. It does nothing until the
// writer kicks it (once PreallocAfter bytes are written, and after each
// claim).
func (l *Log) preallocLoop() {
	defer close(l.preDone)
	var retry <-chan time.Time
	for {
		select {
		case <-l.stop:
			l.dropSpare()
			return
		case <-l.preKick:
		case <-retry:
		}
		retry = nil
		if l.spare.Load() != nil || l.fail.Load() != nil {
			continue
		}
		sp, err := l.makeSpare()
		switch {
		case err == errStopped:
			l.dropSpare()
			return
		case err != nil:
			stat.IncU(&l.st.preFailed)
			retry = time.After(preallocRetry)
			continue
		}
		stat.IncU(&l.st.prealloc)
		l.spare.Store(sp)
	}
}

var errStopped = errors.New("txlog: stopped")

// makeSpare writes a zero-filled spare of SegmentSize bytes and syncs it.
// It gives up (errStopped) when the log closes meanwhile.
func (l *Log) makeSpare() (*spareFile, error) {
	l.spareSeq++
	name := fmt.Sprintf("%s%d.seg.tmp", spareNamePrefix, l.spareSeq)
	f, err := l.fs.OpenFile(l.path(name), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("txlog: preallocate %s: %w", name, err)
	}
	fail := func(err error) (*spareFile, error) {
		l.discard(&spareFile{f: f, name: name})
		if err == errStopped {
			return nil, err
		}
		return nil, fmt.Errorf("txlog: preallocate %s: %w", name, err)
	}
	zeros := make([]byte, min(int64(spareChunk), l.opts.SegmentSize))
	for off := int64(0); off < l.opts.SegmentSize; off += int64(len(zeros)) {
		select {
		case <-l.stop:
			return fail(errStopped)
		default:
		}
		n := min(int64(len(zeros)), l.opts.SegmentSize-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return fail(err)
		}
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	return &spareFile{f: f, name: name}, nil
}

// dropSpare removes an unclaimed spare (at Close).
func (l *Log) dropSpare() {
	if sp := l.spare.Swap(nil); sp != nil {
		l.discard(sp)
	}
}

// discard closes and removes a spare that will not become a segment.
func (l *Log) discard(sp *spareFile) {
	sp.f.Close()
	l.fs.Remove(l.path(sp.name))
}

// kickPrealloc wakes the preallocator without blocking.
func (l *Log) kickPrealloc() {
	select {
	case l.preKick <- struct{}{}:
	default:
	}
}

// claimSpare is the writer's rotation decision for a segment about to be
// started at file offset off of the segment being stamped: a spare if one
// is ready. The caller already decided to rotate.
func (l *Log) claimSpare() *spareFile {
	if !l.opts.Preallocate {
		return nil
	}
	sp := l.spare.Swap(nil)
	l.kickPrealloc()
	return sp
}

// wantsRotation reports whether the writer should start a new segment
// before a record at file offset off of the segment it stamps into: it is
// full, it is a version 1 segment (format.go: new records go to a version 2
// one), or it is not preallocated and a spare is ready.
func (l *Log) wantsRotation(off int64) bool {
	w := &l.w
	if w.stampCount == 0 {
		return false
	}
	if off >= l.opts.SegmentSize || w.stampSeg.legacy {
		return true
	}
	return l.opts.Preallocate && !w.stampSeg.prealloc && l.spare.Load() != nil
}
