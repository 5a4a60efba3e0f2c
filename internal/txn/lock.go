package txn

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"lockstep/internal/stat"
)

// LockConfig configures a LockManager.
type LockConfig struct {
	Shards int            // lock-table shards, each with its own latch; 0 means 256; 1 is the single-latch baseline
	Policy SchedulePolicy // initial grant policy; SetPolicy changes it at run time
}

// DefaultLockShards is the shard count used when LockConfig.Shards is 0.
const DefaultLockShards = 256

// LockStats is a snapshot of lock-manager counters for SHOW STATUS.
//
// Mapping onto InnoDB names (status variables, or INNODB_METRICS rows where
// there is no status variable):
//
//	Requests          INNODB_METRICS lock_rec_lock_requests
//	ImmediateGrants   (none; Requests - ImmediateGrants = requests that could not be granted at once)
//	RowLockWaits      Innodb_row_lock_waits
//	RowLockCurrent    Innodb_row_lock_current_waits
//	RowLockTimeNs     Innodb_row_lock_time      (InnoDB reports milliseconds: divide by 1e6)
//	RowLockTimeMaxNs  Innodb_row_lock_time_max  (milliseconds in InnoDB)
//	                  Innodb_row_lock_time_avg = RowLockTimeNs / RowLockWaits
//	Deadlocks         Innodb_deadlocks
//	LockWaitTimeouts  INNODB_METRICS lock_timeouts
//	Cancels           (none; waits ended by context cancellation, e.g. KILL QUERY)
//	Releases          INNODB_METRICS lock_rec_lock_removed (approximately)
//	Policy            the current innodb_lock_schedule_algorithm (0 fifo, 1 cats)
//	GapLockRequests   (none; INNODB_METRICS has no gap-lock row)
//	InsertWaits       (none; part of Innodb_row_lock_waits, counted there too)
type LockStats struct {
	Requests         uint64
	ImmediateGrants  uint64
	RowLockWaits     uint64
	RowLockCurrent   int64
	RowLockTimeNs    uint64
	RowLockTimeMaxNs uint64
	Deadlocks        uint64
	LockWaitTimeouts uint64
	Cancels          uint64
	Releases         uint64
	Policy           SchedulePolicy

	GapLockRequests  uint64 // gap lock requests (S or X; next-key locks count one each)
	GapLocksHeld     int64  // gap locks granted now
	InsertIntentions uint64 // inserts that found gap locks held and checked them in the lock table
	InsertWaits      uint64 // insert-intention waits (an insert blocked by another's gap lock)
	GapInherits      uint64 // gap locks copied to a new key's gap or passed to a removed key's successor
}

// trxLockState is the lock-sys part of a Trx.
type trxLockState struct {
	held []heldLock // locks granted to the trx; touched only by its own goroutine

	// wait is the trx's current wait, nil when not waiting. It is set and
	// cleared under the latch of the waited key's shard, and read without a
	// latch by deadlock detection in other goroutines.
	wait atomic.Pointer[waitInfo]

	// blocking approximates how many waiting requests this trx blocks: each
	// waiter adds one to every incompatible holder it finds when it starts
	// waiting, and takes it back when it stops waiting. CATS uses it as the
	// schedule weight.
	blocking atomic.Int64

	// shownID mirrors the trx's id once assigned, for Snapshot (other
	// goroutines read it; Trx.id is the owner's).
	shownID atomic.Uint64

	// inh holds gap locks other goroutines gave this trx (inheritance,
	// gaplock.go); ReleaseAll closes it and releases them with held.
	inh struct {
		mu     sync.Mutex
		closed atomic.Bool
		n      atomic.Int32 // addInherited calls begun
		locks  []heldLock
	}
}

type heldLock struct {
	lm    *LockManager
	shard int
	key   string
}

type reqState uint8

const (
	reqWaiting reqState = iota
	reqGranted
	reqWithdrawn
)

type lockReq struct {
	trx       *Trx
	mode      LockMode
	upgrade   bool     // waiting S->X upgrade of a lock the trx holds
	state     reqState // under the shard latch
	ch        chan struct{}
	blockedOn []*Trx // holders whose blocking count this waiter raised
	wi        *waitInfo
}

// waitInfo describes one wait. A new one is made for every wait, so pointer
// identity tells "the same wait" apart from "a later wait".
type waitInfo struct {
	shard *lockShard
	key   string
	req   *lockReq
	seq   atomic.Uint64 // order in which waits started; 0 until assigned
}

type lockQueue struct {
	granted []*lockReq
	waiting []*lockReq // arrival order; upgrades first
	g0      [2]*lockReq
}

func newLockQueue() *lockQueue {
	q := &lockQueue{}
	q.granted = q.g0[:0]
	return q
}

type lockShard struct {
	mu     sync.Mutex
	queues map[string]*lockQueue
	_      [48]byte // one shard per 64-byte cache line
}

// LockManager is the row lock table (lock-sys). Keys are opaque strings; the
// table is split into shards by an xxhash of the key, each with its own
// latch and its own map of queues. A queue holds the granted requests and
// the waiting ones; each waiter blocks on its own channel and is woken by
// the goroutine that grants it, never by a broadcast.
type LockManager struct {
	shards  []lockShard
	policy  atomic.Int32
	waitSeq atomic.Uint64

	// slow counts the requests not granted at once; ImmediateGrants is
	// derived (requests - slow), so the fast path pays one add, not two.
	requests, slow, releases stripedCounter

	waits, timeNs, timeMax, deadlocks, timeouts, cancels atomic.Uint64
	current                                              atomic.Int64

	// Gap locks (gaplock.go): gaps is the number of gap locks granted and
	// not released, over all queues; inserts and removals skip every gap
	// check while it is 0.
	gaps                          atomic.Int64
	gapRequests                   stripedCounter
	iiWaits, inherits, iiRequests atomic.Uint64
}

// NewLockManager returns an empty lock table.
func NewLockManager(cfg LockConfig) *LockManager {
	n := cfg.Shards
	if n <= 0 {
		n = DefaultLockShards
	}
	lm := &LockManager{shards: make([]lockShard, n)}
	for i := range lm.shards {
		lm.shards[i].queues = make(map[string]*lockQueue)
	}
	lm.policy.Store(int32(cfg.Policy))
	return lm
}

// SetPolicy switches the grant policy at run time. It applies to grants made
// after the call.
func (lm *LockManager) SetPolicy(p SchedulePolicy) { lm.policy.Store(int32(p)) }

// Policy returns the current grant policy.
func (lm *LockManager) Policy() SchedulePolicy { return SchedulePolicy(lm.policy.Load()) }

func (lm *LockManager) shardOf(key string) int {
	if len(lm.shards) == 1 {
		return 0
	}
	return int(xxhash.Sum64String(key) % uint64(len(lm.shards)))
}

// compatible reports whether a request for mode req can be granted beside
// (or queue behind) a lock of mode held of another transaction. Record
// modes (S, X) and gap modes never meet in one queue: they have different
// keys. Among gap modes the relation is asymmetric: a gap lock is
// compatible with everything (it never waits), an insert intention
// conflicts with every gap lock (and with nothing else).
func compatible(held, req LockMode) bool {
	if req <= LockX {
		return held == LockS && req == LockS
	}
	return req != LockInsertIntention || held == LockInsertIntention
}

func (q *lockQueue) grantedTo(t *Trx) *lockReq {
	if i := q.grantedIndex(t); i >= 0 {
		return q.granted[i]
	}
	return nil
}

// grantedIndex is the index of t's granted request in q.granted, or -1.
func (q *lockQueue) grantedIndex(t *Trx) int {
	for i, g := range q.granted {
		if g.trx == t {
			return i
		}
	}
	return -1
}

// dropIfEmpty removes key's queue from the shard once nobody holds or waits
// for the lock. The shard latch must be held.
func (sh *lockShard) dropIfEmpty(key string, q *lockQueue) {
	if len(q.granted) == 0 && len(q.waiting) == 0 {
		delete(sh.queues, key)
	}
}

// fitsGranted reports whether mode is compatible with every lock granted to
// other transactions.
func (q *lockQueue) fitsGranted(t *Trx, mode LockMode) bool {
	for _, g := range q.granted {
		if g.trx != t && !compatible(g.mode, mode) {
			return false
		}
	}
	return true
}

// blockers lists the transactions r waits for: other holders with an
// incompatible lock, and (unless r is an upgrade) other waiters queued ahead
// of r with an incompatible request.
func (q *lockQueue) blockers(r *lockReq, out []*Trx) []*Trx {
	out = q.holdersBlocking(r, out)
	if r.upgrade {
		return out
	}
	for _, w := range q.waiting {
		if w == r {
			break
		}
		if w.trx != r.trx && !compatible(w.mode, r.mode) {
			out = append(out, w.trx)
		}
	}
	return out
}

// holdersBlocking appends to out the transactions holding locks on q that
// conflict with r.
func (q *lockQueue) holdersBlocking(r *lockReq, out []*Trx) []*Trx {
	for _, g := range q.granted {
		if g.trx != r.trx && !compatible(g.mode, r.mode) {
			out = append(out, g.trx)
		}
	}
	return out
}

// Lock acquires a row lock on key for t, waiting if it must.
//
//   - A trx holding X gets any request at once; holding S it gets S at once.
//   - Holding S and asking X is an upgrade: granted at once when t is the only
//     holder, otherwise t waits for the other holders only (ahead of queued
//     waiters). Two trxs upgrading the same key deadlock.
//   - Otherwise the request is granted at once only if it is compatible with
//     every holder and with every queued waiter: a new request never
//     overtakes an incompatible waiter.
//   - timeout < 0 waits without limit; timeout == 0 never waits (fails with
//     ErrLockWaitTimeout if the lock is not grantable at once).
//   - If waiting would close a cycle in the wait-for graph, the requester is
//     the victim: ErrDeadlock, at once.
//   - A cancelled ctx ends the wait with ctx.Err().
//
// On error the request is withdrawn and locks already held stay held. If the
// grant races with the timeout or the cancellation, the grant wins and Lock
// returns nil.
func (lm *LockManager) Lock(ctx context.Context, t *Trx, key string, mode LockMode, timeout time.Duration) error {
	si := lm.shardOf(key)
	lm.requests.addStat(uint64(si), 1)
	sh := &lm.shards[si]
	sh.mu.Lock()
	q := sh.queues[key]
	if q == nil {
		q = newLockQueue()
		sh.queues[key] = q
	}
	own := q.grantedTo(t)
	if mode == LockInsertIntention {
		// An insert intention is never held: granted means "no other
		// transaction holds a gap lock here now" (see gaplock.go).
		if q.fitsGranted(t, mode) {
			sh.dropIfEmpty(key, q)
			sh.mu.Unlock()
			return nil
		}
		own = nil
	} else if own != nil {
		if own.mode == LockX || mode == LockS || len(q.granted) == 1 {
			own.mode = max(own.mode, mode)
			sh.mu.Unlock()
			return nil
		}
	} else if q.fitsAll(t, mode) {
		q.granted = append(q.granted, &lockReq{trx: t, mode: mode, state: reqGranted})
		sh.mu.Unlock()
		t.lk.held = append(t.lk.held, heldLock{lm: lm, shard: si, key: key})
		return nil
	}
	lm.slow.addStat(uint64(si), 1)
	if timeout == 0 {
		// The queue is not empty: it holds a lock that conflicts.
		sh.mu.Unlock()
		stat.IncU(&lm.timeouts)
		return ErrLockWaitTimeout
	}

	r := &lockReq{trx: t, mode: mode, upgrade: own != nil, ch: make(chan struct{}, 1)}
	if r.upgrade {
		i := 0
		for i < len(q.waiting) && q.waiting[i].upgrade {
			i++
		}
		q.waiting = slices.Insert(q.waiting, i, r)
	} else {
		q.waiting = append(q.waiting, r)
	}
	r.blockedOn = q.holdersBlocking(r, r.blockedOn)
	for _, h := range r.blockedOn {
		h.lk.blocking.Add(1)
	}
	wi := &waitInfo{shard: sh, key: key, req: r}
	r.wi = wi
	t.lk.wait.Store(wi)
	sh.mu.Unlock()
	// The sequence number is taken after the wait is published: a wait with
	// a higher number was published later and its own detection pass sees
	// every wait with a lower number (see detect).
	wi.seq.Store(lm.waitSeq.Add(1))

	var err error
	var recheck <-chan time.Time
	switch lm.detect(t, wi, false) {
	case dlVictim:
		err = ErrDeadlock
	case dlDeferred:
		rt := time.NewTimer(deadlockRecheck)
		defer rt.Stop()
		recheck = rt.C
	}
	if err == nil {
		stat.IncU(&lm.waits)
		if mode == LockInsertIntention {
			stat.IncU(&lm.iiWaits)
		}
		stat.Inc(&lm.current)
		var start time.Time // wait time is only counted
		if stat.On {
			start = time.Now()
		}
		var expire <-chan time.Time
		if timeout > 0 {
			tm := time.NewTimer(timeout)
			defer tm.Stop()
			expire = tm.C
		}
	wait:
		for {
			select {
			case <-r.ch:
				break wait
			case <-expire:
				err = ErrLockWaitTimeout
				break wait
			case <-ctx.Done():
				err = ctx.Err()
				break wait
			case <-recheck:
				recheck = nil
				if lm.detect(t, wi, true) == dlVictim {
					err = ErrDeadlock
					break wait
				}
			}
		}
		stat.Add(&lm.current, -1)
		if stat.On {
			d := uint64(time.Since(start))
			lm.timeNs.Add(d)
			storeMax(&lm.timeMax, d)
		}
	}
	if err != nil {
		sh.mu.Lock()
		if r.state == reqGranted {
			err = nil // the grant won the race
		} else {
			lm.withdrawLocked(sh, key, q, r)
		}
		sh.mu.Unlock()
		switch {
		case err == ErrDeadlock:
			stat.IncU(&lm.deadlocks)
		case err == ErrLockWaitTimeout:
			stat.IncU(&lm.timeouts)
		case err != nil:
			stat.IncU(&lm.cancels)
		}
		if err != nil {
			return err
		}
	}
	if !r.upgrade && mode != LockInsertIntention {
		t.lk.held = append(t.lk.held, heldLock{lm: lm, shard: si, key: key})
	}
	return nil
}

// fitsAll reports whether mode is compatible with every holder and every
// waiter of other transactions.
func (q *lockQueue) fitsAll(t *Trx, mode LockMode) bool {
	if !q.fitsGranted(t, mode) {
		return false
	}
	for _, w := range q.waiting {
		if w.trx != t && !compatible(w.mode, mode) {
			return false
		}
	}
	return true
}

// stopWaiting ends r's wait state; under the shard latch.
func stopWaiting(r *lockReq) {
	r.trx.lk.wait.CompareAndSwap(r.wi, nil)
	for _, h := range r.blockedOn {
		h.lk.blocking.Add(-1)
	}
	r.blockedOn = nil
}

func (lm *LockManager) withdrawLocked(sh *lockShard, key string, q *lockQueue, r *lockReq) {
	if i := slices.Index(q.waiting, r); i >= 0 {
		q.waiting = slices.Delete(q.waiting, i, i+1)
	}
	r.state = reqWithdrawn
	stopWaiting(r)
	lm.grantLocked(q)
	sh.dropIfEmpty(key, q)
}

// grantLocked grants what the policy allows after holders or waiters left.
//
// FIFO: waiters in queue order; one is granted when it is compatible with
// every holder and every waiter still ahead of it.
//
// CATS: repeatedly, among the waiters compatible with every holder, the one
// with the largest schedule weight (Trx.lk.blocking: the waiters its own
// locks block), ties to the earliest; until none is compatible.
func (lm *LockManager) grantLocked(q *lockQueue) {
	if len(q.waiting) == 0 {
		return
	}
	if SchedulePolicy(lm.policy.Load()) == CATS {
		for {
			best, bw := -1, int64(0)
			for i, r := range q.waiting {
				if !q.fitsGranted(r.trx, r.mode) {
					continue
				}
				if w := r.trx.lk.blocking.Load(); best < 0 || w > bw {
					best, bw = i, w
				}
			}
			if best < 0 {
				return
			}
			q.grantAt(best)
		}
	}
	for i := 0; i < len(q.waiting); {
		r := q.waiting[i]
		ok := q.fitsGranted(r.trx, r.mode)
		for j := 0; ok && j < i; j++ {
			if w := q.waiting[j]; w.trx != r.trx && !compatible(w.mode, r.mode) {
				ok = false
			}
		}
		if ok {
			q.grantAt(i)
		} else {
			i++
		}
	}
}

func (q *lockQueue) grantAt(i int) {
	r := q.waiting[i]
	q.waiting = slices.Delete(q.waiting, i, i+1)
	r.state = reqGranted
	switch {
	case r.upgrade:
		q.grantedTo(r.trx).mode = LockX
	case r.mode != LockInsertIntention: // an insert intention is not held
		q.granted = append(q.granted, r)
	}
	stopWaiting(r)
	r.ch <- struct{}{}
}

// ReleaseAll releases every lock t holds in lm and grants waiters by the
// current policy. Locks are released shard by shard, one latch at a time.
func (lm *LockManager) ReleaseAll(t *Trx) {
	if extra := t.lk.closeInherited(); extra != nil {
		t.lk.held = append(t.lk.held, extra...)
	}
	held := t.lk.held
	if len(held) == 0 {
		return
	}
	// Usually every lock is from this manager; otherwise split the list.
	mine, rest := held, []heldLock(nil)
	for _, h := range held {
		if h.lm != lm {
			mine = nil
			for _, h := range held {
				if h.lm == lm {
					mine = append(mine, h)
				} else {
					rest = append(rest, h)
				}
			}
			break
		}
	}
	if len(mine) > 1 {
		slices.SortFunc(mine, func(a, b heldLock) int { return a.shard - b.shard })
	}
	for i := 0; i < len(mine); {
		si, first := mine[i].shard, i
		sh := &lm.shards[si]
		sh.mu.Lock()
		for ; i < len(mine) && mine[i].shard == si; i++ {
			key := mine[i].key
			q := sh.queues[key]
			if q == nil {
				continue
			}
			if j := q.grantedIndex(t); j >= 0 {
				if q.granted[j].mode >= LockGapS {
					lm.gaps.Add(-1)
				}
				q.granted = slices.Delete(q.granted, j, j+1)
			}
			lm.grantLocked(q)
			sh.dropIfEmpty(key, q)
		}
		sh.mu.Unlock()
		lm.releases.addStat(uint64(si), uint64(i-first))
	}
	if rest != nil {
		t.lk.held = rest
	} else {
		clear(held)
		t.lk.held = held[:0]
	}
}

// Stats returns a snapshot of counters.
func (lm *LockManager) Stats() LockStats {
	// slow first: every slow request was counted in requests before, so
	// the difference cannot go below zero.
	slow := lm.slow.load()
	requests := lm.requests.load()
	return LockStats{
		Requests:         requests,
		ImmediateGrants:  requests - slow,
		RowLockWaits:     lm.waits.Load(),
		RowLockCurrent:   lm.current.Load(),
		RowLockTimeNs:    lm.timeNs.Load(),
		RowLockTimeMaxNs: lm.timeMax.Load(),
		Deadlocks:        lm.deadlocks.Load(),
		LockWaitTimeouts: lm.timeouts.Load(),
		Cancels:          lm.cancels.Load(),
		Releases:         lm.releases.load(),
		Policy:           lm.Policy(),
		GapLockRequests:  lm.gapRequests.load(),
		GapLocksHeld:     lm.gaps.Load(),
		InsertIntentions: lm.iiRequests.Load(),
		InsertWaits:      lm.iiWaits.Load(),
		GapInherits:      lm.inherits.Load(),
	}
}
