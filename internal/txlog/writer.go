package txlog

import (
	"encoding/binary"
	"fmt"

	"lockstep/internal/stat"
)

// writer is the state of the writer goroutine; nothing else touches it
// (control operations run on the writer goroutine).
type writer struct {
	ready      uint64 // end of the contiguous completed prefix of the buffer
	hdrPos     uint64 // LSN of the next record header to stamp
	written    uint64 // LSN written to the file (published as Log.written)
	nextIndex  uint64 // index the next stamped record gets
	lastTerm   uint64 // term of record nextIndex-1
	cur        *segment
	stampSeg   *segment   // segment the next stamped record goes to
	stampCount uint64     // records stamped into stampSeg
	rots       []*segment // segments stamped into but not yet created
	queue      []pendingRec
	qhead      int
	preKicked  bool // the preallocator was started (PreallocAfter reached)
}

// pendingRec is a stamped record not yet published to readers.
type pendingRec struct {
	index, term uint64
	end         uint64 // LSN just past the record
	seg         *segment
	off, endOff int64 // file offsets of the record and just past it
}

// ctlOp runs fn on the writer goroutine (TruncateSuffix, Reset, and,
// with whenFailed, ResumeAfterDiskFull).
type ctlOp struct {
	fn         func() error
	reply      chan error
	whenFailed bool // run it even when the log has failed
}

func (l *Log) control(fn func() error) error {
	return l.controlOp(ctlOp{fn: fn, reply: make(chan error, 1)})
}

func (l *Log) controlOp(op ctlOp) error {
	select {
	case l.ctl <- op:
	case <-l.writerDone:
		return ErrClosed
	}
	return <-op.reply
}

// kickWriter wakes the writer if it is going to sleep.
func (l *Log) kickWriter() {
	if l.writerIdle.Load() && l.writerIdle.CompareAndSwap(true, false) {
		select {
		case l.writerKick <- struct{}{}:
		default:
		}
	}
}

func (l *Log) writerLoop() {
	defer close(l.writerDone)
	for {
		if f := l.fail.Load(); f != nil {
			// Failed: write nothing more; refuse control operations.
			select {
			case <-l.stop:
				return
			case op := <-l.ctl:
				if op.whenFailed {
					op.reply <- op.fn()
				} else {
					op.reply <- f.err
				}
			}
			continue
		}
		if l.writeStep() {
			continue
		}
		select {
		case op := <-l.ctl:
			op.reply <- op.fn()
			continue
		default:
		}
		l.writerIdle.Store(true)
		if l.done.ready(l.w.ready) || l.fail.Load() != nil {
			l.writerIdle.Store(false)
			continue
		}
		select {
		case <-l.writerKick:
		case op := <-l.ctl:
			op.reply <- op.fn()
		case <-l.stop:
			l.writerIdle.Store(false)
			return
		}
		l.writerIdle.Store(false)
	}
}

// writeStep takes the completed ranges, stamps their records, writes what
// it can and publishes it. It reports whether it made progress.
func (l *Log) writeStep() bool {
	w := &l.w
	ready, appends := l.done.advance(w.ready, l.bufSize)
	progressed := ready != w.ready
	w.ready = ready
	if appends > 0 {
		stat.AddU(&l.st.appends, appends)
	}
	if err := l.stamp(); err != nil {
		l.setFailure(err, w.written)
		return false
	}
	target := min(w.ready, w.hdrPos) // never write a header not yet stamped
	if target <= w.written {
		return progressed
	}
	from := w.written
	err := l.writeUpTo(target)
	if w.written > from {
		l.publish(from)
	}
	if !w.preKicked && l.opts.Preallocate && w.written >= uint64(l.opts.PreallocAfter) {
		w.preKicked = true
		l.kickPrealloc()
	}
	if err != nil {
		l.setFailure(err, w.written)
		return false
	}
	return true
}

// stamp gives every complete record header between hdrPos and ready its
// index and header CRC, in LSN order, and decides segment rotation.
func (l *Log) stamp() error {
	w := &l.w
	var h [recHeaderSize]byte
	var n uint64
	for w.hdrPos <= w.ready && w.ready-w.hdrPos >= recHeaderSize {
		l.ringRead(w.hdrPos, h[:])
		length := binary.LittleEndian.Uint32(h[0:])
		term := binary.LittleEndian.Uint64(h[8:])
		idx := w.nextIndex
		if want := binary.LittleEndian.Uint64(h[16:]); want != 0 && want != idx {
			return fmt.Errorf("%w: AppendAt of index %d became index %d (an Append ran concurrently)", ErrLogFailed, want, idx)
		}
		off := w.stampSeg.fileOff(w.hdrPos)
		if l.wantsRotation(off) {
			sp := l.claimSpare()
			s := &segment{name: segName(idx), first: idx, prevTerm: w.lastTerm,
				baseLSN: w.hdrPos, baseOff: segHeaderSize, last: idx - 1, size: segHeaderSize,
				spare: sp, prealloc: sp != nil}
			w.rots = append(w.rots, s)
			w.stampSeg, w.stampCount = s, 0
			off = segHeaderSize
		}
		binary.LittleEndian.PutUint64(h[16:], idx)
		binary.LittleEndian.PutUint32(h[28:], crc32c(h[:28]))
		l.ringWrite(w.hdrPos+16, h[16:])
		end := w.hdrPos + recHeaderSize + uint64(length)
		w.queue = append(w.queue, pendingRec{index: idx, term: term, end: end, seg: w.stampSeg,
			off: off, endOff: off + recHeaderSize + int64(length)})
		w.nextIndex++
		w.lastTerm = term
		w.stampCount++
		w.hdrPos = end
		n++
	}
	if n > 0 {
		stat.AddU(&l.st.records, n)
	}
	return nil
}

// writeUpTo writes the buffer from w.written to target, creating the
// segments stamping decided on at their first byte.
func (l *Log) writeUpTo(target uint64) error {
	w := &l.w
	for w.written < target {
		if len(w.rots) > 0 && w.rots[0].baseLSN == w.written {
			if err := l.rotate(w.rots[0]); err != nil {
				return err
			}
			w.rots = w.rots[1:]
			continue
		}
		end := target
		if len(w.rots) > 0 && w.rots[0].baseLSN < end {
			end = w.rots[0].baseLSN
		}
		if err := l.writeRange(w.cur, w.written, end); err != nil {
			return err
		}
		w.written = end
	}
	return nil
}

// writeRange writes LSNs [from, to) from the ring to s (two writes if the
// range wraps around the ring).
func (l *Log) writeRange(s *segment, from, to uint64) error {
	p := from & l.mask
	n := to - from
	head := min(n, l.bufSize-p)
	if err := l.writeAt(s, l.buf[p:p+head], s.fileOff(from)); err != nil {
		return err
	}
	if head < n {
		return l.writeAt(s, l.buf[:n-head], s.fileOff(from+head))
	}
	return nil
}

func (l *Log) writeAt(s *segment, b []byte, off int64) error {
	_, err := s.file.WriteAt(b, off)
	stat.IncU(&l.st.writes)
	if err != nil {
		// Best effort: cut what part of the write may have landed, so that
		// the file ends at a record boundary. Recovery would treat the
		// partial record as a torn tail anyway.
		s.file.Truncate(s.fileOff(l.w.written))
		return writeError("write", s.name, off, err)
	}
	return nil
}

// rotate fsyncs the current segment (cutting off the zeros of a
// preallocated one first) and creates s, which becomes current.
func (l *Log) rotate(s *segment) error {
	old := l.w.cur
	if old.prealloc {
		end := old.fileOff(l.w.written)
		if err := old.file.Truncate(end); err != nil {
			return writeError("truncate", old.name, end, err)
		}
		old.prealloc = false
	}
	if err := l.syncFile(old.file, old.name); err != nil {
		return err
	}
	sp := s.spare
	s.spare = nil
	ns, err := l.createSegment(s.first, s.prevTerm, 0, sp)
	if err != nil {
		return err
	}
	s.file = ns.file
	s.refs.Store(1)
	l.segMu.Lock()
	l.segs = append(l.segs, s)
	l.segMu.Unlock()
	l.w.cur = s
	// log.state will say the log reaches this segment (the mark loop
	// writes it): a crash does not explain its loss.
	l.newestSeg.Store(s.first)
	l.kickMark()
	return nil
}

// publish makes the records written since from readable, then publishes
// the written position, wakes its waiters and the flusher.
func (l *Log) publish(from uint64) {
	w := &l.w
	l.segMu.Lock()
	var last uint64
	for w.qhead < len(w.queue) && w.queue[w.qhead].end <= w.written {
		r := &w.queue[w.qhead]
		w.qhead++
		s := r.seg
		if (r.index-s.first)%sparseEvery == 0 {
			s.sparse = append(s.sparse, r.off)
		}
		s.last, s.size = r.index, r.endOff
		if n := len(l.terms); n == 0 || l.terms[n-1].term != r.term {
			l.terms = append(l.terms, termRun{index: r.index, term: r.term})
		}
		last = r.index
		r.seg = nil
	}
	if last != 0 {
		l.lastIndex.Store(last)
	}
	// Under segMu with lastIndex: the flusher reads the pair together
	// (the index it may record as durable once its fsync of written ends).
	l.written.Store(w.written)
	l.segMu.Unlock()
	if w.qhead == len(w.queue) {
		w.queue, w.qhead = w.queue[:0], 0
	} else if w.qhead > 4096 {
		w.queue = append(w.queue[:0], w.queue[w.qhead:]...)
		w.qhead = 0
	}

	l.writtenWaits.notify(from, w.written)
	if l.opts.SyncMode == SyncAlways {
		select {
		case l.flusherKick <- struct{}{}:
		default:
		}
	}
}

// ringRead copies len(b) bytes of the ring at LSN lsn into b.
func (l *Log) ringRead(lsn uint64, b []byte) {
	p := lsn & l.mask
	n := copy(b, l.buf[p:])
	copy(b[n:], l.buf)
}

// ringWrite copies b into the ring at LSN lsn.
func (l *Log) ringWrite(lsn uint64, b []byte) {
	p := lsn & l.mask
	n := copy(l.buf[p:], b)
	copy(l.buf, b[n:])
}
