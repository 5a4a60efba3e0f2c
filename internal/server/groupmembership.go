package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"lockstep/internal/apply"
	"lockstep/internal/checkpoint"
	"lockstep/internal/cluster"
	"lockstep/internal/sqlfront"
)

// Membership of a running group (docs/cluster.md, "Membership"): the
// primary adds a member as a learner (SQL: group_replication_add_member),
// the member — started with no data and without --group-bootstrap — gets
// the primary's newest checkpoint as a raft snapshot, or the log from the
// start, catches up, and the primary promotes it to a voter once its log
// is close to the primary's; group_replication_remove_member removes one.
// Every member learns a new member's group address from the change itself.

// memberAddrs is the group's members' addresses as this member knows them:
// --group-seeds, then every membership change applied.
type memberAddrs struct {
	mu sync.Mutex
	m  map[uint64]string
}

func newMemberAddrs(seeds map[uint64]string) *memberAddrs {
	m := make(map[uint64]string, len(seeds))
	for id, a := range seeds {
		m[id] = a
	}
	return &memberAddrs{m: m}
}

func (a *memberAddrs) get(id uint64) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.m[id]
}

func (a *memberAddrs) set(id uint64, addr string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.m[id] = addr
}

func (a *memberAddrs) drop(id uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, id)
}

// ids lists the members, in id order.
func (a *memberAddrs) ids() []uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]uint64, 0, len(a.m))
	for id := range a.m {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// MembershipChanged implements cluster.MembershipObserver (the apply
// step): the transport reaches an added member, a removed one is
// forgotten.
func (s *groupSM) MembershipChanged(index uint64, cc pb.ConfChangeV2, addr string) {
	g := s.g
	for _, c := range cc.Changes {
		switch c.Type {
		case pb.ConfChangeAddLearnerNode, pb.ConfChangeAddNode:
			if addr != "" {
				g.addrs.set(c.NodeID, addr)
				if g.tr != nil {
					g.tr.AddPeer(c.NodeID, addr)
				}
			}
		case pb.ConfChangeRemoveNode:
			g.addrs.drop(c.NodeID)
			if c.NodeID == g.cfg.ServerID {
				fmt.Fprintf(g.w, "lockstep: group: member %d was removed from the group (log index %d)\n", g.cfg.ServerID, index)
			}
		}
	}
	g.changes.Add(1)
}

// InstallSnapshot implements cluster.SnapshotInstaller: a checkpoint the
// leader sent becomes this member's state. A member that holds nothing
// yet (a new member) loads it in place; one that holds data (it fell
// behind what the group's logs keep) makes it its newest checkpoint and
// restarts from it.
func (s *groupSM) InstallSnapshot(snap pb.Snapshot) error {
	g := s.g
	if len(snap.Data) == 0 { // the bootstrap snapshot: the empty state
		return g.learnGroupName("", snap.Metadata.ConfState.Voters)
	}
	holds := s.applied.Load() > 1 || len(g.fe.UserDatabases()) > 0
	dir := filepath.Join(g.cfg.Datadir, "checkpoint")
	install := func() (string, error) { return checkpoint.Install(dir, snap.Data) }
	if path, _, ok := cluster.ParseFileRef(snap.Data); ok { // streamed (cluster/snapfile.go)
		// The transport received it into this member's own directory; a
		// reference to anywhere else is not this member's to move.
		if filepath.Dir(path) != g.snapshotDir() {
			return fmt.Errorf("a snapshot at log index %d names %s, not a file this member received", snap.Metadata.Index, path)
		}
		install = func() (string, error) { return checkpoint.InstallFile(dir, path) }
	}
	if holds {
		// A member that fell behind what the group's logs keep: its
		// tables cannot be replaced in place under its sessions. The
		// checkpoint becomes its newest (durable), and it restarts from
		// it, as after a crash (cluster.ErrRestartToInstall: the raft
		// storage starts after the snapshot first).
		if _, err := install(); err != nil {
			return err
		}
		fmt.Fprintf(g.w, "lockstep: group: member %d (applied to log index %d) received the group's checkpoint at index %d\n", g.cfg.ServerID, s.applied.Load(), snap.Metadata.Index)
		return fmt.Errorf("%w at log index %d", cluster.ErrRestartToInstall, snap.Metadata.Index)
	}
	if _, err := install(); err != nil {
		return err
	}
	h, err := loadCheckpointHeader(dir, g.fe, g.w)
	if err != nil {
		return err
	}
	if h.Index != snap.Metadata.Index {
		return fmt.Errorf("the snapshot's checkpoint is at log index %d, the snapshot at %d", h.Index, snap.Metadata.Index)
	}
	if err := g.fe.RecoverCounters(); err != nil {
		return err
	}
	if err := g.learnGroupName(h.GTID, nil); err != nil {
		return err
	}
	if err := s.reset(apply.New(apply.Options{FailedDDL: sqlfront.FailedDDLIndex, UUID: g.groupName(),
		Applied: apply.Position{Index: h.Index, Seq: h.Seq}, ExecutedGNO: checkpointGNO(h)})); err != nil {
		return err
	}
	s.applied.Store(h.Index)
	s.lastTerm.Store(h.Term)
	s.lastGNO.Store(checkpointGNO(h))
	fmt.Fprintf(g.w, "lockstep: group: member %d installed the group's checkpoint at log index %d (sequence number %d)\n", g.cfg.ServerID, h.Index, h.Seq)
	return nil
}

// snapshotDir is where the transport receives the snapshot files sent to
// this member.
func (g *group) snapshotDir() string {
	return filepath.Join(g.cfg.Datadir, "checkpoint", "received")
}

// snapshotData gives the data of the snapshot at meta: a reference to
// this member's checkpoint file at that index, which the transport
// streams to the member (cluster/snapfile.go: a checkpoint of any size,
// never held in memory). The raft storage calls it off the raft step,
// once per snapshot index (cluster.Storage.Snapshot).
func (g *group) snapshotData(meta pb.SnapshotMetadata) ([]byte, error) {
	// raft installs a snapshot only on a member its membership names: one
	// taken before a member was added cannot bring that member in. Ask for
	// a checkpoint now (an entry makes the applier reach one) and let raft
	// ask again. Nothing is read for that answer.
	if cur, ok := g.node.ConfState(); !ok || !sameMembers(cur, meta.ConfState) {
		if !g.ckptWanted.Swap(true) && g.write.Load() {
			g.node.Propose(nil)
		}
		return nil, errors.New("the checkpoint predates a membership change")
	}
	dir := filepath.Join(g.cfg.Datadir, "checkpoint")
	path, err := checkpoint.Latest(dir)
	if err != nil || path == "" {
		return nil, errors.New("no checkpoint")
	}
	h, err := checkpoint.Read(path, checkpoint.Visitor{}) // verified, streamed
	if err != nil {
		return nil, err
	}
	if h.Index != meta.Index {
		return nil, fmt.Errorf("the newest checkpoint is at %d, not %d", h.Index, meta.Index)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	return cluster.FileRef(path, st.Size()), nil
}

func sameMembers(a, b pb.ConfState) bool {
	eq := func(x, y []uint64) bool {
		if len(x) != len(y) {
			return false
		}
		seen := map[uint64]bool{}
		for _, v := range x {
			seen[v] = true
		}
		for _, v := range y {
			if !seen[v] {
				return false
			}
		}
		return true
	}
	return eq(a.Voters, b.Voters) && eq(a.Learners, b.Learners)
}

// errMembership is a membership statement's error: MySQL Group
// Replication's UDF error (3910, ER_GRP_RPL_UDF_ERROR).
func errMembership(format string, args ...any) error {
	return fmt.Errorf("group_replication: "+format, args...)
}

// addMember adds member id with group address addr as a learner (the
// primary only); it returns once the change is applied here.
func (g *group) addMember(id uint64, addr string) error {
	if !g.write.Load() {
		return errMembership("this member is not the primary")
	}
	if id == 0 || addr == "" {
		return errMembership("a member needs an id other than 0 and a group address")
	}
	if g.addrs.get(id) != "" && g.isMember(id) {
		return errMembership("member %d is in the group already", id)
	}
	return g.change(pb.ConfChangeAddLearnerNode, id, addr)
}

// removeMember removes member id (the primary only; not itself: hand the
// primary role over first).
func (g *group) removeMember(id uint64) error {
	if !g.write.Load() {
		return errMembership("this member is not the primary")
	}
	if id == g.cfg.ServerID {
		return errMembership("the primary cannot remove itself: make another member the primary first (group_replication_set_as_primary)")
	}
	if !g.isMember(id) {
		return errMembership("member %d is not in the group", id)
	}
	return g.change(pb.ConfChangeRemoveNode, id, "")
}

func (g *group) isMember(id uint64) bool {
	cs, _ := g.node.ConfState()
	for _, set := range [][]uint64{cs.Voters, cs.Learners} {
		for _, v := range set {
			if v == id {
				return true
			}
		}
	}
	return false
}

func (g *group) change(typ pb.ConfChangeType, id uint64, addr string) error {
	p := g.node.ProposeMembership(typ, id, addr)
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		return errMembership("the change was not committed within 10 s (its outcome is unknown)")
	}
	if err := p.Err(); err != nil {
		return errMembership("the change was not made: %v (another change may be under way: try again)", err)
	}
	// Applied here; raft takes it into its configuration on its own step.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, ok := g.node.ConfState(); ok {
			break
		}
	}
	return nil
}

// promoteLearners makes caught-up learners voters (the primary's role
// watcher): a learner whose log reaches within promoteLag entries of the
// primary's.
func (g *group) promoteLearners() {
	if !g.write.Load() || time.Since(g.lastPromote) < time.Second {
		return
	}
	last := g.node.Status().Written
	for _, m := range g.node.Members() {
		if m.Learner && m.Active && m.Match+promoteLag >= last {
			g.lastPromote = time.Now()
			p := g.node.ProposeMembership(pb.ConfChangeAddNode, m.ID, g.addrs.get(m.ID))
			go func(id uint64) {
				<-p.Done()
				if p.Err() == nil {
					fmt.Fprintf(g.w, "lockstep: group: member %d caught up and votes now\n", id)
				}
			}(m.ID)
			return
		}
	}
}

// promoteLag: a learner this close to the primary's log is caught up.
const promoteLag = 64

// groupAdmin is sqlfront.GroupAdmin on a member.
type groupAdmin struct{ g *group }

func (a groupAdmin) AddMember(id uint64, addr string) error { return a.g.addMember(id, addr) }
func (a groupAdmin) RemoveMember(id uint64) error           { return a.g.removeMember(id) }

// SetPrimary hands the primary role to member id (MySQL's
// group_replication_set_as_primary): the primary refuses writes and
// transfers leadership; it returns once member id takes writes or the
// transfer failed.
func (a groupAdmin) SetPrimary(id uint64) error {
	g := a.g
	if id == g.cfg.ServerID && g.write.Load() {
		return nil
	}
	if !g.write.Load() {
		return errMembership("this member is not the primary: run it on the primary")
	}
	voter := false
	cs, _ := g.node.ConfState()
	for _, v := range cs.Voters {
		voter = voter || v == id
	}
	if !voter {
		return errMembership("member %d is not a voting member of the group", id)
	}
	g.demote(0)
	g.node.TransferLeader(id)
	deadline := time.Now().Add(handOffWait)
	for time.Now().Before(deadline) {
		if s := g.node.Status(); s.Lead == id {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return errMembership("member %d did not take the primary role within %v", id, handOffWait)
}
