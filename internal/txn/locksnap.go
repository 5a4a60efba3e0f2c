package txn

import "unsafe"

// Lock snapshots for performance_schema.data_locks and data_lock_waits
// (docs/storage.md, "Seeing locks").
//
// Snapshot walks the lock table one shard at a time, copying each queue's
// granted and waiting requests under that shard's latch only: there is no
// global latch, and a shard is held for as long as copying its queues
// takes. The lock paths pay nothing for it: the copy is made by the reader,
// into the reader's slices. Two shards are not copied at one instant, so a
// transaction that moves between them while the copy runs can show in one
// and not the other — as InnoDB's own view, which also copies the lock
// table piecewise.

// LockInfo is one lock request in a snapshot: granted (held) or waiting.
type LockInfo struct {
	Trx     uint64   // the transaction's id for display (TrxDisplayID)
	Thread  uint64   // the owner the SQL layer set with SetThread (0: none)
	Key     string   // the lock key (opaque to txn; storage names it)
	Mode    LockMode // LockS, LockX, LockGapS, LockGapX or LockInsertIntention
	Waiting bool     // a waiting request, not a granted one
}

// LockWaitInfo says the waiting request Locks[Waiter] waits for the
// request Locks[Blocker] (granted to another transaction, or queued ahead
// of it in a conflicting mode).
type LockWaitInfo struct{ Waiter, Blocker int }

// LockSnapshot is a copy of the lock table.
type LockSnapshot struct {
	Locks []LockInfo
	Waits []LockWaitInfo
}

// SetThread names the session that owns t (performance_schema's THREAD_ID
// of its locks). Call it before t takes its first lock: it is read by
// Snapshot in other goroutines, ordered by the shard latches.
func (t *Trx) SetThread(id uint64) { t.thread = id }

// trxNoIDBase marks display ids of transactions without an id (above every
// id the counter reaches in practice), as InnoDB prints a large number
// derived from the transaction's address for a transaction that has not
// written.
const trxNoIDBase = 1 << 48

// TrxDisplayID is t's transaction id as data_locks shows it: the id when
// one was assigned, else a number made from t's address (distinct among
// live transactions, stable for t's life). Safe from any goroutine.
func TrxDisplayID(t *Trx) uint64 {
	if id := t.lk.shownID.Load(); id != 0 {
		return id
	}
	return trxNoIDBase | uint64(uintptr(unsafe.Pointer(t))>>3)
}

// Snapshot copies every granted and waiting lock request and the waits
// between them. Insert intentions appear only while they wait (a granted
// one is not held: gaplock.go).
func (lm *LockManager) Snapshot() LockSnapshot {
	var s LockSnapshot
	var index map[*lockReq]int // waiter or holder → its row, per queue
	for i := range lm.shards {
		sh := &lm.shards[i]
		sh.mu.Lock()
		for key, q := range sh.queues {
			if len(q.waiting) > 0 && index == nil {
				index = make(map[*lockReq]int)
			}
			add := func(r *lockReq, waiting bool) int {
				s.Locks = append(s.Locks, LockInfo{
					Trx: TrxDisplayID(r.trx), Thread: r.trx.thread,
					Key: key, Mode: r.mode, Waiting: waiting,
				})
				return len(s.Locks) - 1
			}
			for _, g := range q.granted {
				row := add(g, false)
				if len(q.waiting) > 0 {
					index[g] = row
				}
			}
			for _, w := range q.waiting {
				index[w] = add(w, true)
			}
			for _, w := range q.waiting {
				// The waiter's blockers, as Lock's deadlock detection
				// sees them (lockQueue.blockers): conflicting holders,
				// then conflicting waiters ahead (none for an upgrade).
				for _, g := range q.granted {
					if g.trx != w.trx && !compatible(g.mode, w.mode) {
						s.Waits = append(s.Waits, LockWaitInfo{Waiter: index[w], Blocker: index[g]})
					}
				}
				if w.upgrade {
					continue
				}
				for _, a := range q.waiting {
					if a == w {
						break
					}
					if a.trx != w.trx && !compatible(a.mode, w.mode) {
						s.Waits = append(s.Waits, LockWaitInfo{Waiter: index[w], Blocker: index[a]})
					}
				}
			}
			clear(index)
		}
		sh.mu.Unlock()
	}
	return s
}
