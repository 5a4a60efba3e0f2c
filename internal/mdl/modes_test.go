package mdl

import (
	"context"
	"testing"
	"time"
)

// MySQL's compatibility of the modes lockstep takes, for granted locks:
// reads and writes go together; LOCK TABLES ... READ lets reads through
// and holds writes; LOCK TABLES ... WRITE and DDL hold everything.
func TestModeCompatibility(t *testing.T) {
	all := []Mode{SharedRead, SharedWrite, SharedReadOnly, SharedNoReadWrite, Exclusive}
	waits := map[[2]Mode]bool{}
	for _, held := range all {
		for _, asked := range all {
			w := held == Exclusive || asked == Exclusive || held == SharedNoReadWrite || asked == SharedNoReadWrite
			if (held == SharedReadOnly && asked == SharedWrite) || (held == SharedWrite && asked == SharedReadOnly) {
				w = true
			}
			waits[[2]Mode{held, asked}] = w
		}
	}
	for _, held := range all {
		for _, asked := range all {
			t.Run(held.String()+"-"+asked.String(), func(t *testing.T) {
				m := NewManager()
				a, b := m.NewOwner(1), m.NewOwner(2)
				must(t, a.Acquire(context.Background(), req(kt, held, Explicit), time.Second))
				ch := acquireAsync(b, req(kt, asked, Statement), 5*time.Second)
				if !waits[[2]Mode{held, asked}] {
					done(t, ch, nil)
					return
				}
				waitFor(t, m, 1)
				blockedNow(t, ch)
				a.ReleaseAll()
				done(t, ch, nil)
				if got := m.Holders(kt); len(got) != 1 || got[2] != asked {
					t.Fatalf("holders %v", got)
				}
			})
		}
	}
}

// Pending requests queue the requests MySQL queues behind them: a waiting
// LOCK TABLES ... WRITE holds new reads back, a waiting write holds a new
// LOCK TABLES ... READ back; a name the owner holds already does not
// queue (its read turns into a write behind a waiting DDL).
func TestPendingQueues(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		held, pending, asked Mode
		waits                bool
	}{
		{SharedRead, SharedNoReadWrite, SharedRead, true},
		{SharedRead, SharedNoReadWrite, SharedWrite, true},
		{SharedReadOnly, SharedWrite, SharedReadOnly, true},
		{SharedReadOnly, SharedWrite, SharedRead, false},
		{SharedRead, Exclusive, SharedWrite, true},
		{SharedRead, Exclusive, SharedNoReadWrite, true},
	}
	for _, c := range cases {
		t.Run(c.held.String()+"/"+c.pending.String()+"/"+c.asked.String(), func(t *testing.T) {
			m := NewManager()
			a, p, b := m.NewOwner(1), m.NewOwner(2), m.NewOwner(3)
			must(t, a.Acquire(ctx, req(kt, c.held, Transaction), time.Second))
			pch := acquireAsync(p, req(kt, c.pending, Statement), 5*time.Second)
			waitFor(t, m, 1)
			ch := acquireAsync(b, req(kt, c.asked, Statement), 5*time.Second)
			if !c.waits {
				done(t, ch, nil)
				b.ReleaseAll()
			} else {
				waitFor(t, m, 2)
				blockedNow(t, ch)
			}
			a.ReleaseAll()
			done(t, pch, nil)
			p.ReleaseAll()
			if c.waits {
				done(t, ch, nil)
			}
		})
	}
	// The holder of a read takes the write without queueing behind DDL.
	m := NewManager()
	a, ddl := m.NewOwner(1), m.NewOwner(2)
	must(t, a.Acquire(ctx, req(kt, SharedRead, Transaction), time.Second))
	xch := acquireAsync(ddl, req(kt, Exclusive, Statement), 5*time.Second)
	waitFor(t, m, 1)
	must(t, a.Acquire(ctx, req(kt, SharedWrite, Transaction), time.Second))
	if !a.TryShared(kt, SharedWrite, Transaction) || a.Holds(kt) != SharedWrite {
		t.Fatalf("a holds %v", a.Holds(kt))
	}
	a.Release(Transaction)
	done(t, xch, nil)
}

// Explicit locks (LOCK TABLES) outlive the statement's and the
// transaction's; a statement's use of a table they cover adds nothing to
// the lock table; Snapshot shows one entry per mode held.
func TestExplicitDuration(t *testing.T) {
	ctx := context.Background()
	m := NewManager()
	a, b := m.NewOwner(1), m.NewOwner(2)
	must(t, a.Acquire(ctx, req(kt, SharedNoReadWrite, Explicit), time.Second))
	must(t, a.Acquire(ctx, req(kt, SharedWrite, Transaction), time.Second))
	if !a.TryShared(kt, SharedRead, Transaction) {
		t.Fatal("own LOCK TABLES ... WRITE refused a read")
	}
	a.ReleaseEnded()
	if b.TryShared(kt, SharedRead, Transaction) {
		t.Fatal("a read went through LOCK TABLES ... WRITE after the statement ended")
	}
	if !a.HeldFor(Explicit) || a.HeldFor(Transaction) {
		t.Fatal("durations")
	}
	must(t, a.Acquire(ctx, req(ku, SharedReadOnly, Explicit), time.Second))
	must(t, b.Acquire(ctx, req(ku, SharedRead, Transaction), time.Second))
	snap := m.Snapshot()
	want := []LockInfo{{Key: kt, Owner: 1, Mode: SharedNoReadWrite}, {Key: ku, Owner: 1, Mode: SharedReadOnly}, {Key: ku, Owner: 2, Mode: SharedRead}}
	if len(snap) != len(want) {
		t.Fatalf("snapshot %v", snap)
	}
	for i := range want {
		if snap[i] != want[i] {
			t.Fatalf("snapshot %v, want %v", snap, want)
		}
	}
	a.Release(Explicit)
	b.ReleaseAll()
	if !b.TryShared(kt, SharedWrite, Transaction) {
		t.Fatal("UNLOCK left the name locked")
	}
	b.ReleaseAll()
	if st := m.Stats(); st.Names != 0 || st.Waiting != 0 {
		t.Fatalf("left behind: %+v", st)
	}
}
