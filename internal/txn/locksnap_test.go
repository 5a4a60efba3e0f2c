package txn

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// snapString renders a snapshot in a fixed order: one line per lock
// ("trx key mode GRANTED|WAITING") and one per wait ("waiter -> blocker").
func snapString(s LockSnapshot, names map[uint64]string) string {
	line := func(l LockInfo) string {
		st := "GRANTED"
		if l.Waiting {
			st = "WAITING"
		}
		return fmt.Sprintf("%s %s %d %s", names[l.Trx], l.Key, l.Mode, st)
	}
	var out []string
	for _, l := range s.Locks {
		out = append(out, line(l))
	}
	for _, w := range s.Waits {
		out = append(out, line(s.Locks[w.Waiter])+" -> "+line(s.Locks[w.Blocker]))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// TestLockSnapshot: Snapshot lists every granted lock, every waiting
// request (an insert intention only while it waits), the owner set with
// SetThread, the id once assigned, and who waits for whom — holders in a
// conflicting mode and conflicting waiters queued ahead; after the
// releases nothing is left.
func TestLockSnapshot(t *testing.T) {
	forEachShards(t, func(t *testing.T, shards int) {
		lm := NewLockManager(LockConfig{Shards: shards})
		s := NewSys()
		a, b, c := s.Begin(), s.Begin(), s.Begin()
		a.SetThread(7)
		if got := lm.Snapshot(); len(got.Locks) != 0 || len(got.Waits) != 0 {
			t.Fatalf("empty table: %+v", got)
		}
		idA := a.AssignID()
		names := map[uint64]string{idA: "a", TrxDisplayID(b): "b", TrxDisplayID(c): "c"}
		if TrxDisplayID(b) < trxNoIDBase || TrxDisplayID(b) == TrxDisplayID(c) {
			t.Fatalf("display ids of trxs without an id: %d %d", TrxDisplayID(b), TrxDisplayID(c))
		}
		mustLock(t, lm, a, "r1", LockX)
		mustLock(t, lm, a, "r2", LockS)
		mustLock(t, lm, b, "r2", LockS)
		lm.LockGap(a, "g1", LockGapX)
		if err := lm.Lock(bg, b, "g0", LockInsertIntention, 0); err != nil {
			t.Fatal(err) // granted, not held: not in the snapshot
		}
		ii := lockAsync(t, lm, b, "g1", LockInsertIntention, -1) // waits for a's gap
		rx := lockAsync(t, lm, c, "r1", LockS, -1)               // waits for a's X
		up := lockAsync(t, lm, b, "r2", LockX, -1)               // b's upgrade waits for a's S
		rs := lockAsync(t, lm, c, "r2", LockS, -1)               // behind b's X upgrade
		got := lm.Snapshot()
		want := strings.Join([]string{
			"a g1 4 GRANTED",
			"a r1 2 GRANTED",
			"a r2 1 GRANTED",
			"b g1 5 WAITING",
			"b g1 5 WAITING -> a g1 4 GRANTED",
			"b r2 1 GRANTED",
			"b r2 2 WAITING",
			"b r2 2 WAITING -> a r2 1 GRANTED",
			"c r1 1 WAITING",
			"c r1 1 WAITING -> a r1 2 GRANTED",
			"c r2 1 WAITING",
			"c r2 1 WAITING -> b r2 2 WAITING",
		}, "\n")
		if s := snapString(got, names); s != want {
			t.Fatalf("snapshot:\n%s\nwant:\n%s", s, want)
		}
		for _, l := range got.Locks {
			if wantTh := map[string]uint64{"a": 7}[names[l.Trx]]; l.Thread != wantTh {
				t.Fatalf("%s: thread %d, want %d", names[l.Trx], l.Thread, wantTh)
			}
		}
		lm.ReleaseAll(a)
		expectErr(t, ii, nil)
		expectErr(t, rx, nil)
		expectErr(t, up, nil)
		lm.ReleaseAll(b)
		expectErr(t, rs, nil)
		lm.ReleaseAll(c)
		if got := lm.Snapshot(); len(got.Locks) != 0 || len(got.Waits) != 0 {
			t.Fatalf("after release: %+v", got)
		}
	})
}

func mustLock(t *testing.T, lm *LockManager, tx *Trx, key string, mode LockMode) {
	t.Helper()
	if err := lm.Lock(bg, tx, key, mode, 0); err != nil {
		t.Fatalf("lock %s: %v", key, err)
	}
}
