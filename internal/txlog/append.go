package txlog

import (
	"encoding/binary"
	"fmt"
	"sync"

	"lockstep/internal/stat"
)

// batch is the records of one Append, encoded outside the buffer: stored
// payloads (compressed or not) with their CRCs. The header's index is 0 (the
// writer stamps it) or, for AppendAt, the index the record must get.
type batch struct {
	recs []encRec
	size uint64 // bytes in the buffer: headers and stored payloads
}

type encRec struct {
	stored []byte
	flags  uint32
	crc    uint32
	term   uint64
	index  uint64 // expected index (AppendAt), or 0
}

var batchPool = sync.Pool{New: func() any { return new(batch) }}

func getBatch() *batch { return batchPool.Get().(*batch) }

func putBatch(b *batch) {
	clear(b.recs)
	b.recs, b.size = b.recs[:0], 0
	batchPool.Put(b)
}

// encRecord encodes one record: compresses the payload if asked and worth
// it, and computes the payload CRC. This is the part of an append that runs
// in parallel with everything else.
func (l *Log) encRecord(term, index uint64, p []byte) (encRec, error) {
	r := encRec{stored: p, term: term, index: index}
	if l.opts.Compression && len(p) > l.opts.CompressThreshold {
		if c := compress(p); c != nil {
			r.stored, r.flags = c, recZstd
			stat.IncU(&l.st.compressed)
			stat.AddU(&l.st.compIn, uint64(len(p)))
			stat.AddU(&l.st.compOut, uint64(len(c)))
		}
	}
	if len(r.stored) > MaxPayload {
		return r, fmt.Errorf("%w: %d bytes (at most %d)", ErrTooLarge, len(r.stored), MaxPayload)
	}
	r.crc = crc32c(r.stored)
	return r, nil
}

// encode appends the encoded payloads to recs (passed and returned by
// value, so that a caller's array on the stack stays there) and returns
// their size in the buffer.
func (l *Log) encode(recs []encRec, term uint64, payloads [][]byte) ([]encRec, uint64, error) {
	var size uint64
	for _, p := range payloads {
		r, err := l.encRecord(term, 0, p)
		if err != nil {
			return recs, 0, err
		}
		recs = append(recs, r)
		size += recHeaderSize + uint64(len(r.stored))
	}
	return recs, size, nil
}

// Append appends the payloads, in order, as consecutive records with term,
// and returns the LSN just past the last one, to pass to WaitDurable. It is
// safe for concurrent use: the only shared step is one atomic add that
// reserves the batch's bytes in the log buffer; the copy into the buffer
// runs in parallel with other appenders. On an error nothing was appended.
// The records' indexes are assigned by the writer in LSN order (see
// WaitWritten and LastIndex, or use AppendAt).
func (l *Log) Append(term uint64, payloads ...[]byte) (lastLSN uint64, err error) {
	if len(payloads) == 0 {
		r := l.reserved.Load()
		if r&closedBit != 0 {
			return 0, ErrClosed
		}
		return r, nil
	}
	if err := l.Err(); err != nil {
		return 0, err
	}
	if len(payloads) <= smallBatch {
		// A few records are encoded on the stack.
		var small [smallBatch]encRec
		recs, size, err := l.encode(small[:0], term, payloads)
		if err != nil {
			return 0, err
		}
		return l.appendBatch(&batch{recs: recs, size: size})
	}
	b := getBatch()
	defer putBatch(b)
	recs, size, err := l.encode(b.recs, term, payloads)
	b.recs, b.size = recs, size
	if err != nil {
		return 0, err
	}
	return l.appendBatch(b)
}

// smallBatch: appends of up to this many payloads encode on the stack.
const smallBatch = 4

// appendBatch reserves b's range with one atomic add and fills it.
func (l *Log) appendBatch(b *batch) (uint64, error) {
	end := l.reserved.Add(b.size)
	if end&closedBit != 0 {
		return 0, ErrClosed
	}
	start := end - b.size
	if err := l.fill(b, start, end); err != nil {
		return 0, err
	}
	return end, nil
}

// fill copies b into its reserved range [start, end) and marks it complete.
// A batch larger than half the buffer is copied in pieces, each as soon as
// the writer has freed its space.
func (l *Log) fill(b *batch, start, end uint64) error {
	if b.size <= l.bufSize/2 {
		if err := l.waitSpace(end); err != nil {
			return err
		}
		b.copyTo(l, start, 0, b.size)
		l.done.complete(start, uint32(b.size), false)
		l.kickWriter()
		return nil
	}
	// Pieces of a quarter of the ring, the last one up to half: every piece
	// is far longer than the 32 bytes the link_buf needs, and two
	// consecutive pieces fit in the ring together.
	step := l.bufSize / 4
	for off, n := uint64(0), uint64(0); off < b.size; off += n {
		n = step
		if b.size-off < 2*step {
			n = b.size - off
		}
		if err := l.waitSpace(start + off + n); err != nil {
			return err
		}
		b.copyTo(l, start+off, off, off+n)
		l.done.complete(start+off, uint32(n), off > 0)
		l.kickWriter()
	}
	return nil
}

// waitSpace waits until the ring has room for LSNs up to end: the writer
// has written everything up to end-bufSize.
func (l *Log) waitSpace(end uint64) error {
	if end <= l.written.Load()+l.bufSize {
		return l.Err()
	}
	stat.IncU(&l.st.spaceWaits)
	if err := l.writtenWaits.wait(end - l.bufSize); err != nil {
		return err
	}
	return l.Err()
}

// copyTo copies bytes [from, to) of the batch's encoding (headers and
// stored payloads, concatenated) into the ring at LSN lsn.
func (b *batch) copyTo(l *Log, lsn, from, to uint64) {
	var h [recHeaderSize]byte
	pos := uint64(0) // offset of the current piece in the encoding
	put := func(piece []byte) {
		n := uint64(len(piece))
		if pos+n > from && pos < to {
			lo, hi := max(from, pos)-pos, min(to, pos+n)-pos
			l.ringWrite(lsn+(pos+lo-from), piece[lo:hi])
		}
		pos += n
	}
	for i := range b.recs {
		if pos >= to {
			break
		}
		r := &b.recs[i]
		if pos+recHeaderSize+uint64(len(r.stored)) <= from {
			pos += recHeaderSize + uint64(len(r.stored))
			continue
		}
		binary.LittleEndian.PutUint32(h[0:], uint32(len(r.stored)))
		binary.LittleEndian.PutUint32(h[4:], r.flags)
		binary.LittleEndian.PutUint64(h[8:], r.term)
		binary.LittleEndian.PutUint64(h[16:], r.index)
		binary.LittleEndian.PutUint32(h[24:], r.crc)
		binary.LittleEndian.PutUint32(h[28:], 0) // the writer computes it
		put(h[:])
		put(r.stored)
	}
}

// AppendAt appends payloads as records index, index+1, ... with term. The
// index must be LastIndex()+1 once everything appended before is written:
// AppendAt waits for that, and returns an error wrapping ErrNotDense
// otherwise. It is for callers that own the log's indexes (raft): no
// Append may run concurrently with it. To replace a conflicting tail, call
// TruncateSuffix first; to start after a snapshot, Reset.
func (l *Log) AppendAt(index, term uint64, payloads ...[]byte) (lastLSN uint64, err error) {
	ents := make([]Entry, len(payloads))
	for i, p := range payloads {
		ents[i] = Entry{Index: index + uint64(i), Term: term, Payload: p}
	}
	return l.AppendEntries(ents)
}

// AppendEntries is AppendAt for entries with their own terms (raft's
// Ready.Entries): their indexes must be consecutive, starting at
// LastIndex()+1.
func (l *Log) AppendEntries(ents []Entry) (lastLSN uint64, err error) {
	if len(ents) == 0 {
		return l.Append(0)
	}
	l.adminMu.Lock()
	defer l.adminMu.Unlock()
	if err := l.Err(); err != nil {
		return 0, err
	}
	r := l.reserved.Load()
	if r&closedBit != 0 {
		return 0, ErrClosed
	}
	if err := l.WaitWritten(r); err != nil {
		return 0, err
	}
	if next := l.LastIndex() + 1; ents[0].Index != next {
		if l.FirstIndex() == next && l.LastIndex() < next {
			return 0, fmt.Errorf("%w: appending at index %d, but the empty log starts at %d (Reset it first)", ErrNotDense, ents[0].Index, next)
		}
		return 0, fmt.Errorf("%w: appending at index %d, but the next index is %d", ErrNotDense, ents[0].Index, next)
	}
	b := getBatch()
	defer putBatch(b)
	for i, e := range ents {
		if e.Index != ents[0].Index+uint64(i) {
			return 0, fmt.Errorf("%w: entry %d has index %d after %d", ErrNotDense, i, e.Index, ents[0].Index+uint64(i)-1)
		}
		r, err := l.encRecord(e.Term, e.Index, e.Payload)
		if err != nil {
			return 0, err
		}
		b.recs = append(b.recs, r)
		b.size += recHeaderSize + uint64(len(r.stored))
	}
	return l.appendBatch(b)
}
