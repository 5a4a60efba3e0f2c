package txlog

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"lockstep/internal/stat"
)

// The log's state file, log.state: where the log is known to end.
//
// A crash can only explain damage to bytes written after the last fsync
// that completed: a torn last record. Recovery can tell such a tear from
// other damage — a flipped bit in an acknowledged record, a segment file
// deleted or cut short — only if it knows how far the log was durable.
// log.state records that, and the log's identity:
//
//   - kind: open (the log is taking writes, or was when the process died)
//     or closed (Close ended it cleanly: everything written was fsynced,
//     and nothing was written after);
//   - id: the log's random identity, also in every segment header (format
//     version 2), so that a segment file from another log is refused rather
//     than read or, with RecoverTruncate, cut at;
//   - lastSeg: the first index of the newest segment created (recorded
//     after the segment exists durably): the log's files reach at least it;
//   - durable: an index every record up to which was fsynced when it was
//     recorded (the flusher's durable position, recorded at most every
//     Options.MarkInterval, at each new segment, at Open and at Close); when
//     closed, exactly the last index, and endOff where its record ends;
//   - the range of first indexes of version 1 segments (from before
//     log.state existed) that belong to the log.
//
// At Open (recovery.go), a bad record is accepted as a torn tail only if
// the log is open, the record is in a segment at least as new as lastSeg,
// and its index is above durable; and the log must reach lastSeg and
// durable (exactly, after a clean Close). Everything else is refused with
// a TailError or CorruptError naming the file, unless RecoverTruncate.
//
// The file is two 512-byte slots written in turn in place (InnoDB keeps
// its redo log checkpoints so): each write goes to the slot the previous
// one did not use, then the file is fsynced, so a write torn by a crash
// leaves the previous state readable in the other slot. The file keeps its
// size, so the fsync flushes data only. Reading takes the valid slot with
// the higher generation.
//
// Slot layout (little-endian):
//
//	  0  magic    [8]byte "LKSTPEND"
//	  8  version  u16 (1)
//	 10  kind     u16 (1 open, 2 closed)
//	 12  gen      u64
//	 20  id       [16]byte
//	 36  lastSeg  u64
//	 44  durable  u64
//	 52  endOff   u64
//	 60  legacyLo u64 first index of the oldest version 1 segment (0: none)
//	 68  legacyHi u64 first index of the newest version 1 segment
//	 76  zeros
//	508  crc      u32 CRC32C of bytes 0..508
const (
	stateName    = "log.state"
	stateMagic   = "LKSTPEND"
	stateVersion = 1
	stateSlot    = 512
	stateSize    = 2 * stateSlot

	stateOpen   = 1
	stateClosed = 2
)

// DefaultMarkInterval is how often the durable index is recorded in
// log.state by default.
const DefaultMarkInterval = time.Second

type logState struct {
	kind               uint16
	gen                uint64
	id                 logID
	lastSeg            uint64
	durable            uint64
	endOff             int64
	legacyLo, legacyHi uint64
}

func (s *logState) encode() []byte {
	b := make([]byte, stateSlot)
	copy(b, stateMagic)
	binary.LittleEndian.PutUint16(b[8:], stateVersion)
	binary.LittleEndian.PutUint16(b[10:], s.kind)
	binary.LittleEndian.PutUint64(b[12:], s.gen)
	copy(b[20:36], s.id[:])
	binary.LittleEndian.PutUint64(b[36:], s.lastSeg)
	binary.LittleEndian.PutUint64(b[44:], s.durable)
	binary.LittleEndian.PutUint64(b[52:], uint64(s.endOff))
	binary.LittleEndian.PutUint64(b[60:], s.legacyLo)
	binary.LittleEndian.PutUint64(b[68:], s.legacyHi)
	binary.LittleEndian.PutUint32(b[stateSlot-4:], crc32c(b[:stateSlot-4]))
	return b
}

// decodeStateSlot returns the state in one slot; ok is false if the slot
// does not verify. A valid slot of a newer version is an error.
func decodeStateSlot(b []byte) (s logState, ok bool, err error) {
	if len(b) < stateSlot || string(b[:8]) != stateMagic ||
		binary.LittleEndian.Uint32(b[stateSlot-4:]) != crc32c(b[:stateSlot-4]) {
		return s, false, nil
	}
	if v := binary.LittleEndian.Uint16(b[8:]); v != stateVersion {
		return s, false, fmt.Errorf("txlog: %s: format version %d is not supported by this binary (%d)", stateName, v, stateVersion)
	}
	s.kind = binary.LittleEndian.Uint16(b[10:])
	s.gen = binary.LittleEndian.Uint64(b[12:])
	copy(s.id[:], b[20:36])
	s.lastSeg = binary.LittleEndian.Uint64(b[36:])
	s.durable = binary.LittleEndian.Uint64(b[44:])
	s.endOff = int64(binary.LittleEndian.Uint64(b[52:]))
	s.legacyLo = binary.LittleEndian.Uint64(b[60:])
	s.legacyHi = binary.LittleEndian.Uint64(b[68:])
	if s.kind != stateOpen && s.kind != stateClosed {
		return s, false, nil
	}
	return s, true, nil
}

// errStateDamaged: log.state exists but neither slot verifies.
var errStateDamaged = errors.New("neither of its two copies verifies")

// readState reads log.state: nil if there is none.
func readState(fs FS, dir string) (*logState, error) {
	f, err := fs.OpenFile(filepath.Join(dir, stateName), os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("txlog: open %s: %w", stateName, err)
	}
	defer f.Close()
	b := make([]byte, stateSize)
	n, err := f.ReadAt(b, 0)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("txlog: read %s: %w", stateName, err)
	}
	b = b[:n]
	var best *logState
	for k := 0; k+stateSlot <= len(b); k += stateSlot {
		s, ok, err := decodeStateSlot(b[k : k+stateSlot])
		if err != nil {
			return nil, err
		}
		if ok && (best == nil || s.gen > best.gen) {
			best = &s
		}
	}
	if best == nil {
		return nil, errStateDamaged
	}
	return best, nil
}

// stateFile is the open log.state.
type stateFile struct {
	mu     sync.Mutex
	f      File
	cur    logState // as last written
	failed error    // a write or fsync failed: nothing more is written
	writes *atomic.Uint64
	fails  *atomic.Uint64
}

// createState writes a new log.state holding s (to a temporary name,
// fsynced, renamed, directory fsynced) and opens it.
func (l *Log) createState(s logState) (*stateFile, error) {
	path := l.path(stateName)
	tmp := path + ".tmp"
	f, err := l.fs.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("txlog: create %s: %w", stateName, err)
	}
	s.gen = 1
	b := make([]byte, stateSize)
	copy(b[stateSlot:], s.encode()) // gen 1 goes to slot 1
	fail := func(err error) (*stateFile, error) {
		f.Close()
		l.fs.Remove(tmp)
		return nil, fmt.Errorf("txlog: create %s: %w", stateName, err)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := l.fs.Rename(tmp, path); err != nil {
		return fail(err)
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return fail(err)
	}
	stat.IncU(&l.st.marks)
	return &stateFile{f: f, cur: s, writes: &l.st.marks, fails: &l.st.markFails}, nil
}

// openState opens the existing log.state whose content is s.
func (l *Log) openState(s logState) (*stateFile, error) {
	f, err := l.fs.OpenFile(l.path(stateName), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("txlog: open %s: %w", stateName, err)
	}
	return &stateFile{f: f, cur: s, writes: &l.st.marks, fails: &l.st.markFails}, nil
}

// write records s (its gen is set here) in the slot the last write did
// not use, and fsyncs. Called with mu held. After a failure nothing more
// is written (what the file holds is then unknown; it is never ahead of
// the log, as every value written was a lower bound when written).
func (sf *stateFile) write(s logState) error {
	if sf.failed != nil {
		return sf.failed
	}
	s.gen = sf.cur.gen + 1
	off := int64(s.gen%2) * stateSlot
	_, err := sf.f.WriteAt(s.encode(), off)
	if err == nil {
		err = sf.f.Sync()
	}
	if err != nil {
		sf.failed = fmt.Errorf("txlog: write %s: %w", stateName, err)
		stat.IncU(sf.fails)
		return sf.failed
	}
	sf.cur = s
	stat.IncU(sf.writes)
	return nil
}

func (sf *stateFile) close() {
	if sf != nil && sf.f != nil {
		sf.f.Close()
		sf.f = nil
	}
}

func newLogID() (logID, error) {
	var id logID
	_, err := rand.Read(id[:])
	return id, err
}

// durMark is the highest index the flusher has made durable, within an
// epoch: TruncateSuffix and Reset start a new epoch (lowering the mark), and
// an fsync that started in an older one raises nothing.
type durMark struct {
	epoch, index uint64
}

// raiseMark raises the durable mark to m.index if m's epoch is current.
func (l *Log) raiseMark(m durMark) {
	for {
		cur := l.durMark.Load()
		if cur.epoch != m.epoch || m.index <= cur.index {
			return
		}
		if l.durMark.CompareAndSwap(cur, &m) {
			return
		}
	}
}

// markLoop records the durable index and the newest segment in log.state
// every Options.MarkInterval and when kicked (a new segment), until the
// log closes.
func (l *Log) markLoop() {
	defer close(l.markDone)
	var tick <-chan time.Time
	if l.opts.MarkInterval > 0 {
		t := time.NewTicker(l.opts.MarkInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-l.stop:
			return
		case <-tick:
		case <-l.markKick:
		}
		l.recordMark()
	}
}

// recordMark writes the durable mark and the newest segment to log.state
// if either moved since the last write. After a failed fsync it writes
// nothing more (no fsync of any file is attempted then).
func (l *Log) recordMark() {
	if l.fsyncFailed.Load() {
		return
	}
	sf := l.state
	sf.mu.Lock()
	defer sf.mu.Unlock()
	next := sf.cur
	next.kind = stateOpen
	next.durable = l.durMark.Load().index
	next.lastSeg = l.newestSeg.Load()
	if next == sf.cur {
		return
	}
	sf.write(next) // a failure is counted; the state stays a lower bound
}

// kickMark wakes the mark loop without blocking.
func (l *Log) kickMark() {
	select {
	case l.markKick <- struct{}{}:
	default:
	}
}

// lowerMark makes log.state say no more than that the log reaches index
// upTo and segment seg, before TruncateSuffix or Reset remove records, and
// starts a new durable-mark epoch. If log.state cannot be written the
// removal must not happen (the next Open would refuse the shorter log).
func (l *Log) lowerMark(upTo, seg uint64) error {
	sf := l.state
	sf.mu.Lock()
	defer sf.mu.Unlock()
	cur := l.durMark.Load()
	l.durMark.Store(&durMark{epoch: cur.epoch + 1, index: min(cur.index, upTo)})
	if seg < l.newestSeg.Load() {
		l.newestSeg.Store(seg)
	}
	next := sf.cur
	next.kind = stateOpen
	next.durable = min(next.durable, upTo)
	next.lastSeg = min(next.lastSeg, seg)
	if next == sf.cur {
		return nil
	}
	return sf.write(next)
}

// setMark records, after Reset created its segment, that the log reaches
// segment seg and index upTo.
func (l *Log) setMark(upTo, seg uint64) error {
	sf := l.state
	sf.mu.Lock()
	defer sf.mu.Unlock()
	cur := l.durMark.Load()
	l.durMark.Store(&durMark{epoch: cur.epoch + 1, index: upTo})
	l.newestSeg.Store(seg)
	next := sf.cur
	next.kind = stateOpen
	next.durable, next.lastSeg = upTo, seg
	return sf.write(next)
}
