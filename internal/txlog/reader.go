package txlog

import (
	"errors"
	"fmt"
	"io"
)

// recReader reads records from a segment file through a window buffer.
// Recovery and Read share it.
type recReader struct {
	f      File
	end    int64 // bytes of the file it may read
	buf    []byte
	bufOff int64 // file offset of buf[0]
	window int
}

func newRecReader(f File, end int64, window int) *recReader {
	return &recReader{f: f, end: end, window: window}
}

// at returns the n bytes at off, or fewer if the file ends first. The slice
// is valid until the next call.
func (r *recReader) at(off int64, n int) ([]byte, error) {
	if off >= r.bufOff && off+int64(n) <= r.bufOff+int64(len(r.buf)) {
		return r.buf[off-r.bufOff : off-r.bufOff+int64(n)], nil
	}
	want := int64(max(n, r.window))
	want = max(0, min(want, r.end-off))
	if int64(cap(r.buf)) < want {
		r.buf = make([]byte, want)
	}
	r.buf = r.buf[:want]
	got, err := r.f.ReadAt(r.buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		r.buf, r.bufOff = r.buf[:0], 0
		return nil, err
	}
	r.buf, r.bufOff = r.buf[:got], off
	return r.buf[:min(got, n)], nil
}

type recStatus int

const (
	recOK         recStatus = iota
	recShort                // the file ends inside the record (header valid) or inside its header
	recBadHeader            // header checksum mismatch
	recBadFlags             // valid header with flags this binary does not know
	recBadPayload           // payload checksum mismatch
)

func (s recStatus) String() string {
	switch s {
	case recShort:
		return "incomplete record at the end of the file"
	case recBadHeader:
		return "header checksum mismatch"
	case recBadFlags:
		return "unknown record flags"
	case recBadPayload:
		return "payload checksum mismatch"
	}
	return "ok"
}

// checkedHeader is header for a record that must be intact and hold
// index idx (in segment file name, for the errors).
func (r *recReader) checkedHeader(name string, off int64, idx uint64) (recHeader, error) {
	h, st, err := r.header(off)
	if err != nil {
		return h, fmt.Errorf("txlog: read %s at offset %d: %w", name, off, err)
	}
	if st != recOK {
		return h, readError(name, off, "%v", st)
	}
	if h.index != idx {
		return h, readError(name, off, "index %d where %d was expected", h.index, idx)
	}
	return h, nil
}

// header reads and checks the header of the record at off, not its
// payload: st is recOK when the header is valid, its flags known and its
// payload inside the file.
func (r *recReader) header(off int64) (h recHeader, st recStatus, err error) {
	hb, err := r.at(off, recHeaderSize)
	if err != nil {
		return h, 0, err
	}
	if len(hb) < recHeaderSize {
		return h, recShort, nil
	}
	h, ok := parseRecHeader(hb)
	switch {
	case !ok:
		return h, recBadHeader, nil
	case h.flags&^knownRecFlag != 0:
		return h, recBadFlags, nil
	case off+recHeaderSize+int64(h.length) > r.end:
		return h, recShort, nil
	}
	return h, recOK, nil
}

// record reads and verifies the record at off. hdrOK says whether h is
// valid (its checksum matched). payload is the stored payload, valid until
// the next call.
func (r *recReader) record(off int64) (h recHeader, hdrOK bool, payload []byte, st recStatus, err error) {
	hb, err := r.at(off, recHeaderSize)
	if err != nil {
		return h, false, nil, 0, err
	}
	if len(hb) < recHeaderSize {
		return h, false, nil, recShort, nil
	}
	h, hdrOK = parseRecHeader(hb)
	if !hdrOK {
		return h, false, nil, recBadHeader, nil
	}
	if h.flags&^knownRecFlag != 0 {
		return h, true, nil, recBadFlags, nil
	}
	if off+recHeaderSize+int64(h.length) > r.end {
		return h, true, nil, recShort, nil
	}
	payload, err = r.at(off+recHeaderSize, int(h.length))
	if err != nil {
		return h, true, nil, 0, err
	}
	if len(payload) < int(h.length) {
		return h, true, nil, recShort, nil
	}
	if crc32c(payload) != h.crc {
		return h, true, nil, recBadPayload, nil
	}
	return h, true, payload, recOK, nil
}

// validAfter reports whether a whole, valid record starts anywhere in
// [from, end): if so, a bad record before it is corruption, not a torn
// tail. It tries every byte offset; it only runs when a record failed.
func (r *recReader) validAfter(from int64) (bool, error) {
	for off := from; off+recHeaderSize <= r.end; off++ {
		hb, err := r.at(off, recHeaderSize)
		if err != nil {
			return false, err
		}
		if len(hb) < recHeaderSize {
			return false, nil
		}
		if allZero(hb) {
			// A record's header is never all zeros (its checksum is not):
			// jump to the last header position that still reaches the
			// next non-zero byte.
			next, err := r.nextNonZero(off)
			if err != nil {
				return false, err
			}
			off = max(off, next-recHeaderSize) // the loop adds one
			continue
		}
		length := int64(hb[0]) | int64(hb[1])<<8 | int64(hb[2])<<16 | int64(hb[3])<<24
		if off+recHeaderSize+length > r.end {
			continue
		}
		if _, ok := parseRecHeader(hb); !ok {
			continue
		}
		_, _, _, st, err := r.record(off)
		if err != nil {
			return false, err
		}
		if st == recOK {
			return true, nil
		}
	}
	return false, nil
}

// nextNonZero returns the offset of the first non-zero byte at or after
// from (r.end if there is none).
func (r *recReader) nextNonZero(from int64) (int64, error) {
	for off := from; off < r.end; {
		b, err := r.at(off, r.window)
		if err != nil {
			return 0, err
		}
		if len(b) == 0 {
			break
		}
		for i, c := range b {
			if c != 0 {
				return off + int64(i), nil
			}
		}
		off += int64(len(b))
	}
	return r.end, nil
}

// dataEnd returns the offset just past the last non-zero byte at or after
// from, or from itself when everything from there to the end is zero.
func (r *recReader) dataEnd(from int64) (int64, error) {
	end := from
	for off := from; off < r.end; {
		b, err := r.at(off, r.window)
		if err != nil {
			return 0, err
		}
		if len(b) == 0 {
			break
		}
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] != 0 {
				end = off + int64(i) + 1
				break
			}
		}
		off += int64(len(b))
	}
	return end, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// payloadOf returns the original payload bytes of a verified record, in
// memory the caller owns.
func payloadOf(h recHeader, stored []byte) ([]byte, error) {
	if h.flags&recZstd != 0 {
		return decompress(stored)
	}
	return append([]byte(nil), stored...), nil
}

func readError(file string, off int64, format string, args ...any) error {
	return &CorruptError{File: file, Offset: off, Reason: fmt.Sprintf(format, args...)}
}
