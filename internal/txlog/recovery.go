package txlog

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Recovery reports what Open found and did.
type Recovery struct {
	FirstIndex, LastIndex uint64 // LastIndex = FirstIndex-1 when empty
	Records               uint64 // records verified
	Segments              int    // segment files after recovery
	Bytes                 int64  // bytes in them
	// TornBytes were cut from the end of the last segment: an incomplete
	// or checksum-failing record with nothing valid after it (a write the
	// crash interrupted). TornFile names the segment.
	TornBytes int64
	TornFile  string
	// With Options.RecoverTruncate, Corruption describes the corrupt record
	// the log was cut at ("log-….seg offset N: reason"), and Dropped how
	// many records were dropped with it: a number, or "unknown" when a
	// damaged header made them impossible to count (DroppedRecords is then
	// -1). Both are empty when nothing was dropped.
	Corruption     string
	Dropped        string
	DroppedRecords int64
	// ResetCompleted: Open removed segments that an interrupted Reset had
	// made obsolete.
	ResetCompleted bool
	// Clean: log.state said the log was closed cleanly (no crash since).
	// DurableIndex: the index log.state said was durable (after a clean
	// close, the last index); a torn tail is only accepted above it.
	Clean        bool
	DurableIndex uint64
	// EndProblem, with Options.RecoverTruncate only: what was wrong with
	// the log's end or log.state and was accepted instead of refused (a
	// TailError's text), e.g. a missing last segment. Empty otherwise.
	EndProblem string
	// StateCreated: Open wrote a new log.state (a new log, a log written
	// by a binary that kept none, or one rebuilt with RecoverTruncate).
	StateCreated bool
	Duration     time.Duration
}

// progressInterval is how often Open calls Options.Progress.
var progressInterval = time.Second

// errStop ends the scan after a corrupt record was cut (RecoverTruncate).
var errStop = errors.New("stop")

type segFile struct {
	name  string
	first uint64 // from the name
	size  int64
}

// scanState is what the scanner checks the segments against: log.state
// (st nil when there is none), and what it learns without one.
type scanState struct {
	st        *logState
	adopted   *logID // no log.state, RecoverTruncate: the id the segments carry
	sawV2     bool
	legacyLo  uint64 // first indexes of the version 1 segments seen
	legacyHi  uint64
	cutAtOpen bool // RecoverTruncate cut the log at a corrupt record
}

// scanner verifies the segments in index order at Open.
type scanner struct {
	l     *Log
	rec   *Recovery
	files []segFile
	segs  []*segment // verified, open
	runs  []termRun
	next  uint64 // index the next record must have
	have  bool   // next is known
	ss    scanState

	total, done         int64
	started, lastReport time.Time
	sinceCheck          int
}

func (sc *scanner) run() error {
	fs, dir := sc.l.fs, sc.l.dir
	ents, err := fs.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("txlog: read the log directory: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, ".seg.tmp") {
			// A segment whose creation did not finish: it never held records.
			if err := fs.Remove(sc.l.path(name)); err != nil {
				return fmt.Errorf("txlog: remove %s: %w", name, err)
			}
			continue
		}
		first, ok := parseSegName(name)
		if !ok {
			continue
		}
		sf := segFile{name: name, first: first}
		if info, err := e.Info(); err == nil {
			sf.size = info.Size()
		}
		sc.files = append(sc.files, sf)
		sc.total += sf.size
	}
	sort.Slice(sc.files, func(i, j int) bool { return sc.files[i].first < sc.files[j].first })
	for k := range sc.files {
		if err := sc.scanSegment(k); err != nil {
			if err == errStop {
				return nil
			}
			return err
		}
	}
	return nil
}

func (sc *scanner) nextOrDefault() uint64 {
	switch {
	case sc.have:
		return sc.next
	case len(sc.files) > 0:
		return max(sc.files[0].first, 1)
	}
	return 1
}

func (sc *scanner) closeAll() {
	for _, s := range sc.segs {
		s.file.Close()
	}
	sc.segs = nil
}

// scanSegment opens and verifies files[k].
func (sc *scanner) scanSegment(k int) error {
	l, sf := sc.l, sc.files[k]
	f, err := l.fs.OpenFile(l.path(sf.name), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("txlog: open %s: %w", sf.name, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("txlog: stat %s: %w", sf.name, err)
	}
	size := info.Size()
	s := &segment{name: sf.name, first: sf.first, file: f, last: sf.first - 1, size: segHeaderSize}
	s.refs.Store(1)

	r := newRecReader(f, size, 1<<20)
	hb, err := r.at(0, segHeaderSize)
	if err != nil {
		f.Close()
		return fmt.Errorf("txlog: read %s: %w", sf.name, err)
	}
	h, prob, err := decodeSegHeader(hb, sf.name)
	switch {
	case err != nil:
		f.Close()
		return err
	case prob != nil && prob.foreign:
		f.Close()
		return &ForeignError{Path: l.path(sf.name), Reason: prob.reason}
	case prob != nil:
		return sc.corrupt(k, s, 0, prob.reason, -1)
	case h.first != sf.first:
		f.Close()
		return &ForeignError{Path: l.path(sf.name), Reason: fmt.Sprintf("its header says it starts at index %d, its name says %d", h.first, sf.first)}
	}
	if err := sc.checkIdentity(sf, h); err != nil {
		f.Close()
		return err
	}
	s.legacy = h.version < 2
	s.size = h.size()
	if h.flags&segReset != 0 && len(sc.segs) > 0 {
		if err := sc.dropBefore(); err != nil {
			f.Close()
			return err
		}
	}
	if sc.have && h.first != sc.next {
		return sc.corrupt(k, s, 0, fmt.Sprintf("first index %d, but the previous segment ends at index %d", h.first, sc.next-1), h.size())
	}
	s.prevTerm = h.prevTerm
	sc.next, sc.have = h.first, true

	last := k == len(sc.files)-1
	off := h.size()
	for off < size {
		rh, hdrOK, _, st, err := r.record(off)
		if err != nil {
			f.Close()
			return fmt.Errorf("txlog: read %s at offset %d: %w", sf.name, off, err)
		}
		if st == recOK && rh.index != sc.next {
			return sc.corrupt(k, s, off, fmt.Sprintf("index %d where %d was expected", rh.index, sc.next), off)
		}
		if st != recOK {
			dataEnd, err := r.dataEnd(off)
			if err != nil {
				f.Close()
				return fmt.Errorf("txlog: read %s at offset %d: %w", sf.name, off, err)
			}
			if dataEnd == off {
				// Zeros to the end of the file: a preallocated segment's
				// unused part (prealloc.go), not a record.
				s.prealloc = size > off
				break
			}
			torn, err := sc.isTorn(r, last, off, rh, hdrOK, st)
			if err != nil {
				f.Close()
				return err
			}
			reason := st.String()
			if torn {
				// It looks like a torn write; a crash explains it only
				// beyond what log.state knows was durable.
				if why := sc.notTorn(sf); why != "" {
					torn, reason = false, reason+"; "+why
				}
			}
			if !torn {
				countFrom := int64(-1)
				if hdrOK {
					countFrom = off
				}
				return sc.corrupt(k, s, off, reason, countFrom)
			}
			if err := f.Truncate(off); err != nil {
				f.Close()
				return fmt.Errorf("txlog: truncate the torn tail of %s at offset %d: %w", sf.name, off, err)
			}
			if err := f.Sync(); err != nil {
				f.Close()
				return fmt.Errorf("txlog: fsync %s: %w", sf.name, err)
			}
			sc.rec.TornBytes, sc.rec.TornFile = dataEnd-off, sf.name
			break
		}
		if (rh.index-s.first)%sparseEvery == 0 {
			s.sparse = append(s.sparse, off)
		}
		if n := len(sc.runs); n == 0 || sc.runs[n-1].term != rh.term {
			sc.runs = append(sc.runs, termRun{index: rh.index, term: rh.term})
		}
		n := recHeaderSize + int64(rh.length)
		off += n
		s.last, s.size = rh.index, off
		sc.next++
		sc.rec.Records++
		sc.progress(n)
	}
	sc.segs = append(sc.segs, s)
	return nil
}

// isTorn decides whether a bad record at off is a torn tail: it is in the
// last segment and nothing valid follows it.
func (sc *scanner) isTorn(r *recReader, last bool, off int64, h recHeader, hdrOK bool, st recStatus) (bool, error) {
	if !last {
		return false, nil
	}
	switch st {
	case recShort:
		// The file ends inside the record (or inside its header).
		return true, nil
	case recBadFlags:
		return false, nil
	}
	from := off + 1
	if hdrOK {
		from = off + recHeaderSize + int64(h.length)
	}
	valid, err := r.validAfter(from)
	return !valid, err
}

// notTorn says why a bad record at the end of the last segment, with
// nothing valid after it, cannot be a write a crash interrupted, given
// log.state ("" if it can be).
func (sc *scanner) notTorn(sf segFile) string {
	st := sc.ss.st
	switch {
	case st == nil:
		return ""
	case st.kind == stateClosed:
		return fmt.Sprintf("the log was closed cleanly at index %d, so no write was in progress: this is damage, not a torn write", st.durable)
	case sc.next <= st.durable:
		return fmt.Sprintf("record %d was durable (log.state says the log was durable through index %d): a crash does not explain it", sc.next, st.durable)
	case sf.first < st.lastSeg:
		return fmt.Sprintf("the log had moved on to %s: a crash does not explain damage to an earlier segment", segName(st.lastSeg))
	}
	return ""
}

// checkIdentity checks that a segment belongs to this log: a version 2
// segment carries the log's id; a version 1 segment (no id) is one of those
// the log had before log.state was created. Without log.state, version 2
// segments mean log.state was lost: refused, unless RecoverTruncate, which
// takes the id the segments carry (they must agree).
func (sc *scanner) checkIdentity(sf segFile, h segHeader) error {
	l, st := sc.l, sc.ss.st
	path := l.path(sf.name)
	if h.version < 2 {
		if st == nil {
			if sc.ss.legacyHi == 0 {
				sc.ss.legacyLo = sf.first
			}
			sc.ss.legacyHi = sf.first
			return nil
		}
		if st.legacyHi == 0 || sf.first < st.legacyLo || sf.first > st.legacyHi {
			return &ForeignError{Path: path, Reason: fmt.Sprintf("a version 1 segment (no log id), but this log's version 1 segments were %s", legacyRange(st))}
		}
		return nil
	}
	sc.ss.sawV2 = true
	switch {
	case st != nil && h.id != st.id:
		return &ForeignError{Path: path, Reason: fmt.Sprintf("log id %s; this log's (%s) is %s", h.id, stateName, st.id)}
	case st != nil:
		return nil
	case !l.opts.RecoverTruncate:
		return &TailError{Path: l.path(stateName), Reason: fmt.Sprintf("missing, but %s was written with one (log id %s): without it the end of the log cannot be checked; restore it if it was moved", sf.name, h.id)}
	case sc.ss.adopted == nil:
		id := h.id
		sc.ss.adopted = &id
	case *sc.ss.adopted != h.id:
		return &ForeignError{Path: path, Reason: fmt.Sprintf("log id %s, but earlier segments carry %s (and %s is missing)", h.id, *sc.ss.adopted, stateName)}
	}
	return nil
}

func legacyRange(st *logState) string {
	if st.legacyHi == 0 {
		return "none"
	}
	return segName(st.legacyLo) + " to " + segName(st.legacyHi)
}

// checkEnd checks, after the scan, that the log reaches where log.state
// says it reached: the newest segment created, the durable index, and
// after a clean close exactly its end. With RecoverTruncate a mismatch is
// reported in Recovery.EndProblem instead of refused. Nothing is checked
// after RecoverTruncate cut the log at a corrupt record (Dropped says
// what went).
func (sc *scanner) checkEnd() error {
	st := sc.ss.st
	if st == nil || sc.ss.cutAtOpen {
		return nil
	}
	err := sc.endError(st)
	if err == nil {
		return nil
	}
	if !sc.l.opts.RecoverTruncate {
		return err
	}
	sc.rec.EndProblem = err.Path + ": " + err.Reason
	return nil
}

func (sc *scanner) endError(st *logState) *TailError {
	l := sc.l
	if len(sc.segs) == 0 {
		if st.lastSeg == 0 {
			return nil
		}
		return &TailError{Path: l.path(segName(st.lastSeg)), Reason: fmt.Sprintf("missing: the log directory holds no segment, but the log had created this one and was durable through index %d (%s)", st.durable, stateName)}
	}
	last := sc.segs[len(sc.segs)-1]
	lastPath := l.path(last.name)
	closed := ""
	if st.kind == stateClosed {
		closed = " cleanly closed"
	}
	if last.first < st.lastSeg {
		return &TailError{Path: l.path(segName(st.lastSeg)), Reason: fmt.Sprintf("missing: the%s log had created it (%s), but the last segment is %s, ending at index %d; index %d was durable",
			closed, stateName, last.name, last.last, st.durable)}
	}
	if last.last < st.durable {
		return &TailError{Path: lastPath, Reason: fmt.Sprintf("the log ends at index %d (offset %d), but the%s log was durable through index %d (%s): records %d to %d are missing",
			last.last, last.size, closed, st.durable, stateName, last.last+1, st.durable)}
	}
	if st.kind != stateClosed {
		return nil
	}
	switch {
	case last.first > st.lastSeg:
		return &TailError{Path: lastPath, Reason: fmt.Sprintf("the log was closed cleanly with %s as its last segment, ending at index %d, but continues in this one: written after the close by something else?",
			segName(st.lastSeg), st.durable)}
	case last.last > st.durable:
		return &TailError{Path: lastPath, Reason: fmt.Sprintf("the log was closed cleanly at index %d, but holds records up to index %d: written after the close by something else?", st.durable, last.last)}
	case last.size != st.endOff:
		return &TailError{Path: lastPath, Reason: fmt.Sprintf("the log was closed cleanly with index %d ending at offset %d, but it ends at offset %d", st.durable, st.endOff, last.size)}
	}
	return nil
}

// corrupt handles a corrupt record at off in files[k] (off 0: the segment
// itself). Without RecoverTruncate it is Open's error. With it, the log is
// cut there: the segment is truncated at off (removed if off is 0) and every
// later segment removed. countFrom is where the dropped records can be
// counted from in this segment, -1 if they cannot.
func (sc *scanner) corrupt(k int, s *segment, off int64, reason string, countFrom int64) error {
	l := sc.l
	cerr := &CorruptError{File: s.name, Offset: off, Reason: reason, AtOpen: true}
	if !l.opts.RecoverTruncate {
		s.file.Close()
		return cerr
	}
	n, known := sc.countDropped(k, s, countFrom)
	if off == 0 {
		s.file.Close()
		if err := l.fs.Remove(l.path(s.name)); err != nil {
			return fmt.Errorf("txlog: recover-truncate: remove %s: %w", s.name, err)
		}
	} else {
		if err := s.file.Truncate(off); err != nil {
			s.file.Close()
			return fmt.Errorf("txlog: recover-truncate: truncate %s at offset %d: %w", s.name, off, err)
		}
		if err := s.file.Sync(); err != nil {
			s.file.Close()
			return fmt.Errorf("txlog: recover-truncate: fsync %s: %w", s.name, err)
		}
		sc.segs = append(sc.segs, s)
	}
	for _, sf := range sc.files[k+1:] {
		if err := l.fs.Remove(l.path(sf.name)); err != nil {
			return fmt.Errorf("txlog: recover-truncate: remove %s: %w", sf.name, err)
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return fmt.Errorf("txlog: recover-truncate: sync the log directory: %w", err)
	}
	sc.ss.cutAtOpen = true
	sc.rec.Corruption = fmt.Sprintf("%s offset %d: %s", s.name, off, reason)
	if known {
		sc.rec.Dropped, sc.rec.DroppedRecords = strconv.FormatInt(n, 10), n
	} else {
		sc.rec.Dropped, sc.rec.DroppedRecords = "unknown", -1
	}
	return errStop
}

// countDropped counts the records from countFrom in files[k] and in every
// later segment by walking their headers; known is false if a header on the
// way is damaged.
func (sc *scanner) countDropped(k int, s *segment, countFrom int64) (n int64, known bool) {
	if countFrom < 0 {
		return 0, false
	}
	info, err := s.file.Stat()
	if err != nil {
		return 0, false
	}
	n, known = walkCount(s.file, info.Size(), countFrom)
	for _, sf := range sc.files[k+1:] {
		if !known {
			return 0, false
		}
		f, err := sc.l.fs.OpenFile(sc.l.path(sf.name), os.O_RDONLY, 0)
		if err != nil {
			return 0, false
		}
		var m int64
		m, known = countSegment(f, sf.name)
		f.Close()
		n += m
	}
	return n, known
}

func countSegment(f File, name string) (int64, bool) {
	info, err := f.Stat()
	if err != nil {
		return 0, false
	}
	r := newRecReader(f, info.Size(), segHeaderSize)
	hb, err := r.at(0, segHeaderSize)
	if err != nil {
		return 0, false
	}
	h, prob, err := decodeSegHeader(hb, name)
	if err != nil || prob != nil {
		return 0, false
	}
	return walkCount(f, info.Size(), h.size())
}

// walkCount counts records from off to size by their headers, without
// checking payloads. A record cut short by the end of the file counts.
func walkCount(f File, size, off int64) (int64, bool) {
	r := newRecReader(f, size, 1<<20)
	var n int64
	for off < size {
		hb, err := r.at(off, recHeaderSize)
		if err != nil || len(hb) < recHeaderSize {
			return n, false
		}
		h, ok := parseRecHeader(hb)
		if !ok && allZero(hb) {
			return n, true // a preallocated segment's zeros
		}
		if !ok {
			return n, false
		}
		n++
		off += recHeaderSize + int64(h.length)
	}
	return n, true
}

// dropBefore completes an interrupted Reset: the segments before a reset
// segment are obsolete.
func (sc *scanner) dropBefore() error {
	for _, s := range sc.segs {
		s.file.Close()
		if err := sc.l.fs.Remove(sc.l.path(s.name)); err != nil {
			return fmt.Errorf("txlog: remove %s (obsolete after a reset): %w", s.name, err)
		}
	}
	sc.segs, sc.runs, sc.have = nil, nil, false
	sc.rec.ResetCompleted = true
	sc.rec.Records = 0
	return sc.l.fs.SyncDir(sc.l.dir)
}

// progress counts n scanned bytes and calls Options.Progress about once
// per progressInterval.
func (sc *scanner) progress(n int64) {
	sc.done += n
	if sc.l.opts.Progress == nil {
		return
	}
	if sc.sinceCheck++; sc.sinceCheck < 256 {
		return
	}
	sc.sinceCheck = 0
	now := time.Now()
	if now.Sub(sc.lastReport) < progressInterval {
		return
	}
	sc.lastReport = now
	p := Progress{Done: sc.done, Total: sc.total}
	if sc.total > 0 {
		p.Percent = 100 * float64(sc.done) / float64(sc.total)
	}
	if el := now.Sub(sc.started).Seconds(); el > 0 {
		p.BytesPerSec = float64(sc.done) / el
	}
	sc.l.opts.Progress(p)
}
