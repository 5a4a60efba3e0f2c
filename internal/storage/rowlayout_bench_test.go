package storage

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"syscall"
	"testing"
	"time"

	"lockstep/internal/txn"
)

// BenchmarkRowLayout measures what a loaded row costs the heap and the
// garbage collector (DESIGN principle 5; issue 35 item 3): it loads rows
// sysbench rows with the k index through Insert and Commit, 1,000 per
// transaction (the path a load or sysbench prepare takes), purges, and
// reports
//
//   - heap-B/row: live heap (HeapAlloc after GC) added, per row;
//   - objs/row: heap objects (HeapObjects after GC) added, per row;
//   - gc-ms: the shortest wall time of seven forced full collections
//     (runtime.GC, which marks the whole heap; its time grows with the
//     objects and pointers the table holds), and gc-cpu-ms the least
//     process CPU time (getrusage) one of them took — on a loaded machine
//     the wall time mostly measures waiting for a CPU, and the minimum is
//     the figure least disturbed by other processes;
//   - scan-B/row: the scannable heap (runtime/metrics /gc/scan/heap:bytes,
//     the bytes of objects holding pointers, which the GC must read) added,
//     per row;
//   - payload-B/row: the encoded row, its primary key and its k key.
//
// For the breakdown per structure run it with a heap profile:
//
//	go test -run '^$' -bench 'RowLayout/rows=1000000' -benchtime 1x \
//	    -memprofile /tmp/mem.out ./internal/storage
//	go tool pprof -sample_index=inuse_space -top /tmp/mem.out
func BenchmarkRowLayout(b *testing.B) {
	for _, rows := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				before := readHeapObjs()
				e := New(Options{PurgeInterval: -1})
				tb := loadSysbench(b, e, rows, true)
				after := readHeapObjs()
				var gcs, cpus []time.Duration
				for range 7 {
					t0, c0 := time.Now(), cpuTime()
					runtime.GC()
					gcs = append(gcs, time.Since(t0))
					cpus = append(cpus, cpuTime()-c0)
				}
				slices.Sort(gcs)
				slices.Sort(cpus)
				payload := 0
				tx := e.Begin(txn.RepeatableRead)
				must(b, tx.Scan(bg, tb, PrimaryIndex, Range{}, false, 0, func(pk, row []byte) (bool, error) {
					payload += len(pk) + len(row) + 9
					return true, nil
				}))
				tx.Rollback()
				n := float64(rows)
				b.ReportMetric(float64(after.alloc-before.alloc)/n, "heap-B/row")
				b.ReportMetric(float64(after.objects-before.objects)/n, "objs/row")
				b.ReportMetric(float64(gcs[0].Microseconds())/1000, "gc-ms")
				b.ReportMetric(float64(cpus[0].Microseconds())/1000, "gc-cpu-ms")
				b.ReportMetric(float64(after.scan-before.scan)/n, "scan-B/row")
				b.ReportMetric(float64(payload)/n, "payload-B/row")
				runtime.KeepAlive(tb)
				e.Close()
			}
		})
	}
}

type heapObjs struct{ alloc, objects, scan uint64 }

func readHeapObjs() heapObjs {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	scan := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}}
	metrics.Read(scan)
	return heapObjs{ms.HeapAlloc, ms.HeapObjects, scan[0].Value.Uint64()}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
