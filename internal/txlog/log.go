package txlog

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"lockstep/internal/stat"
)

// closedBit is set in Log.reserved by Close: an appender whose reservation
// returns it knows the log closed before its range, and gives up.
const closedBit = 1 << 63

// Log is the transaction log. Append, AppendAt, WaitDurable, WaitWritten,
// Read, Term, FirstIndex, LastIndex and Stats are safe for concurrent use.
type Log struct {
	opts Options
	fs   FS
	dir  string

	// The positions, each on its own cache line. reserved is the next LSN
	// to hand out (closedBit after Close); written is published by the
	// writer, durable by the flusher.
	reserved atomic.Uint64
	_        [56]byte
	written  atomic.Uint64
	_        [56]byte
	durable  atomic.Uint64
	_        [56]byte
	// writerIdle: the writer is about to sleep; an appender that completes a
	// range and finds it set wakes the writer.
	writerIdle atomic.Bool
	_          [60]byte

	// The log buffer: a ring of bufSize bytes; LSN x lives at buf[x&mask].
	buf     []byte
	bufSize uint64
	mask    uint64
	done    *linkBuf

	writtenWaits *waitSet // WaitWritten, SyncPeriodic's WaitDurable, appenders waiting for space
	durableWaits *waitSet // SyncAlways' WaitDurable

	fail        atomic.Pointer[failure]
	fsyncFailed atomic.Bool // no fsync is ever attempted again

	writerKick   chan struct{}
	flusherKick  chan struct{}
	ctl          chan ctlOp
	stop         chan struct{}
	writerDone   chan struct{}
	flushersDone sync.WaitGroup
	order        syncOrder // the flushers' fsyncs, in start order

	w writer // the writer goroutine's state

	segMu     sync.RWMutex
	segs      []*segment // in index order; the last is being written
	terms     []termRun  // cover [FirstIndex, LastIndex]
	closed    bool
	lastIndex atomic.Uint64 // stored under segMu

	adminMu sync.Mutex // TruncateSuffix, TruncatePrefix, Reset, AppendAt
	st      counters

	// Preallocation (prealloc.go): the spare the writer claims, the
	// preallocator's kick and exit, its last error.
	spare    atomic.Pointer[spareFile]
	preKick  chan struct{}
	preDone  chan struct{}
	spareSeq int // the preallocator's

	// The end of the log (state.go): its id, log.state, the durable mark
	// the flusher raises, the newest segment created, the mark loop's kick
	// and exit.
	id        logID
	state     *stateFile
	durMark   atomic.Pointer[durMark]
	newestSeg atomic.Uint64
	markKick  chan struct{}
	markDone  chan struct{}
}

// Entry is one record.
type Entry struct {
	Index, Term uint64
	Payload     []byte
	// Streamed (ReadStreaming only): the payload is too large to be read
	// whole; Payload is nil and OpenPayload(Index) reads it.
	Streamed bool
}

// failure is the log's failed state: operations on LSNs up to limit may
// still complete (their bytes are durable, or written and about to be
// fsynced); operations beyond get err.
type failure struct {
	err   error
	limit uint64
}

// setFailure puts the log in the failed state, or lowers the limit of an
// earlier failure, and wakes the waiters that can no longer succeed.
func (l *Log) setFailure(err error, limit uint64) {
	f := &failure{err: err, limit: limit}
	for {
		old := l.fail.Load()
		if old != nil && old.limit <= limit {
			return
		}
		if l.fail.CompareAndSwap(old, f) {
			break
		}
	}
	l.writtenWaits.failAbove(limit, err)
	l.durableWaits.failAbove(limit, err)
	l.kickWriter()
}

// syncFile fsyncs f. A failure is never retried: the log fails at its
// durable position and no fsync is attempted again.
func (l *Log) syncFile(f File, name string) error {
	if l.fsyncFailed.Load() {
		if f := l.fail.Load(); f != nil {
			return f.err
		}
		return fmt.Errorf("%w: an earlier fsync failed", ErrLogFailed)
	}
	err := f.Sync()
	stat.IncU(&l.st.fsyncs)
	if err != nil {
		return l.failSync(name, err)
	}
	return nil
}

// failSync fails the log for good after an fsync of name failed (or could
// not be attempted): no fsync is tried again and nothing above the durable
// position will be published.
func (l *Log) failSync(name string, err error) error {
	l.fsyncFailed.Store(true)
	e := fsyncError(name, err)
	l.setFailure(e, l.durable.Load())
	return e
}

// WaitDurable blocks until every record up to lsn (as returned by Append)
// is durable: fsynced in SyncAlways mode, written to the operating system
// in SyncPeriodic mode. It returns nil at once for an lsn already durable.
// After a failure it returns an error wrapping ErrLogFailed (and
// ErrDiskFull for ENOSPC) for every lsn that did not become durable.
//
// The waiter waits on its own channel, filed by LSN; the flusher wakes only
// the waiters its fsync covered.
func (l *Log) WaitDurable(lsn uint64) error {
	if lsn <= l.durable.Load() {
		return nil
	}
	if err := l.checkLSN(lsn); err != nil {
		return err
	}
	if l.opts.SyncMode == SyncPeriodic {
		return l.writtenWaits.wait(lsn)
	}
	return l.durableWaits.wait(lsn)
}

// WaitWritten blocks until every record up to lsn is written to the
// operating system (and readable with Read). After it returns, LastIndex()
// is at least the index of the last record of the Append that returned lsn.
func (l *Log) WaitWritten(lsn uint64) error {
	if lsn <= l.written.Load() {
		return nil
	}
	if err := l.checkLSN(lsn); err != nil {
		return err
	}
	return l.writtenWaits.wait(lsn)
}

func (l *Log) checkLSN(lsn uint64) error {
	if end := l.reserved.Load() &^ closedBit; lsn > end {
		return fmt.Errorf("txlog: wait for LSN %d beyond the end of the log (%d)", lsn, end)
	}
	return nil
}

// Err returns the error that put the log in the failed state, or nil.
func (l *Log) Err() error {
	if f := l.fail.Load(); f != nil {
		return f.err
	}
	return nil
}

// FirstIndex is the index of the first record in the log. When the log is
// empty it is LastIndex()+1, the index the next record will get.
func (l *Log) FirstIndex() uint64 {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.segs[0].first
}

// LastIndex is the index of the last record written (readable), 0 or
// FirstIndex()-1 if none.
func (l *Log) LastIndex() uint64 { return l.lastIndex.Load() }

// Dir is the log's directory.
func (l *Log) Dir() string { return l.dir }

// Close stops taking appends, waits until everything appended before is
// written, fsyncs it, and stops the writer and the flusher. Then, if the
// log has not failed, it records in log.state that the log was closed
// cleanly and where it ends, so that the next Open refuses a log that ends
// anywhere else or is damaged at its end (no crash can explain that). It
// returns the log's failure, if it failed.
func (l *Log) Close() error { return l.close(true) }

// close is Close; with clean false it leaves log.state as a crash would
// (tests).
func (l *Log) close(clean bool) error {
	old := l.reserved.Or(closedBit)
	if old&closedBit != 0 {
		return ErrClosed
	}
	l.writtenWaits.wait(old) // an error here is the log's failure, returned below
	close(l.stop)
	<-l.writerDone
	l.flushersDone.Wait()
	<-l.preDone
	<-l.markDone
	err := l.Err()
	durable, written := l.durable.Load(), l.written.Load()
	l.setFailure(ErrClosed, durable)

	l.segMu.Lock()
	l.closed = true
	segs := l.segs
	last := segs[len(segs)-1]
	end := logState{kind: stateClosed, lastSeg: last.first, durable: last.last, endOff: last.size}
	l.segMu.Unlock()
	if clean && err == nil && durable >= written {
		sf := l.state
		sf.mu.Lock()
		st := sf.cur
		st.kind, st.lastSeg, st.durable, st.endOff = end.kind, end.lastSeg, end.durable, end.endOff
		if werr := sf.write(st); werr != nil {
			err = fmt.Errorf("txlog: recording the clean close: %w", werr)
		}
		sf.mu.Unlock()
	}
	l.state.close()
	for _, s := range segs {
		s.release()
	}
	return err
}

func (l *Log) path(name string) string { return filepath.Join(l.dir, name) }

// createSegment creates a segment file holding only its header: written to
// a temporary name, fsynced, renamed, and the directory fsynced, so that a
// segment file either does not exist or has a whole header. With a spare
// (prealloc.go) the spare is that temporary file: the header is written
// over its first zeros and the rest of it stays zeros.
func (l *Log) createSegment(first, prevTerm uint64, flags uint16, sp *spareFile) (*segment, error) {
	s := &segment{name: segName(first), first: first, prevTerm: prevTerm,
		baseOff: segHeaderSize, last: first - 1, size: segHeaderSize, prealloc: sp != nil}
	path := l.path(s.name)
	tmp := path + ".tmp"
	var f File
	var err error
	if sp != nil {
		f, tmp = sp.f, l.path(sp.name)
		stat.IncU(&l.st.preUsed)
	} else if f, err = l.fs.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
		return nil, writeError("create", s.name, 0, err)
	}
	fail := func(op string, err error) (*segment, error) {
		f.Close()
		l.fs.Remove(tmp)
		return nil, writeError(op, s.name, 0, err)
	}
	hdr := segHeader{version: formatVersion, flags: flags, first: first, prevTerm: prevTerm, id: l.id}
	if _, err := f.WriteAt(hdr.encode(), 0); err != nil {
		return fail("write", err)
	}
	if err := l.syncFile(f, s.name); err != nil {
		f.Close()
		l.fs.Remove(tmp)
		return nil, err
	}
	if err := l.fs.Rename(tmp, path); err != nil {
		return fail("rename", err)
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return fail("sync directory for", err)
	}
	s.file = f
	s.refs.Store(1)
	stat.IncU(&l.st.segments)
	return s, nil
}
