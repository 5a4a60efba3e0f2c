package cluster

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/cryptotest"

	"lockstep/internal/testutil/crashfs"
	"lockstep/internal/txlog"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// The deterministic simulation of a group: N nodes, each with its own
// crash-capable disk (crashfs), its log, raft storage and a state machine,
// over an in-process network, all driven from one goroutine by a seeded
// PRNG that picks the next action — deliver, drop, duplicate or reorder a
// message, run one of a node's steps, tick a clock, propose, crash a node
// (its disk keeps what a power failure keeps), restart it, partition or
// heal the network. raft's own randomness (election timeouts, through
// crypto/rand) is seeded by cryptotest.SetGlobalRandom. What is not fixed by
// the seed: whether the log's background flusher had fsynced a write when a
// crash comes (the log's goroutines run on their own); a failure's seed
// therefore replays the same schedule, and almost always the same failure.
//
// Invariants checked after every action:
//   - every entry applied anywhere at an index is the same entry (the
//     committed prefixes agree; state machines at the same applied index
//     hold the same state);
//   - a state machine applies indexes densely, in order;
//   - every acknowledged proposal is the entry committed at its index.
//
// At the end the network heals, every node restarts, and the group must
// commit a new proposal; every node must then have applied every
// acknowledged proposal.

var (
	simSeeds = flag.Int("sim.seeds", 0, "cluster simulation: number of seeds (default: LOCKSTEP_SIM_SEEDS or 1000)")
	simSeed  = flag.Uint64("sim.seed", 0, "cluster simulation: run this one seed")
	simSteps = flag.Int("sim.steps", 3000, "cluster simulation: actions per seed")
)

func TestSimulation(t *testing.T) {
	seeds := *simSeeds
	if seeds == 0 {
		seeds = 1000
		if v, err := strconv.Atoi(os.Getenv("LOCKSTEP_SIM_SEEDS")); err == nil && v > 0 {
			seeds = v
		}
	}
	first := uint64(1)
	if *simSeed != 0 {
		first, seeds = *simSeed, 1
	}
	for s := first; s < first+uint64(seeds); s++ {
		t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) {
			cryptotest.SetGlobalRandom(t, s)
			sim := newSim(t, s, 3)
			defer sim.close()
			sim.run(*simSteps)
			sim.finish()
		})
	}
}

type simNode struct {
	id   uint64
	fs   *crashfs.FS
	st   *Storage
	node *Node
	sm   *simSM
	up   bool
	inc  uint32
}

// simSM is the state machine: it records what it applied and checks it
// against what every other node applied at the same index.
type simSM struct {
	sim     *sim
	id      uint64
	applied uint64
}

func (m *simSM) Apply(index, term uint64, data []byte, _ bool) error {
	if _, t, ok := strings.Cut(string(data), "@"); ok && t != "0" && t != strconv.FormatUint(term, 10) {
		m.sim.t.Fatalf("seed %d: node %d applied %q, proposed for term %s, at index %d in term %d", m.sim.seed, m.id, data, t, index, term)
	}
	if index != m.applied+1 {
		m.sim.t.Fatalf("seed %d: node %d applied index %d after %d", m.sim.seed, m.id, index, m.applied)
	}
	m.applied = index
	if prev, ok := m.sim.committed[index]; ok {
		if !bytes.Equal(prev, data) {
			m.sim.t.Fatalf("seed %d: node %d applied %q at index %d, another node applied %q there", m.sim.seed, m.id, data, index, prev)
		}
	} else {
		m.sim.committed[index] = append([]byte(nil), data...)
	}
	return nil
}

type flight struct {
	from, to uint64
	m        pb.Message
}

type pending struct {
	p     *Proposal
	data  []byte
	on    uint64
	epoch uint64 // 0: none
	n     int    // order of proposal within the epoch
}

type sim struct {
	t     *testing.T
	seed  uint64
	rng   *rand.Rand
	nodes []*simNode
	net   []flight
	cut   map[[2]uint64]bool

	committed map[uint64][]byte // index -> data applied there (nil for raft's entries)
	props     []pending
	acked     map[uint64][]byte
	nextVal   int
	stats     simStats
	// epochs: each (leader, term) the simulation proposes on is an epoch;
	// epochN counts its proposals, epochDrop is the order of the first one
	// dropped (0: none), epochAcked the order of the last acknowledged.
	epochOf    map[[2]uint64]uint64
	epochN     map[uint64]int
	epochDrop  map[uint64]int
	epochAcked map[uint64]int
}

type simStats struct {
	proposed, acked, dropped, lost, unknown int
	crashes, partitions, transfers          int
}

func newSim(t *testing.T, seed uint64, n int) *sim {
	s := &sim{
		t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		cut: map[[2]uint64]bool{}, committed: map[uint64][]byte{}, acked: map[uint64][]byte{},
		epochOf: map[[2]uint64]uint64{}, epochN: map[uint64]int{}, epochDrop: map[uint64]int{}, epochAcked: map[uint64]int{},
	}
	var voters []uint64
	for i := 1; i <= n; i++ {
		voters = append(voters, uint64(i))
	}
	for _, id := range voters {
		sn := &simNode{id: id, fs: crashfs.New()}
		s.nodes = append(s.nodes, sn)
		st, err := OpenStorage(s.storageOptions(sn))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Bootstrap(voters); err != nil {
			t.Fatal(err)
		}
		st.Close()
		s.start(sn)
	}
	return s
}

func (s *sim) storageOptions(sn *simNode) StorageOptions {
	return StorageOptions{Dir: "/data", FS: sn.fs, Log: txlog.Options{
		SegmentSize: 4 << 10, BufferSize: 64 << 10, MarkInterval: -1,
	}}
}

func (s *sim) start(sn *simNode) {
	st, err := OpenStorage(s.storageOptions(sn))
	if err != nil {
		s.t.Fatalf("seed %d: node %d does not restart: %v\n%s", s.seed, sn.id, err, sn.fs.Dump())
	}
	sn.inc++
	sn.st = st
	sn.sm = &simSM{sim: s, id: sn.id, applied: st.persistedState().snap.Index}
	node, err := NewNode(Config{
		ID: sn.id, Storage: st, StateMachine: sn.sm, Incarnation: sn.inc,
		Send: func(ms []pb.Message) {
			for _, m := range ms {
				s.net = append(s.net, flight{from: sn.id, to: m.To, m: m})
			}
		},
		ElectionTick: 10, HeartbeatTick: 1, CommitSaveEvery: 8,
		MaxSizePerMsg: 4 << 10,
	})
	if err != nil {
		s.t.Fatalf("seed %d: node %d: %v", s.seed, sn.id, err)
	}
	sn.node = node
	sn.up = true
}

func (s *sim) crash(sn *simNode) {
	sn.node.Stop()
	sn.fs.Crash(s.rng)
	sn.st.Close() // the crashed process's files are gone; errors expected
	sn.up = false
	s.stats.crashes++
}

func (s *sim) close() {
	for _, sn := range s.nodes {
		if sn.up {
			sn.node.Stop()
			sn.st.Close()
		}
	}
}

func (s *sim) leader() *simNode {
	for _, sn := range s.nodes {
		if sn.up && sn.node.Status().State == raft.StateLeader {
			return sn
		}
	}
	return nil
}

// deliver takes the message at i off the network and hands it over,
// unless its link is cut or its receiver is down.
func (s *sim) deliver(i int) {
	f := s.net[i]
	s.net = append(s.net[:i], s.net[i+1:]...)
	to := s.node(f.to)
	if to == nil || !to.up || s.cut[[2]uint64{f.from, f.to}] {
		return
	}
	to.node.Receive(f.m)
}

func (s *sim) node(id uint64) *simNode {
	for _, sn := range s.nodes {
		if sn.id == id {
			return sn
		}
	}
	return nil
}

// step runs one step of a node that has work; false if none has.
func (s *sim) step() bool {
	type work struct {
		sn   *simNode
		kind int
	}
	var ws []work
	for _, sn := range s.nodes {
		if !sn.up {
			continue
		}
		sn.node.mu.Lock()
		if len(sn.node.events) > 0 {
			ws = append(ws, work{sn, 0})
		}
		if len(sn.node.appendQ) > 0 {
			ws = append(ws, work{sn, 1})
		}
		if len(sn.node.written) > 0 {
			ws = append(ws, work{sn, 2})
		}
		if len(sn.node.applyQ) > 0 {
			ws = append(ws, work{sn, 3})
		}
		sn.node.mu.Unlock()
	}
	if len(ws) == 0 {
		return false
	}
	w := ws[s.rng.IntN(len(ws))]
	n := w.sn.node
	switch w.kind {
	case 0:
		n.RaftStep()
	case 1:
		n.AppendWrite()
	case 2:
		n.AppendSync()
	case 3:
		n.ApplyStep()
	}
	if err := n.Err(); err != nil {
		s.t.Fatalf("seed %d: node %d failed: %v", s.seed, w.sn.id, err)
	}
	return true
}

func (s *sim) propose() {
	l := s.leader()
	if l == nil {
		return
	}
	s.nextVal++
	term := l.node.Status().Term
	switch s.rng.IntN(4) {
	case 0:
		term = 0 // any term
	case 1:
		term-- // a stale primary epoch: must be dropped
	}
	data := []byte(fmt.Sprintf("k%d=v%d@%d", s.rng.IntN(20), s.nextVal, term))
	var epoch uint64
	if term != 0 && s.rng.IntN(2) == 0 {
		key := [2]uint64{l.id, term}
		if epoch = s.epochOf[key]; epoch == 0 {
			epoch = uint64(len(s.epochOf) + 1)
			s.epochOf[key] = epoch
		}
	}
	pr := pending{p: l.node.ProposeFenced(data, Fence{Term: term, Epoch: epoch}), data: data, on: l.id, epoch: epoch}
	if epoch != 0 {
		s.epochN[epoch]++
		pr.n = s.epochN[epoch]
	}
	s.props = append(s.props, pr)
	s.stats.proposed++
}

// settle ends the bookkeeping of finished proposals and checks the
// acknowledged ones.
func (s *sim) settle() {
	keep := s.props[:0]
	for _, pr := range s.props {
		select {
		case <-pr.p.Done():
		default:
			keep = append(keep, pr)
			continue
		}
		switch err := pr.p.Err(); {
		case err == nil:
			s.stats.acked++
			if e := pr.epoch; e != 0 {
				if d := s.epochDrop[e]; d != 0 && d < pr.n {
					s.t.Fatalf("seed %d: proposal %d of epoch %d committed after proposal %d of it was dropped", s.seed, pr.n, e, d)
				}
				s.epochAcked[e] = max(s.epochAcked[e], pr.n)
			}
			idx := pr.p.Index()
			if got := s.committed[idx]; !bytes.Equal(got, pr.data) {
				s.t.Fatalf("seed %d: proposal %q acknowledged at index %d, but %q is committed there", s.seed, pr.data, idx, got)
			}
			s.acked[idx] = pr.data
		case errors.Is(err, ErrProposalDropped):
			s.stats.dropped++
			if e := pr.epoch; e != 0 {
				if d := s.epochDrop[e]; d == 0 || pr.n < d {
					s.epochDrop[e] = pr.n
				}
				if a := s.epochAcked[e]; a > pr.n {
					s.t.Fatalf("seed %d: proposal %d of epoch %d was dropped, but proposal %d after it committed", s.seed, pr.n, e, a)
				}
			}
		case errors.Is(err, ErrProposalLost):
			s.stats.lost++
			if idx := pr.p.Index(); idx != 0 {
				if got, ok := s.committed[idx]; ok && bytes.Equal(got, pr.data) {
					s.t.Fatalf("seed %d: proposal %q reported lost, but it is committed at index %d", s.seed, pr.data, idx)
				}
			}
		case errors.Is(err, ErrStopped):
			s.stats.unknown++
		default:
			s.t.Fatalf("seed %d: proposal ended with %v", s.seed, err)
		}
	}
	s.props = keep
}

func (s *sim) run(actions int) {
	for i := 0; i < actions; i++ {
		s.act(true)
		s.settle()
	}
}

// act performs one action; faults only when faults is set.
func (s *sim) act(faults bool) {
	r := s.rng.IntN(1000)
	switch {
	case r < 380:
		if !s.step() && len(s.net) > 0 {
			s.deliver(s.rng.IntN(len(s.net)))
		}
	case r < 700:
		if len(s.net) == 0 {
			s.step()
			return
		}
		i := s.rng.IntN(len(s.net))
		switch x := s.rng.IntN(100); {
		case faults && x < 3: // lost
			s.net = append(s.net[:i], s.net[i+1:]...)
		case faults && x < 6: // duplicated
			s.net = append(s.net, s.net[i])
			s.deliver(i)
		default:
			s.deliver(i)
		}
	case r < 850:
		sn := s.nodes[s.rng.IntN(len(s.nodes))]
		if sn.up {
			sn.node.Tick()
		}
	case r < 960:
		s.propose()
	case r < 975 && faults:
		a, b := s.nodes[s.rng.IntN(len(s.nodes))].id, s.nodes[s.rng.IntN(len(s.nodes))].id
		if a != b {
			s.cut[[2]uint64{a, b}], s.cut[[2]uint64{b, a}] = true, true
			s.stats.partitions++
		}
	case r < 985 && faults:
		clear(s.cut)
	case r < 992 && faults:
		if sn := s.nodes[s.rng.IntN(len(s.nodes))]; sn.up {
			s.crash(sn)
		}
	case r < 996 && faults:
		// a leadership transfer (raft drops proposals while it runs; it
		// may fail and leave the leader leading the same term)
		if l := s.leader(); l != nil {
			if to := s.nodes[s.rng.IntN(len(s.nodes))]; to.id != l.id {
				l.node.TransferLeader(to.id)
				s.stats.transfers++
			}
		}
	case r < 1000:
		for _, sn := range s.nodes {
			if !sn.up {
				s.start(sn)
				break
			}
		}
	}
}

// finish heals everything and checks that the group commits again and
// that every node holds every acknowledged proposal.
func (s *sim) finish() {
	clear(s.cut)
	for _, sn := range s.nodes {
		if !sn.up {
			s.start(sn)
		}
	}
	var last *Proposal
	for i := 0; i < 200000; i++ {
		if last == nil {
			if l := s.leader(); l != nil {
				data := []byte("final")
				last = l.node.Propose(data)
				s.props = append(s.props, pending{p: last, data: data, on: l.id})
			}
		} else if d := last.Done(); d != nil {
			select {
			case <-d:
				if last.Err() != nil {
					last = nil // dropped or lost: try again
				}
			default:
			}
		}
		s.act(false)
		s.settle()
		if last != nil && last.Err() == nil && isDone(last) && s.converged(last.Index()) {
			break
		}
	}
	if last == nil || !isDone(last) || last.Err() != nil {
		s.t.Fatalf("seed %d: the healed group did not commit a proposal (%+v)", s.seed, s.statuses())
	}
	if !s.converged(last.Index()) {
		s.t.Fatalf("seed %d: the nodes did not all apply index %d: %+v", s.seed, last.Index(), s.statuses())
	}
	for idx, data := range s.acked {
		if got := s.committed[idx]; !bytes.Equal(got, data) {
			s.t.Fatalf("seed %d: acknowledged %q at %d, committed %q", s.seed, data, idx, got)
		}
	}
	s.t.Logf("seed %d: %+v; last index %d", s.seed, s.stats, last.Index())
}

func isDone(p *Proposal) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

func (s *sim) converged(idx uint64) bool {
	for _, sn := range s.nodes {
		if !sn.up || sn.sm.applied < idx {
			return false
		}
	}
	return true
}

func (s *sim) statuses() string {
	var b strings.Builder
	for _, sn := range s.nodes {
		fmt.Fprintf(&b, "[%d up=%v %+v sm=%d] ", sn.id, sn.up, sn.node.Status(), sn.sm.applied)
	}
	return b.String()
}
