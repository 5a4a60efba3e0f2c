package record

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Opener opens a new reader of a log entry's payload, from its start
// (txlog.Log.OpenPayload). Every call is a new pass over the payload.
type Opener func() (io.ReadCloser, error)

// StreamChunkBytes bounds the bytes of one chunk of a streamed
// transaction's changes (their keys and images, copied out of the
// stream): a chunk ends after ChunkChanges changes or once its changes
// hold this many bytes, whichever comes first (at least one change).
const StreamChunkBytes = 256 << 10

// streamBuffer is the read buffer a streamed payload is decoded through.
const streamBuffer = 64 << 10

// StreamMemory is about what reading a streamed transaction's changes
// holds besides the payload's reader: the read buffer, the chunk of
// decoded changes and the bytes they point into (one change larger than
// StreamChunkBytes adds its own size).
func StreamMemory(chunk int) int64 {
	return streamBuffer + int64(chunk)*int64(changeSize) + 2*StreamChunkBytes
}

const changeSize = 96 // unsafe.Sizeof(Change{}) on 64-bit platforms

// StreamEntry reads a log entry's payload through open without holding
// it whole when it is one transaction record with more than chunk
// changes (chunk > 0): the record is checked as DecodeTxnChunked checks
// it — in one pass over the payload, whose reader verifies its checksum —
// and comes back as t, whose ChangeChunks reads the changes again, a
// chunk at a time, from a new reader of open's. Any other payload comes
// back whole (payload: for EntryRecords).
func StreamEntry(open Opener, chunk int) (payload []byte, t *Txn, err error) {
	rc, err := open()
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, streamBuffer)
	head, _ := br.Peek(2)
	whole := chunk <= 0 || len(head) < 2 || Kind(head[0]) != KindTxn
	if !whole {
		d := streamDecoder{r: br}
		t, n, format := d.txnHeader()
		if d.err != nil {
			return nil, nil, d.err
		}
		if n > chunk {
			z := &lazyChanges{open: open, n: n, chunk: chunk}
			var c Change
			for i := 0; i < n && d.err == nil; i++ {
				d.change(&c, t.Minimal, nil) // checked, not kept
				z.maxBytes = max(z.maxBytes, d.last)
			}
			t.AutoInc = d.trailer(format)
			if d.err != nil {
				return nil, nil, d.err
			}
			t.lazy = z
			return nil, t, nil
		}
		// Few changes (large images): decoded whole, as from Read.
		rc.Close()
		if rc, err = open(); err != nil {
			return nil, nil, err
		}
		defer rc.Close()
		br.Reset(rc)
	}
	if payload, err = io.ReadAll(br); err != nil {
		return nil, nil, fmt.Errorf("read the entry: %w", err)
	}
	return payload, nil, nil
}

// streamChunks is ChangeChunks for a streamed transaction: a new pass
// over the payload, the changes decoded chunk by chunk into one buffer,
// their bytes copied into one arena; then the rest of the record to its
// end, so that the payload's reader verifies its checksum. An error after
// f was called means the chunks f took came from a payload that is not
// the one checked: the caller undoes them (storage.HeldTxn rolls back).
func (t *Txn) streamChunks(f func([]Change) error) error {
	z := t.lazy
	rc, err := z.open()
	if err != nil {
		return err
	}
	defer rc.Close()
	// A byte string longer than the first pass saw is not allocated.
	d := streamDecoder{r: bufio.NewReaderSize(rc, streamBuffer), limit: z.maxBytes}
	h, n, format := d.txnHeader()
	if d.err != nil {
		return d.err
	}
	if n != z.n || h.Seq != t.Seq || h.GNO != t.GNO || h.Minimal != t.Minimal {
		return fmt.Errorf("%w: the entry changed since it was read", ErrCorrupt)
	}
	buf := make([]Change, min(z.chunk, n))
	arena := make([]byte, 0, StreamChunkBytes+StreamChunkBytes/4)
	for done := 0; done < n; {
		arena = arena[:0]
		k := 0
		for k < len(buf) && done+k < n && (k == 0 || len(arena) < StreamChunkBytes) {
			d.change(&buf[k], t.Minimal, &arena)
			k++
		}
		if d.err != nil {
			return d.err
		}
		if err := f(buf[:k]); err != nil {
			return err
		}
		done += k
	}
	clear(buf)
	d.trailer(format)
	return d.err
}

// streamDecoder reads a record's fields from a stream, remembering the
// first error: ErrCorrupt for bytes that are not a record, the reader's
// own error otherwise (a checksum mismatch, an I/O error).
type streamDecoder struct {
	r    *bufio.Reader
	err  error
	last uint64 // the bytes of the last change read
	// limit, if not 0: a change holding more bytes is refused before
	// they are read (the second pass: the first saw the largest).
	limit uint64
}

func (d *streamDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
	}
}

func (d *streamDecoder) failRead(err error) {
	switch {
	case d.err != nil:
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		d.fail("truncated")
	case err.Error() == "binary: varint overflows a 64-bit integer":
		d.fail("bad varint")
	default:
		d.err = fmt.Errorf("read the entry: %w", err)
	}
}

// txnHeader reads a transaction record up to its changes: the header and
// the number of changes.
func (d *streamDecoder) txnHeader() (t *Txn, n int, format byte) {
	var kf [2]byte
	if _, err := io.ReadFull(d.r, kf[:]); err != nil {
		d.failRead(err)
		return nil, 0, 0
	}
	if k, err := PeekKind(kf[:]); err != nil {
		d.err = err
		return nil, 0, 0
	} else if k != KindTxn {
		d.fail("kind %d is not a transaction", k)
		return nil, 0, 0
	}
	t = &Txn{}
	t.Seq, t.GNO, t.LastCommitted = int64(d.uvarint()), int64(d.uvarint()), int64(d.uvarint())
	if kf[1] >= 3 {
		t.CommitTime = int64(d.uvarint())
	}
	t.Minimal = d.byte()&1 != 0
	c := d.uvarint()
	if d.err == nil && c > 1<<40 {
		d.fail("count %d exceeds the record", c)
	}
	return t, int(c), kf[1]
}

// trailer reads what follows the changes — the writeset (skipped) and,
// from format 2 on, the AUTO_INCREMENT counters — and the end of the
// stream.
func (d *streamDecoder) trailer(format byte) []AutoInc {
	d.skip(8 * d.uvarint())
	var ai []AutoInc
	if format >= 2 {
		n := d.uvarint()
		for i := uint64(0); i < n && d.err == nil; i++ {
			a := AutoInc{Table: d.uvarint(), Next: d.uvarint()}
			if d.err == nil {
				ai = append(ai, a)
			}
		}
	}
	if d.err == nil {
		if _, err := d.r.ReadByte(); err == nil {
			d.fail("trailing bytes")
		} else if !errors.Is(err, io.EOF) {
			d.failRead(err)
		}
	}
	return ai
}

func (d *streamDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.failRead(err)
		return 0
	}
	return v
}

func (d *streamDecoder) byte() byte {
	if d.err != nil {
		return 0
	}
	c, err := d.r.ReadByte()
	if err != nil {
		d.failRead(err)
		return 0
	}
	return c
}

func (d *streamDecoder) skip(n uint64) {
	for n > 0 && d.err == nil {
		k := int(min(n, 1<<30))
		got, err := d.r.Discard(k)
		n -= uint64(got)
		if err != nil {
			d.failRead(err)
		}
	}
}

// bytes reads a byte string: copied into *arena (appended), or skipped
// when arena is nil.
func (d *streamDecoder) bytes(arena *[]byte) []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	d.last += n
	if arena == nil {
		d.skip(n)
		return nil
	}
	if d.limit > 0 && d.last > d.limit {
		d.fail("a change of more than %d bytes where the entry's largest was %d: the entry changed since it was read", d.last, d.limit)
		return nil
	}
	a := *arena
	start := len(a)
	a = append(a, make([]byte, n)...)
	if _, err := io.ReadFull(d.r, a[start:]); err != nil {
		d.failRead(err)
		return nil
	}
	*arena = a
	return a[start : start+int(n) : start+int(n)]
}

// change reads one change into c, its byte strings into *arena (skipped
// when arena is nil); d.last is its bytes.
func (d *streamDecoder) change(c *Change, minimal bool, arena *[]byte) {
	d.last = 0
	c.Op = Op(d.byte())
	if d.err == nil && (c.Op < OpInsert || c.Op > OpDelete) {
		d.fail("bad change op %d", c.Op)
		return
	}
	c.Table = d.uvarint()
	c.Version = d.uvarint()
	c.PK = d.bytes(arena)
	c.Before, c.After = nil, nil
	if c.Op != OpInsert && !minimal {
		c.Before = d.bytes(arena)
	}
	if c.Op != OpDelete {
		c.After = d.bytes(arena) // not nil, even empty (nil is a delete)
	}
}
