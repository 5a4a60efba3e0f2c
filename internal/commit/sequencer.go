package commit

import (
	"fmt"

	"lockstep/internal/certify"
)

// sequencer numbers groups: it gives each member a sequence number, has the
// certifier compute last_committed for the whole group in one call, and
// calls each member's Encode in sequence order. It runs no goroutines and is
// not safe for concurrent use: the flush-stage leader owns it.
//
// Two number spaces. The certifier sees "certifier numbers": one per member
// of every group, consecutive, because CertifyBatch numbers the writesets it
// is given first, first+1, ... and a certifier cannot take a number back. The
// log and the callers see sequence numbers, which must be dense over the
// transactions that actually reach the log. The two are equal until a member
// fails to encode or a group fails to append; such a member's certifier
// number becomes a "hole": it was certified (its keys may be remembered by the
// certifier) but it has no sequence number, and the next transaction that
// does reach the log takes the sequence number it would have had.
//
// A certifier number x maps to the sequence number
//
//	toSeq(x) = x - (number of holes <= x)
//
// which for a member that reached the log is its sequence number, and for a
// hole is the sequence number of the last transaction before it that reached
// the log. The map is monotone, so every dependency the certifier reports
// stays a dependency (a dependency on a hole becomes a dependency on
// everything before the hole: conservative), and it keeps
// last_committed < seq: between a dependency L < S the holes in (L, S) number
// at most S-L-1, S itself not being one.
//
// Holes are kept as sorted ranges. They can be forgotten once the certifier
// has set a floor past them (a DDL or a reset, seen in its Stats as a serial
// fallback): from then on every answer is at or above the floor, so every
// such hole counts as "<= x" for every x still to be mapped, and the running
// total skipped carries them.
type sequencer struct {
	cert     certify.Certifier
	nextSeq  int64 // next sequence number to give to a transaction that reaches the log
	nextCert int64 // next certifier number
	// gnoOffset: a member's GNO is its sequence number plus gnoOffset
	// (both dense over the transactions that reach the log).
	gnoOffset int64
	// commitTime is the commit time of the group being assigned (set by
	// the flush stage before assign; microseconds since the epoch).
	commitTime int64

	holes     []span // certifier numbers without a sequence number, sorted, disjoint
	skipped   int64  // all holes ever, including those no longer in holes
	fallbacks int64  // cert's SerialFallbacks after the last group, while holes is not empty

	writesets [][]uint64 // scratch for CertifyBatch
	lcs       []int64    // scratch for CertifyBatch
}

// span is the closed range [lo, hi] of certifier numbers.
type span struct{ lo, hi int64 }

// slot is one member of a group as the sequencer sees it.
type slot struct {
	txn *Txn
	// Set by assign.
	cnum          int64 // certifier number
	seq           int64 // sequence number (0 if the member failed)
	lastCommitted int64
	payload       []byte
	err           error // Encode failed: the member is not in the group any more
}

func newSequencer(cert certify.Certifier, nextSeq int64) *sequencer {
	return &sequencer{cert: cert, nextSeq: nextSeq, nextCert: nextSeq}
}

// assign certifies the group with one CertifyBatch call and encodes its
// members in order. A member whose Encode fails gets err set and no sequence
// number, and the next member takes its number. It returns how many members
// encoded successfully; their payloads are to be appended in slot order.
func (s *sequencer) assign(slots []slot) (ok int) {
	n := len(slots)
	if n == 0 {
		return 0
	}
	if cap(s.writesets) < n {
		s.writesets = make([][]uint64, n, 2*n)
		s.lcs = make([]int64, n, 2*n)
	}
	ws, lcs := s.writesets[:n], s.lcs[:n]
	for i := range slots {
		ws[i] = slots[i].txn.Writeset
	}
	first := s.nextCert
	s.cert.CertifyBatch(first, ws, lcs)
	clear(ws) // keep no writeset alive past the group
	s.nextCert += int64(n)
	hadHoles := len(s.holes) > 0

	for i := range slots {
		sl := &slots[i]
		sl.cnum = first + int64(i)
		seq := s.nextSeq
		lc := s.toSeq(lcs[i])
		var payload []byte
		var err error
		if sl.txn.Encode == nil {
			err = errNoEncode
		} else {
			payload, err = sl.txn.Encode(Position{Seq: seq, GNO: seq + s.gnoOffset, LastCommitted: lc, CommitTime: s.commitTime})
		}
		if err != nil {
			sl.seq, sl.lastCommitted, sl.payload = 0, 0, nil
			sl.err = fmt.Errorf("commit: encode: %w", err)
			s.addHole(sl.cnum)
			continue
		}
		sl.seq, sl.lastCommitted, sl.payload, sl.err = seq, lc, payload, nil
		s.nextSeq++
		ok++
	}
	s.afterGroup(first, hadHoles)
	return ok
}

// abort undoes the numbering of a group whose append failed: every member
// that had a sequence number gives it back (its certifier number becomes a
// hole), so the next group starts where this one started.
func (s *sequencer) abort(slots []slot) {
	for i := range slots {
		sl := &slots[i]
		if sl.err != nil {
			continue // already a hole
		}
		s.addHole(sl.cnum)
		s.nextSeq--
		sl.seq, sl.lastCommitted, sl.payload = 0, 0, nil
	}
	if len(s.holes) > 0 {
		s.fallbacks = s.cert.Stats().SerialFallbacks()
	}
}

// toSeq maps a certifier number (a last_committed answer) to a sequence
// number. Holes no longer listed are all <= x (see sequencer).
func (s *sequencer) toSeq(x int64) int64 {
	if s.skipped == 0 {
		return x
	}
	above := int64(0) // listed holes > x
	for i := len(s.holes) - 1; i >= 0; i-- {
		h := s.holes[i]
		if h.hi <= x {
			break
		}
		above += h.hi - max(h.lo, x+1) + 1
	}
	return x - s.skipped + above
}

// addHole records certifier number c as a hole. Holes arrive in increasing
// order except when abort turns a group's members into holes after some of
// its members already were; both keep the list sorted because abort walks
// the group in order and a group's encode holes lie inside it.
func (s *sequencer) addHole(c int64) {
	s.skipped++
	if k := len(s.holes); k > 0 {
		last := &s.holes[k-1]
		if c == last.hi+1 {
			last.hi = c
			return
		}
		if c <= last.hi {
			s.insertHole(c)
			return
		}
	}
	s.holes = append(s.holes, span{c, c})
}

// insertHole is addHole for a number below the last hole (abort after
// encode failures in the same group): rare, so a plain rebuild.
func (s *sequencer) insertHole(c int64) {
	i := 0
	for i < len(s.holes) && s.holes[i].hi < c {
		i++
	}
	// c is not in any span (each number becomes a hole once).
	s.holes = append(s.holes, span{})
	copy(s.holes[i+1:], s.holes[i:])
	s.holes[i] = span{c, c}
	// Merge neighbours.
	out := s.holes[:1]
	for _, h := range s.holes[1:] {
		if last := &out[len(out)-1]; h.lo == last.hi+1 {
			last.hi = h.hi
		} else {
			out = append(out, h)
		}
	}
	s.holes = out
}

// afterGroup forgets the holes from before the group that started at
// certifier number first if the certifier set a floor during it (a DDL or a
// reset): the floor is at least first, above every such hole, and no later
// answer goes below it. hadHoles says whether holes existed before the group
// (then s.fallbacks is the count after the previous group).
func (s *sequencer) afterGroup(first int64, hadHoles bool) {
	if len(s.holes) == 0 {
		return
	}
	f := s.cert.Stats().SerialFallbacks() // exact after CertifyBatch
	if hadHoles && f > s.fallbacks {
		k := 0
		for k < len(s.holes) && s.holes[k].hi < first {
			k++
		}
		s.holes = s.holes[:copy(s.holes, s.holes[k:])]
	}
	s.fallbacks = f
}
