// Command idlecost measures what an idle spell costs the work that follows
// it on this machine: the CPU time of a fixed amount of work (key
// comparisons over a set that fits the CPU's caches) run back to back,
// and run in slices with a short sleep after each. The difference per
// slice is the cost of going idle and being woken (the sleep's own system
// calls, the scheduler, the caches the work finds cold). docs/benchmarks/notes.md,
// "The cost of durability", uses it to explain the durable server's higher
// CPU per transaction.
//
//	go run ./scripts/idlecost
package main

import (
	"bytes"
	"fmt"
	"runtime"
	"syscall"
	"time"
)

const nkeys = 4096 // 24-byte keys: about 200 KB with their slice headers

var keys [][]byte

func work(n int) (c int) {
	for i := 0; i < n; i++ {
		if bytes.Compare(keys[(i*7919)%nkeys], keys[(i*104729)%nkeys]) < 0 {
			c++
		}
	}
	return c
}

// threadCPU is the calling thread's CPU time (the goroutine is locked to
// it).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	runtime.LockOSThread()
	for i := 0; i < nkeys; i++ {
		k := make([]byte, 24)
		for j := range k {
			k[j] = byte(i*(j+7) + j)
		}
		keys = append(keys, k)
	}
	fmt.Println("compares per slice, sleep after each: CPU per slice (the same slices back to back)")
	for _, n := range []int{0, 200, 2000, 20000} {
		for _, sleep := range []time.Duration{300 * time.Microsecond, 0} {
			start, c0, slices := time.Now(), threadCPU(), 0
			for time.Since(start) < 2*time.Second {
				work(n)
				slices++
				if sleep > 0 {
					time.Sleep(sleep)
				}
			}
			per := (threadCPU() - c0) / time.Duration(slices)
			if sleep > 0 {
				fmt.Printf("%6d compares, sleep %v: %9v", n, sleep, per)
			} else {
				fmt.Printf("   (back to back: %v)\n", per)
			}
		}
	}
}
