package checkpoint

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWriteback: with a threshold, the file goes to disk in consecutive
// chunks of at least the threshold, each started once and finished once,
// the previous chunk finished only after the next was started (at most two
// in flight) and none finished before it was started; the file holds what
// was written. Without one nothing is started before the final fsync.
func TestWriteback(t *testing.T) {
	for _, tc := range []struct {
		threshold int64
		writes    []int
	}{
		{0, []int{100, 5000, 70000}},
		{4096, []int{100, 5000, 70000, 1, 4095, 4096, 10}},
		{4096, []int{4096, 4096, 4096}},
		{1 << 20, []int{1 << 19, 1 << 19, 1 << 19, 100}},
	} {
		t.Run(fmt.Sprintf("%d/%v", tc.threshold, tc.writes), func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "f"))
			must(t, err)
			defer f.Close()
			type call struct {
				finish bool
				off, n int64
			}
			var calls []call
			wb := newWriteback(f, tc.threshold, 0, nil)
			wb.start = func(_ *os.File, off, n int64) error { calls = append(calls, call{false, off, n}); return nil }
			wb.finish = func(_ *os.File, off, n int64) error { calls = append(calls, call{true, off, n}); return nil }
			var want []byte
			for i, n := range tc.writes {
				p := bytes.Repeat([]byte{byte('a' + i)}, n)
				want = append(want, p...)
				if _, err := wb.Write(p); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(f.Name())
			must(t, err)
			if !bytes.Equal(got, want) || wb.off != int64(len(want)) {
				t.Fatalf("file holds %d bytes (offset %d), want the %d written", len(got), wb.off, len(want))
			}
			if tc.threshold == 0 {
				if len(calls) != 0 || wb.chunks != 0 {
					t.Fatalf("writeback without a threshold: %v", calls)
				}
				return
			}
			var next int64 // the next chunk starts here
			started := map[int64]int64{}
			for i, c := range calls {
				if !c.finish {
					if c.off != next || c.n < tc.threshold {
						t.Fatalf("call %d: chunk [%d,+%d) started; want one at %d of at least %d (%v)", i, c.off, c.n, next, tc.threshold, calls)
					}
					started[c.off] = c.n
					next = c.off + c.n
					continue
				}
				if n, ok := started[c.off]; !ok || n != c.n {
					t.Fatalf("call %d: [%d,+%d) finished but not started as such (%v)", i, c.off, c.n, calls)
				}
				delete(started, c.off)
				if len(started) != 1 || i == 0 || calls[i-1].finish {
					t.Fatalf("call %d: a chunk finished other than right after the next one started (%v)", i, calls)
				}
			}
			if int64(len(started)) != min(wb.chunks, 1) || next != wb.started {
				t.Fatalf("%d chunks, %d left in flight, started up to %d of %d (%v)", wb.chunks, len(started), next, wb.off, calls)
			}
			if wb.off-wb.started >= tc.threshold {
				t.Fatalf("%d bytes past the last chunk, threshold %d", wb.off-wb.started, tc.threshold)
			}
		})
	}
}

// TestWritebackPacing: with a rate, each write returns no earlier than the
// bytes written so far are due at that rate from the first write; time
// spent working counts toward it (no sleep when behind).
func TestWritebackPacing(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	must(t, err)
	defer f.Close()
	clock := time.Unix(1000, 0)
	var slept []time.Duration
	wb := newWriteback(f, 0, 1<<20, nil) // 1 MiB/s
	wb.now = func() time.Time { return clock }
	wb.sleep = func(d time.Duration) bool { slept = append(slept, d); clock = clock.Add(d); return true }
	for _, step := range []struct {
		bytes int
		work  time.Duration // time the caller spends before this write
		sleep time.Duration // the pause expected after it
	}{
		{1 << 19, 0, 500 * time.Millisecond},                      // due at 0.5 s
		{1 << 19, 200 * time.Millisecond, 300 * time.Millisecond}, // due at 1 s, now 0.7 s
		{1 << 20, 1500 * time.Millisecond, 0},                     // due at 2 s, now 2.5 s: behind
		{1 << 18, 0, 0},                                           // due at 2.25 s, now 2.5 s
		{1 << 19, 0, 250 * time.Millisecond},                      // due at 2.75 s
	} {
		clock = clock.Add(step.work)
		slept = nil
		if _, err := wb.Write(make([]byte, step.bytes)); err != nil {
			t.Fatal(err)
		}
		var got time.Duration
		for _, d := range slept {
			got += d
		}
		if got != step.sleep {
			t.Fatalf("after %d bytes (%d in all): slept %v, want %v", step.bytes, wb.off, got, step.sleep)
		}
	}
	if wb.paused != 1050*time.Millisecond {
		t.Fatalf("paused %v, want 1.05s", wb.paused)
	}
}

// TestWritebackStop: closing the stop channel ends a paced write's sleep
// at once with ErrStopped (a shutdown does not wait out the pacing); the
// bytes were written.
func TestWritebackStop(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	must(t, err)
	defer f.Close()
	stop := make(chan struct{})
	wb := newWriteback(f, 0, 1, stop) // 1 byte/s: a 10-byte write is due in 10 s
	time.AfterFunc(50*time.Millisecond, func() { close(stop) })
	start := time.Now()
	n, err := wb.Write(make([]byte, 10))
	if err != ErrStopped || n != 10 {
		t.Fatalf("Write = %d, %v; want 10, ErrStopped", n, err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("the write returned after %v, not when stopped", el)
	}
	if _, err := wb.Write([]byte{1}); err != ErrStopped {
		t.Fatalf("a write after the stop: %v, want ErrStopped", err)
	}
}

// TestWritebackHurry: while hurry reports true the writes are not paced,
// and a hurry that comes up during a pause ends it (the pause is taken in
// slices of at most maxPause).
func TestWritebackHurry(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	must(t, err)
	defer f.Close()
	clock := time.Unix(1000, 0)
	wb := newWriteback(f, 0, 1, nil) // 1 byte/s
	wb.now = func() time.Time { return clock }
	hurry := true
	wb.hurry = func() bool { return hurry }
	var slept time.Duration
	hurryAfter := time.Duration(-1) // when >= 0: hurry once this much was slept
	wb.sleep = func(d time.Duration) bool {
		if d > maxPause {
			t.Fatalf("a pause of %v, longer than %v", d, maxPause)
		}
		slept += d
		clock = clock.Add(d)
		if hurryAfter >= 0 && slept >= hurryAfter {
			hurry = true
		}
		return true
	}
	for i := 0; i < 3; i++ {
		if _, err := wb.Write(make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if slept != 0 {
		t.Fatalf("slept %v while hurried", slept)
	}
	// 300 bytes are due at 300 s; the next 100 at 400 s. Unhurried, the
	// write pauses; a hurry after 1 s of it ends the pause.
	hurry, hurryAfter = false, time.Second
	if _, err := wb.Write(make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	if slept != time.Second {
		t.Fatalf("slept %v, want the 1 s until the hurry", slept)
	}
}
