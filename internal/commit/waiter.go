package commit

import "lockstep/internal/stat"

// waiter is one Commit call in flight: its queue link, its wake slot and its
// result. Waiters are pooled with their wake channel, so a commit allocates
// neither.
type waiter struct {
	txn  *Txn
	next *waiter // queue link, then group link
	mode WakeupMode

	// wake is the waiter's own slot, used in Targeted mode. Capacity 1:
	// every send is matched by exactly one receive before reuse.
	wake chan struct{}
	// finished is set by whoever wakes the waiter: in Targeted mode before
	// the send on wake, in Broadcast mode under bcMu.
	finished bool

	// Set on a group's leader after the sync stage.
	group     *waiter // the group's members in the log, in sequence order
	nextGroup *waiter // commit queue link
	syncErr   error   // the group's durability wait failed

	seq int64
	err error
}

func (w *waiter) reset() {
	w.txn, w.next = nil, nil
	w.finished = false
	w.group, w.nextGroup, w.syncErr = nil, nil, nil
	w.seq, w.err = 0, nil
}

// enqueue pushes w and reports whether the queue was empty, which makes w
// the leader of the group that will take it. A push-only stack emptied by
// swapping the whole of it out has no ABA problem: the compare-and-swap
// succeeds only if w.next is the current top.
func (p *Pipeline) enqueue(w *waiter) (leader bool) {
	for {
		top := p.queue.Load()
		w.next = top
		if p.queue.CompareAndSwap(top, w) {
			return top == nil
		}
	}
}

// reverse turns the stack (newest first) into arrival order.
func reverse(top *waiter) *waiter {
	var head *waiter
	for top != nil {
		next := top.next
		top.next = head
		head = top
		top = next
	}
	return head
}

// follow waits until the leader has finished w.
func (p *Pipeline) follow(w *waiter) {
	if w.mode != Broadcast {
		<-w.wake
		stat.Inc(&p.c.wakeups)
		if w.finished {
			stat.Inc(&p.c.wakeupsDone)
		}
		return
	}
	p.bcMu.Lock()
	if w.finished {
		// Its leader finished it (and broadcast) before it got here.
		stat.Inc(&p.c.doneBeforeWait)
	}
	for !w.finished {
		p.bcCond.Wait()
		stat.Inc(&p.c.wakeups)
		if w.finished {
			stat.Inc(&p.c.wakeupsDone)
		}
	}
	p.bcMu.Unlock()
}

// wake finishes every member of list except skip1 and skip2 and wakes it
// the way it waits (see wakeGroups).
func (p *Pipeline) wake(list, skip1, skip2 *waiter) {
	bc := false
	for m := list; m != nil; m = m.next {
		if m != skip1 && m != skip2 && m.mode == Broadcast {
			bc = true
			break
		}
	}
	if bc {
		p.bcMu.Lock()
	}
	var next *waiter
	for m := list; m != nil; m = next {
		next = m.next // m may be reused as soon as it is woken
		if m != skip1 && m != skip2 {
			m.finish()
		}
	}
	if bc {
		p.bcCond.Broadcast()
		p.bcMu.Unlock()
	}
}

// wakeGroups finishes and wakes every member of the groups on the commit
// list from groups on, and every group's leader (a leader whose own encode
// failed is not on its group's list), except self, the commit-stage leader.
// Targeted waiters are woken by name, once each. If any waiter waits in
// Broadcast mode, one broadcast wakes every Broadcast waiter of every group,
// those still in earlier stages included: that is the baseline's waste.
func (p *Pipeline) wakeGroups(groups, self *waiter) {
	bc := false
scan:
	for g := groups; g != nil; g = g.nextGroup {
		if g != self && g.mode == Broadcast {
			bc = true
			break
		}
		for m := g.group; m != nil; m = m.next {
			if m != self && m.mode == Broadcast {
				bc = true
				break scan
			}
		}
	}
	if bc {
		p.bcMu.Lock()
	}
	for g := groups; g != nil; {
		nextGroup, list := g.nextGroup, g.group // g may be reused once woken
		var next *waiter
		for m := list; m != nil; m = next {
			next = m.next
			if m != self && m != g {
				m.finish()
			}
		}
		if g != self {
			g.finish()
		}
		g = nextGroup
	}
	if bc {
		p.bcCond.Broadcast()
		p.bcMu.Unlock()
	}
}

// finish marks w done and, in Targeted mode, wakes it. In Broadcast mode
// the caller holds bcMu and broadcasts afterwards.
func (w *waiter) finish() {
	w.finished = true
	if w.mode != Broadcast {
		w.wake <- struct{}{}
	}
}
