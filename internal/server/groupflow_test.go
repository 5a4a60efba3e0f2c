package server

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Flow control for a slow secondary (docs/cluster.md, "Flow control"): one
// secondary slowed down — receiving slowly, not receiving at all, or
// applying slowly — must not grow what the primary holds for it beyond
// the transport's bound, nor stop the primary committing in any second;
// once it recovers it catches up.

// flowQueueBytes is the transport's per-peer bound in these tests: small,
// so that a stalled secondary reaches it (without the bound, raft's
// in-flight window of 32 MiB alone would limit the queue, and only while
// its accounting holds).
const flowQueueBytes = 2 << 20

// groupOf returns the group of the member with the server id (testGroups
// must be set).
func groupOf(t *testing.T, id uint64) *group {
	t.Helper()
	var g *group
	testGroups.Range(func(_, v any) bool {
		if x := v.(*group); x.cfg.ServerID == id {
			g = x
		}
		return true
	})
	if g == nil {
		t.Fatalf("no group for member %d", id)
	}
	return g
}

// flowSample is one reading of the primary during the load.
type flowSample struct {
	at      time.Duration
	commits int64
	queued  int64 // bytes queued for the slow secondary
	heap    uint64
	lag     int64 // the slow secondary's entries committed, not applied
	behind  int64 // the primary's commit index less the slow secondary's written index
}

// TestGroupSlowSecondary: under a write load on the primary, one
// secondary receives at 100 kB/s, or receives nothing for 3 s, or applies
// one entry per 20 ms. In every 1-second window the primary commits; the
// bytes it queues for that member stay within the transport's bound (plus
// one message; without the bound they follow raft's in-flight window);
// afterwards the member catches up to the same rows.
func TestGroupSlowSecondary(t *testing.T) {
	for _, mode := range []string{"slow receive", "stalled receive", "slow apply"} {
		t.Run(strings.ReplaceAll(mode, " ", "_"), func(t *testing.T) { testSlowSecondary(t, mode) })
	}
}

func testSlowSecondary(t *testing.T, mode string) {
	testGroups = &sync.Map{}
	testSendQueueBytes = flowQueueBytes
	var slowApply atomic.Uint64 // the member whose applier is slow (0: none)
	testApplyHook = func(id uint64) {
		if id == slowApply.Load() {
			time.Sleep(20 * time.Millisecond)
		}
	}
	defer func() { testGroups, testSendQueueBytes, testApplyHook = nil, 0, nil }()

	ms := startGroupInProcess(t, 3)
	p, s := ms[0], ms[1]
	pid := uint64(p.status(t, "GLOBAL", "Lockstep_group_replication_member_id"))
	sid := uint64(s.status(t, "GLOBAL", "Lockstep_group_replication_member_id"))
	pg, sg := groupOf(t, pid), groupOf(t, sid)
	p.exec(t, "CREATE DATABASE d")
	p.exec(t, "CREATE TABLE d.t (id BIGINT PRIMARY KEY, v TEXT)")

	// The load: sessions inserting 8 KiB rows on the primary.
	var commits, nextID atomic.Int64
	var stop atomic.Bool
	var loadErr atomic.Pointer[error]
	var wg sync.WaitGroup
	pad := strings.Repeat("x", 8<<10)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, err := p.db.Exec("INSERT INTO d.t VALUES (?, ?)", nextID.Add(1), pad); err != nil {
					loadErr.CompareAndSwap(nil, &err)
					return
				}
				commits.Add(1)
			}
		}()
	}
	var samples []flowSample
	start := time.Now()
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		st, pst := sg.node.Status(), pg.node.Status()
		samples = append(samples, flowSample{at: time.Since(start), commits: commits.Load(),
			queued: pg.tr.Stats()[sid].QueuedBytes, heap: ms.HeapAlloc, lag: int64(st.Commit) - int64(st.Applied),
			behind: int64(pst.Commit) - int64(st.Written)})
	}
	run := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			sample()
		}
	}

	run(time.Second) // before
	slowFrom := len(samples)
	release := make(chan struct{})
	switch mode {
	case "slow receive":
		// 100 kB/s: less than the load writes.
		sg.tr.SetReceiveHook(func(n int) { time.Sleep(time.Duration(n) * 10 * time.Microsecond) })
	case "stalled receive":
		sg.tr.SetReceiveHook(func(int) {
			select {
			case <-release:
			case <-time.After(10 * time.Second):
			}
		})
	case "slow apply":
		slowApply.Store(sid)
	}
	run(3 * time.Second) // slowed
	slowTo := len(samples)
	sg.tr.SetReceiveHook(nil)
	close(release)
	slowApply.Store(0)
	run(2 * time.Second) // recovering, under load
	stop.Store(true)
	wg.Wait()
	if e := loadErr.Load(); e != nil {
		t.Fatalf("a write on the primary failed: %v", *e)
	}

	// Commits per 1-second window; none may be 0.
	var windows []int64
	for i, j := 0, 0; j < len(samples); j++ {
		if samples[j].at-samples[i].at >= time.Second {
			windows = append(windows, samples[j].commits-samples[i].commits)
			i = j
		}
	}
	var maxQueued, lagMax, behindMax int64
	var heapMin, heapMax uint64 = ^uint64(0), 0
	for _, sm := range samples[slowFrom:slowTo] {
		maxQueued, lagMax, behindMax = max(maxQueued, sm.queued), max(lagMax, sm.lag), max(behindMax, sm.behind)
		heapMin, heapMax = min(heapMin, sm.heap), max(heapMax, sm.heap)
	}
	ps := pg.tr.Stats()[sid]
	t.Cleanup(func() {
		if t.Failed() {
			for _, sm := range samples {
				t.Logf("%v: commits %d, queued %d, heap %d MiB, behind %d, apply lag %d", sm.at.Round(time.Millisecond), sm.commits, sm.queued, sm.heap>>20, sm.behind, sm.lag)
			}
		}
	})
	t.Logf("%s: commits per second %v; queued for the slow member: up to %d bytes sampled, %d at most (bound %d), %d messages dropped; heap while slowed %d-%d MiB (three members); it received up to %d entries behind the primary's commit, applied up to %d behind its own",
		mode, windows, maxQueued, ps.MaxQueuedBytes, flowQueueBytes, ps.Dropped, heapMin>>20, heapMax>>20, behindMax, lagMax)
	for i, n := range windows {
		if n == 0 {
			t.Fatalf("%s: the primary committed nothing in second %d (%v)", mode, i+1, windows)
		}
	}
	if limit := int64(flowQueueBytes + 1<<20 + 64<<10); ps.MaxQueuedBytes > limit {
		t.Fatalf("%s: the primary queued up to %d bytes for the slow member, bound %d + one message", mode, ps.MaxQueuedBytes, flowQueueBytes)
	}
	switch mode {
	case "slow apply":
		if lagMax < 10 {
			t.Fatalf("slow apply: the member's apply lag reached only %d entries: the slowdown did not show", lagMax)
		}
	default:
		if behindMax < 10 {
			t.Fatalf("%s: the member received at most %d entries behind the primary: the slowdown did not show", mode, behindMax)
		}
	}

	// It catches up.
	want := p.str(t, "SELECT @@gtid_executed")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var got string
	if err := s.db.QueryRowContext(ctx, fmt.Sprintf("SELECT WAIT_FOR_EXECUTED_GTID_SET('%s', 50)", want)).Scan(&got); err != nil || got != "0" {
		t.Fatalf("%s: the slow member did not catch up to %s: %v %s (applied %d, primary's commit %d)", mode, want, err, got,
			sg.node.Status().Applied, pg.node.Status().Commit)
	}
	if a, b := p.str(t, "SELECT COUNT(*) FROM d.t"), s.str(t, "SELECT COUNT(*) FROM d.t"); a != b {
		t.Fatalf("%s: %s rows on the primary, %s on the member that was slow", mode, a, b)
	}
	if n := p.status(t, "GLOBAL", fmt.Sprintf("Lockstep_group_replication_peer_%d_dropped_messages", sid)); n < ps.Dropped {
		t.Fatalf("SHOW STATUS peer_%d_dropped_messages = %d, the transport says %d", sid, n, ps.Dropped)
	}
}
