package cluster

import "go.etcd.io/raft/v3"

// A follower that sees the leader's connection break runs its election
// clock forward.
//
// raft notices a dead leader only by silence: a follower campaigns after
// a randomized election timeout (ElectionTick to 2*ElectionTick-1 ticks)
// without a heartbeat, 1–2 s with the server's 100 ms tick, and that
// silence was nearly all of a failover after kill -9 of the primary
// (docs/benchmarks/notes.md, "Failover: SIGKILL of the primary"). But a
// killed process's TCP connections are closed by its kernel at once, and
// each follower reads the leader's messages from a connection the leader
// opened: its end of the stream means the leader's process, or the link,
// is gone. The transport reports it (TransportOptions.ConnLost), and a
// follower whose leader it was ticks raft's clock ElectionTick times at
// once: past the leader's lease, with the remaining wait still random (0
// to ElectionTick-1 ticks, so the two followers rarely campaign together).
//
// Safety is raft's, not this code's: with PreVote and CheckQuorum a
// follower that ran its clock forward wins a pre-vote only from a majority
// that has not heard from a leader within an election timeout either. If
// the leader is alive and only this connection broke (a write timeout, a
// redial), the other followers are still in its lease and refuse; the
// pre-candidate goes back to following without raising the term, and the
// leader's next heartbeat restores it. Once per leader and term: a
// connection that breaks again in the same term changes nothing.

// lostState remembers the leader and term the clock was last run forward
// for.
type lostState struct{ term, lead uint64 }

// ReportConnLost tells the node that the connection on which member id's
// messages arrived has broken (the transport's read ended).
func (n *Node) ReportConnLost(id uint64) { n.push(event{connLost: id}) }

// leaderConnLost runs in the raft step.
func (n *Node) leaderConnLost(id uint64) {
	bs := n.rn.BasicStatus()
	if bs.RaftState != raft.StateFollower || bs.Lead != id || id == n.cfg.ID {
		return
	}
	if n.lost == (lostState{term: bs.Term, lead: id}) {
		return
	}
	n.lost = lostState{term: bs.Term, lead: id}
	for i := 0; i < n.cfg.ElectionTick; i++ {
		n.rn.Tick()
	}
	n.mu.Lock()
	n.lostN++
	n.mu.Unlock()
}
