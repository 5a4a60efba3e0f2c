package apply

import "fmt"

// Scheduler is who waits for a transaction's dependencies in the parallel
// driver.
type Scheduler int

const (
	// SchedulerLockstep: the scheduler never waits; it hands transactions
	// out in sequence order as the window allows, and each worker waits
	// for its transaction's last_committed (Parallel's default).
	SchedulerLockstep Scheduler = iota
	// SchedulerCoordinator is MySQL's LOGICAL_CLOCK coordinator (the
	// replica's SQL thread with replica_parallel_type=LOGICAL_CLOCK): one
	// dispatching thread takes the transactions in order and, before it
	// hands one to a worker, waits until every transaction up to its
	// last_committed is applied; nothing after it is handed out
	// meanwhile. A baseline to measure SchedulerLockstep against.
	SchedulerCoordinator
)

// String is the name `lockstep bench replay --scheduler` takes.
func (s Scheduler) String() string {
	switch s {
	case SchedulerLockstep:
		return "lockstep"
	case SchedulerCoordinator:
		return "coordinator"
	}
	return fmt.Sprintf("Scheduler(%d)", int(s))
}

// ParseScheduler reads a scheduler's name.
func ParseScheduler(name string) (Scheduler, error) {
	switch name {
	case "lockstep":
		return SchedulerLockstep, nil
	case "coordinator":
		return SchedulerCoordinator, nil
	}
	return 0, fmt.Errorf("unknown scheduler %q (lockstep or coordinator)", name)
}

// coordinate is the coordinator thread (SchedulerCoordinator): it takes
// the machine's steps in order and hands a transaction to the workers
// only once its last_committed is applied, waiting for that itself (the
// wait is counted in DependencyWaits); its worker then finds it Ready at
// once. Feeding an entry and finishing a step wake it (dispatch). It
// stops when the driver is closed.
func (p *Parallel) coordinate() {
	defer p.wg.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		for !p.closed && p.err == nil {
			s, ok := p.m.Next()
			if !ok {
				break
			}
			if s.Kind == StepNote {
				p.x.Note(s.Note)
				continue
			}
			if s.Kind == StepTxn && !p.m.Ready(s) {
				p.deps.n++
				t0 := p.m.clock()
				for !p.closed && !p.stopped(s) && !p.m.Ready(s) {
					p.cond.Wait()
				}
				p.deps.d += p.m.clock().Sub(t0)
				if p.closed {
					return
				}
			}
			// Never blocks: at most window steps are handed out, the
			// channel's capacity. A step abandoned after a failure goes
			// too: its worker drops it.
			p.work <- s
		}
		if p.closed {
			return
		}
		p.cond.Wait()
	}
}
