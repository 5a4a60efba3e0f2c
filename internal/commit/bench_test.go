package commit

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lockstep/internal/certify"
)

// BenchmarkCommit runs the pipeline against the fake log with a simulated
// 1 ms fsync, with targeted and broadcast wake-ups side by side, at 1, 16
// and 64 committing goroutines. Each goroutine commits back to back
// (a closed loop). Reported: commits/s, txn/group (transactions per
// durability wait), wake-eff (wake-ups that found their transaction done /
// all wake-ups) and wakeups/commit.
func BenchmarkCommit(b *testing.B) {
	benchCommit(b, time.Millisecond)
}

// BenchmarkCommitNoSync is BenchmarkCommit with a log that is durable at
// once (sync_binlog=0): the pipeline's own CPU cost, where wasted wake-ups
// show up as lost throughput.
func BenchmarkCommitNoSync(b *testing.B) {
	benchCommit(b, 0)
}

func benchCommit(b *testing.B, fsync time.Duration) {
	for _, mode := range []WakeupMode{Targeted, Broadcast} {
		for _, g := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("wakeup=%v/goroutines=%d", mode, g), func(b *testing.B) {
				log := newFakeLog(fsync)
				cert, err := certify.NewStatic(certify.DefaultConfig())
				if err != nil {
					b.Fatal(err)
				}
				p, err := New(Options{Log: log, Certifier: cert, Wakeup: mode})
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				// Writesets drawn in advance: 4 to 10 keys out of 1M rows.
				sets := make([][][]uint64, g)
				for i := range sets {
					r := rand.New(rand.NewPCG(uint64(i), 1))
					sets[i] = make([][]uint64, 256)
					for j := range sets[i] {
						ws := make([]uint64, 4+r.IntN(7))
						for k := range ws {
							ws[k] = mix(r.Uint64N(1 << 20))
						}
						sets[i][j] = ws
					}
				}
				encode := func(pos Position) ([]byte, error) { return payload(pos.Seq, pos.LastCommitted), nil }
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				for i := range g {
					wg.Add(1)
					go func() {
						defer wg.Done()
						tx := &Txn{Encode: encode}
						for j := 0; next.Add(1) <= int64(b.N); j++ {
							tx.Writeset = sets[i][j%len(sets[i])]
							if _, err := p.Commit(tx); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				s := p.Stats()
				if s.Commits != int64(b.N) {
					b.Fatalf("%d commits for b.N=%d", s.Commits, b.N)
				}
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "commits/s")
				b.ReportMetric(s.MeanGroupSize(), "txn/group")
				b.ReportMetric(s.WakeEfficiency(), "wake-eff")
				b.ReportMetric(float64(s.Wakeups)/float64(b.N), "wakeups/commit")
			})
		}
	}
}
