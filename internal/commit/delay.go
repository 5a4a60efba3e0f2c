package commit

import (
	"time"

	"lockstep/internal/stat"
)

// Sync delay: MySQL's binlog_group_commit_sync_delay and
// binlog_group_commit_sync_no_delay_count.
//
// With a delay set, a leader that holds the flush and sync stages waits up
// to the delay before it takes the queue, so that more commits join its
// group and one fsync covers them; the wait ends early once the queue holds
// no_delay_count commits (0: no early end). It trades each commit's latency
// for fewer fsyncs per commit: worth it where an fsync costs CPU the
// transactions could use (docs/commit.md "Sync delay" has the
// measurements). Default 0, as in MySQL: no wait.
//
// Go's timers do not sleep less than about a millisecond when the process
// has nothing else to run; under load, when a delay pays, they are close
// to the value asked for.

// MaxSyncDelay is the largest delay accepted, MySQL's bound (1 s).
const MaxSyncDelay = time.Second

// SetSyncDelay sets the delay and the no-delay count for groups led from
// now on. d is clamped to [0, MaxSyncDelay]; n < 0 counts as 0.
func (p *Pipeline) SetSyncDelay(d time.Duration, n int) {
	d = max(0, min(d, MaxSyncDelay))
	p.delayNoWait.Store(int64(max(n, 0)))
	p.delay.Store(int64(d))
}

// took restarts the arrival count once a leader has taken the queue. An
// arrival that pushes after the swap and counts before this store is lost
// to the count, which can only make a later wait end later, never early.
func (p *Pipeline) took() {
	if p.queued.Load() != 0 {
		p.queued.Store(0)
	}
}

// SyncDelay returns the delay and the no-delay count.
func (p *Pipeline) SyncDelay() (time.Duration, int) {
	return time.Duration(p.delay.Load()), int(p.delayNoWait.Load())
}

// arrived is the enqueue side, called only while a delay is set: count the
// arrival and end a leader's wait once the queue holds enough commits.
func (p *Pipeline) arrived() {
	n := p.queued.Add(1)
	if want := p.delayNoWait.Load(); want > 0 && n >= want && p.delaying.Load() {
		select {
		case p.delayWake <- struct{}{}:
		default:
		}
	}
}

// waitForGroup is the leader's wait, under logMu, before it takes the
// queue.
func (p *Pipeline) waitForGroup() {
	d := time.Duration(p.delay.Load())
	if d <= 0 {
		return
	}
	want := p.delayNoWait.Load()
	if want > 0 && p.queued.Load() >= want {
		stat.Inc(&p.c.delaysSkipped)
		return
	}
	var start time.Time // for delayNanos only
	if stat.On {
		start = time.Now()
	}
	select { // a wake-up left over from an earlier wait
	case <-p.delayWake:
	default:
	}
	p.delaying.Store(true)
	if want > 0 && p.queued.Load() >= want {
		p.delaying.Store(false)
		stat.Inc(&p.c.delaysSkipped)
		return
	}
	if p.delayTimer == nil {
		p.delayTimer = time.NewTimer(d)
	} else {
		p.delayTimer.Reset(d)
	}
	select {
	case <-p.delayTimer.C:
	case <-p.delayWake:
		p.delayTimer.Stop()
		stat.Inc(&p.c.delaysCut)
	}
	p.delaying.Store(false)
	stat.Inc(&p.c.delays)
	if stat.On {
		p.c.delayNanos.Add(int64(time.Since(start)))
	}
}
