package mdl

import (
	"context"
	"errors"
	"testing"
	"time"
)

var (
	kt = Key{"d", "t"}
	ku = Key{"d", "u"}
)

func req(k Key, m Mode, d Duration) []Request { return []Request{{Key: k, Mode: m, Duration: d}} }

// acquireAsync starts an Acquire on its own goroutine.
func acquireAsync(o *Owner, reqs []Request, timeout time.Duration) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- o.Acquire(context.Background(), reqs, timeout) }()
	return ch
}

// waitFor polls until n owners wait.
func waitFor(t *testing.T, m *Manager, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(m.Waiting()) != n {
		if time.Now().After(deadline) {
			t.Fatalf("waiting owners: %v, want %d", m.Waiting(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func blockedNow(t *testing.T, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("granted (%v), want it to wait", err)
	case <-time.After(20 * time.Millisecond):
	}
}

func done(t *testing.T, ch <-chan error, want error) {
	t.Helper()
	select {
	case err := <-ch:
		if !errors.Is(err, want) {
			t.Fatalf("got %v, want %v", err, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCompatibility(t *testing.T) {
	cases := []struct {
		held, asked Mode
		waits       bool
	}{
		{Shared, Shared, false},
		{Shared, Exclusive, true},
		{Exclusive, Shared, true},
		{Exclusive, Exclusive, true},
	}
	for _, c := range cases {
		t.Run(c.held.String()+"-"+c.asked.String(), func(t *testing.T) {
			m := NewManager()
			a, b := m.NewOwner(1), m.NewOwner(2)
			must(t, a.Acquire(context.Background(), req(kt, c.held, Transaction), time.Second))
			ch := acquireAsync(b, req(kt, c.asked, Statement), 5*time.Second)
			if !c.waits {
				done(t, ch, nil)
				return
			}
			waitFor(t, m, 1)
			blockedNow(t, ch)
			a.ReleaseAll()
			done(t, ch, nil)
			if got := m.Holders(kt); len(got) != 1 || got[2] != c.asked {
				t.Fatalf("holders %v", got)
			}
		})
	}
}

// A shared lock's owner upgrades it; the other owners' shared locks hold
// the upgrade back; the statement's release gives the shared lock back.
func TestUpgradeAndDurations(t *testing.T) {
	m := NewManager()
	a, b := m.NewOwner(1), m.NewOwner(2)
	ctx := context.Background()
	must(t, a.Acquire(ctx, req(kt, Shared, Transaction), time.Second))
	must(t, b.Acquire(ctx, req(kt, Shared, Transaction), time.Second))
	ch := acquireAsync(a, req(kt, Exclusive, Statement), 5*time.Second)
	waitFor(t, m, 1)
	b.Release(Transaction)
	done(t, ch, nil)
	if a.Holds(kt) != Exclusive {
		t.Fatalf("a holds %v", a.Holds(kt))
	}
	a.Release(Statement)
	if a.Holds(kt) != Shared || m.Holders(kt)[1] != Shared {
		t.Fatalf("after the statement: a holds %v, table %v", a.Holds(kt), m.Holders(kt))
	}
	// b's shared request goes through now.
	must(t, b.Acquire(ctx, req(kt, Shared, Statement), time.Second))
	a.Release(Transaction)
	b.Release(Statement)
	if st := m.Stats(); st.Names != 0 || st.Waiting != 0 {
		t.Fatalf("left behind: %+v", st)
	}
}

// A pending exclusive request holds new shared requests back (no
// starvation of DDL), but not a shared request on a name already held.
func TestPendingExclusiveQueuesShared(t *testing.T) {
	m := NewManager()
	a, b, c := m.NewOwner(1), m.NewOwner(2), m.NewOwner(3)
	ctx := context.Background()
	must(t, a.Acquire(ctx, req(kt, Shared, Transaction), time.Second))
	x := acquireAsync(b, req(kt, Exclusive, Statement), 5*time.Second)
	waitFor(t, m, 1)
	s := acquireAsync(c, req(kt, Shared, Transaction), 5*time.Second)
	waitFor(t, m, 2)
	blockedNow(t, s)
	must(t, a.Acquire(ctx, req(kt, Shared, Statement), time.Second)) // re-entrant
	a.ReleaseAll()
	done(t, x, nil)
	blockedNow(t, s) // now behind the granted exclusive lock
	b.ReleaseAll()
	done(t, s, nil)
}

// The timeout and the context end a wait; a withdrawn exclusive request
// lets the shared requests queued behind it through.
func TestTimeoutAndCancel(t *testing.T) {
	m := NewManager()
	a, b, c := m.NewOwner(1), m.NewOwner(2), m.NewOwner(3)
	ctx := context.Background()
	must(t, a.Acquire(ctx, req(kt, Shared, Transaction), time.Second))
	x := acquireAsync(b, req(kt, Exclusive, Statement), 100*time.Millisecond)
	waitFor(t, m, 1)
	s := acquireAsync(c, req(kt, Shared, Transaction), 5*time.Second)
	done(t, x, ErrLockWaitTimeout)
	done(t, s, nil)

	cctx, cancel := context.WithCancel(ctx)
	ch := make(chan error, 1)
	go func() { ch <- b.Acquire(cctx, req(kt, Exclusive, Statement), time.Hour) }()
	waitFor(t, m, 1)
	cancel()
	done(t, ch, context.Canceled)
	st := m.Stats()
	if st.Timeouts != 1 || st.Cancelled != 1 || st.Waiting != 0 || b.Held() {
		t.Fatalf("stats %+v, b holds %v", st, b.held)
	}
}

// A request for several names is granted whole: the free name is not held
// while the other one is waited for.
func TestAllOrNothing(t *testing.T) {
	m := NewManager()
	a, b := m.NewOwner(1), m.NewOwner(2)
	ctx := context.Background()
	must(t, a.Acquire(ctx, req(ku, Shared, Transaction), time.Second))
	both := []Request{{kt, Exclusive, Statement}, {ku, Exclusive, Statement}}
	ch := acquireAsync(b, both, 5*time.Second)
	waitFor(t, m, 1)
	if h := m.Holders(kt); len(h) != 0 {
		t.Fatalf("t held while u is waited for: %v", h)
	}
	a.ReleaseAll()
	done(t, ch, nil)
	if b.Holds(kt) != Exclusive || b.Holds(ku) != Exclusive {
		t.Fatal("not both granted")
	}
}

func TestDeadlock(t *testing.T) {
	ctx := context.Background()
	t.Run("two upgrades", func(t *testing.T) {
		m := NewManager()
		a, b := m.NewOwner(1), m.NewOwner(2)
		must(t, a.Acquire(ctx, req(kt, Shared, Transaction), time.Second))
		must(t, b.Acquire(ctx, req(ku, Shared, Transaction), time.Second))
		x := acquireAsync(a, req(ku, Exclusive, Statement), 5*time.Second)
		waitFor(t, m, 1)
		if err := b.Acquire(ctx, req(kt, Exclusive, Statement), 5*time.Second); !errors.Is(err, ErrDeadlock) {
			t.Fatalf("b: %v, want deadlock", err)
		}
		b.ReleaseAll() // the victim's transaction ends
		done(t, x, nil)
	})
	t.Run("shared behind pending exclusive", func(t *testing.T) {
		// a uses t in a transaction; b's DDL on t and u waits for a; a then
		// reads u, behind b's pending request: a cycle.
		m := NewManager()
		a, b := m.NewOwner(1), m.NewOwner(2)
		must(t, a.Acquire(ctx, req(kt, Shared, Transaction), time.Second))
		x := acquireAsync(b, []Request{{kt, Exclusive, Statement}, {ku, Exclusive, Statement}}, 5*time.Second)
		waitFor(t, m, 1)
		if err := a.Acquire(ctx, req(ku, Shared, Transaction), 5*time.Second); !errors.Is(err, ErrDeadlock) {
			t.Fatalf("a: %v, want deadlock", err)
		}
		a.ReleaseAll()
		done(t, x, nil)
		if m.Stats().Deadlocks != 1 {
			t.Fatalf("stats %+v", m.Stats())
		}
	})
	t.Run("no false deadlock", func(t *testing.T) {
		// c waits behind b's pending exclusive request, which waits for a;
		// a is not waiting: no cycle.
		m := NewManager()
		a, b, c := m.NewOwner(1), m.NewOwner(2), m.NewOwner(3)
		must(t, a.Acquire(ctx, req(kt, Shared, Transaction), time.Second))
		must(t, c.Acquire(ctx, req(ku, Shared, Transaction), time.Second))
		x := acquireAsync(b, req(kt, Exclusive, Statement), 5*time.Second)
		waitFor(t, m, 1)
		s := acquireAsync(c, req(kt, Shared, Transaction), 5*time.Second)
		waitFor(t, m, 2)
		blockedNow(t, s)
		a.ReleaseAll()
		done(t, x, nil)
		b.ReleaseAll()
		done(t, s, nil)
	})
}

// Many owners taking and giving back shared and exclusive locks on two
// names: exclusive holders are alone, and everything ends released.
func TestConcurrentExclusion(t *testing.T) {
	m := NewManager()
	var inX [2]int32
	var users [2]int32
	var errs = make(chan error, 64)
	keys := []Key{kt, ku}
	for g := 0; g < 8; g++ {
		go func(g int) {
			o := m.NewOwner(uint64(g + 1))
			for i := 0; i < 300; i++ {
				k := (g + i) % 2
				mode := Shared
				if i%7 == 0 {
					mode = Exclusive
				}
				if err := o.Acquire(context.Background(), req(keys[k], mode, Statement), 5*time.Second); err != nil {
					errs <- err
					return
				}
				m.mu.Lock()
				if mode == Exclusive {
					inX[k]++
					if inX[k] != 1 || users[k] != 0 {
						m.mu.Unlock()
						errs <- errors.New("exclusive lock not alone")
						return
					}
				} else {
					users[k]++
					if inX[k] != 0 {
						m.mu.Unlock()
						errs <- errors.New("shared lock beside an exclusive one")
						return
					}
				}
				m.mu.Unlock()
				m.mu.Lock()
				if mode == Exclusive {
					inX[k]--
				} else {
					users[k]--
				}
				m.mu.Unlock()
				o.Release(Statement)
			}
			errs <- nil
		}(g)
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if st := m.Stats(); st.Names != 0 || st.Waiting != 0 {
		t.Fatalf("left behind: %+v", st)
	}
}

// TestModeIncludes: which mode's lock gives all another's does.
func TestModeIncludes(t *testing.T) {
	for _, c := range []struct {
		m, o Mode
		want bool
	}{
		{SharedRead, SharedRead, true},
		{SharedWrite, SharedRead, true},
		{SharedRead, SharedWrite, false},
		{SharedReadOnly, SharedRead, true},
		{SharedWrite, SharedReadOnly, false},
		{SharedReadOnly, SharedWrite, false},
		{SharedNoReadWrite, SharedWrite, true},
		{SharedNoReadWrite, SharedReadOnly, true},
		{SharedReadOnly, SharedNoReadWrite, false},
		{Exclusive, SharedNoReadWrite, true},
		{SharedNoReadWrite, Exclusive, false},
	} {
		if got := c.m.Includes(c.o); got != c.want {
			t.Errorf("%v.Includes(%v) = %v, want %v", c.m, c.o, got, c.want)
		}
	}
}
