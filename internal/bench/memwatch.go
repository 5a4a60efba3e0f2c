package bench

import (
	"bufio"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memWatch samples the Go heap while a replay runs: the peak of the bytes
// in heap objects (live and not yet swept) and the peak of the memory the
// runtime has mapped, as runtime/metrics reports them.
type memWatch struct {
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	peak MemPeak
}

// MemPeak is what a memWatch saw.
type MemPeak struct {
	HeapObjects uint64 // peak bytes in heap objects (runtime/metrics /memory/classes/heap/objects:bytes)
	GoTotal     uint64 // peak bytes mapped by the Go runtime (/memory/classes/total:bytes)
	// RSSHighWater is the process's peak resident set so far (Linux:
	// VmHWM in /proc/self/status; 0 where it cannot be read).
	RSSHighWater uint64
	// LiveAfter is the heap in use after a forced GC at the end: what the
	// replayed data itself keeps.
	LiveAfter uint64
}

var memSamples = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/total:bytes"},
}

// watchMemory starts sampling every interval.
func watchMemory(interval time.Duration) *memWatch {
	w := &memWatch{stop: make(chan struct{})}
	w.sample()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tk.C:
				w.sample()
			}
		}
	}()
	return w
}

func (w *memWatch) sample() {
	s := make([]metrics.Sample, len(memSamples))
	copy(s, memSamples)
	metrics.Read(s)
	w.mu.Lock()
	defer w.mu.Unlock()
	if v := s[0].Value; v.Kind() == metrics.KindUint64 {
		w.peak.HeapObjects = max(w.peak.HeapObjects, v.Uint64())
	}
	if v := s[1].Value; v.Kind() == metrics.KindUint64 {
		w.peak.GoTotal = max(w.peak.GoTotal, v.Uint64())
	}
}

// finish stops sampling and returns the peaks, with the process's RSS
// high-water mark and the heap in use after a GC.
func (w *memWatch) finish() MemPeak {
	close(w.stop)
	w.wg.Wait()
	w.sample()
	p := w.peak
	p.RSSHighWater = rssHighWater()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	p.LiveAfter = ms.HeapAlloc
	return p
}

// rssHighWater reads VmHWM from /proc/self/status (0 if it cannot).
func rssHighWater() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "VmHWM:") {
			continue
		}
		fields := strings.Fields(strings.TrimPrefix(line, "VmHWM:"))
		if len(fields) == 2 && fields[1] == "kB" {
			if kb, err := strconv.ParseUint(fields[0], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// mib formats bytes as MiB.
func mib(b uint64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB" }
