package apply

import (
	"sync"
	"testing"
	"time"

	"lockstep/internal/record"
)

// gatedExec blocks transaction 1 until release is closed and records
// which transactions started.
type gatedExec struct {
	fakeExec
	release chan struct{}
	mu      sync.Mutex
	started map[int64]chan struct{}
}

func (x *gatedExec) Txn(t *record.Txn) error {
	x.mu.Lock()
	close(x.started[t.Seq])
	x.mu.Unlock()
	if t.Seq == 1 {
		<-x.release
	}
	return nil
}

// TestCoordinatorWaits: transaction 2 depends on 1, 3 on nothing, and 1
// is held up in its worker. The lockstep scheduler hands 2 and 3 out at
// once: 3 runs while 1 is held (2's worker waits). The coordinator waits
// for 2's last_committed before it hands anything after it out, so 3
// does not start until 1 is applied — MySQL's coordinator's head-of-line
// wait — and the wait is counted.
func TestCoordinatorWaits(t *testing.T) {
	for _, sched := range []Scheduler{SchedulerLockstep, SchedulerCoordinator} {
		t.Run(sched.String(), func(t *testing.T) {
			x := &gatedExec{release: make(chan struct{}), started: map[int64]chan struct{}{}}
			for s := int64(1); s <= 3; s++ {
				x.started[s] = make(chan struct{})
			}
			m := New(Options{})
			p := NewParallel(m, x, ParallelOptions{Workers: 4, Scheduler: sched})
			for i, b := range [][]byte{txnLC(1, 0), txnLC(2, 1), txnLC(3, 0)} {
				if err := p.Entry(uint64(i+1), b); err != nil {
					t.Fatal(err)
				}
			}
			<-x.started[1]
			select {
			case <-x.started[3]:
				if sched == SchedulerCoordinator {
					t.Error("the coordinator handed out 3 while 2 waited for 1")
				}
			case <-time.After(200 * time.Millisecond):
				if sched == SchedulerLockstep {
					t.Error("3 did not start while 1 was held")
				}
			}
			// 2 waits for 1 (counted when the wait begins) before 1 is let
			// go: released earlier, 2's worker could find 1 applied
			// without waiting.
			for deadline := time.Now().Add(10 * time.Second); p.Metrics().DependencyWaits == 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			close(x.release)
			if err := p.Wait(); err != nil {
				t.Fatal(err)
			}
			mt := p.Metrics()
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if m.ExecutedSet() != "1-3" {
				t.Errorf("executed %q", m.ExecutedSet())
			}
			if mt.DependencyWaits != 1 {
				t.Errorf("%d dependency waits, want 1 (2 waiting for 1)", mt.DependencyWaits)
			}
		})
	}
}

// TestParseScheduler: the two names, and an unknown one refused.
func TestParseScheduler(t *testing.T) {
	for _, s := range []Scheduler{SchedulerLockstep, SchedulerCoordinator} {
		if got, err := ParseScheduler(s.String()); err != nil || got != s {
			t.Errorf("%v: %v, %v", s, got, err)
		}
	}
	if _, err := ParseScheduler("fifo"); err == nil {
		t.Error("fifo accepted")
	}
}
