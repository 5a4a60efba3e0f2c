// Command fsyncoverlap measures whether the device under a directory
// serves concurrent fdatasync calls in parallel: 1 to 4 goroutines each
// write a 4 KiB page into a preallocated file and fdatasync it, in a loop,
// for 4 s per setting; it prints syncs per second and the latency
// percentiles of write + fdatasync. docs/benchmarks/notes.md, "The cost of
// durability", uses it.
//
//	go run ./scripts/fsyncoverlap [DIR]     # DIR: default the current one
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	name := filepath.Join(dir, "fsyncoverlap.dat")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.Remove(name)
	const size = 64 << 20
	if _, err := f.WriteAt(make([]byte, size), 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = f.Sync()
	for _, n := range []int{1, 2, 3, 4, 1, 2} {
		var off, ops atomic.Int64
		var mu sync.Mutex
		var lats []time.Duration
		var wg sync.WaitGroup
		stop := time.Now().Add(4 * time.Second)
		for g := 0; g < n; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				page := make([]byte, 4096)
				var mine []time.Duration
				for time.Now().Before(stop) {
					t0 := time.Now()
					_, _ = f.WriteAt(page, off.Add(4096)%(size-4096))
					_ = syscall.Fdatasync(int(f.Fd()))
					mine = append(mine, time.Since(t0))
					ops.Add(1)
				}
				mu.Lock()
				lats = append(lats, mine...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
		fmt.Printf("%d goroutines: %6.0f syncs/s  p50 %v  p90 %v\n", n, float64(ops.Load())/4,
			lats[len(lats)/2].Round(time.Microsecond), lats[len(lats)*9/10].Round(time.Microsecond))
	}
}
