package txlog

import (
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkAppend measures the append path: design=atomic is Log.Append
// (one atomic add to reserve, parallel copy), design=mutex the single-mutex
// baseline. The log runs with SyncMode periodic, so that the disk is not
// what is measured; the writer still writes every byte to a segment file.
// One op is one Append of one 200-byte payload.
func BenchmarkAppend(b *testing.B) {
	for _, design := range []string{"atomic", "mutex"} {
		for _, g := range []int{1, 64} {
			b.Run(fmt.Sprintf("design=%s/goroutines=%d", design, g), func(b *testing.B) {
				benchAppend(b, design, g)
			})
		}
	}
}

// BenchmarkAppendDiscard is BenchmarkAppend with a file layer that throws
// the bytes away: on a machine with few cores the writer's write(2) calls
// (a kernel copy per byte) are the bottleneck of BenchmarkAppend for both
// designs; here the writer only stamps headers, so the appenders' path is
// what is measured.
func BenchmarkAppendDiscard(b *testing.B) {
	for _, design := range []string{"atomic", "mutex"} {
		for _, g := range []int{1, 64} {
			b.Run(fmt.Sprintf("design=%s/goroutines=%d", design, g), func(b *testing.B) {
				benchAppendFS(b, design, g, discardFS{})
			})
		}
	}
}

func benchAppend(b *testing.B, design string, goroutines int) {
	benchAppendFS(b, design, goroutines, nil)
}

func benchAppendFS(b *testing.B, design string, goroutines int, fs FS) {
	l, _, err := Open(Options{Dir: b.TempDir(), SyncMode: SyncPeriodic, FS: fs})
	if err != nil {
		b.Fatal(err)
	}
	appendFn := l.Append
	if design == "mutex" {
		m := &mutexAppender{l: l}
		appendFn = m.Append
	}
	p := payload(1, 200, false)
	ps := [][]byte{p}
	b.SetBytes(int64(len(p)))
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := range goroutines {
		n := b.N / goroutines
		if g < b.N%goroutines {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				if _, err := appendFn(1, ps...); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := l.WaitWritten(l.Stats().Bytes); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	st := l.Stats()
	b.ReportMetric(float64(st.SpaceWaits)/float64(b.N), "spacewaits/op")
	b.ReportMetric(float64(b.N)/float64(st.Writes), "records/write")
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAppendWaitDurable is the commit path: every op is an Append of
// one 200-byte payload followed by WaitDurable, with SyncMode always (a real
// fsync per flush). It shows group commit at work: fsyncs/op falls as the
// number of committing goroutines rises, and the wake-ups stay targeted.
func BenchmarkAppendWaitDurable(b *testing.B) {
	for _, design := range []string{"atomic", "mutex"} {
		for _, g := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("design=%s/goroutines=%d", design, g), func(b *testing.B) {
				l, _, err := Open(Options{Dir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				appendFn := l.Append
				if design == "mutex" {
					appendFn = (&mutexAppender{l: l}).Append
				}
				ps := [][]byte{payload(1, 200, false)}
				b.ResetTimer()
				var wg sync.WaitGroup
				for i := range g {
					n := b.N / g
					if i < b.N%g {
						n++
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range n {
							lsn, err := appendFn(1, ps...)
							if err == nil {
								err = l.WaitDurable(lsn)
							}
							if err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				st := l.Stats()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
				b.ReportMetric(float64(st.Fsyncs)/float64(b.N), "fsyncs/op")
				if st.Wakeups > 0 {
					b.ReportMetric(100*float64(st.WakeupsDone)/float64(st.Wakeups), "wake-efficiency-%")
				}
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// discardFS is a file layer that keeps nothing: writes succeed and vanish.
type discardFS struct{}

func (discardFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	return &discardFile{}, nil
}
func (discardFS) Remove(string) error                   { return nil }
func (discardFS) Rename(string, string) error           { return nil }
func (discardFS) ReadDir(string) ([]os.DirEntry, error) { return nil, nil }
func (discardFS) MkdirAll(string, os.FileMode) error    { return nil }
func (discardFS) SyncDir(string) error                  { return nil }

type discardFile struct{ size int64 }

func (f *discardFile) Write(b []byte) (int, error) { return len(b), nil }
func (f *discardFile) WriteAt(b []byte, off int64) (int, error) {
	f.size = max(f.size, off+int64(len(b)))
	return len(b), nil
}
func (f *discardFile) ReadAt(b []byte, off int64) (int, error) { clear(b); return len(b), nil }
func (f *discardFile) Sync() error                             { return nil }
func (f *discardFile) Truncate(size int64) error               { f.size = size; return nil }
func (f *discardFile) Close() error                            { return nil }
func (f *discardFile) Stat() (os.FileInfo, error)              { return discardInfo{}, nil }

type discardInfo struct{}

func (discardInfo) Name() string       { return "discard" }
func (discardInfo) Size() int64        { return 0 }
func (discardInfo) Mode() fs.FileMode  { return 0 }
func (discardInfo) ModTime() time.Time { return time.Time{} }
func (discardInfo) IsDir() bool        { return false }
func (discardInfo) Sys() any           { return nil }

// BenchmarkDurableAppend is a commit's log work: append one record of 1 KB
// and wait until it is durable, from 1 and 16 goroutines, writing into a
// preallocated segment or growing the file (the baseline). Besides ns/op it
// reports the process's system CPU time per record (getrusage), where a
// sync's file system work shows.
//
//	go test -run - -bench BenchmarkDurableAppend -count 3 ./internal/txlog/
func BenchmarkDurableAppend(b *testing.B) {
	for _, g := range []int{1, 16} {
		for _, pre := range []bool{true, false} {
			b.Run(fmt.Sprintf("goroutines=%d/preallocate=%v", g, pre), func(b *testing.B) {
				benchDurableAppend(b, g, pre)
			})
		}
	}
}

func benchDurableAppend(b *testing.B, goroutines int, pre bool) {
	opts := Options{Dir: b.TempDir(), Preallocate: pre, PreallocAfter: 64 << 10, SegmentSize: 64 << 20}
	l, _, err := Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	p := payload(1, 1024, false)
	commit := func() {
		lsn, err := l.Append(1, p)
		if err == nil {
			err = l.WaitDurable(lsn)
		}
		if err != nil {
			b.Error(err)
		}
	}
	// Warm up; with preallocation, until the writer has moved to a spare.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; i < 200 || (pre && l.Stats().PreallocUsed == 0 && time.Now().Before(deadline)); i++ {
		commit()
	}
	if pre && l.Stats().PreallocUsed == 0 {
		b.Fatal("no preallocated segment in use after the warm-up")
	}
	// Let the preallocator finish the next spare: its 64 MiB of zeros are
	// written once per segment, not per commit, and are not measured.
	for pre && l.spare.Load() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				commit()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	sys := time.Duration(syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(ru0.Stime))
	b.ReportMetric(float64(sys.Microseconds())/float64(b.N), "sys-µs/op")
	st := l.Stats()
	if st.Fsyncs > 0 {
		b.ReportMetric(float64(st.Records)/float64(st.Fsyncs), "records/fsync")
	}
}
