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
	sc := &scanner{l: l, rec: rec, started: start, lastReport: start}
	if err := sc.run(); err != nil {
		sc.closeAll()
		return nil, nil, err
	}
	if len(sc.segs) == 0 {
		s, err := l.createSegment(sc.nextOrDefault(), 0, 0, nil)
		if err != nil {
			return nil, nil, err
		}
		sc.segs = append(sc.segs, s)
	}
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
	}
	l.writtenWaits = newWaitSet(&l.written, &l.fail, &l.st)
	l.durableWaits = newWaitSet(&l.durable, &l.fail, &l.st)
	return l
}
