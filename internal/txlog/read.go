package txlog

import "fmt"

const readWindow = 256 << 10

// Read returns the records with indexes in [lo, hi), in order, stopping
// before the total payload size would exceed maxBytes (but returning at
// least one record if lo < hi); maxBytes < 0 means no limit. Payloads are
// the original bytes (decompressed), in memory the caller owns. Records
// are read from the segment files and verified; any record written to the
// operating system (index <= LastIndex()) can be read while appends
// continue. Indexes before FirstIndex give an error wrapping ErrCompacted,
// hi beyond LastIndex()+1 one wrapping ErrUnavailable. Read must not run
// concurrently with a TruncateSuffix or Reset that removes the range.
func (l *Log) Read(lo, hi uint64, maxBytes int) ([]Entry, error) {
	return l.read(lo, hi, maxBytes, 0)
}

// read is Read and, with streamFrom > 0, ReadStreaming.
func (l *Log) read(lo, hi uint64, maxBytes, streamFrom int) ([]Entry, error) {
	if lo >= hi {
		return nil, nil
	}
	l.segMu.RLock()
	if l.closed {
		l.segMu.RUnlock()
		return nil, ErrClosed
	}
	first, last := l.segs[0].first, l.lastIndex.Load()
	l.segMu.RUnlock()
	if lo < first {
		return nil, fmt.Errorf("%w: index %d is before the first index %d", ErrCompacted, lo, first)
	}
	if hi > last+1 {
		return nil, fmt.Errorf("%w: index %d is after the last index %d", ErrUnavailable, hi-1, last)
	}
	var (
		out  []Entry
		size int
		next = lo
	)
	for next < hi {
		more, err := l.readSegment(next, hi, maxBytes, streamFrom, &size, &out)
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
		next = lo + uint64(len(out))
	}
	return out, nil
}

// readSegment appends to out the records from next on that the segment
// holding next has, up to hi and the size limit. more is false when the
// size limit (or an entry to stream: streamFrom) stopped it.
func (l *Log) readSegment(next, hi uint64, maxBytes, streamFrom int, size *int, out *[]Entry) (more bool, err error) {
	l.segMu.RLock()
	if l.closed {
		l.segMu.RUnlock()
		return false, ErrClosed
	}
	k := segmentFor(l.segs, next)
	if k < 0 {
		l.segMu.RUnlock()
		return false, fmt.Errorf("%w: index %d was removed during the read", ErrCompacted, next)
	}
	s := l.segs[k]
	if next > s.last {
		l.segMu.RUnlock()
		return false, fmt.Errorf("%w: index %d was removed during the read", ErrUnavailable, next)
	}
	off, idx := s.seek(next)
	segLast, segEnd := s.last, s.size
	s.acquire()
	l.segMu.RUnlock()
	defer s.release()

	r := newRecReader(s.file, segEnd, min(readWindow, int(segEnd-off)))
	for ; idx <= segLast && idx < hi; idx++ {
		if idx < next {
			// Walking from the remembered record to next: headers only
			// (a record is verified when it is the one read).
			h, err := r.checkedHeader(s.name, off, idx)
			if err != nil {
				return false, err
			}
			off += recHeaderSize + int64(h.length)
			continue
		}
		if streamFrom > 0 {
			h, st, err := r.header(off)
			if err != nil {
				return false, fmt.Errorf("txlog: read %s at offset %d: %w", s.name, off, err)
			}
			if st == recOK && h.index == idx && int64(h.length) >= int64(streamFrom) {
				// To be streamed (OpenPayload): the last entry returned.
				*out = append(*out, Entry{Index: idx, Term: h.term, Streamed: true})
				return false, nil
			}
		}
		h, _, stored, st, err := r.record(off)
		if err != nil {
			return false, fmt.Errorf("txlog: read %s at offset %d: %w", s.name, off, err)
		}
		if st != recOK {
			return false, readError(s.name, off, "%v", st)
		}
		if h.index != idx {
			return false, readError(s.name, off, "index %d where %d was expected", h.index, idx)
		}
		p, err := payloadOf(h, stored)
		if err != nil {
			return false, readError(s.name, off, "%v", err)
		}
		if len(*out) > 0 && maxBytes >= 0 && *size+len(p) > maxBytes {
			return false, nil
		}
		*size += len(p)
		*out = append(*out, Entry{Index: idx, Term: h.term, Payload: p})
		off += recHeaderSize + int64(h.length)
	}
	return true, nil
}

// Term returns the term of record i, for FirstIndex()-1 <= i <=
// LastIndex(): the term of FirstIndex()-1 is kept in the first segment's
// header (0 if never known). Earlier indexes give ErrCompacted, later ones
// ErrUnavailable.
func (l *Log) Term(i uint64) (uint64, error) {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	first, last := l.segs[0].first, l.lastIndex.Load()
	switch {
	case i+1 == first:
		return l.segs[0].prevTerm, nil
	case i < first:
		return 0, fmt.Errorf("%w: index %d is before the first index %d", ErrCompacted, i, first)
	case i > last:
		return 0, fmt.Errorf("%w: index %d is after the last index %d", ErrUnavailable, i, last)
	}
	t, ok := termOf(l.terms, i)
	if !ok {
		return 0, fmt.Errorf("txlog: no term known for index %d", i)
	}
	return t, nil
}
