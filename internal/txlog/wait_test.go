package txlog

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The advancing side wakes exactly the waiters whose LSN it reached.
func TestWaitSetTargeted(t *testing.T) {
	var pos atomic.Uint64
	var fail atomic.Pointer[failure]
	var st counters
	ws := newWaitSet(&pos, &fail, &st)
	lsns := []uint64{100, 5000, 5001, 9000, 1 << 30, 1<<30 + 4096*waitSlots} // the last two share a slot
	woke := make([]atomic.Bool, len(lsns))
	errs := make([]error, len(lsns))
	var wg sync.WaitGroup
	for i, lsn := range lsns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ws.wait(lsn)
			woke[i].Store(true)
		}()
	}
	for ws.total.Load() != int64(len(lsns)) {
		time.Sleep(time.Millisecond)
	}
	advance := func(to uint64, wantWoken ...int) {
		t.Helper()
		from := pos.Load()
		before := st.wakeups.Load()
		pos.Store(to)
		ws.notify(from, to)
		if got := st.wakeups.Load() - before; got != uint64(len(wantWoken)) {
			t.Fatalf("advance to %d woke %d waiters, want %d", to, got, len(wantWoken))
		}
		deadline := time.Now().Add(5 * time.Second)
		for _, i := range wantWoken {
			for !woke[i].Load() {
				if time.Now().After(deadline) {
					t.Fatalf("waiter %d (LSN %d) not woken", i, lsns[i])
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	advance(99)
	advance(5000, 0, 1)
	advance(5001, 2)
	advance(1<<30, 3, 4) // the waiter in the same slot stays asleep
	if woke[5].Load() {
		t.Fatal("waiter beyond the position woken")
	}
	fail.Store(&failure{err: ErrLogFailed, limit: 1 << 30})
	ws.failAbove(1<<30, ErrLogFailed)
	wg.Wait()
	for i, err := range errs {
		if (i == 5) != (err != nil) {
			t.Errorf("waiter %d: %v", i, err)
		}
	}
	if st.wakeups.Load() != 5 || st.wakeupsDone.Load() != 5 || st.failWakeups.Load() != 1 {
		t.Errorf("wakeups %d, done %d, failed %d", st.wakeups.Load(), st.wakeupsDone.Load(), st.failWakeups.Load())
	}
	if err := ws.wait(1 << 31); !errors.Is(err, ErrLogFailed) {
		t.Errorf("wait after the failure: %v", err)
	}
}

// Under load, every wake-up finds its LSN durable, and fsyncs are shared.
func TestWaitDurableTargeted(t *testing.T) {
	opts := smallOpts(t)
	l, _ := mustOpen(t, opts)
	const goroutines, perG = 32, 100
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perG {
				lsn, err := l.Append(1, payload(uint64(g*perG+i), 150, false))
				if err == nil {
					err = l.WaitDurable(lsn)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st := l.Stats()
	mustClose(t, l)
	if st.Wakeups != st.WakeupsDone || st.FailWakeups != 0 {
		t.Fatalf("wake-ups %d, found durable %d, failed %d", st.Wakeups, st.WakeupsDone, st.FailWakeups)
	}
	if st.Waits == 0 || st.Wakeups != st.Waits {
		t.Fatalf("waits %d, wake-ups %d", st.Waits, st.Wakeups)
	}
	if st.Fsyncs >= goroutines*perG {
		t.Errorf("%d fsyncs for %d appends: no group commit", st.Fsyncs, goroutines*perG)
	}
	t.Logf("%d appends, %d fsyncs, %d waits, %d wake-ups (%d found durable)",
		st.Appends, st.Fsyncs, st.Waits, st.Wakeups, st.WakeupsDone)
}
