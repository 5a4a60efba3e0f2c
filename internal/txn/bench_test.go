package txn

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var activeCounts = []int{10, 100, 1000, 10000}

// setupActive allocates 2n ids on both systems and finishes every other
// one, leaving n active transactions spread over the recent id range.
func setupActive(n int) (*Sys, *sortedSys) {
	s, b := NewSys(), newSortedSys()
	for i := 0; i < 2*n; i++ {
		t := s.Begin()
		t.AssignID()
		id := b.assign()
		if i%2 == 1 {
			t.Finish()
			b.finish(id)
		}
	}
	s.PurgeLimit()
	return s, b
}

var sinkView *ReadView
var sinkSorted *sortedView
var sinkBool bool

// BenchmarkReadViewCreate: open and close a read view (READ COMMITTED does
// this per statement) with n active read-write transactions.
func BenchmarkReadViewCreate(b *testing.B) {
	for _, n := range activeCounts {
		s, base := setupActive(n)
		b.Run(fmt.Sprintf("hybrid/active=%d", n), func(b *testing.B) {
			t := s.Begin()
			b.ReportAllocs()
			for b.Loop() {
				sinkView = t.ReadView()
				t.CloseReadView()
			}
		})
		b.Run(fmt.Sprintf("sorted/active=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v := base.openView()
				base.closeView(v)
				sinkSorted = v
			}
		})
	}
}

// BenchmarkReadViewCreateParallel: views opened and closed on every CPU
// while one extra goroutine commits transactions as fast as it can.
//
// rolling: the n active transactions are the n most recent (each commit
// finishes the oldest and starts a new one), as with n sessions running
// short transactions; the active ids stay in the bitmap.
// long: n transactions stay active for the whole run while the commits
// stream past them, so the hybrid set moves them to its long list; this is
// the hybrid's unfavourable case.
func BenchmarkReadViewCreateParallel(b *testing.B) {
	for _, shape := range []string{"rolling", "long"} {
		for _, n := range []int{100, 1000} {
			b.Run(fmt.Sprintf("hybrid/%s/active=%d", shape, n), func(b *testing.B) {
				s := NewSys()
				ring := make([]*Trx, n)
				for i := range ring {
					ring[i] = s.Begin()
					ring[i].AssignID()
				}
				i := 0
				step := func() {
					t := s.Begin()
					t.AssignID()
					if shape == "rolling" {
						ring[i].Finish()
						ring[i] = t
						i = (i + 1) % n
					} else {
						t.Finish()
					}
				}
				commits := churn(step)
				b.RunParallel(func(pb *testing.PB) {
					t := s.Begin()
					for pb.Next() {
						t.ReadView()
						t.CloseReadView()
					}
				})
				c := commits()
				b.ReportMetric(float64(c)/b.Elapsed().Seconds(), "commits/s")
				st := s.Stats()
				b.ReportMetric(100*float64(st.ViewBarrier)/float64(st.ViewsOpened), "barrier%")
			})
			b.Run(fmt.Sprintf("sorted/%s/active=%d", shape, n), func(b *testing.B) {
				base := newSortedSys()
				ring := make([]ID, n)
				for i := range ring {
					ring[i] = base.assign()
				}
				i := 0
				step := func() {
					id := base.assign()
					if shape == "rolling" {
						base.finish(ring[i])
						ring[i] = id
						i = (i + 1) % n
					} else {
						base.finish(id)
					}
				}
				commits := churn(step)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						base.closeView(base.openView())
					}
				})
				c := commits()
				b.ReportMetric(float64(c)/b.Elapsed().Seconds(), "commits/s")
			})
		}
	}
}

// churn runs step in a loop on its own goroutine until the returned
// function is called; that function returns the number of steps run.
func churn(step func()) func() int {
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				done <- n
				return
			default:
				step()
				n++
			}
		}
	}()
	return func() int { close(stop); return <-done }
}

// BenchmarkReadViewSees: one visibility check against a view taken with n
// active transactions; probe ids are uniform over the view's id range.
func BenchmarkReadViewSees(b *testing.B) {
	for _, n := range activeCounts {
		s, base := setupActive(n)
		hv := s.Begin().ReadView()
		sv := base.openView()
		rng := rand.New(rand.NewPCG(1, 2))
		probes := make([]ID, 4096)
		for i := range probes {
			probes[i] = 1 + rng.Uint64N(sv.up)
		}
		// both must agree
		for _, id := range probes {
			if hv.Sees(id) != sv.sees(id) {
				b.Fatalf("views disagree on %d", id)
			}
		}
		b.Run(fmt.Sprintf("hybrid/active=%d", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				sinkBool = hv.Sees(probes[i&4095])
				i++
			}
		})
		b.Run(fmt.Sprintf("sorted/active=%d", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				sinkBool = sv.sees(probes[i&4095])
				i++
			}
		})
	}
}

// BenchmarkLockAcquireRelease: one X row lock and its release per op.
// distinct: every goroutine locks its own keys (no conflicts), so the cost
// is the lock table itself and its latches. contended: all goroutines share
// 16 keys, so requests queue and waiters are woken by name.
func BenchmarkLockAcquireRelease(b *testing.B) {
	for _, variant := range []string{"distinct", "contended"} {
		for _, impl := range []struct {
			name   string
			shards int
		}{{"sharded", 0}, {"single", 1}} {
			for _, g := range []int{1, 64} {
				name := fmt.Sprintf("%s/goroutines=%d", impl.name, g)
				if variant == "contended" {
					name = fmt.Sprintf("%s/goroutines=%d/contended", impl.name, g)
				}
				if variant == "contended" && g == 1 {
					continue // one goroutine cannot contend with itself
				}
				b.Run(name, func(b *testing.B) {
					s := NewSys()
					lm := NewLockManager(LockConfig{Shards: impl.shards})
					// key tables are built before the timer starts
					keySets := make([][]string, g+1)
					for id := range keySets {
						keySets[id] = make([]string, 1024)
						for i := range keySets[id] {
							if variant == "contended" {
								keySets[id][i] = fmt.Sprintf("hot-%d", i%16)
							} else {
								keySets[id][i] = fmt.Sprintf("g%d-row-%d", id, i)
							}
						}
					}
					var gid atomic.Int64
					body := func(pb func() bool) {
						id := int(gid.Add(1)-1) % len(keySets)
						keys := keySets[id]
						t := s.Begin()
						rng := rand.New(rand.NewPCG(uint64(id), 3))
						for i := 0; pb(); i++ {
							k := keys[i&1023]
							if variant == "contended" {
								k = keys[rng.IntN(1024)]
							}
							if err := lm.Lock(bg, t, k, LockX, -1); err != nil {
								b.Error(err)
								return
							}
							lm.ReleaseAll(t)
						}
					}
					b.ReportAllocs()
					if g == 1 {
						body(b.Loop)
						return
					}
					b.SetParallelism((g + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
					b.ResetTimer()
					b.RunParallel(func(pb *testing.PB) { body(pb.Next) })
					st := lm.Stats()
					b.ReportMetric(100*float64(st.RowLockWaits)/float64(st.Requests), "wait%")
				})
			}
		}
	}
}

// BenchmarkLockScheduleSkewed compares CATS and FIFO grant order on a
// skewed (Zipf, s=1.1 over 1000 keys) workload: 32 sessions, each
// transaction X-locks 4 keys in random order, holds them for a short
// think time, and releases; deadlock victims and timeouts count as aborts.
// Reported: committed transactions/s, p99 transaction latency, abort share.
func BenchmarkLockScheduleSkewed(b *testing.B) {
	for _, p := range []struct {
		name string
		pol  SchedulePolicy
	}{{"fifo", FIFO}, {"cats", CATS}} {
		b.Run(p.name, func(b *testing.B) {
			s := NewSys()
			lm := NewLockManager(LockConfig{Policy: p.pol})
			keys := make([]string, 1000)
			for i := range keys {
				keys[i] = fmt.Sprintf("row-%d", i)
			}
			const sessions = 32
			var next atomic.Int64
			var commits, aborts atomic.Int64
			lat := make([][]time.Duration, sessions)
			var wg sync.WaitGroup
			start := time.Now()
			b.ResetTimer()
			for g := 0; g < sessions; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(g), 9))
					z := rand.NewZipf(rng, 1.1, 1, uint64(len(keys)-1))
					for next.Add(1) <= int64(b.N) {
						t0 := time.Now()
						tx := s.Begin()
						tx.AssignID()
						ok := true
						for j := 0; j < 4 && ok; j++ {
							if err := lm.Lock(bg, tx, keys[z.Uint64()], LockX, 50*time.Millisecond); err != nil {
								ok = false
							}
						}
						if ok {
							spin(2 * time.Microsecond)
						}
						lm.ReleaseAll(tx)
						tx.Finish()
						if ok {
							commits.Add(1)
							lat[g] = append(lat[g], time.Since(t0))
						} else {
							aborts.Add(1)
						}
					}
				}(g)
			}
			wg.Wait()
			el := time.Since(start)
			b.StopTimer()
			var all []time.Duration
			for _, l := range lat {
				all = append(all, l...)
			}
			slices.Sort(all)
			if len(all) > 0 {
				b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
			}
			b.ReportMetric(float64(commits.Load())/el.Seconds(), "commits/s")
			b.ReportMetric(100*float64(aborts.Load())/float64(commits.Load()+aborts.Load()), "abort%")
		})
	}
}

func spin(d time.Duration) {
	for t0 := time.Now(); time.Since(t0) < d; {
	}
}
