package commit

import (
	"fmt"
	"math/bits"
	"strings"
	"sync/atomic"
	"time"

	"lockstep/internal/certify"
	"lockstep/internal/hist"
)

// GroupSizeBuckets labels the buckets of Stats.GroupSizes.
var GroupSizeBuckets = [numSizeBuckets]string{"1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", "65+"}

const numSizeBuckets = 8

// sizeBucket is the GroupSizes index of a group of n >= 1 transactions.
func sizeBucket(n int) int {
	return min(bits.Len(uint(n-1)), numSizeBuckets-1)
}

// Stats are the pipeline's counters. Every field is read atomically; the
// snapshot as a whole is not taken under a lock.
type Stats struct {
	// Commits counts transactions published (Commit returned a sequence
	// number and no error).
	Commits int64
	// Failed counts Commit calls that returned an error.
	Failed int64
	// Groups counts groups appended to the log: one CertifyBatch, one
	// Log.Append and one Log.WaitDurable each.
	Groups int64
	// Appended counts transactions appended (Groups' members).
	Appended int64
	// GroupSizes is the histogram of appended group sizes, by
	// GroupSizeBuckets: 1, 2, 3-4, 5-8, 9-16, 17-32, 33-64, 65+.
	GroupSizes [numSizeBuckets]int64
	// Leaders counts commits that led a group through the flush stage
	// (including groups that failed before reaching the log).
	Leaders int64
	// CommitLeaders counts commit-stage batches: a group leader that finds
	// the commit queue empty publishes every group queued behind it (groups
	// queue there when Publish is slower than the log). The leaders of the
	// groups it takes along wait like followers and count as wake-ups.
	CommitLeaders int64
	// Wakeups counts every return of a follower from a wait; WakeupsDone
	// those that found the follower's transaction done.
	Wakeups     int64
	WakeupsDone int64
	// DoneBeforeWait counts Broadcast followers whose work was done
	// before they began to wait (no wake-up needed).
	DoneBeforeWait int64
	// Delays counts leaders that waited for their group to grow (the sync
	// delay, delay.go); DelaysCut those whose wait ended early because
	// the queue held no_delay_count commits; DelaysSkipped leaders that
	// found that many queued and did not wait; DelayTime is the time
	// waited in all.
	Delays, DelaysCut, DelaysSkipped int64
	DelayTime                        time.Duration
	// TurnWaits counts groups that were durable before an earlier group
	// and waited for it to join the commit queue first (only with more
	// than one sync group).
	TurnWaits int64
	// Splits counts groups larger than Options.MaxGroupBytes, appended
	// as several entries (split.go); SplitEntries the entries they
	// became.
	Splits, SplitEntries int64
	// LastSeq is the highest sequence number published (NextSeq-1 at start).
	LastSeq int64
	// LastGNO is the GTID number of the transaction at LastSeq.
	LastGNO int64
	// Certify is the certifier's counters.
	Certify certify.Stats
	// Latency is the histogram of successful Commit calls' durations, in
	// microseconds (from the call to its return: queueing, the group's
	// append and fsync, publishing), by LatencyBoundsMicros.
	Latency hist.Snapshot
}

// LatencyBoundsMicros are the upper bounds of Stats.Latency's buckets.
var LatencyBoundsMicros = []int64{50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000}

// WakeEfficiency is WakeupsDone / Wakeups, 1 when there were no wake-ups.
// Targeted wake-ups keep it at exactly 1.
func (s Stats) WakeEfficiency() float64 {
	if s.Wakeups == 0 {
		return 1
	}
	return float64(s.WakeupsDone) / float64(s.Wakeups)
}

// MeanGroupSize is transactions appended per group, that is, per durability
// wait; 0 before the first group.
func (s Stats) MeanGroupSize() float64 {
	if s.Groups == 0 {
		return 0
	}
	return float64(s.Appended) / float64(s.Groups)
}

// String formats the counters for logs and test failures.
func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "commits=%d failed=%d groups=%d mean-group=%.2f leaders=%d commit-leaders=%d wakeups=%d done=%d efficiency=%.3f last-seq=%d",
		s.Commits, s.Failed, s.Groups, s.MeanGroupSize(), s.Leaders, s.CommitLeaders,
		s.Wakeups, s.WakeupsDone, s.WakeEfficiency(), s.LastSeq)
	if s.Delays+s.DelaysSkipped > 0 {
		fmt.Fprintf(&b, " delays=%d cut=%d skipped=%d delay-time=%v", s.Delays, s.DelaysCut, s.DelaysSkipped, s.DelayTime)
	}
	if s.TurnWaits > 0 {
		fmt.Fprintf(&b, " turn-waits=%d", s.TurnWaits)
	}
	if s.Splits > 0 {
		fmt.Fprintf(&b, " splits=%d split-entries=%d", s.Splits, s.SplitEntries)
	}
	hist := func(name string, h [numSizeBuckets]int64) {
		fmt.Fprintf(&b, " %s=[", name)
		for i, n := range h {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%s:%d", GroupSizeBuckets[i], n)
		}
		b.WriteByte(']')
	}
	hist("group-sizes", s.GroupSizes)
	b.WriteString(" certify: ")
	b.WriteString(s.Certify.String())
	return b.String()
}

type counters struct {
	commits        atomic.Int64
	failed         atomic.Int64
	groups         atomic.Int64
	appended       atomic.Int64
	sizes          [numSizeBuckets]atomic.Int64
	leaders        atomic.Int64
	commitLeaders  atomic.Int64
	wakeups        atomic.Int64
	wakeupsDone    atomic.Int64
	doneBeforeWait atomic.Int64
	lastSeq        atomic.Int64
	delays         atomic.Int64
	delaysCut      atomic.Int64
	delaysSkipped  atomic.Int64
	delayNanos     atomic.Int64
	turnWaits      atomic.Int64
	splits         atomic.Int64
	splitEntries   atomic.Int64
	latency        *hist.Hist // set by New
}

// Stats returns a snapshot of the counters. Safe for concurrent use.
func (p *Pipeline) Stats() Stats {
	c := &p.c
	s := Stats{
		Commits:        c.commits.Load(),
		Failed:         c.failed.Load(),
		Groups:         c.groups.Load(),
		Appended:       c.appended.Load(),
		Leaders:        c.leaders.Load(),
		CommitLeaders:  c.commitLeaders.Load(),
		Wakeups:        c.wakeups.Load(),
		WakeupsDone:    c.wakeupsDone.Load(),
		DoneBeforeWait: c.doneBeforeWait.Load(),
		LastSeq:        c.lastSeq.Load(),
		LastGNO:        c.lastSeq.Load() + p.gnoOffset.Load(),
		Delays:         c.delays.Load(),
		DelaysCut:      c.delaysCut.Load(),
		DelaysSkipped:  c.delaysSkipped.Load(),
		DelayTime:      time.Duration(c.delayNanos.Load()),
		TurnWaits:      c.turnWaits.Load(),
		Splits:         c.splits.Load(),
		SplitEntries:   c.splitEntries.Load(),
		Certify:        (*p.cert.Load()).Stats(),
		Latency:        c.latency.Snapshot(),
	}
	for i := range s.GroupSizes {
		s.GroupSizes[i] = c.sizes[i].Load()
	}
	return s
}
