package txlog

import (
	"fmt"
	"time"
)

// Open opens the log in opts.Dir (creating the directory and a first
// segment if needed), recovers it (see Recovery and docs/txlog.md) and
// starts the writer and the flusher.
func Open(opts Options) (*Log, *Recovery, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	if err := opts.FS.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("txlog: create the log directory: %w", err)
	}
	l := newLog(opts)
	rec := &Recovery{}
	st, err := readState(l.fs, l.dir)
	switch {
	case err == errStateDamaged && opts.RecoverTruncate:
		rec.EndProblem = l.path(stateName) + ": " + err.Error()
		st = nil
	case err == errStateDamaged:
		return nil, nil, &TailError{Path: l.path(stateName), Reason: "damaged (" + err.Error() + "): the end of the log cannot be checked"}
	case err != nil:
		return nil, nil, err
	}
	if st != nil {
		rec.Clean, rec.DurableIndex = st.kind == stateClosed, st.durable
	}
	sc := &scanner{l: l, rec: rec, started: start, lastReport: start, ss: scanState{st: st}}
	if err := sc.run(); err != nil {
		sc.closeAll()
		return nil, nil, err
	}
	if st == nil && len(sc.files) == 0 && rec.EndProblem == "" && opts.MustExist {
		if !opts.RecoverTruncate {
			return nil, nil, &TailError{Path: l.dir, Reason: "holds no log (no " + stateName + ", no segment), but a log was expected here (the data directory was in use): was it removed?"}
		}
		rec.EndProblem = l.dir + ": holds no log, but one was expected; a new one was started"
	}
	if err := sc.checkEnd(); err != nil {
		sc.closeAll()
		return nil, nil, err
	}
	switch {
	case st != nil:
		l.id = st.id
	case sc.ss.adopted != nil:
		l.id = *sc.ss.adopted
		if rec.EndProblem == "" {
			rec.EndProblem = l.path(stateName) + ": missing; a new one was written with the log id the segments carry (the end of the log could not be checked)"
		}
	default:
		if l.id, err = newLogID(); err != nil {
			sc.closeAll()
			return nil, nil, fmt.Errorf("txlog: a log id: %w", err)
		}
	}
	// log.state first: a segment carrying the id never exists without it.
	if st != nil {
		l.state, err = l.openState(*st)
	} else {
		l.state, err = l.createState(logState{kind: stateOpen, id: l.id,
			legacyLo: sc.ss.legacyLo, legacyHi: sc.ss.legacyHi})
		rec.StateCreated = true
	}
	if err != nil {
		sc.closeAll()
		return nil, nil, err
	}
	fail := func(err error) (*Log, *Recovery, error) {
		l.state.close()
		sc.closeAll()
		return nil, nil, err
	}
	if len(sc.segs) == 0 {
		s, err := l.createSegment(sc.nextOrDefault(), 0, 0, nil)
		if err != nil {
			return fail(err)
		}
		sc.segs = append(sc.segs, s)
	}
	// What the scan read may be in the page cache only (the process that
	// wrote it died before its fsync): make it durable before log.state
	// says it is. Earlier segments were fsynced before a later one was
	// created.
	tail := sc.segs[len(sc.segs)-1]
	if err := tail.file.Sync(); err != nil {
		return fail(fmt.Errorf("txlog: fsync %s: %w", tail.name, err))
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return fail(fmt.Errorf("txlog: sync the log directory: %w", err))
	}
	open := l.state.cur
	open.kind, open.lastSeg, open.durable, open.endOff = stateOpen, tail.first, tail.last, 0
	if err := l.state.write(open); err != nil {
		return fail(err)
	}
	l.durMark.Store(&durMark{index: tail.last})
	l.newestSeg.Store(tail.first)
	l.segs, l.terms = sc.segs, sc.runs
	last := l.segs[len(l.segs)-1]
	l.lastIndex.Store(last.last)

	w := &l.w
	w.cur, w.stampSeg = last, last
	last.baseLSN, last.baseOff = 0, last.size
	w.stampCount = last.last + 1 - last.first
	w.nextIndex = last.last + 1
	w.lastTerm = last.prevTerm
	if t, ok := termOf(l.terms, last.last); ok && last.last >= last.first {
		w.lastTerm = t
	}

	rec.FirstIndex, rec.LastIndex = l.segs[0].first, last.last
	rec.Segments = len(l.segs)
	for _, s := range l.segs {
		rec.Bytes += s.size
	}
	rec.Duration = time.Since(start)

	go l.writerLoop()
	flushers := l.opts.Flushers
	if l.opts.SyncMode == SyncPeriodic {
		flushers = 1 // one fsync a period is all it does
	}
	for range flushers {
		l.flushersDone.Add(1)
		go l.flusherLoop(&flusher{})
	}
	go l.preallocLoop()
	go l.markLoop()
	return l, rec, nil
}

func newLog(opts Options) *Log {
	size := uint64(opts.BufferSize)
	l := &Log{
		opts:        opts,
		fs:          opts.FS,
		dir:         opts.Dir,
		buf:         make([]byte, size),
		bufSize:     size,
		mask:        size - 1,
		done:        newLinkBuf(size),
		writerKick:  make(chan struct{}, 1),
		flusherKick: make(chan struct{}, 1),
		ctl:         make(chan ctlOp),
		stop:        make(chan struct{}),
		writerDone:  make(chan struct{}),
		preKick:     make(chan struct{}, 1),
		preDone:     make(chan struct{}),
		markKick:    make(chan struct{}, 1),
		markDone:    make(chan struct{}),
	}
	l.writtenWaits = newWaitSet(&l.written, &l.fail, &l.st)
	l.durableWaits = newWaitSet(&l.durable, &l.fail, &l.st)
	return l
}
