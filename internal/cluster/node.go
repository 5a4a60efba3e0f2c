package cluster

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// StateMachine receives the committed entries, in index order, each once
// per start of the node (a restarted node replays from the index its state
// was restored at).
type StateMachine interface {
	// Apply installs the application data of the entry at index, written
	// in term; data is nil for raft's own entries (the empty entry of a new
	// term, a membership change), which only advance the applied index.
	// own says this node proposed the entry in this run: its proposal has
	// just ended successfully (so its proposer may already be making the
	// result visible). An error stops the node: applying is deterministic,
	// so a failure is permanent.
	Apply(index, term uint64, data []byte, own bool) error
}

// A BatchStateMachine may return from Apply before the entry is wholly
// applied (it hands entries to a parallel applier). Flush returns once
// every entry given to Apply is applied, or with the applier's failure.
// The node calls Flush at the end of each apply step's batch (the
// committed entries of the Readys queued for it) and only then reports
// the batch applied: Status.Applied, raft's apply responses, and a
// snapshot waiting for the apply step. An error stops the node.
type BatchStateMachine interface {
	StateMachine
	Flush() error
}

// Config configures a Node.
type Config struct {
	ID      uint64
	Storage *Storage
	// StateMachine receives committed entries.
	StateMachine StateMachine
	// Send hands messages to the transport. It must not block for long; a
	// transport may drop messages (raft retries).
	Send func([]pb.Message)
	// Applied is the index the state machine already holds (a restored
	// checkpoint); 0 means the snapshot the log starts after.
	Applied uint64

	ElectionTick  int // default 10
	HeartbeatTick int // default 1

	MaxSizePerMsg             uint64 // default 1 MiB
	MaxInflightMsgs           int    // default 256
	MaxInflightBytes          uint64 // default 32 MiB
	MaxUncommittedEntriesSize uint64 // default 64 MiB
	MaxCommittedSizePerReady  uint64 // default 16 MiB
	// CommitSaveEvery: the commit index alone is written to the raft-state
	// file when it has moved this many entries (default 1024).
	CommitSaveEvery uint64
	// Incarnation tells this run's proposals from an earlier run's (the
	// high 24 bits of proposal ids); tests set it, otherwise it is random.
	Incarnation uint32
	// Logf receives raft's warnings and errors (nil: dropped).
	Logf func(format string, args ...any)
}

func (c *Config) withDefaults() {
	def := func(v *uint64, d uint64) {
		if *v == 0 {
			*v = d
		}
	}
	if c.ElectionTick == 0 {
		c.ElectionTick = 10
	}
	if c.HeartbeatTick == 0 {
		c.HeartbeatTick = 1
	}
	if c.MaxInflightMsgs == 0 {
		c.MaxInflightMsgs = 256
	}
	def(&c.MaxSizePerMsg, 1<<20)
	def(&c.MaxInflightBytes, 32<<20)
	def(&c.MaxUncommittedEntriesSize, 64<<20)
	def(&c.MaxCommittedSizePerReady, 16<<20)
	def(&c.CommitSaveEvery, 1024)
}

// Status is a node's view of the group.
type Status struct {
	ID, Lead, Term uint64
	State          raft.StateType
	Applied        uint64 // entries applied to the state machine
	Written        uint64 // last index handed to the log
	Commit         uint64 // the commit index raft knows
}

// event is one item of the raft step's inbox.
type event struct {
	msg         pb.Message
	hasMsg      bool
	tick        bool
	prop        *Proposal
	cc          pb.ConfChangeI
	transfer    uint64
	unreachable uint64
	snapFailed  uint64 // a snapshot sent to this member did not arrive
	snapSent    uint64 // a snapshot was written whole to this member
	handOff     bool   // transfer leadership to the most caught-up voter
	readIndex   []byte // a read-index request's context (readindex.go)
	connLost    uint64 // the connection this member's messages came on broke (leaderlost.go)
}

// readState is raft's answer to a read-index request.
type readState = raft.ReadState

// Node runs one member of a group: a raft RawNode with asynchronous
// storage writes, and the three steps that do its work. All methods are
// safe for concurrent use; each step method must be called by one
// goroutine at a time (the runtime gives each its own goroutine).
type Node struct {
	cfg Config
	st  *Storage
	sm  StateMachine
	rn  *raft.RawNode // the raft step's
	// brokenEpoch: the newest proposal epoch one of whose proposals was
	// dropped (the raft step's; see Fence).
	brokenEpoch uint64

	mu      sync.Mutex
	events  []event
	appendQ []pb.Message
	written []pb.Message // written by AppendWrite, waiting for AppendSync
	lsn     uint64       // the LSN AppendSync waits for
	applyQ  []pb.Message
	byIndex map[uint64]*Proposal // appended proposals, by index
	waiting map[uint64]*Proposal // proposed, index not known yet (raft step)
	nextID  uint64
	status  Status
	// elections counts the elections this node started (became a
	// candidate, or a candidate again in a new term), under mu;
	// propFailed the proposals that ended dropped or lost.
	elections uint64
	// lost: leaderlost.go's state (the raft step's), lostN its count.
	lost       lostState
	lostN      uint64
	propFailed atomic.Uint64
	members    membersState // members.go
	err        error        // the node's fatal error
	stopped    bool

	wakeRaft, wakeAppend, wakeApply chan struct{}

	// Read-index waiters by request id (readindex.go), under mu.
	reads    map[uint64]chan uint64
	nextRead uint64

	// Membership (membership.go), under mu: the ConfState raft returned
	// for the last change it applied, changes the apply step has seen
	// and the raft step not yet applied, and whether the apply step is
	// running (a snapshot waits for it).
	conf           pb.ConfState
	pendingChanges int
	applying       bool
}

// NewNode starts a node on its storage (bootstrapped or restarted).
func NewNode(cfg Config) (*Node, error) {
	cfg.withDefaults()
	if cfg.ID == 0 {
		return nil, errors.New("cluster: a node needs an id other than 0")
	}
	applied := cfg.Applied
	if applied == 0 {
		applied = cfg.Storage.persistedState().snap.Index
	}
	rc := &raft.Config{
		ID:                        cfg.ID,
		ElectionTick:              cfg.ElectionTick,
		HeartbeatTick:             cfg.HeartbeatTick,
		Storage:                   cfg.Storage,
		Applied:                   applied,
		AsyncStorageWrites:        true,
		MaxSizePerMsg:             cfg.MaxSizePerMsg,
		MaxInflightMsgs:           cfg.MaxInflightMsgs,
		MaxInflightBytes:          cfg.MaxInflightBytes,
		MaxUncommittedEntriesSize: cfg.MaxUncommittedEntriesSize,
		MaxCommittedSizePerReady:  cfg.MaxCommittedSizePerReady,
		CheckQuorum:               true,
		PreVote:                   true,
		DisableProposalForwarding: true,
		StepDownOnRemoval:         true,
		Logger:                    quietLogger{logf: cfg.Logf},
	}
	rn, err := raft.NewRawNode(rc)
	if err != nil {
		return nil, fmt.Errorf("cluster: starting raft: %w", err)
	}
	n := &Node{
		cfg: cfg, st: cfg.Storage, sm: cfg.StateMachine, rn: rn,
		byIndex:    make(map[uint64]*Proposal),
		waiting:    make(map[uint64]*Proposal),
		nextID:     uint64(cfg.Incarnation&0xFFFFFF) << 40,
		wakeRaft:   make(chan struct{}, 1),
		wakeAppend: make(chan struct{}, 1),
		wakeApply:  make(chan struct{}, 1),
	}
	n.status = Status{ID: cfg.ID, Applied: applied}
	n.conf = cfg.Storage.ConfState()
	return n, nil
}

func wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (n *Node) push(e event) {
	n.mu.Lock()
	n.events = append(n.events, e)
	n.mu.Unlock()
	wake(n.wakeRaft)
}

// Tick advances raft's logical clock by one tick.
func (n *Node) Tick() { n.push(event{tick: true}) }

// Receive hands the node a message from another member.
func (n *Node) Receive(m pb.Message) {
	switch m.Type {
	case msgMembers:
		n.receiveMembers(m) // members.go
		return
	case msgInfo:
		n.receiveInfo(m) // members.go
		return
	}
	n.push(event{msg: m, hasMsg: true})
}

// TransferLeader asks the leader to hand leadership to the given member.
func (n *Node) TransferLeader(to uint64) { n.push(event{transfer: to}) }

// HandOff asks the leader to transfer leadership to the voter whose log
// matches its own furthest (a planned switchover: a graceful shutdown of
// the primary). A node that does not lead ignores it.
func (n *Node) HandOff() { n.push(event{handOff: true}) }

// ReportUnreachable tells raft that a message to the member may not have
// arrived (its connection broke), so that it probes again at once.
func (n *Node) ReportUnreachable(id uint64) { n.push(event{unreachable: id}) }

// ReportSnapshotFailed tells raft that a snapshot sent to the member did
// not arrive (the transport dropped it), so that it sends one again.
func (n *Node) ReportSnapshotFailed(id uint64) { n.push(event{snapFailed: id}) }

// ReportSnapshotSent tells raft that a snapshot was written whole to the
// member's connection: raft then probes the member with entries after it
// instead of waiting, paused, for its answer to the snapshot. A member
// that installs a snapshot by restarting (ErrRestartToInstall) never
// answers that one: without this the leader waited for it for ever.
func (n *Node) ReportSnapshotSent(id uint64) { n.push(event{snapSent: id}) }

// Propose proposes data as one entry. The proposal ends when its entry is
// applied on this node (Err nil), or when it is certain that it will never
// be committed; see Proposal.
func (n *Node) Propose(data []byte) *Proposal { return n.ProposeFenced(data, Fence{}) }

// Fence limits where a proposal's entry may enter the log: only in raft
// term Term (0: any), and only while no proposal of the same Epoch (0:
// none) or of an older one was dropped (epochs only grow). A primary
// numbers its transactions for the term it leads, in one epoch per
// promotion: an entry numbered in one term must not be appended in a later
// one after other leaders' entries, and once one of an epoch's entries is
// refused (a leadership transfer under way, the uncommitted log full), a
// later one must not enter the log after the gap it leaves in the
// numbering.
type Fence struct{ Term, Epoch uint64 }

// ProposeInTerm is ProposeFenced with a term only.
func (n *Node) ProposeInTerm(data []byte, term uint64) *Proposal {
	return n.ProposeFenced(data, Fence{Term: term})
}

// ProposeFenced is Propose for an entry that may enter the log only as the
// fence allows; otherwise the raft step drops it (ErrProposalDropped).
func (n *Node) ProposeFenced(data []byte, f Fence) *Proposal {
	return n.submit(data, func(p *Proposal) { p.fence = f })
}

// submit makes a proposal of data, shaped by set (under n.mu, once it has
// its id), and hands it to the raft step; on a stopped or failed node it
// ends at once with ErrStopped.
func (n *Node) submit(data []byte, set func(*Proposal)) *Proposal {
	n.mu.Lock()
	n.nextID++
	p := newProposal(n.nextID, data)
	p.failed = &n.propFailed
	set(p)
	if n.stopped || n.err != nil {
		n.mu.Unlock()
		p.finish(ErrStopped)
		return p
	}
	n.events = append(n.events, event{prop: p})
	n.mu.Unlock()
	wake(n.wakeRaft)
	return p
}

// Status returns the node's view of the group.
func (n *Node) Status() Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.status
}

// Counters are a node's activity counters and queue depths (SHOW STATUS
// and the metrics endpoint).
type Counters struct {
	Proposals       uint64 // proposals made here (entries and membership changes)
	ProposalsFailed uint64 // of which dropped or lost (never committed)
	Elections       uint64 // elections this node started
	LeaderConnLost  uint64 // times the leader's connection broke and the election clock was run forward (leaderlost.go)
	AppendQueue     int    // entries waiting for the append step
	ApplyQueue      int    // committed entries waiting for the apply step
}

// Counters returns the node's counters.
func (n *Node) Counters() Counters {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := Counters{Proposals: n.nextID, ProposalsFailed: n.propFailed.Load(), Elections: n.elections, LeaderConnLost: n.lostN}
	for _, m := range n.appendQ {
		c.AppendQueue += len(m.Entries)
	}
	for _, m := range n.applyQ {
		c.ApplyQueue += len(m.Entries)
	}
	return c
}

// Err is the error that stopped the node, if any.
func (n *Node) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

// fail stops the node with err: its steps do nothing more, and every
// pending proposal ends with ErrStopped (its outcome is unknown: its entry
// may be committed by the others). The raft step ends those it owns.
func (n *Node) fail(err error) {
	n.mu.Lock()
	if n.err == nil {
		n.err = err
	}
	ps := make([]*Proposal, 0, len(n.byIndex))
	for _, p := range n.byIndex {
		ps = append(ps, p)
	}
	n.byIndex = map[uint64]*Proposal{}
	n.mu.Unlock()
	for _, p := range ps {
		p.finish(ErrStopped)
	}
	wake(n.wakeRaft)
}

// abandon ends the proposals the raft step holds or has queued (the raft
// step, once the node has failed).
func (n *Node) abandon(evs []event) {
	for _, e := range evs {
		if e.prop != nil {
			e.prop.finish(ErrStopped)
		}
	}
	for id, p := range n.waiting {
		delete(n.waiting, id)
		p.finish(ErrStopped)
	}
}

// RaftStep runs the raft step once: it feeds raft the inbox, takes a
// Ready and routes what it holds. It reports whether it did anything.
func (n *Node) RaftStep() bool {
	n.mu.Lock()
	evs := n.events
	n.events = nil
	failed, dead := n.err != nil, n.err != nil || n.stopped
	n.mu.Unlock()
	if failed {
		n.abandon(evs)
	}
	if dead {
		return false
	}
	ticks := uint64(0)
	for _, e := range evs {
		switch {
		case e.tick:
			n.rn.Tick()
			ticks++
		case e.hasMsg:
			// Messages from members raft does not know (yet), or stale
			// responses, are refused by raft; nothing to do about them.
			_ = n.rn.Step(e.msg)
		case e.prop != nil:
			f := e.prop.fence
			if (f.Term != 0 && f.Term != n.rn.BasicStatus().Term) || (f.Epoch != 0 && f.Epoch <= n.brokenEpoch) {
				n.brokenEpoch = max(n.brokenEpoch, f.Epoch)
				e.prop.finish(ErrProposalDropped)
			} else if e.prop.change != nil {
				if err := n.rn.ProposeConfChange(*e.prop.change); err != nil {
					e.prop.finish(ErrProposalDropped)
				} else {
					n.waiting[e.prop.id] = e.prop
				}
			} else if err := n.rn.Propose(encodeProposal(e.prop.id, e.prop.data)); err != nil {
				n.brokenEpoch = max(n.brokenEpoch, f.Epoch)
				e.prop.finish(ErrProposalDropped)
			} else {
				n.waiting[e.prop.id] = e.prop
			}
		case e.cc != nil:
			cs := n.rn.ApplyConfChange(e.cc)
			n.mu.Lock()
			n.conf = *cs
			n.pendingChanges--
			n.mu.Unlock()
		case e.transfer != 0:
			n.rn.TransferLeader(e.transfer)
		case e.unreachable != 0:
			n.rn.ReportUnreachable(e.unreachable)
		case e.snapFailed != 0:
			n.rn.ReportSnapshot(e.snapFailed, raft.SnapshotFailure)
		case e.snapSent != 0:
			n.rn.ReportSnapshot(e.snapSent, raft.SnapshotFinish)
		case e.handOff:
			n.handOff()
		case e.readIndex != nil:
			n.rn.ReadIndex(e.readIndex)
		case e.connLost != 0:
			n.leaderConnLost(e.connLost) // leaderlost.go
		}
	}
	if ticks > 0 {
		n.tickMembers(ticks) // members.go
	}
	if !n.rn.HasReady() {
		return len(evs) > 0
	}
	rd := n.rn.Ready()
	n.deliverReads(rd.ReadStates)
	var out []pb.Message
	for _, m := range rd.Messages {
		switch m.To {
		case raft.LocalAppendThread:
			n.noteAppended(m.Entries)
			n.mu.Lock()
			n.appendQ = append(n.appendQ, m)
			n.mu.Unlock()
			wake(n.wakeAppend)
		case raft.LocalApplyThread:
			n.mu.Lock()
			n.applyQ = append(n.applyQ, m)
			n.mu.Unlock()
			wake(n.wakeApply)
		default:
			out = append(out, m)
		}
	}
	// A proposal raft accepted is in this Ready's entries unless a new
	// leader's entries replaced it within this step: then it never will be.
	for id, p := range n.waiting {
		delete(n.waiting, id)
		p.finish(ErrProposalLost)
	}
	bs := n.rn.BasicStatus()
	n.mu.Lock()
	if bs.RaftState == raft.StateCandidate && (n.status.State != raft.StateCandidate || bs.Term > n.status.Term) {
		n.elections++
	}
	n.status.Lead, n.status.Term, n.status.State, n.status.Commit = bs.Lead, bs.Term, bs.RaftState, bs.Commit
	n.mu.Unlock()
	n.send(out)
	return true
}

// handOff transfers leadership to the most caught-up voter, if this node
// leads (the raft step).
func (n *Node) handOff() {
	st := n.rn.Status()
	if st.RaftState != raft.StateLeader {
		return
	}
	var best, match uint64
	for id, pr := range st.Progress {
		if id == n.cfg.ID || pr.IsLearner || !pr.RecentActive {
			continue
		}
		if best == 0 || pr.Match > match || (pr.Match == match && id < best) {
			best, match = id, pr.Match
		}
	}
	if best != 0 {
		n.rn.TransferLeader(best)
	}
}

// noteAppended records the index and term of this node's proposals among
// entries about to be appended (the raft step; the leader's own entries).
func (n *Node) noteAppended(ents []pb.Entry) {
	for _, e := range ents {
		var id uint64
		if e.Type != pb.EntryNormal {
			cc, err := changeOf(e)
			if err != nil {
				continue
			}
			id, _ = decodeChangeContext(cc.Context)
		} else {
			pid, _, ok, err := decodeProposal(e.Data)
			if err != nil || !ok {
				continue
			}
			id = pid
		}
		p := n.waiting[id]
		if p == nil {
			continue
		}
		delete(n.waiting, id)
		p.index, p.term = e.Index, e.Term
		n.mu.Lock()
		n.byIndex[e.Index] = p
		n.mu.Unlock()
	}
}

// send routes messages: to this node back into the inbox, others to the
// transport.
func (n *Node) send(msgs []pb.Message) {
	var out []pb.Message
	for _, m := range msgs {
		if m.To == n.cfg.ID {
			n.push(event{msg: m, hasMsg: true})
			continue
		}
		out = append(out, m)
	}
	if len(out) > 0 && n.cfg.Send != nil {
		n.cfg.Send(out)
	}
}

// AppendWrite runs the first half of the append step: it writes every
// queued append (entries, and a snapshot's metadata) to the log, without
// waiting for the fsync. It reports whether it did anything.
func (n *Node) AppendWrite() bool {
	n.mu.Lock()
	q := n.appendQ
	n.appendQ = nil
	dead := n.err != nil || n.stopped
	n.mu.Unlock()
	if dead || len(q) == 0 {
		return false
	}
	for i, m := range q {
		if m.Snapshot != nil && !raft.IsEmptySnap(*m.Snapshot) {
			if !n.applyIdle() {
				// The state machine must be idle to take the snapshot:
				// this message and those after it wait (in order).
				n.mu.Lock()
				n.appendQ = append(append([]pb.Message(nil), q[i:]...), n.appendQ...)
				n.written = append(n.written, q[:i]...)
				n.mu.Unlock()
				wake(n.wakeApply)
				return i > 0
			}
			if err := n.installSnapshot(*m.Snapshot); err != nil {
				n.fail(err)
				return true
			}
		}
		n.dropOverwritten(m.Entries)
		lsn, err := n.st.append(m.Entries)
		if err != nil {
			n.fail(err)
			return true
		}
		n.mu.Lock()
		if lsn != 0 {
			n.lsn = lsn
		}
		if len(m.Entries) > 0 {
			n.status.Written = m.Entries[len(m.Entries)-1].Index
		}
		n.mu.Unlock()
	}
	n.mu.Lock()
	n.written = append(n.written, q...)
	n.mu.Unlock()
	return true
}

// dropOverwritten ends the proposals whose entries are being replaced by
// entries of another term at their index: they will never commit.
func (n *Node) dropOverwritten(ents []pb.Entry) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, e := range ents {
		if p := n.byIndex[e.Index]; p != nil && p.term != e.Term {
			delete(n.byIndex, e.Index)
			p.finish(ErrProposalLost)
		}
	}
}

// AppendSync runs the second half of the append step: one fsync for
// everything AppendWrite wrote, then the hard state, then the messages
// that waited for them. It reports whether it did anything.
func (n *Node) AppendSync() bool {
	n.mu.Lock()
	q, lsn := n.written, n.lsn
	n.written = nil
	dead := n.err != nil || n.stopped
	n.mu.Unlock()
	if dead || len(q) == 0 {
		return false
	}
	if err := n.st.waitDurable(lsn); err != nil {
		n.fail(fmt.Errorf("cluster: the log's fsync failed: %w", err))
		return true
	}
	var hs pb.HardState
	for _, m := range q {
		if s := (pb.HardState{Term: m.Term, Vote: m.Vote, Commit: m.Commit}); !raft.IsEmptyHardState(s) {
			hs = s
		}
	}
	if err := n.st.saveHardState(hs, n.cfg.CommitSaveEvery); err != nil {
		n.fail(err)
		return true
	}
	for _, m := range q {
		n.send(m.Responses)
	}
	return true
}

// ApplyStep runs the apply step once: every committed entry queued is
// applied to the state machine in order, and the proposals they end are
// ended. It reports whether it did anything.
func (n *Node) ApplyStep() bool {
	n.mu.Lock()
	q := n.applyQ
	n.applyQ = nil
	dead := n.err != nil || n.stopped
	n.applying = !dead && len(q) > 0
	n.mu.Unlock()
	if dead || len(q) == 0 {
		return false
	}
	defer func() {
		n.mu.Lock()
		n.applying = false
		n.mu.Unlock()
		wake(n.wakeAppend) // a snapshot may be waiting for the apply step
	}()
	batch, _ := n.sm.(BatchStateMachine)
	var last pb.Entry
	var responses []pb.Message
	for _, m := range q {
		for _, e := range m.Entries {
			if err := n.applyEntry(e, batch == nil); err != nil {
				n.fail(fmt.Errorf("cluster: applying entry %d (term %d): %w", e.Index, e.Term, err))
				return true
			}
			last = e
		}
		if batch == nil {
			n.send(m.Responses)
		} else {
			responses = append(responses, m.Responses...)
		}
	}
	if batch == nil {
		return true
	}
	if err := batch.Flush(); err != nil {
		n.fail(fmt.Errorf("cluster: applying the entries up to %d (term %d): %w", last.Index, last.Term, err))
		return true
	}
	if last.Index != 0 {
		n.mu.Lock()
		n.status.Applied = last.Index
		n.mu.Unlock()
	}
	n.send(responses)
	return true
}

// applyEntry gives entry e to the state machine; report: it is applied
// when Apply returns (not a BatchStateMachine), so Status.Applied moves.
func (n *Node) applyEntry(e pb.Entry, report bool) error {
	var data []byte
	switch e.Type {
	case pb.EntryNormal:
		_, d, _, err := decodeProposal(e.Data)
		if err != nil {
			return err
		}
		data = d
	case pb.EntryConfChange, pb.EntryConfChangeV2:
		cc, err := changeOf(e)
		if err != nil {
			return err
		}
		if o, ok := n.sm.(MembershipObserver); ok {
			_, addr := decodeChangeContext(cc.Context)
			o.MembershipChanged(e.Index, cc, addr)
		}
		n.mu.Lock()
		n.pendingChanges++
		n.mu.Unlock()
		n.push(event{cc: cc})
	}
	n.mu.Lock()
	p := n.byIndex[e.Index]
	delete(n.byIndex, e.Index)
	n.mu.Unlock()
	own := p != nil && p.term == e.Term
	if p != nil {
		if own {
			p.finish(nil)
		} else {
			p.finish(ErrProposalLost)
		}
	}
	if err := n.sm.Apply(e.Index, e.Term, data, own); err != nil {
		return err
	}
	if report {
		n.mu.Lock()
		n.status.Applied = e.Index
		n.mu.Unlock()
	}
	return nil
}

// Stop stops the node's steps and ends every pending proposal with
// ErrStopped (its outcome is unknown to the caller). It does not close the
// storage.
func (n *Node) Stop() {
	n.mu.Lock()
	n.stopped = true
	var ps []*Proposal
	for _, p := range n.byIndex {
		ps = append(ps, p)
	}
	n.byIndex = map[uint64]*Proposal{}
	evs := n.events
	n.events = nil
	n.mu.Unlock()
	for _, p := range ps {
		p.finish(ErrStopped)
	}
	for _, e := range evs {
		if e.prop != nil {
			e.prop.finish(ErrStopped)
		}
	}
	// n.waiting belongs to the raft step, which no longer runs.
	for _, p := range n.waiting {
		p.finish(ErrStopped)
	}
	wake(n.wakeRaft)
	wake(n.wakeAppend)
	wake(n.wakeApply)
}

// Message is raft's message, as the transport carries it.
type Message = pb.Message
