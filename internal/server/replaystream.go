package server

import (
	"fmt"
	"io"

	logrec "lockstep/internal/record"
	"lockstep/internal/txlog"
)

// Large entries at recovery (docs/apply.md, "Large entries: streamed from
// the log"): replay reads the log with txlog.ReadStreaming, and an entry
// whose stored payload is txlog.StreamFrom bytes or more comes without its
// payload; the applier reads it through payloadOpener (EntryStream), a
// transaction's changes a chunk at a time as they are installed, so that
// recovering a transaction of a million rows does not hold its record.

// payloadOpener opens the payload of the log entry at index as a stream,
// from its start, each time it is called (record.Opener).
func payloadOpener(l *txlog.Log, index uint64) logrec.Opener {
	return func() (io.ReadCloser, error) { return l.OpenPayload(index) }
}

// positionHead is enough of a record's start for PeekPosition: its kind
// and format, and four varints.
const positionHead = 2 + 4*10

// streamedLastSeq is the sequence number of the last record of the
// streamed entry at index (txlog.ReadStreaming), read without holding
// its payload: a single record's position is at its start. A batch entry
// (a commit group's records, bounded by the pipeline) is read whole.
// found is false when the entry holds no record.
func streamedLastSeq(l *txlog.Log, index uint64) (seq int64, found bool, err error) {
	r, err := l.OpenPayload(index)
	if err != nil {
		return 0, false, err
	}
	defer r.Close()
	head := make([]byte, positionHead)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return 0, false, fmt.Errorf("log index %d: %w", index, err)
	}
	head = head[:n]
	if n == 0 {
		return 0, false, nil
	}
	if logrec.Kind(head[0]) == logrec.KindBatch {
		r.Close()
		ents, err := l.Read(index, index+1, -1)
		if err != nil {
			return 0, false, err
		}
		if len(ents) == 0 {
			return 0, false, fmt.Errorf("log read at index %d returned nothing", index)
		}
		return payloadLastSeq(index, ents[0].Payload)
	}
	_, pos, err := logrec.PeekPosition(head)
	if err != nil {
		return 0, false, fmt.Errorf("log index %d: %w", index, err)
	}
	return pos.Seq, true, nil
}

// payloadLastSeq is the sequence number of the last record of an entry's
// payload; found is false when it holds none.
func payloadLastSeq(index uint64, payload []byte) (seq int64, found bool, err error) {
	recs, err := logrec.EntryRecords(payload)
	if err != nil {
		return 0, false, fmt.Errorf("log index %d: %w", index, err)
	}
	if len(recs) == 0 {
		return 0, false, nil
	}
	_, pos, err := logrec.PeekPosition(recs[len(recs)-1])
	if err != nil {
		return 0, false, fmt.Errorf("log index %d: %w", index, err)
	}
	return pos.Seq, true, nil
}
