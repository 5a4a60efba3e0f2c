package txlog

import (
	"sync"
	"sync/atomic"

	"lockstep/internal/stat"
)

// waitSet is where goroutines wait for a log position (the written or the
// durable LSN) to reach their LSN. Each waiter waits on its own channel;
// waiters are filed in slots by LSN block, and the goroutine that advances
// the position visits only the slots of the blocks it passed and wakes only
// the waiters whose LSN it reached. Nothing wakes everyone, except a failure
// (every waiter above the failure's limit gets the error).
type waitSet struct {
	pos   *atomic.Uint64 // the position waited for
	fail  *atomic.Pointer[failure]
	st    *counters
	slots []waitSlot
	total atomic.Int64 // waiters filed, in all slots
}

const (
	waitBlockShift = 12 // 4 KiB of LSN per slot
	waitSlots      = 1024
)

type waitSlot struct {
	mu   sync.Mutex
	n    atomic.Int32
	head *waiter
	_    [40]byte
}

type waiter struct {
	lsn  uint64
	ch   chan struct{}
	err  error
	next *waiter
}

var waiterPool = sync.Pool{New: func() any { return &waiter{ch: make(chan struct{}, 1)} }}

func newWaitSet(pos *atomic.Uint64, fail *atomic.Pointer[failure], st *counters) *waitSet {
	return &waitSet{pos: pos, fail: fail, st: st, slots: make([]waitSlot, waitSlots)}
}

func (ws *waitSet) slot(lsn uint64) *waitSlot {
	return &ws.slots[(lsn>>waitBlockShift)&(waitSlots-1)]
}

// failed returns the failure's error if lsn is beyond what the failure
// allows to complete.
func (ws *waitSet) failed(lsn uint64) error {
	if f := ws.fail.Load(); f != nil && lsn > f.limit {
		return f.err
	}
	return nil
}

// wait blocks until the position reaches lsn (nil) or a failure makes that
// impossible (the failure's error).
func (ws *waitSet) wait(lsn uint64) error {
	if err := ws.failed(lsn); err != nil {
		return err
	}
	if ws.pos.Load() >= lsn {
		return nil
	}
	s := ws.slot(lsn)
	w := waiterPool.Get().(*waiter)
	w.lsn, w.err = lsn, nil
	s.mu.Lock()
	// Count the waiter before re-checking the position: the advancing side
	// stores the position before it reads the counts, so one of the two
	// sees the other.
	ws.total.Add(1)
	s.n.Add(1)
	err := ws.failed(lsn)
	if err != nil || ws.pos.Load() >= lsn {
		ws.total.Add(-1)
		s.n.Add(-1)
		s.mu.Unlock()
		waiterPool.Put(w)
		return err
	}
	w.next = s.head
	s.head = w
	s.mu.Unlock()
	stat.IncU(&ws.st.waits)

	<-w.ch
	err = w.err
	if err == nil && ws.pos.Load() >= lsn {
		stat.IncU(&ws.st.wakeupsDone)
	}
	w.next, w.err = nil, nil
	waiterPool.Put(w)
	return err
}

// notify wakes the waiters with LSN in (from, to]; the caller has already
// stored to as the position.
func (ws *waitSet) notify(from, to uint64) {
	if to <= from || ws.total.Load() == 0 {
		return
	}
	b0, b1 := (from+1)>>waitBlockShift, to>>waitBlockShift
	if b1-b0 >= waitSlots {
		b0, b1 = 0, waitSlots-1
	}
	for b := b0; b <= b1; b++ {
		s := &ws.slots[b&(waitSlots-1)]
		if s.n.Load() == 0 {
			continue
		}
		ws.wakeSlot(s, func(w *waiter) bool { return w.lsn <= to }, nil)
	}
}

// failAbove wakes every waiter with LSN above limit with err.
func (ws *waitSet) failAbove(limit uint64, err error) {
	for i := range ws.slots {
		s := &ws.slots[i]
		if s.n.Load() == 0 {
			continue
		}
		ws.wakeSlot(s, func(w *waiter) bool { return w.lsn > limit }, err)
	}
}

// wakeSlot unlinks the waiters of s that match and wakes them with err.
func (ws *waitSet) wakeSlot(s *waitSlot, match func(*waiter) bool, err error) {
	var woken *waiter
	s.mu.Lock()
	p := &s.head
	for w := *p; w != nil; w = *p {
		if !match(w) {
			p = &w.next
			continue
		}
		*p = w.next
		w.next = woken
		woken = w
		s.n.Add(-1)
		ws.total.Add(-1)
	}
	s.mu.Unlock()
	for w := woken; w != nil; {
		next := w.next
		w.err = err
		if err == nil {
			stat.IncU(&ws.st.wakeups)
		} else {
			stat.IncU(&ws.st.failWakeups)
		}
		w.ch <- struct{}{}
		w = next
	}
}
