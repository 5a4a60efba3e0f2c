package commit

import (
	"errors"
	"fmt"
	"sync/atomic"

	"lockstep/internal/stat"
)

// lead runs the group that w leads through the three stages. w pushed onto
// an empty queue, so it is the oldest member of the queue it will take.
//
// Up to Options.SyncGroups groups are between taking the queue and joining
// the commit queue at once (one by default). A leader takes a sync slot
// first, so while every slot is taken arrivals queue up and the whole
// queue becomes the next group: one CertifyBatch, one Log.Append and one
// Log.WaitDurable for all of it. The flush stage itself is one group at a
// time (logMu); the durability waits of the groups holding slots overlap
// (the log keeps as many fsyncs in flight), and groups join the commit
// queue in the order they appended (their turn), since a later group's
// wait can end first. The commit stage is decoupled: a group that is
// durable joins the commit queue and later groups' flush and sync overlap
// its commit stage. docs/commit.md explains, with measurements, why the
// default keeps one group from taking the queue to the end of its
// durability wait.
func (p *Pipeline) lead(w *waiter) {
	p.syncSlots <- struct{}{}
	p.logMu.Lock()
	stat.Inc(&p.c.leaders)
	p.waitForGroup()
	head := reverse(p.queue.Swap(nil))
	p.took()
	if err := p.Err(); err != nil {
		p.logMu.Unlock()
		<-p.syncSlots
		for m := head; m != nil; m = m.next {
			m.err = err
		}
		p.wake(head, w, nil)
		return
	}

	// ---- 1. flush ----
	live, lastLSN, dead, rest := p.flush(head)
	p.wake(dead, w, nil) // failed members (encode, or append) leave now
	if live == nil {
		p.logMu.Unlock()
		<-p.syncSlots
		return
	}
	turn := p.turns
	p.turns++
	if rest != nil {
		p.leadSplit(w, live, lastLSN, turn, rest) // split.go
		return
	}
	p.logMu.Unlock()

	// ---- 2. sync ----
	syncErr := p.log.WaitDurable(lastLSN)
	if syncErr != nil && !errors.Is(syncErr, ErrNotCommitted) {
		syncErr = p.setFatal(fmt.Errorf("log sync: %w", syncErr))
	}
	w.group, w.syncErr = live, syncErr
	commitLeader := p.joinCommitQueue(w, turn)
	<-p.syncSlots
	if !commitLeader {
		p.follow(w) // a commit-stage leader ahead publishes this group too
		return
	}

	// ---- 3. commit ----
	p.publishQueued(w)
}

// publishQueued is the commit stage, run by the group leader that pushed
// onto an empty commit queue: it publishes every group queued, member by
// member, in sequence order, and wakes every member and group leader but
// self.
func (p *Pipeline) publishQueued(self *waiter) {
	p.commitMu.Lock()
	stat.Inc(&p.c.commitLeaders)
	groups := reverseGroups(p.commitQ.Swap(nil)) // oldest first
	var (
		n       int64
		lastSeq int64
	)
	for g := groups; g != nil; g = g.nextGroup {
		if g.syncErr != nil && p.chainErr == nil {
			p.chainErr = g.syncErr
		}
		broken := p.chainErr
		for m := g.group; m != nil; m = m.next {
			if broken != nil {
				// This group, or one before it, may not be durable: it
				// must not become visible. Its records may be in the log.
				m.seq, m.err = 0, broken
				continue
			}
			if m.txn.Publish != nil {
				m.txn.Publish()
			}
			lastSeq = m.seq
			n++
		}
	}
	if n > 0 {
		stat.Add(&p.c.commits, n)
		p.c.lastSeq.Store(lastSeq)
		p.notifyPublished()
	}
	p.commitMu.Unlock()
	p.wakeGroups(groups, self)
}

// joinCommitQueue pushes the group g leads onto the commit queue when its
// turn comes (groups join in the order they appended, whichever
// durability wait ends first), and reports whether g leads the commit
// stage. With one sync slot every group finds its turn has come.
func (p *Pipeline) joinCommitQueue(g *waiter, turn uint64) (commitLeader bool) {
	p.turnMu.Lock()
	if p.joined != turn {
		stat.Inc(&p.c.turnWaits)
	}
	for p.joined != turn {
		p.turnCond.Wait()
	}
	commitLeader = push(&p.commitQ, g)
	p.joined++
	p.turnCond.Broadcast()
	p.turnMu.Unlock()
	return commitLeader
}

// flush is the flush stage, run under logMu: number, certify and encode
// the members from head on, and append those that encoded with one
// Log.Append. It splits the list into live (in sequence order) and dead
// (failed, with err set) members. A group whose records add up to more
// than the cap (Options.MaxGroupBytes) is split (split.go): only its first
// part is appended here, live is that part's members, and rest holds the
// others, numbered and encoded, for leadSplit to append.
func (p *Pipeline) flush(head *waiter) (live *waiter, lastLSN uint64, dead *waiter, rest []chunk) {
	slots := p.slots[:0]
	for m := head; m != nil; m = m.next {
		slots = append(slots, slot{txn: m.txn})
	}
	p.seq.commitTime = p.clock().UnixMicro() // one reading per group
	ok := p.seq.assign(slots)
	payloads := p.payloads[:0]
	for i := range slots {
		if slots[i].err == nil {
			payloads = append(payloads, slots[i].payload)
		}
	}
	ends := chunkEnds(payloads, p.maxGroupBytes.Load())
	first := len(payloads)
	if len(ends) > 0 {
		first = ends[0]
	}
	var appendErr error
	if ok > 0 {
		lastLSN, appendErr = p.log.Append(p.term.Load(), payloads[:first]...)
	}
	if appendErr == nil && len(ends) > 0 {
		rest = restChunks(payloads, ends)
	}
	clear(payloads) // the log has them now; keep no reference
	p.payloads = payloads[:0]
	switch {
	case appendErr != nil && errors.Is(appendErr, ErrUncertain):
		appendErr = p.setFatal(fmt.Errorf("log append: %w", appendErr))
	case appendErr != nil:
		p.seq.abort(slots) // give the numbers back: the next group reuses them
		appendErr = fmt.Errorf("commit: log append: %w", appendErr)
	}

	var liveTail, deadTail *waiter
	nLive, part := 0, 0
	m := head
	for i := range slots {
		next := m.next
		m.next = nil
		sl := &slots[i]
		switch {
		case sl.err != nil:
			m.err = sl.err
		case appendErr != nil:
			m.err = appendErr
		default:
			m.seq = sl.seq
		}
		switch {
		case m.err != nil:
			if dead == nil {
				dead = m
			} else {
				deadTail.next = m
			}
			deadTail = m
		case nLive < first:
			if live == nil {
				live = m
			} else {
				liveTail.next = m
			}
			liveTail = m
			nLive++
		default:
			// A later part of a split group: its own list.
			for part < len(ends)-1 && nLive >= ends[part+1] {
				part++
			}
			c := &rest[part]
			if c.head == nil {
				c.head = m
			} else {
				c.tail.next = m
			}
			c.tail = m
			nLive++
		}
		slots[i] = slot{}
		m = next
	}
	p.slots = slots[:0]
	if live != nil {
		stat.Inc(&p.c.groups)
		stat.Add(&p.c.appended, int64(ok))
		stat.Inc(&p.c.sizes[sizeBucket(ok)])
	}
	return live, lastLSN, dead, rest
}

// push pushes the group led by g onto the commit queue q (a stack of group
// leaders, newest first, linked by nextGroup) and reports whether q was
// empty: g then leads the commit stage.
func push(q *atomic.Pointer[waiter], g *waiter) (leader bool) {
	for {
		top := q.Load()
		g.nextGroup = top
		if q.CompareAndSwap(top, g) {
			return top == nil
		}
	}
}

// reverseGroups turns the commit queue (newest first) into sequence order.
func reverseGroups(top *waiter) *waiter {
	var head *waiter
	for top != nil {
		next := top.nextGroup
		top.nextGroup = head
		head = top
		top = next
	}
	return head
}
