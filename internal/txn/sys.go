package txn

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"

	"lockstep/internal/stat"
)

func yield() { runtime.Gosched() }

// Sys is the transaction system: id allocation, the active set, read views
// and the purge limit. It is safe for concurrent use.
type Sys struct {
	as    activeSet
	views viewSlots

	purge atomic.Uint64 // highest purge limit computed so far (always valid)

	started, withID, finished, finishedWithID, viewsOpened stripedCounter
}

// SysStats is a snapshot of transaction-system counters for SHOW STATUS.
//
// InnoDB has no Innodb_* status variable for most of these; the closest
// names are given (INNODB_METRICS rows, or lines of SHOW ENGINE INNODB
// STATUS).
type SysStats struct {
	TrxStarted  uint64 // Begin calls (INNODB_METRICS trx_ro_commits+trx_rw_commits+... approximately)
	TrxWithID   uint64 // transactions that were assigned an id (read-write transactions)
	TrxFinished uint64 // first Finish calls
	Active      int64  // read-write transactions not yet finished (INNODB_TRX rows with an id)
	ViewsOpened uint64 // read views created
	ViewsOpen   int64  // read views open now ("read views open inside InnoDB")
	NextID      uint64 // next id to be allocated ("Trx id counter")
	PurgeLimit  uint64 // PurgeLimit() at the time of the call ("Purge done for trx's n:o <")

	LongActive  int64  // ids kept in the long-running list rather than the bitmap
	ViewRetries uint64 // view snapshots retried because the active set changed under them
	ViewBarrier uint64 // view snapshots that had to hold finishers back (see activeSet.snapshot)
}

// Trx is one transaction. A Trx is used by one goroutine at a time.
type Trx struct {
	sys      *Sys
	id       ID
	blk      *block
	view     *ReadView
	slot     int // view slot index, -1 if none held
	slotHint int
	stripe   uint64 // picks stripedCounter cells
	finished bool
	// firstViewUsed: firstView was handed out (see firstView).
	firstViewUsed bool
	thread        uint64 // the owning session, for data_locks (SetThread)
	lk            trxLockState

	// firstView is the memory of t's first read view, allocated with t
	// (most transactions open one view: an autocommit statement, a
	// REPEATABLE READ transaction). It is handed out once and never
	// reused: a later view (READ COMMITTED's next statement) is a new
	// allocation, so a view pointer someone kept still reads the snapshot
	// it was given (TestFirstViewNotReused).
	firstView ReadView
}

// ReadView is a consistent snapshot of which transactions had finished when
// it was created. It is immutable and safe to share between goroutines.
type ReadView struct {
	low  ID       // every id below low is seen
	up   ID       // no id at or above up is seen
	base ID       // bits[0] bit 0 is id base; base is a multiple of 64
	bits []uint64 // finished bits for ids [base, up)
	long []ID     // sorted active ids below base

	// inl backs bits when the window is one word (under 64 ids allocated
	// since the oldest active one's word: always for read-only loads), so
	// taking a snapshot allocates nothing beyond the view. One word keeps
	// storage.Tx, which embeds the Trx and its first view, in the 352-byte
	// size class.
	inl [1]uint64
}

// NewSys returns an empty transaction system. The first id is 1.
func NewSys() *Sys {
	s := &Sys{}
	s.as.init()
	s.views.init()
	s.purge.Store(1)
	return s
}

// Begin starts a transaction without an id. It takes no latch and touches
// no shared state except a striped counter.
func (s *Sys) Begin() *Trx {
	t := &Trx{}
	s.BeginIn(t)
	return t
}

// BeginIn is Begin with the caller's memory for the transaction (a
// zero Trx nothing else references, typically a field of the caller's own
// per-transaction object, so one allocation holds both). t must not be
// reused for another transaction: locks, lock waiters and views of other
// goroutines may still point at it after it finished.
func (s *Sys) BeginIn(t *Trx) {
	*t = Trx{sys: s, slot: -1, slotHint: -1, stripe: uint64(rand.Uint32())}
	s.started.addStat(t.stripe, 1)
}

// AssignID gives t an id on its first call: one atomic add on the id counter.
// The new id is active from that instant for every view whose range includes
// it, because the active set records finished ids, not active ones.
// Idempotent.
func (t *Trx) AssignID() ID {
	if t.id != 0 {
		return t.id
	}
	t.id, t.blk = t.sys.as.assign()
	t.lk.shownID.Store(t.id) // for lock snapshots in other goroutines
	t.sys.withID.add(t.id, 1)
	return t.id
}

// ID returns t's id, 0 if none was assigned.
func (t *Trx) ID() ID { return t.id }

// ReadView returns t's open view, creating one if none is open.
func (t *Trx) ReadView() *ReadView {
	if t.view != nil {
		return t.view
	}
	s := t.sys
	// Publish a lower bound of the view's low-water mark before taking the
	// snapshot, so a concurrent PurgeLimit never overtakes the view: the
	// cached purge limit is below every id still active now, and the active
	// minimum only grows.
	t.slot = s.views.acquire(t.slotHint, s.purge.Load())
	t.slotHint = t.slot
	var v *ReadView
	if !t.firstViewUsed {
		t.firstViewUsed = true
		v = &t.firstView
	} else {
		v = &ReadView{}
	}
	v.bits = v.inl[:0]
	s.as.snapshot(v)
	s.views.set(t.slot, v.low)
	s.viewsOpened.addStat(t.stripe, 1)
	t.view = v
	return v
}

// CloseReadView drops t's view, if any. It clears t's slot in the view
// registry with one atomic store; no latch.
func (t *Trx) CloseReadView() {
	if t.view == nil {
		return
	}
	t.view = nil
	t.sys.views.release(t.slot)
	t.slot = -1
}

// Finish makes t visible to views created afterwards (if it has an id) and
// closes its view. One atomic OR on t's bit; no latch. Idempotent.
func (t *Trx) Finish() {
	if t.finished {
		return
	}
	t.finished = true
	if t.id != 0 {
		t.sys.as.finish(t.id, t.blk)
		t.sys.finishedWithID.add(t.id, 1)
	}
	t.CloseReadView()
	t.sys.finished.addStat(t.stripe, 1)
}

// Sees reports whether transaction id had finished before v was created.
func (v *ReadView) Sees(id ID) bool {
	if id < v.low {
		return true
	}
	if id >= v.up {
		return false
	}
	if id < v.base {
		_, found := slices.BinarySearch(v.long, id)
		return !found
	}
	off := id - v.base
	return v.bits[off>>6]&(1<<(off&63)) != 0
}

// LowLimit returns the view's high-water mark: ids at or above it are not
// seen (InnoDB's m_low_limit_id).
func (v *ReadView) LowLimit() ID { return v.up }

// UpLimit returns the view's low-water mark: ids below it are all seen
// (InnoDB's m_up_limit_id).
func (v *ReadView) UpLimit() ID { return v.low }

// PurgeLimit returns L such that every transaction with id < L has finished
// and is seen by every open view and every future view. The cost is a scan
// of the active bitmap words from the window start (a few words normally),
// the long list, and the view registry (one word per slot ever used). The
// result never decreases: it is kept in an atomic and the maximum of the
// kept and the computed values is returned, which is safe because a valid
// limit stays valid.
func (s *Sys) PurgeLimit() ID {
	s.as.tryMaintain()
	// Active minimum first, then the view slots: a view that registers after
	// the slot scan snapshots after the active minimum was read, so its low
	// is at least that minimum.
	m := s.as.minActive()
	if l := s.views.min(); l < m {
		m = l
	}
	return storeMax(&s.purge, m)
}

// storeMax raises a to v unless it already holds more, and returns a's value
// afterwards.
func storeMax(a *atomic.Uint64, v uint64) uint64 {
	for {
		old := a.Load()
		if v <= old {
			return old
		}
		if a.CompareAndSwap(old, v) {
			return v
		}
	}
}

// Stats returns a snapshot of counters. It scans the view registry.
func (s *Sys) Stats() SysStats {
	withID, fin := s.withID.load(), s.finishedWithID.load()
	return SysStats{
		TrxStarted:  s.started.load(),
		TrxWithID:   withID,
		TrxFinished: s.finished.load(),
		Active:      int64(withID) - int64(fin),
		ViewsOpened: s.viewsOpened.load(),
		ViewsOpen:   s.views.count(),
		NextID:      s.as.next.Load() + 1,
		PurgeLimit:  s.PurgeLimit(),
		LongActive:  int64(len(s.as.win.Load().long)),
		ViewRetries: s.as.viewRetries.Load(),
		ViewBarrier: s.as.fallbacks.Load(),
	}
}

// stripedCounter spreads a hot counter over padded cells.
type stripedCounter struct {
	cells [16]struct {
		n atomic.Uint64
		_ [56]byte
	}
}

// add adds n to the cell picked by stripe (any number; callers pass
// something that differs between concurrent callers: an id, a shard).
func (c *stripedCounter) add(stripe uint64, n uint64) { c.cells[stripe&15].n.Add(n) }

// addStat is add for a counter only SHOW STATUS reads (nothing under the
// nocounters build tag; withID and finishedWithID, which Active is computed
// from, use add).
func (c *stripedCounter) addStat(stripe uint64, n uint64) {
	if stat.On {
		c.add(stripe, n)
	}
}

func (c *stripedCounter) load() uint64 {
	var s uint64
	for i := range c.cells {
		s += c.cells[i].n.Load()
	}
	return s
}
