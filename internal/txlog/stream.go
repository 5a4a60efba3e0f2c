package txlog

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/zstd"
)

// StreamFrom is the stored payload size from which ReadStreaming hands an
// entry out to be streamed (OpenPayload) rather than read whole: the
// size from which decompress already uses a decoder of its own.
const StreamFrom = largeStored

// streamMaxWindow bounds the zstd window a streamed payload may need: the
// decoder keeps that much history. The log's encoder (SpeedFastest) writes
// frames with a window of at most 4 MiB (the payload's size when smaller);
// a frame that asks for more is refused rather than buffered.
const streamMaxWindow = 8 << 20

// StreamMemory is about what one open PayloadReader holds, whatever the
// payload's size: its read buffer, the zstd decoder's window and its
// block buffers. What a caller's queue counts for a streamed entry.
const StreamMemory = readWindow + streamMaxWindow + 512<<10

// ReadStreaming is Read, except that an entry whose stored payload is
// streamFrom bytes or more (streamFrom > 0) comes without its payload:
// Streamed is set, Payload is nil, and OpenPayload(Index) reads it. Such
// an entry is the last one returned. Its payload's checksum is verified
// by OpenPayload, not here (its header's is).
func (l *Log) ReadStreaming(lo, hi uint64, maxBytes, streamFrom int) ([]Entry, error) {
	return l.read(lo, hi, maxBytes, streamFrom)
}

// PayloadReader reads one entry's payload from its segment file in
// pieces, decompressing as it goes: its memory does not grow with the
// payload (StreamMemory). OpenPayload verified the stored bytes' checksum
// before returning it; the reader computes it again over the bytes it
// reads and, if they differ (the file changed in between), returns an
// error wrapping ErrCorrupt instead of io.EOF at the end.
type PayloadReader struct {
	Index, Term uint64
	// Stored is the payload's stored (possibly compressed) size.
	Stored int64

	seg  *segment
	src  *crcReader
	zd   *zstd.Decoder // nil: stored uncompressed
	r    io.Reader     // src or zd
	done bool
}

// OpenPayload opens the payload of entry index to be read as a stream.
// It first reads the stored bytes once, in pieces, to verify their
// checksum (a mismatch is an error wrapping ErrCorrupt, and nothing of
// the payload has been handed out); the reader then reads them again.
// The caller must Close it. Same rules as Read: index in [FirstIndex,
// LastIndex], no concurrent TruncateSuffix or Reset of it.
func (l *Log) OpenPayload(index uint64) (*PayloadReader, error) {
	l.segMu.RLock()
	if l.closed {
		l.segMu.RUnlock()
		return nil, ErrClosed
	}
	first, last := l.segs[0].first, l.lastIndex.Load()
	if index < first {
		l.segMu.RUnlock()
		return nil, fmt.Errorf("%w: index %d is before the first index %d", ErrCompacted, index, first)
	}
	if index > last {
		l.segMu.RUnlock()
		return nil, fmt.Errorf("%w: index %d is after the last index %d", ErrUnavailable, index, last)
	}
	k := segmentFor(l.segs, index)
	if k < 0 || index > l.segs[k].last {
		l.segMu.RUnlock()
		return nil, fmt.Errorf("%w: index %d was removed", ErrUnavailable, index)
	}
	s := l.segs[k]
	off, idx := s.seek(index)
	segEnd := s.size
	s.acquire()
	l.segMu.RUnlock()

	pr, err := openPayload(s, off, idx, index, segEnd)
	if err != nil {
		s.release()
		return nil, err
	}
	return pr, nil
}

func openPayload(s *segment, off int64, idx, index uint64, segEnd int64) (*PayloadReader, error) {
	r := newRecReader(s.file, segEnd, recHeaderSize)
	var h recHeader
	for ; ; idx++ {
		var err error
		if h, err = r.checkedHeader(s.name, off, idx); err != nil {
			return nil, err
		}
		if idx == index {
			break
		}
		off += recHeaderSize + int64(h.length)
	}
	start, n := off+recHeaderSize, int64(h.length)
	// First pass: the stored bytes' checksum, before any is handed out.
	buf := make([]byte, min(n, readWindow))
	c := &crcReader{f: s.file, off: start, end: start + n, buf: buf, want: h.crc}
	if ok, err := c.verify(); err != nil {
		return nil, fmt.Errorf("txlog: read %s at offset %d: %w", s.name, off, err)
	} else if !ok {
		return nil, readError(s.name, off, "%v", recBadPayload)
	}
	c.reset(s.name, off)
	pr := &PayloadReader{Index: index, Term: h.term, Stored: n, seg: s, src: c, r: c}
	if h.flags&recZstd != 0 {
		zd, err := zstd.NewReader(c, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(streamMaxWindow), zstd.WithDecoderMaxMemory(MaxPayload))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		pr.zd, pr.r = zd, zd
	}
	return pr, nil
}

// Read reads the payload's original bytes. At the end it returns io.EOF
// only if every stored byte was read and their checksum matched.
func (p *PayloadReader) Read(b []byte) (int, error) {
	if p.seg == nil {
		return 0, ErrClosed
	}
	n, err := p.r.Read(b)
	if errors.Is(err, io.EOF) && !p.done {
		if ferr := p.src.finish(); ferr != nil {
			return n, ferr
		}
		p.done = true
	} else if err != nil && p.zd != nil && !errors.Is(err, io.EOF) {
		var ce *CorruptError
		if !errors.As(err, &ce) {
			err = readError(p.src.name, p.src.recOff, "zstd: %v", err)
		}
	}
	return n, err
}

// Close releases the reader's segment and decoder. Idempotent.
func (p *PayloadReader) Close() error {
	if p.seg == nil {
		return nil
	}
	if p.zd != nil {
		p.zd.Close()
		p.zd = nil
	}
	p.seg.release()
	p.seg = nil
	return nil
}

// crcReader reads [off, end) of a file through buf, computing the CRC32C
// of what it read.
type crcReader struct {
	f         File
	off, end  int64
	buf       []byte
	pos, lim  int // buf[pos:lim] not yet handed out
	crc, want uint32
	name      string // for errors
	recOff    int64  // the record's offset in its file
	start     int64
}

// verify reads every byte once and reports whether their checksum is the
// record header's (want).
func (c *crcReader) verify() (bool, error) {
	c.start = c.off
	var crc uint32
	for off := c.off; off < c.end; {
		b := c.buf[:min(int64(len(c.buf)), c.end-off)]
		n, err := c.f.ReadAt(b, off)
		if n < len(b) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return false, err
		}
		crc = crc32.Update(crc, castagnoli, b)
		off += int64(n)
	}
	return crc == c.want, nil
}

// reset rewinds to the start for the second pass.
func (c *crcReader) reset(name string, recOff int64) {
	c.off, c.pos, c.lim, c.crc = c.start, 0, 0, 0
	c.name, c.recOff = name, recOff
}

func (c *crcReader) Read(b []byte) (int, error) {
	if c.pos == c.lim {
		if c.off >= c.end {
			return 0, io.EOF
		}
		want := c.buf[:min(int64(len(c.buf)), c.end-c.off)]
		n, err := c.f.ReadAt(want, c.off)
		if n < len(want) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, readError(c.name, c.recOff, "payload: %v", err)
		}
		c.crc = crc32.Update(c.crc, castagnoli, want)
		c.off += int64(n)
		c.pos, c.lim = 0, n
	}
	n := copy(b, c.buf[c.pos:c.lim])
	c.pos += n
	return n, nil
}

// finish checks, once the payload's reader is done, that every stored
// byte was read and that their checksum still matches.
func (c *crcReader) finish() error {
	if c.pos != c.lim || c.off != c.end {
		return readError(c.name, c.recOff, "%d stored bytes after the end of the compressed payload", int64(c.lim-c.pos)+c.end-c.off)
	}
	if c.crc != c.want {
		return readError(c.name, c.recOff, "%v (it changed after it was verified)", recBadPayload)
	}
	return nil
}
