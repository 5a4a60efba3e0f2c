package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPacing: with a rate, each write returns no earlier than the
// bytes written so far are due at that rate from the first write; time
// spent working counts toward it (no sleep when behind).
func TestPacing(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	must(t, err)
	defer f.Close()
	clock := time.Unix(1000, 0)
	var slept []time.Duration
	pc := newPacer(f, Options{RateLimit: 1 << 20}) // 1 MiB/s
	pc.now = func() time.Time { return clock }
	pc.sleep = func(d time.Duration) bool { slept = append(slept, d); clock = clock.Add(d); return true }
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
		if _, err := pc.Write(make([]byte, step.bytes)); err != nil {
			t.Fatal(err)
		}
		var got time.Duration
		for _, d := range slept {
			got += d
		}
		if got != step.sleep {
			t.Fatalf("after %d bytes (%d in all): slept %v, want %v", step.bytes, pc.off, got, step.sleep)
		}
	}
	if pc.paused != 1050*time.Millisecond {
		t.Fatalf("paused %v, want 1.05s", pc.paused)
	}
}

// TestPacingStop: closing the stop channel ends a paced write's sleep
// at once with ErrStopped (a shutdown does not wait out the pacing); the
// bytes were written.
func TestPacingStop(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	must(t, err)
	defer f.Close()
	stop := make(chan struct{})
	pc := newPacer(f, Options{RateLimit: 1, Stop: stop}) // 1 byte/s: a 10-byte write is due in 10 s
	time.AfterFunc(50*time.Millisecond, func() { close(stop) })
	start := time.Now()
	n, err := pc.Write(make([]byte, 10))
	if err != ErrStopped || n != 10 {
		t.Fatalf("Write = %d, %v; want 10, ErrStopped", n, err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("the write returned after %v, not when stopped", el)
	}
	if _, err := pc.Write([]byte{1}); err != ErrStopped {
		t.Fatalf("a write after the stop: %v, want ErrStopped", err)
	}
}

// TestPacingHurry: while hurry reports true the writes are not paced,
// and a hurry that comes up during a pause ends it (the pause is taken in
// slices of at most maxPause).
func TestPacingHurry(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	must(t, err)
	defer f.Close()
	clock := time.Unix(1000, 0)
	pc := newPacer(f, Options{RateLimit: 1}) // 1 byte/s
	pc.now = func() time.Time { return clock }
	hurry := true
	pc.hurry = func() bool { return hurry }
	var slept time.Duration
	hurryAfter := time.Duration(-1) // when >= 0: hurry once this much was slept
	pc.sleep = func(d time.Duration) bool {
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
		if _, err := pc.Write(make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if slept != 0 {
		t.Fatalf("slept %v while hurried", slept)
	}
	// 300 bytes are due at 300 s; the next 100 at 400 s. Unhurried, the
	// write pauses; a hurry after 1 s of it ends the pause.
	hurry, hurryAfter = false, time.Second
	if _, err := pc.Write(make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	if slept != time.Second {
		t.Fatalf("slept %v, want the 1 s until the hurry", slept)
	}
}
