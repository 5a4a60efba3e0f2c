package checkpoint

import (
	"errors"
	"io"
	"time"
)

// ErrStopped is returned by a paced checkpoint's writes once its stop
// channel is closed (the server is shutting down): a checkpoint is never
// needed for correctness — the log holds everything after the previous
// one — so it is abandoned rather than finished at its paced rate.
var ErrStopped = errors.New("checkpoint: stopped")

// pacer paces a checkpoint's writes (--checkpoint-rate-limit): after each
// write it sleeps until the bytes written so far are due at the rate from
// the first write. A checkpoint's CPU (reading the rows, framing,
// checksums, the writes) then takes a bounded share of a core for longer
// instead of a whole core for its duration; on two cores a checkpoint
// running flat out halved what the commits had. The sleep is taken in
// slices of at most maxPause, so that a hurry (a DDL statement waiting for
// the checkpoint) ends it, and it ends at once when stop closes.
type pacer struct {
	w      io.Writer
	rate   int64       // bytes per second; 0: no pacing
	hurry  func() bool // when it returns true, no pacing (nil: never)
	off    int64       // bytes written
	begin  time.Time   // the first write
	paused time.Duration

	// now and sleep are the clock (tests fake them); sleep reports false
	// when stop closed first.
	now   func() time.Time
	sleep func(time.Duration) bool
}

// maxPause is the longest single sleep of the pacing: hurry is asked again
// after each.
const maxPause = 50 * time.Millisecond

func newPacer(w io.Writer, o Options) *pacer {
	return &pacer{w: w, rate: o.RateLimit, hurry: o.Hurry, now: time.Now, sleep: stoppableSleep(o.Stop)}
}

// stoppableSleep sleeps for d unless stop closes first (nil: never).
func stoppableSleep(stop <-chan struct{}) func(time.Duration) bool {
	return func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-stop:
			return false
		}
	}
}

func (p *pacer) Write(b []byte) (int, error) {
	if p.rate <= 0 {
		return p.w.Write(b)
	}
	if p.off == 0 {
		p.begin = p.now()
	}
	n, err := p.w.Write(b)
	p.off += int64(n)
	if err != nil {
		return n, err
	}
	due := p.begin.Add(time.Duration(float64(p.off) / float64(p.rate) * float64(time.Second)))
	for d := due.Sub(p.now()); d > 0 && (p.hurry == nil || !p.hurry()); d = due.Sub(p.now()) {
		d = min(d, maxPause)
		if !p.sleep(d) {
			return n, ErrStopped
		}
		p.paused += d
	}
	return n, nil
}
