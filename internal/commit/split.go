package commit

import (
	"errors"
	"fmt"
)

// Split groups. A group member's log makes each Log.Append one raft entry,
// and an entry travels to a follower as one transport frame, which is
// bounded: a group whose records add up to more than
// Options.MaxGroupBytes is appended as several parts, each at most the cap
// (a record larger than the cap is a part of its own: a transaction is
// never split). The group was numbered and certified as one, so the
// parts' records are in sequence order and last_committed is what one
// group would have had; each part is a group of its own from the log's
// side and the commit stage's:
//
//   - part k+1 is appended only once part k is durable and has joined the
//     commit queue (published, or being published): a member's log applies
//     its own entries only after the pipeline published them, so a later
//     entry of the member cannot be applied, and so acknowledged, before
//     an earlier one is published; and one part at a time in consensus
//     keeps raft's uncommitted log at one part beyond what it holds now;
//   - the leader holds the flush lock (logMu) from the first part to the
//     last, so no other group's entry comes between the parts;
//   - each part takes a turn and joins the commit queue by itself; if a
//     part fails (certainly not committed: ErrNotCommitted, or a failed
//     log: ErrUncertain) the parts after it are not appended and fail with
//     the same error, and the commit stage's broken chain fails every
//     group after them, as for whole groups.
//
// The leader carries its group's first part in the commit queue (as an
// unsplit group's leader does); every later part is carried by its first
// member. The leader publishes a part itself when it finds the commit
// queue empty; if another commit-stage leader published its first part,
// that leader woke it, and it takes that wake-up before returning.

// chunk is a later part of a split group: its members (in sequence order,
// linked by next) and their payloads.
type chunk struct {
	head, tail *waiter
	payloads   [][]byte
}

// Overheads of a batch of records in one entry (internal/record's
// AppendBatch: kind, format and count; a length before each record),
// counted generously.
const (
	batchOverhead  = 16
	recordOverhead = 10
)

// chunkEnds returns where the parts of a group of payloads begin, after
// the first (nil: one part), so that no part holding more than one
// payload is over max bytes; max <= 0: no cap.
func chunkEnds(payloads [][]byte, max int64) []int {
	if max <= 0 || len(payloads) < 2 {
		return nil
	}
	var ends []int
	start, size := 0, int64(batchOverhead)
	for i, b := range payloads {
		n := int64(len(b)) + recordOverhead
		if i > start && size+n > max {
			ends = append(ends, i)
			start, size = i, batchOverhead
		}
		size += n
	}
	return ends
}

// restChunks makes the parts after the first: their payloads (copied out
// of the flush stage's scratch slice); their members are filled in by
// flush.
func restChunks(payloads [][]byte, ends []int) []chunk {
	rest := make([]chunk, len(ends))
	for i, from := range ends {
		to := len(payloads)
		if i+1 < len(ends) {
			to = ends[i+1]
		}
		rest[i].payloads = append([][]byte(nil), payloads[from:to]...)
	}
	return rest
}

// leadSplit runs a split group from its first part's durability wait on:
// w leads it, first is the first part's members (appended at lsn, with
// turn), rest the later parts. Called with logMu and a sync slot held;
// releases both.
func (p *Pipeline) leadSplit(w, first *waiter, lsn, turn uint64, rest []chunk) {
	p.c.splits.Add(1)
	p.c.splitEntries.Add(int64(len(rest)) + 1)
	carrier, list := w, first
	selfLed := false // w published its first part itself
	var failed error // a part failed: the later ones are not appended
	for i := 0; ; i++ {
		if failed == nil {
			if err := p.log.WaitDurable(lsn); err != nil {
				if !errors.Is(err, ErrNotCommitted) {
					err = p.setFatal(fmt.Errorf("log sync: %w", err))
				}
				failed = err
			}
		}
		carrier.group, carrier.syncErr = list, failed
		if p.joinCommitQueue(carrier, turn) {
			p.publishQueued(w)
			selfLed = selfLed || i == 0
		}
		if i == len(rest) {
			break
		}
		c := &rest[i]
		carrier, list = c.head, c.head
		turn = p.turns
		p.turns++
		if failed == nil {
			var err error
			lsn, err = p.log.Append(p.term.Load(), c.payloads...)
			switch {
			case err != nil && errors.Is(err, ErrUncertain):
				failed = p.setFatal(fmt.Errorf("log append: %w", err))
			case err != nil:
				// The parts before are in the log: the numbers are
				// spent, the chain breaks here.
				failed = fmt.Errorf("%w: log append of part %d of a split group: %w", ErrNotCommitted, i+2, err)
			}
		}
		clear(c.payloads)
	}
	p.logMu.Unlock()
	<-p.syncSlots
	if !selfLed {
		p.follow(w) // the commit-stage leader that published w's part woke it
	}
}
