package txn

import (
	"slices"
	"time"
)

// Deadlock detection.
//
// The wait-for graph is never materialised and no two shard latches are ever
// held at once. A waiter's outgoing edges are computed from its own queue
// under that queue's shard latch (see lockQueue.blockers); the search walks
// from the requester, visiting one waiter at a time, reading each waiter's
// published wait (Trx.lk.wait) and then latching only that waiter's shard.
//
// Because the graph is read piecemeal it is not a snapshot. Two measures keep
// the answer honest:
//
//  1. No false positives (given that a waiting trx never releases locks,
//     which holds because a Trx is driven by one goroutine and that goroutine
//     is blocked in Lock): a cycle found by the search is re-verified edge by
//     edge, again one latch at a time, and then every wait on the cycle is
//     checked to be the very same wait (same waitInfo pointer) as when it was
//     first read. A trx whose wait is unchanged across the whole check still
//     holds the locks and queue position that created its incoming edges, so
//     every edge existed at the end of the check: the cycle is real.
//
//  2. One victim per cycle: the victim is the requester whose wait closed the
//     cycle, i.e. the waiter with the highest wait sequence number on it.
//     Waits are published before their sequence number is taken, so the
//     waiter with the highest number on a cycle started its search after
//     every other wait on the cycle was visible, and finds the cycle itself.
//     A requester that finds a cycle containing a later (or not yet numbered)
//     wait therefore leaves it to that waiter, and only re-checks once after
//     deadlockRecheck, then aborts itself if the cycle is still there.
//
// Limits: the search gives up after maxDeadlockSearch visited transactions
// (the lock wait timeout is the backstop, as in InnoDB, which instead
// declares a deadlock when its search is too deep). A cycle can be missed when
// waits change during the search in ways the sequence-number argument does
// not cover (for example a waiter withdrawn and queued again while the
// search runs); such a cycle ends by lock wait timeout.
const (
	maxDeadlockSearch = 1000
	deadlockRecheck   = 20 * time.Millisecond
)

type dlResult int

const (
	dlNone     dlResult = iota
	dlVictim            // a verified cycle through the requester; it is the victim
	dlDeferred          // a verified cycle whose last wait is someone else's
)

type dlFrame struct {
	t        *Trx
	wi       *waitInfo
	blockers []*Trx
	next     int
}

// blockersOf returns the transactions wi's request waits for, or ok=false if
// the wait is over.
func blockersOf(wi *waitInfo) (out []*Trx, ok bool) {
	sh := wi.shard
	sh.mu.Lock()
	defer sh.mu.Unlock()
	r := wi.req
	if r.state != reqWaiting || r.trx.lk.wait.Load() != wi {
		return nil, false
	}
	q := sh.queues[wi.key]
	if q == nil {
		return nil, false
	}
	return q.blockers(r, nil), true
}

// detect searches for a cycle through start's wait. With force, the
// requester is the victim of any verified cycle.
func (lm *LockManager) detect(start *Trx, swi *waitInfo, force bool) dlResult {
	for try := 0; try < 2; try++ {
		path := findCycle(start, swi)
		if path == nil {
			return dlNone
		}
		if !verifyCycle(path) {
			continue
		}
		if !force {
			mine := swi.seq.Load()
			for _, f := range path[1:] {
				if s := f.wi.seq.Load(); s == 0 || s > mine {
					return dlDeferred
				}
			}
		}
		return dlVictim
	}
	return dlNone
}

// findCycle runs a depth-first search from start and returns the path of a
// cycle back to start (path[0] is start; path[i] waits for path[i+1], the
// last waits for start), or nil.
func findCycle(start *Trx, swi *waitInfo) []dlFrame {
	bl, ok := blockersOf(swi)
	if !ok {
		return nil
	}
	visited := map[*Trx]struct{}{start: {}}
	stack := []dlFrame{{t: start, wi: swi, blockers: bl}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next >= len(top.blockers) {
			stack = stack[:len(stack)-1]
			continue
		}
		b := top.blockers[top.next]
		top.next++
		if b == start {
			return stack
		}
		if _, seen := visited[b]; seen {
			continue
		}
		visited[b] = struct{}{}
		if len(visited) > maxDeadlockSearch {
			return nil
		}
		bwi := b.lk.wait.Load()
		if bwi == nil {
			continue
		}
		if bbl, ok := blockersOf(bwi); ok && len(bbl) > 0 {
			stack = append(stack, dlFrame{t: b, wi: bwi, blockers: bbl})
		}
	}
	return nil
}

// verifyCycle re-reads every edge of path, one latch at a time, then checks
// that no wait on it changed meanwhile.
func verifyCycle(path []dlFrame) bool {
	for i, f := range path {
		next := path[(i+1)%len(path)].t
		// The loop below re-checks every wait once all edges are read.
		if bl, ok := blockersOf(f.wi); !ok || !slices.Contains(bl, next) {
			return false
		}
	}
	for _, f := range path {
		if f.t.lk.wait.Load() != f.wi {
			return false
		}
	}
	return true
}
