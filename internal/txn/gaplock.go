package txn

import "lockstep/internal/stat"

// Gap locks, next-key locks and insert intentions (InnoDB's, for REPEATABLE
// READ; docs/storage.md, "Gap and next-key locks").
//
// A gap lock key names the open interval between an index key and its
// predecessor in the index (storage builds the keys; a per-index supremum
// key names the interval after the last key). Its queue lives in the same
// sharded lock table as record locks but holds only gap modes, so the
// record-lock paths are unchanged. A next-key lock is the record lock on
// the key plus the gap lock on it: two keys, two requests.
//
// Compatibility (held across, requested down; "-" = conflict):
//
//	            GapS  GapX  InsertIntention
//	GapS         ok    ok    ok
//	GapX         ok    ok    ok
//	InsIntent    -     -     ok
//
// A gap lock never waits (LockGap). An insert intention waits while another
// transaction holds a gap lock on the key (Lock with LockInsertIntention,
// which reuses the queue, deadlock detection and timeouts of record locks)
// and is not held once granted: it only says "no other transaction locks
// this gap now". The caller (storage) makes that answer stick by checking
// it again with GapFree under the latch that orders its insert against the
// gap locks taken by scans.
//
// Inheritance (InheritGap) copies the gap locks of one key to another, for
// a gap that splits (an insert) or merges (a removed key's locks pass to its
// successor). The locks may belong to transactions other than the caller's:
// they go on the receiving trx's inh list, under its own mutex, and a trx
// whose ReleaseAll has begun receives nothing.

// LockGap grants t a gap lock (mode LockGapS or LockGapX) on key. It never
// waits and never fails.
func (lm *LockManager) LockGap(t *Trx, key string, mode LockMode) {
	si := lm.shardOf(key)
	lm.gapRequests.addStat(uint64(si), 1)
	sh := &lm.shards[si]
	sh.mu.Lock()
	q := sh.queues[key]
	if q == nil {
		q = newLockQueue()
		sh.queues[key] = q
	}
	if own := q.grantedTo(t); own != nil {
		own.mode = max(own.mode, mode)
		sh.mu.Unlock()
		return
	}
	q.granted = append(q.granted, &lockReq{trx: t, mode: mode, state: reqGranted})
	lm.gaps.Add(1)
	sh.mu.Unlock()
	t.lk.held = append(t.lk.held, heldLock{lm: lm, shard: si, key: key})
}

// GapLocksHeld reports whether any gap lock is granted anywhere. While it
// is false, inserts and removals skip their gap checks.
func (lm *LockManager) GapLocksHeld() bool { return lm.gaps.Load() > 0 }

// GapFree reports whether no transaction other than t holds a gap lock on
// key: an insert into that gap may go ahead without waiting.
func (lm *LockManager) GapFree(t *Trx, key string) bool {
	if lm.gaps.Load() == 0 {
		return true
	}
	sh := &lm.shards[lm.shardOf(key)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	q := sh.queues[key]
	if q == nil {
		return true
	}
	stat.IncU(&lm.iiRequests)
	return q.fitsGranted(t, LockInsertIntention)
}

// InheritGap gives every holder of a gap lock on from the same gap lock on
// to (InnoDB's lock inheritance). Holders that are ending get nothing.
func (lm *LockManager) InheritGap(from, to string) {
	if lm.gaps.Load() == 0 || from == to {
		return
	}
	type holder struct {
		trx  *Trx
		mode LockMode
	}
	var hs []holder
	sh := &lm.shards[lm.shardOf(from)]
	sh.mu.Lock()
	if q := sh.queues[from]; q != nil {
		for _, g := range q.granted {
			if g.mode >= LockGapS {
				hs = append(hs, holder{g.trx, g.mode})
			}
		}
	}
	sh.mu.Unlock()
	if len(hs) == 0 {
		return
	}
	si := lm.shardOf(to)
	sh = &lm.shards[si]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	q := sh.queues[to]
	if q == nil {
		q = newLockQueue()
		sh.queues[to] = q
	}
	for _, h := range hs {
		if own := q.grantedTo(h.trx); own != nil {
			own.mode = max(own.mode, h.mode)
			continue
		}
		if h.trx.lk.addInherited(heldLock{lm: lm, shard: si, key: to}) {
			q.granted = append(q.granted, &lockReq{trx: h.trx, mode: h.mode, state: reqGranted})
			lm.gaps.Add(1)
			stat.IncU(&lm.inherits)
		}
	}
	sh.dropIfEmpty(to, q)
}

// addInherited records a lock given to the trx by another goroutine; false
// if the trx is releasing its locks already. n is raised before closed is
// read (both sequentially consistent atomics), so closeInherited either
// sees n > 0 and takes the mutex, or this call sees closed.
func (s *trxLockState) addInherited(h heldLock) bool {
	s.inh.n.Add(1)
	s.inh.mu.Lock()
	defer s.inh.mu.Unlock()
	if s.inh.closed.Load() {
		return false
	}
	s.inh.locks = append(s.inh.locks, h)
	return true
}

// closeInherited stops inheritance to the trx and returns what it got. It
// takes no mutex unless something was ever given (the common case costs a
// store and a load per ReleaseAll).
func (s *trxLockState) closeInherited() []heldLock {
	s.inh.closed.Store(true)
	if s.inh.n.Load() == 0 {
		return nil
	}
	s.inh.mu.Lock()
	defer s.inh.mu.Unlock()
	l := s.inh.locks
	s.inh.locks = nil
	return l
}
