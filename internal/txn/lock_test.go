package txn

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

var bg = context.Background()

// waitUntil polls cond for up to 5s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// waiters returns how many requests wait on key.
func waiters(lm *LockManager, key string) int {
	sh := &lm.shards[lm.shardOf(key)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if q := sh.queues[key]; q != nil {
		return len(q.waiting)
	}
	return 0
}

// lockAsync starts a Lock in a goroutine and waits until it is queued.
func lockAsync(t *testing.T, lm *LockManager, tx *Trx, key string, mode LockMode, timeout time.Duration) <-chan error {
	t.Helper()
	before := waiters(lm, key)
	ch := make(chan error, 1)
	go func() { ch <- lm.Lock(bg, tx, key, mode, timeout) }()
	waitUntil(t, "request to queue", func() bool { return waiters(lm, key) > before })
	return ch
}

func expectErr(t *testing.T, ch <-chan error, want error) {
	t.Helper()
	select {
	case err := <-ch:
		if !errors.Is(err, want) {
			t.Fatalf("got %v, want %v", err, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no result, want %v", want)
	}
}

func expectBlocked(t *testing.T, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("request finished (%v) but should still wait", err)
	case <-time.After(20 * time.Millisecond):
	}
}

func forEachShards(t *testing.T, f func(t *testing.T, shards int)) {
	for _, n := range []int{1, 0} {
		t.Run(fmt.Sprintf("shards=%d", n), func(t *testing.T) { f(t, n) })
	}
}

func TestLockCompatibility(t *testing.T) {
	cases := []struct {
		held, req LockMode
		grant     bool
	}{
		{LockS, LockS, true},
		{LockS, LockX, false},
		{LockX, LockS, false},
		{LockX, LockX, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("held=%d req=%d", c.held, c.req), func(t *testing.T) {
			s, lm := NewSys(), NewLockManager(LockConfig{})
			a, b := s.Begin(), s.Begin()
			if err := lm.Lock(bg, a, "k", c.held, 0); err != nil {
				t.Fatal(err)
			}
			err := lm.Lock(bg, b, "k", c.req, 0)
			if c.grant && err != nil || !c.grant && !errors.Is(err, ErrLockWaitTimeout) {
				t.Fatalf("got %v, grant=%v", err, c.grant)
			}
			if err := lm.Lock(bg, b, "other", c.req, 0); err != nil {
				t.Fatalf("different key: %v", err)
			}
		})
	}
}

func TestLockReentrant(t *testing.T) {
	cases := []struct {
		first, second LockMode
	}{{LockX, LockX}, {LockX, LockS}, {LockS, LockS}, {LockS, LockX}}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d then %d", c.first, c.second), func(t *testing.T) {
			s, lm := NewSys(), NewLockManager(LockConfig{})
			a, b := s.Begin(), s.Begin()
			if err := lm.Lock(bg, a, "k", c.first, 0); err != nil {
				t.Fatal(err)
			}
			if err := lm.Lock(bg, a, "k", c.second, 0); err != nil {
				t.Fatalf("re-entrant request: %v", err)
			}
			if len(a.lk.held) != 1 {
				t.Fatalf("held %d entries, want 1", len(a.lk.held))
			}
			want := max(c.first, c.second)
			if err := lm.Lock(bg, b, "k", LockS, 0); (err == nil) != (want == LockS) {
				t.Fatalf("other trx S request: %v with effective mode %d", err, want)
			}
		})
	}
}

func TestLockUpgrade(t *testing.T) {
	forEachShards(t, func(t *testing.T, shards int) {
		s, lm := NewSys(), NewLockManager(LockConfig{Shards: shards})
		a, b, c := s.Begin(), s.Begin(), s.Begin()
		must(t, lm.Lock(bg, a, "k", LockS, 0))
		must(t, lm.Lock(bg, b, "k", LockS, 0))
		// c queues for X behind the two S holders
		cx := lockAsync(t, lm, c, "k", LockX, -1)
		// a's upgrade waits for b only, and goes ahead of c
		ax := lockAsync(t, lm, a, "k", LockX, -1)
		expectBlocked(t, ax)
		lm.ReleaseAll(b)
		expectErr(t, ax, nil)
		expectBlocked(t, cx)
		lm.ReleaseAll(a)
		expectErr(t, cx, nil)
	})
}

func TestLockUpgradeDeadlock(t *testing.T) {
	forEachShards(t, func(t *testing.T, shards int) {
		s, lm := NewSys(), NewLockManager(LockConfig{Shards: shards})
		a, b := s.Begin(), s.Begin()
		must(t, lm.Lock(bg, a, "k", LockS, 0))
		must(t, lm.Lock(bg, b, "k", LockS, 0))
		ax := lockAsync(t, lm, a, "k", LockX, -1)
		if err := lm.Lock(bg, b, "k", LockX, -1); !errors.Is(err, ErrDeadlock) {
			t.Fatalf("second upgrader: %v, want deadlock", err)
		}
		expectBlocked(t, ax) // b still holds S
		lm.ReleaseAll(b)
		expectErr(t, ax, nil)
		if st := lm.Stats(); st.Deadlocks != 1 {
			t.Fatalf("deadlocks %d", st.Deadlocks)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// grantOrder queues one X request per trx behind a holder, releases the
// holder, and returns the order in which the waiters were granted.
func grantOrder(t *testing.T, lm *LockManager, holder *Trx, ws []*Trx, key string) []int {
	t.Helper()
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i, w := range ws {
		before := waiters(lm, key)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := lm.Lock(bg, w, key, LockX, -1); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			lm.ReleaseAll(w)
		}()
		waitUntil(t, "waiter to queue", func() bool { return waiters(lm, key) > before })
	}
	lm.ReleaseAll(holder)
	wg.Wait()
	return order
}

func TestLockFIFOOrder(t *testing.T) {
	forEachShards(t, func(t *testing.T, shards int) {
		s, lm := NewSys(), NewLockManager(LockConfig{Shards: shards, Policy: FIFO})
		h := s.Begin()
		must(t, lm.Lock(bg, h, "k", LockX, 0))
		ws := []*Trx{s.Begin(), s.Begin(), s.Begin(), s.Begin()}
		order := grantOrder(t, lm, h, ws, "k")
		for i, o := range order {
			if o != i {
				t.Fatalf("grant order %v, want arrival order", order)
			}
		}
	})
}

func TestLockCATSOrder(t *testing.T) {
	forEachShards(t, func(t *testing.T, shards int) {
		s, lm := NewSys(), NewLockManager(LockConfig{Shards: shards, Policy: FIFO})
		h := s.Begin()
		must(t, lm.Lock(bg, h, "k", LockX, 0))
		ws := []*Trx{s.Begin(), s.Begin(), s.Begin()}
		// ws[2] holds "hot", which two other transactions wait for; ws[1]
		// holds "warm" with one waiter; ws[0] blocks nobody.
		must(t, lm.Lock(bg, ws[2], "hot", LockX, 0))
		must(t, lm.Lock(bg, ws[1], "warm", LockX, 0))
		var blocked []<-chan error
		for _, key := range []string{"hot", "hot", "warm"} {
			blocked = append(blocked, lockAsync(t, lm, s.Begin(), key, LockS, -1))
		}
		if w := ws[2].lk.blocking.Load(); w != 2 {
			t.Fatalf("weight of hot holder %d, want 2", w)
		}
		lm.SetPolicy(CATS)
		if lm.Stats().Policy != CATS {
			t.Fatal("policy not switched")
		}
		order := grantOrder(t, lm, h, ws, "k")
		if fmt.Sprint(order) != "[2 1 0]" {
			t.Fatalf("CATS grant order %v, want [2 1 0]", order)
		}
		for _, ch := range blocked {
			expectErr(t, ch, nil)
		}
	})
}

func TestLockNoOvertaking(t *testing.T) {
	for _, p := range []SchedulePolicy{FIFO, CATS} {
		t.Run(fmt.Sprint("policy=", p), func(t *testing.T) {
			s, lm := NewSys(), NewLockManager(LockConfig{Policy: p})
			a, b, c := s.Begin(), s.Begin(), s.Begin()
			must(t, lm.Lock(bg, a, "k", LockS, 0))
			bx := lockAsync(t, lm, b, "k", LockX, -1)
			// S is compatible with the holder but must queue behind b's X
			if err := lm.Lock(bg, c, "k", LockS, 0); !errors.Is(err, ErrLockWaitTimeout) {
				t.Fatalf("S overtook a queued X: %v", err)
			}
			cs := lockAsync(t, lm, c, "k", LockS, -1)
			// a already holds the lock: its request is granted at once
			must(t, lm.Lock(bg, a, "k", LockS, 0))
			lm.ReleaseAll(a)
			expectErr(t, bx, nil)
			expectBlocked(t, cs)
			lm.ReleaseAll(b)
			expectErr(t, cs, nil)
		})
	}
}

func TestLockDeadlock(t *testing.T) {
	for _, n := range []int{2, 3, 5} {
		t.Run(fmt.Sprintf("trxs=%d", n), func(t *testing.T) {
			forEachShards(t, func(t *testing.T, shards int) {
				s, lm := NewSys(), NewLockManager(LockConfig{Shards: shards})
				trxs := make([]*Trx, n)
				for i := range trxs {
					trxs[i] = s.Begin()
					must(t, lm.Lock(bg, trxs[i], fmt.Sprint("k", i), LockX, 0))
				}
				// trx i waits for key i+1; the last request closes the cycle
				var chans []<-chan error
				for i := 0; i < n-1; i++ {
					chans = append(chans, lockAsync(t, lm, trxs[i], fmt.Sprint("k", i+1), LockX, -1))
				}
				if err := lm.Lock(bg, trxs[n-1], "k0", LockX, 5*time.Second); !errors.Is(err, ErrDeadlock) {
					t.Fatalf("requester closing the cycle: %v, want ErrDeadlock", err)
				}
				for _, ch := range chans {
					expectBlocked(t, ch)
				}
				// the victim rolls back: the others proceed in turn
				lm.ReleaseAll(trxs[n-1])
				for i := n - 2; i >= 0; i-- {
					expectErr(t, chans[i], nil)
					lm.ReleaseAll(trxs[i])
				}
				st := lm.Stats()
				if st.Deadlocks != 1 || st.RowLockCurrent != 0 {
					t.Fatalf("stats %+v", st)
				}
			})
		})
	}
}

func TestLockNoFalseDeadlock(t *testing.T) {
	// a chain (not a cycle): c waits for b, b waits for a
	s, lm := NewSys(), NewLockManager(LockConfig{})
	a, b, c := s.Begin(), s.Begin(), s.Begin()
	must(t, lm.Lock(bg, a, "ka", LockX, 0))
	must(t, lm.Lock(bg, b, "kb", LockX, 0))
	bw := lockAsync(t, lm, b, "ka", LockX, -1)
	cw := lockAsync(t, lm, c, "kb", LockX, -1)
	// shared holders of one key are not a cycle either
	d, e := s.Begin(), s.Begin()
	must(t, lm.Lock(bg, d, "s", LockS, 0))
	must(t, lm.Lock(bg, e, "s", LockS, 0))
	lm.ReleaseAll(a)
	expectErr(t, bw, nil)
	lm.ReleaseAll(b)
	expectErr(t, cw, nil)
	if st := lm.Stats(); st.Deadlocks != 0 {
		t.Fatalf("false deadlock: %+v", st)
	}
}

func TestLockTimeoutAndCancel(t *testing.T) {
	forEachShards(t, func(t *testing.T, shards int) {
		s, lm := NewSys(), NewLockManager(LockConfig{Shards: shards})
		a, b, c := s.Begin(), s.Begin(), s.Begin()
		must(t, lm.Lock(bg, a, "k", LockX, 0))
		must(t, lm.Lock(bg, b, "held", LockX, 0))

		start := time.Now()
		if err := lm.Lock(bg, b, "k", LockX, 30*time.Millisecond); !errors.Is(err, ErrLockWaitTimeout) {
			t.Fatalf("got %v, want timeout", err)
		}
		if d := time.Since(start); d < 30*time.Millisecond {
			t.Fatalf("timed out after %v", d)
		}
		if err := lm.Lock(bg, b, "k", LockX, 0); !errors.Is(err, ErrLockWaitTimeout) {
			t.Fatalf("timeout 0: %v", err)
		}
		ctx, cancel := context.WithCancel(bg)
		ch := make(chan error, 1)
		go func() { ch <- lm.Lock(ctx, b, "k", LockS, -1) }()
		waitUntil(t, "waiter", func() bool { return waiters(lm, "k") == 1 })
		cancel()
		expectErr(t, ch, context.Canceled)
		if waiters(lm, "k") != 0 {
			t.Fatal("withdrawn request still queued")
		}
		// b keeps what it held: c cannot take it
		if err := lm.Lock(bg, c, "held", LockS, 0); !errors.Is(err, ErrLockWaitTimeout) {
			t.Fatalf("lock held before the timeout was lost: %v", err)
		}
		lm.ReleaseAll(a)
		must(t, lm.Lock(bg, b, "k", LockX, 0))
		st := lm.Stats()
		if st.LockWaitTimeouts != 3 || st.Cancels != 1 || st.RowLockWaits != 2 || st.RowLockCurrent != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestReleaseAllWakesWaiters(t *testing.T) {
	forEachShards(t, func(t *testing.T, shards int) {
		s, lm := NewSys(), NewLockManager(LockConfig{Shards: shards})
		h := s.Begin()
		keys := []string{"a", "b", "c", "d", "e"}
		for _, k := range keys {
			must(t, lm.Lock(bg, h, k, LockX, 0))
		}
		var chans []<-chan error
		for _, k := range keys {
			for i := 0; i < 3; i++ { // three S waiters per key, all granted together
				chans = append(chans, lockAsync(t, lm, s.Begin(), k, LockS, -1))
			}
		}
		if st := lm.Stats(); st.RowLockCurrent != int64(len(chans)) {
			t.Fatalf("current waits %d", st.RowLockCurrent)
		}
		lm.ReleaseAll(h)
		for _, ch := range chans {
			expectErr(t, ch, nil)
		}
		if len(h.lk.held) != 0 {
			t.Fatal("held list not cleared")
		}
	})
}

func TestLockStats(t *testing.T) {
	s, lm := NewSys(), NewLockManager(LockConfig{})
	a, b := s.Begin(), s.Begin()
	must(t, lm.Lock(bg, a, "k", LockX, 0))
	must(t, lm.Lock(bg, a, "k", LockX, 0))
	ch := lockAsync(t, lm, b, "k", LockX, -1)
	time.Sleep(5 * time.Millisecond)
	lm.ReleaseAll(a)
	expectErr(t, ch, nil)
	lm.ReleaseAll(b)
	st := lm.Stats()
	want := LockStats{Requests: 3, ImmediateGrants: 2, RowLockWaits: 1, Releases: 2}
	if st.Requests != want.Requests || st.ImmediateGrants != want.ImmediateGrants ||
		st.RowLockWaits != want.RowLockWaits || st.Releases != want.Releases || st.RowLockCurrent != 0 {
		t.Fatalf("stats %+v", st)
	}
	if st.RowLockTimeNs < uint64(5*time.Millisecond) || st.RowLockTimeMaxNs != st.RowLockTimeNs {
		t.Fatalf("wait time %d max %d", st.RowLockTimeNs, st.RowLockTimeMaxNs)
	}
	for i := range lm.shards {
		if n := len(lm.shards[i].queues); n != 0 {
			t.Fatalf("shard %d keeps %d empty queues", i, n)
		}
	}
}

// TestLockStress runs random transactions over a small key set and checks
// mutual exclusion; deadlocks and timeouts are allowed, hangs and broken
// exclusion are not.
func TestLockStress(t *testing.T) {
	for _, p := range []SchedulePolicy{FIFO, CATS} {
		t.Run(fmt.Sprint("policy=", p), func(t *testing.T) {
			forEachShards(t, func(t *testing.T, shards int) {
				s, lm := NewSys(), NewLockManager(LockConfig{Shards: shards, Policy: p})
				const keys = 8
				var readers, writers [keys]atomic.Int32
				var wg sync.WaitGroup
				var commits, aborts atomic.Int64
				for g := 0; g < 16; g++ {
					wg.Add(1)
					go func(seed uint64) {
						defer wg.Done()
						rng := rand.New(rand.NewPCG(seed, 1))
						for i := 0; i < 150; i++ {
							tx := s.Begin()
							type hold struct {
								k    int
								mode LockMode
							}
							var mine []hold
							ok := true
							for j := 0; j < 3 && ok; j++ {
								k := rng.IntN(keys)
								mode := LockS
								if rng.IntN(2) == 0 {
									mode = LockX
								}
								err := lm.Lock(bg, tx, fmt.Sprint("k", k), mode, 200*time.Millisecond)
								switch {
								case err == nil:
									already := false
									for h := range mine {
										if mine[h].k == k {
											already = true
											if mode == LockX && mine[h].mode == LockS {
												readers[k].Add(-1)
												writers[k].Add(1)
												mine[h].mode = LockX
											}
										}
									}
									if !already {
										if mode == LockX {
											writers[k].Add(1)
										} else {
											readers[k].Add(1)
										}
										mine = append(mine, hold{k, mode})
									}
									if w, r := writers[k].Load(), readers[k].Load(); w > 1 || w == 1 && r > 0 {
										t.Errorf("key %d: %d writers, %d readers", k, w, r)
									}
								case errors.Is(err, ErrDeadlock), errors.Is(err, ErrLockWaitTimeout):
									ok = false
								default:
									t.Error(err)
									ok = false
								}
							}
							for _, h := range mine {
								if h.mode == LockX {
									writers[h.k].Add(-1)
								} else {
									readers[h.k].Add(-1)
								}
							}
							lm.ReleaseAll(tx)
							tx.Finish()
							if ok {
								commits.Add(1)
							} else {
								aborts.Add(1)
							}
						}
					}(uint64(g))
				}
				wg.Wait()
				st := lm.Stats()
				if st.RowLockCurrent != 0 {
					t.Fatalf("current waits %d after the run", st.RowLockCurrent)
				}
				if commits.Load() == 0 {
					t.Fatal("nothing committed")
				}
				t.Logf("commits %d aborts %d deadlocks %d timeouts %d", commits.Load(), aborts.Load(), st.Deadlocks, st.LockWaitTimeouts)
			})
		})
	}
}

func TestLockUpgradeNoWaitKeepsShared(t *testing.T) {
	s, lm := NewSys(), NewLockManager(LockConfig{})
	a, b, c := s.Begin(), s.Begin(), s.Begin()
	must(t, lm.Lock(bg, a, "k", LockS, 0))
	must(t, lm.Lock(bg, b, "k", LockS, 0))
	if err := lm.Lock(bg, a, "k", LockX, 0); !errors.Is(err, ErrLockWaitTimeout) {
		t.Fatalf("upgrade with timeout 0: %v", err)
	}
	if err := lm.Lock(bg, a, "k", LockX, 20*time.Millisecond); !errors.Is(err, ErrLockWaitTimeout) {
		t.Fatalf("upgrade with timeout: %v", err)
	}
	// a still holds S: an X request from c cannot be granted
	if err := lm.Lock(bg, c, "k", LockX, 0); !errors.Is(err, ErrLockWaitTimeout) {
		t.Fatalf("S lost after failed upgrade: %v", err)
	}
	lm.ReleaseAll(b)
	must(t, lm.Lock(bg, a, "k", LockX, 0))
}

// TestLockShardPadding: each shard (latch and map) fills one 64-byte cache
// line, so neighbouring shards do not share one.
func TestLockShardPadding(t *testing.T) {
	if got := unsafe.Sizeof(lockShard{}); got != 64 {
		t.Fatalf("sizeof(lockShard) = %d, want 64", got)
	}
}
