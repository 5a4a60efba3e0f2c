package cluster

import (
	"testing"

	"go.etcd.io/raft/v3"
)

// TestLeaderConnLost: after the leader crashes, followers told that its
// connection broke (ReportConnLost) elect a new leader in fewer than
// ElectionTick ticks — without it raft needs at least ElectionTick ticks
// of silence — unless both campaign in the same tick and split the vote
// (the remaining waits are random, 1 in ElectionTick), which costs one
// more election timeout; a report about a member that is not the leader,
// or a second report in the same term, changes nothing. Over 50 seeds
// (the randomized election timeouts differ).
func TestLeaderConnLost(t *testing.T) {
	const et = 10 // newSim's ElectionTick
	fast := 0
	const seeds = 50
	for seed := uint64(1); seed <= seeds; seed++ {
		s := newSim(t, seed, 3)
		l := s.tickUntil(func() bool { return s.leader() != nil }, 100)
		if l < 0 {
			t.Fatalf("seed %d: no leader in 100 ticks", seed)
		}
		old := s.leader()
		// A report about a follower, and one before any loss: ignored.
		var fs []*simNode
		for _, sn := range s.nodes {
			if sn != old {
				fs = append(fs, sn)
			}
		}
		fs[0].node.ReportConnLost(fs[1].id)
		s.drain()
		if n := fs[0].node.Counters().LeaderConnLost; n != 0 {
			t.Fatalf("seed %d: a report about a follower ran the clock forward (%d)", seed, n)
		}
		s.tickAll() // a heartbeat round: the followers' clocks at 0
		s.crash(old)
		for _, f := range fs {
			f.node.ReportConnLost(old.id)
			f.node.ReportConnLost(old.id) // the same term: once
		}
		s.drain()
		ticks := s.tickUntil(func() bool {
			l := s.leader()
			return l != nil && l != old
		}, 20*et)
		// raft draws its election timeouts from its own random source,
		// not the seed's: split votes in a row are possible (each 1 in
		// et); any seed must elect eventually.
		if ticks < 0 || ticks >= 20*et {
			t.Fatalf("seed %d: new leader after %d ticks, want fewer than %d", seed, ticks, 20*et)
		}
		if ticks < et {
			fast++
		}
		for _, f := range fs {
			if n := f.node.Counters().LeaderConnLost; n != 1 {
				t.Fatalf("seed %d: member %d ran its clock forward %d times, want 1", seed, f.id, n)
			}
		}
		s.close()
	}
	// Split votes: about 1 in et seeds (47 of 50 were fast in one run);
	// without the report none is fast. 2/3: a chance of about one in a
	// million that a correct build fails.
	if fast < seeds*2/3 {
		t.Fatalf("a new leader in fewer than %d ticks in %d of %d seeds, want at least %d", et, fast, seeds, seeds*2/3)
	}
	t.Logf("a new leader in fewer than %d ticks in %d of %d seeds", et, fast, seeds)
}

// TestLeaderConnLostLeaderAlive: a follower that sees the leader's
// connection break while the leader is alive (and the other follower
// still hears it) does not take over: its pre-vote is refused, the term
// does not change and the leader keeps leading.
func TestLeaderConnLostLeaderAlive(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		s := newSim(t, seed, 3)
		if s.tickUntil(func() bool { return s.leader() != nil }, 100) < 0 {
			t.Fatalf("seed %d: no leader", seed)
		}
		l := s.leader()
		term := l.node.Status().Term
		for _, sn := range s.nodes {
			if sn != l {
				sn.node.ReportConnLost(l.id)
				break
			}
		}
		for i := 0; i < 30; i++ {
			s.tickAll()
		}
		if s.leader() != l || l.node.Status().Term != term {
			t.Fatalf("seed %d: leader %d term %d became %v term %d", seed, l.id, term, s.leader(), l.node.Status().Term)
		}
		for _, sn := range s.nodes {
			if st := sn.node.Status(); sn != l && (st.State != raft.StateFollower || st.Lead != l.id) {
				t.Fatalf("seed %d: member %d is %v following %d", seed, sn.id, st.State, st.Lead)
			}
		}
		s.close()
	}
}

// drain runs every node's steps and delivers every message until there
// is nothing left to do (no faults).
func (s *sim) drain() {
	for i := 0; i < 100000; i++ {
		if s.step() {
			s.settle()
			continue
		}
		if len(s.net) == 0 {
			return
		}
		s.deliver(0)
	}
	s.t.Fatalf("seed %d: the group does not quiesce", s.seed)
}

// tickAll ticks every running node once, then drains.
func (s *sim) tickAll() {
	for _, sn := range s.nodes {
		if sn.up {
			sn.node.Tick()
		}
	}
	s.drain()
}

// tickUntil ticks until cond holds and returns the ticks it took (0: it
// held already), or -1 after max ticks.
func (s *sim) tickUntil(cond func() bool, max int) int {
	s.drain()
	for i := 0; i <= max; i++ {
		if cond() {
			return i
		}
		s.tickAll()
	}
	return -1
}
