package mdl

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"lockstep/internal/stat"
)

// Errors of a wait that did not end with the lock.
var (
	// ErrLockWaitTimeout: the wait took longer than its timeout (MySQL's
	// lock_wait_timeout; error 1205).
	ErrLockWaitTimeout = errors.New("metadata lock wait timeout exceeded")
	// ErrDeadlock: waiting would have closed a cycle of waits (1213).
	ErrDeadlock = errors.New("metadata lock deadlock")
)

// Duration is how long a granted lock is held.
type Duration uint8

const (
	// Transaction: until Release(Transaction) or ReleaseAll.
	Transaction Duration = iota
	// Statement: until Release(Statement) or ReleaseAll.
	Statement
	// Explicit: until Release(Explicit) or ReleaseAll (LOCK TABLES, to
	// UNLOCK TABLES or the session's end).
	Explicit
)

// durations is a set of durations, bit 1<<d for duration d.
type durations uint8

const (
	txnAndStmt   = durations(1<<Transaction | 1<<Statement)
	allDurations = txnAndStmt | 1<<Explicit
)

// Key names a table. The SQL layer passes names folded as it compares
// them (lower case).
type Key struct{ DB, Table string }

// Request asks for one lock.
type Request struct {
	Key      Key
	Mode     Mode
	Duration Duration
}

// Stats are the manager's counters since it was made.
type Stats struct {
	Acquires  int64 // Acquire calls that went to the lock table
	Waits     int64 // of those, the ones that had to wait
	WaitNanos int64 // time spent waiting, in all
	Timeouts  int64 // waits that ended with ErrLockWaitTimeout
	Deadlocks int64 // waits refused with ErrDeadlock
	Cancelled int64 // waits ended by their context (KILL)
	Waiting   int64 // owners waiting now
	Names     int64 // names in the lock table now
}

// lock is one name's entry in the lock table, under Manager.mu.
type lock struct {
	holders map[*Owner]modeSet // each holder's granted modes
	pending map[*Owner]modeSet // each waiting owner's requested modes
	granted counts             // holders by mode
	waiting counts             // waiting owners by mode
	changed chan struct{}      // closed at the next change, for waiters
}

func (l *lock) idle() bool { return len(l.holders) == 0 && len(l.pending) == 0 && l.changed == nil }

// signal wakes the name's waiters.
func (l *lock) signal() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// Manager is the lock table. It is safe for concurrent use; each Owner is
// used by one goroutine at a time.
type Manager struct {
	mu      sync.Mutex
	locks   map[Key]*lock
	free    []*lock // idle entries kept for reuse
	waiting map[*Owner]struct{}

	acquires, waits, waitNanos, timeouts, deadlocks, cancelled atomic.Int64
}

// NewManager returns an empty lock table.
func NewManager() *Manager {
	return &Manager{locks: map[Key]*lock{}, waiting: map[*Owner]struct{}{}}
}

// Stats returns the counters.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	waiting, names := len(m.waiting), len(m.locks)
	m.mu.Unlock()
	return Stats{
		Acquires: m.acquires.Load(), Waits: m.waits.Load(), WaitNanos: m.waitNanos.Load(),
		Timeouts: m.timeouts.Load(), Deadlocks: m.deadlocks.Load(), Cancelled: m.cancelled.Load(),
		Waiting: int64(waiting), Names: int64(names),
	}
}

// Waiting returns the ids of the owners waiting now (for the process
// list's "Waiting for table metadata lock"), sorted.
func (m *Manager) Waiting() []uint64 {
	m.mu.Lock()
	ids := make([]uint64, 0, len(m.waiting))
	for o := range m.waiting {
		ids = append(ids, o.id)
	}
	m.mu.Unlock()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Holders returns who holds key and in which mode (tests, diagnostics).
func (m *Manager) Holders(key Key) map[uint64]Mode {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[uint64]Mode{}
	if l := m.locks[key]; l != nil {
		for o, set := range l.holders {
			out[o.id] = set.strongest()
		}
	}
	return out
}

// entry returns key's entry, adding it; under mu.
func (m *Manager) entry(key Key) *lock {
	if l := m.locks[key]; l != nil {
		return l
	}
	var l *lock
	if n := len(m.free); n > 0 {
		l, m.free = m.free[n-1], m.free[:n-1]
	} else {
		l = &lock{holders: map[*Owner]modeSet{}, pending: map[*Owner]modeSet{}}
	}
	m.locks[key] = l
	return l
}

// tidy drops key's entry if nothing refers to it; under mu.
func (m *Manager) tidy(key Key, l *lock) {
	if l.idle() {
		delete(m.locks, key)
		if len(m.free) < 64 {
			m.free = append(m.free, l)
		}
	}
}

// blocked reports whether o's request r cannot be granted now, and the
// owners it would wait for (appended to out when out is not nil): another
// owner holds a mode r conflicts with, or — unless o holds the name
// already — waits for a mode r must queue behind.
func (m *Manager) blocked(o *Owner, r Request, out *[]*Owner) bool {
	l := m.locks[r.Key]
	if l == nil {
		return false
	}
	gc, pc := grantedConflicts[r.Mode], pendingConflicts[r.Mode]
	if l.granted.set&gc == 0 && l.waiting.set&pc == 0 {
		return false // the common case: no conflicting mode at all
	}
	own := l.holders[o]
	if own != 0 {
		pc = 0 // a name its owner holds never waits behind pending requests
	}
	if out == nil {
		return l.granted.others(gc, own) || l.waiting.others(pc, l.pending[o])
	}
	b := false
	for h, set := range l.holders {
		if h != o && set&gc != 0 {
			b = true
			*out = append(*out, h)
		}
	}
	for p, set := range l.pending {
		if p != o && set&pc != 0 {
			b = true
			*out = append(*out, p)
		}
	}
	return b
}

// grantable reports whether every request can be granted now; under mu.
func (m *Manager) grantable(o *Owner, reqs []Request) bool {
	for _, r := range reqs {
		if m.blocked(o, r, nil) {
			return false
		}
	}
	return true
}

// grant gives o every request; under mu.
func (m *Manager) grant(o *Owner, reqs []Request) {
	for _, r := range reqs {
		m.grantOne(o, r)
	}
}

// grantOne gives o one request; under mu.
func (m *Manager) grantOne(o *Owner, r Request) {
	l := m.entry(r.Key)
	old := l.holders[o]
	if set := old | bit(r.Mode); set != old {
		l.holders[o] = set
		l.granted.change(old, set)
	}
}

// deadlocked reports whether o's wait closes a cycle: o waits for an
// owner that (through the owners it waits for) waits for o. Under mu.
func (m *Manager) deadlocked(o *Owner) bool {
	seen := map[*Owner]bool{}
	var reach func(w *Owner) bool
	reach = func(w *Owner) bool {
		var next []*Owner
		for _, r := range w.waitingOn {
			m.blocked(w, r, &next)
		}
		for _, b := range next {
			if b == o {
				return true
			}
			if seen[b] || b.waitingOn == nil {
				continue
			}
			seen[b] = true
			if reach(b) {
				return true
			}
		}
		return false
	}
	return reach(o)
}

// hold is what an owner holds on one name, by duration. The lock table
// has the union of its modes, or a set that covers them (a request o's
// locks covered already is noted here only).
type hold struct{ txn, stmt, explicit modeSet }

func (h hold) set() modeSet { return h.txn | h.stmt | h.explicit }

func (h hold) covers(md Mode) bool { return h.set()&covers[md] != 0 }

// Owner is one session's side of the lock table: the locks it holds.
// Only its session's goroutine uses it.
type Owner struct {
	m    *Manager
	id   uint64
	held map[Key]hold

	waitingOn []Request // under m.mu: the requests it waits for
}

// NewOwner returns an owner with no locks; id names it in Waiting.
func (m *Manager) NewOwner(id uint64) *Owner {
	return &Owner{m: m, id: id, held: map[Key]hold{}}
}

// ID is the owner's id.
func (o *Owner) ID() uint64 { return o.id }

// Holds returns the strongest mode o holds key in.
func (o *Owner) Holds(key Key) Mode { return o.held[key].set().strongest() }

// Held reports whether o holds any lock.
func (o *Owner) Held() bool { return len(o.held) > 0 }

// Acquire takes every lock of reqs, whole or not at all: it waits while
// any of them conflicts with another owner's lock or, on a name o does
// not hold yet, with another owner's pending request of a mode it must
// queue behind (pendingConflicts), for at most timeout
// (then ErrLockWaitTimeout), until ctx is done (its error), or fails at
// once with ErrDeadlock when waiting would close a cycle. A lock o holds
// already in a mode that includes the one asked for costs nothing (its
// duration is extended when asked for longer).
func (o *Owner) Acquire(ctx context.Context, reqs []Request, timeout time.Duration) error {
	var buf [4]Request
	need := buf[:0]
	for _, r := range reqs {
		h, ok := o.held[r.Key]
		if ok && h.covers(r.Mode) {
			o.extend(r, h)
			continue
		}
		need = append(need, r)
	}
	if len(need) == 0 {
		return nil
	}
	m := o.m
	stat.Inc(&m.acquires)
	m.mu.Lock()
	if m.grantable(o, need) {
		m.grant(o, need)
		m.mu.Unlock()
		o.record(need)
		return nil
	}
	err := o.wait(ctx, append([]Request(nil), need...), timeout) // unlocks mu
	if err == nil {
		o.record(need)
	}
	return err
}

// wait is Acquire's slow path; called with mu held, returns without it.
func (o *Owner) wait(ctx context.Context, need []Request, timeout time.Duration) error {
	m := o.m
	stat.Inc(&m.waits)
	if stat.On { // the wait's time is only counted
		start := time.Now()
		defer func() { m.waitNanos.Add(int64(time.Since(start))) }()
	}
	for _, r := range need {
		l := m.entry(r.Key)
		old := l.pending[o]
		if set := old | bit(r.Mode); set != old {
			l.pending[o] = set
			l.waiting.change(old, set)
		}
	}
	o.waitingOn = need
	m.waiting[o] = struct{}{}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var fail error
	for {
		if m.grantable(o, need) {
			o.withdraw(need)
			m.grant(o, need)
			m.mu.Unlock()
			return nil
		}
		if fail != nil {
			break
		}
		if m.deadlocked(o) {
			stat.Inc(&m.deadlocks)
			fail = ErrDeadlock
			break
		}
		var ch chan struct{}
		for _, r := range need {
			if m.blocked(o, r, nil) {
				l := m.entry(r.Key)
				if l.changed == nil {
					l.changed = make(chan struct{})
				}
				ch = l.changed
				break
			}
		}
		m.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			stat.Inc(&m.timeouts)
			fail = ErrLockWaitTimeout
		case <-ctx.Done():
			stat.Inc(&m.cancelled)
			fail = ctx.Err()
		}
		m.mu.Lock() // a last look: granted after all?
	}
	o.withdraw(need)
	m.mu.Unlock()
	return fail
}

// withdraw ends o's wait for need: its pending requests go, which may
// let requests queued behind them through. Under mu.
func (o *Owner) withdraw(need []Request) {
	m := o.m
	for _, r := range need {
		l := m.locks[r.Key]
		if l == nil {
			continue
		}
		if old, ok := l.pending[o]; ok {
			l.waiting.change(old, 0)
			delete(l.pending, o)
			l.signal()
		}
		m.tidy(r.Key, l)
	}
	o.waitingOn = nil
	delete(m.waiting, o)
}

// record notes granted requests in o's held set.
func (o *Owner) record(reqs []Request) {
	for _, r := range reqs {
		o.extend(r, o.held[r.Key])
	}
}

// extend adds r's mode to what o holds for r's duration.
func (o *Owner) extend(r Request, h hold) {
	switch r.Duration {
	case Transaction:
		h.txn |= bit(r.Mode)
	case Explicit:
		h.explicit |= bit(r.Mode)
	default:
		h.stmt |= bit(r.Mode)
	}
	o.held[r.Key] = h
}

// Release gives back what o holds for duration d: a name also held for
// another duration stays in that duration's modes (an exclusive lock
// taken for a statement inside a transaction that holds the name shared
// goes back to shared).
func (o *Owner) Release(d Duration) { o.release(1 << d) }

// ReleaseEnded gives back the locks of the statement and of the
// transaction (the end of an autocommit statement), not the explicit ones.
func (o *Owner) ReleaseEnded() { o.release(txnAndStmt) }

// ReleaseAll gives back every lock o holds.
func (o *Owner) ReleaseAll() { o.release(allDurations) }

// HeldFor reports whether o holds any lock for duration d.
func (o *Owner) HeldFor(d Duration) bool {
	for _, h := range o.held {
		if (d == Transaction && h.txn != 0) || (d == Statement && h.stmt != 0) || (d == Explicit && h.explicit != 0) {
			return true
		}
	}
	return false
}

// ReleaseKey gives back what o holds on key for duration d (a table
// dropped or renamed under LOCK TABLES leaves the session's locked set).
func (o *Owner) ReleaseKey(key Key, d Duration) { o.releaseKeys(1<<d, &key) }

func (o *Owner) release(ds durations) { o.releaseKeys(ds, nil) }

// releaseKeys gives back o's locks of durations ds, on only key if set.
func (o *Owner) releaseKeys(ds durations, only *Key) {
	if len(o.held) == 0 {
		return
	}
	type change struct {
		key Key
		set modeSet
	}
	var buf [8]change
	changes := buf[:0]
	for k, h := range o.held {
		if only != nil && k != *only {
			continue
		}
		before := h.set()
		if ds&(1<<Transaction) != 0 {
			h.txn = 0
		}
		if ds&(1<<Statement) != 0 {
			h.stmt = 0
		}
		if ds&(1<<Explicit) != 0 {
			h.explicit = 0
		}
		after := h.set()
		if after == 0 {
			delete(o.held, k)
		} else {
			o.held[k] = h
		}
		if after != before {
			changes = append(changes, change{k, after})
		}
	}
	if len(changes) == 0 {
		return
	}
	m := o.m
	m.mu.Lock()
	for _, c := range changes {
		l := m.locks[c.key]
		if l == nil {
			continue
		}
		l.granted.change(l.holders[o], c.set)
		if c.set == 0 {
			delete(l.holders, o)
		} else {
			l.holders[o] = c.set
		}
		l.signal()
		m.tidy(c.key, l)
	}
	m.mu.Unlock()
}

// TryShared takes key in mode md (SharedRead or SharedWrite) for
// duration d if that needs no wait, and reports whether o holds it now
// (the fast path: a statement that would wait goes the planned way,
// which waits). It does not allocate once the name's entry and o's held
// set have room.
func (o *Owner) TryShared(key Key, md Mode, d Duration) bool {
	r := Request{Key: key, Mode: md, Duration: d}
	h, ok := o.held[key]
	if ok && h.covers(md) {
		o.extend(r, h)
		return true
	}
	m := o.m
	m.mu.Lock()
	if m.blocked(o, r, nil) {
		m.mu.Unlock()
		return false
	}
	m.grantOne(o, r)
	m.mu.Unlock()
	stat.Inc(&m.acquires)
	o.extend(r, h)
	return true
}
