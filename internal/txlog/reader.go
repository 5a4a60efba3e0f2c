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
