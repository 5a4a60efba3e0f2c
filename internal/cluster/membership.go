package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"

	pb "go.etcd.io/raft/v3/raftpb"
)

// Membership changes and snapshots.
//
// A member is added as a learner (it receives the log but does not vote),
// promoted to a voter once it has caught up, and removed, each by a
// membership change entry (raft's ConfChangeV2) that the leader proposes
// and every member applies in log order. A change's Context carries the
// proposal id (8 bytes, so the proposer finds its entry) and the member's
// group address, which every member's transport learns when it applies the
// change (MembershipObserver).
//
// A member that needs entries the group has dropped (a new member, once a
// checkpoint has cut the log) gets a snapshot: the leader's newest
// checkpoint (SnapshotSource), installed by the append step once the apply
// step is idle (SnapshotInstaller), after which the log starts after it.

// MembershipObserver is told of each membership change as it is applied
// (the apply step, in log order): its transport must reach an added
// member at addr and forget a removed one.
type MembershipObserver interface {
	MembershipChanged(index uint64, cc pb.ConfChangeV2, addr string)
}

// SnapshotInstaller installs a snapshot's data as the state machine's
// state, in place of what it holds (the append step, while the apply step
// is idle).
//
// An installer that cannot replace its state in place (a member that
// holds data) may instead make the snapshot's data durable where its next
// start loads it and return an error wrapping ErrRestartToInstall: the
// raft storage then starts after the snapshot as for any install, and the
// node stops with that error; the process restarts the member, which
// comes back from the snapshot.
type SnapshotInstaller interface {
	InstallSnapshot(snap pb.Snapshot) error
}

// ErrRestartToInstall: a snapshot's data was made durable, to be loaded
// when the member restarts (SnapshotInstaller).
var ErrRestartToInstall = errors.New("cluster: restart to install the snapshot")

// SnapshotSource gives the data of the state a snapshot at meta's index
// holds (the leader's newest checkpoint), or an error if it has none.
type SnapshotSource func(meta pb.SnapshotMetadata) ([]byte, error)

// encodeChangeContext is a membership change's Context.
func encodeChangeContext(id uint64, addr string) []byte {
	b := binary.LittleEndian.AppendUint64(nil, id)
	return append(b, addr...)
}

func decodeChangeContext(ctx []byte) (id uint64, addr string) {
	if len(ctx) < 8 {
		return 0, ""
	}
	return binary.LittleEndian.Uint64(ctx), string(ctx[8:])
}

// ProposeMembership proposes a membership change: add a learner
// (pb.ConfChangeAddLearnerNode, with the member's group address), promote
// a learner or add a voter (pb.ConfChangeAddNode), or remove a member
// (pb.ConfChangeRemoveNode). raft refuses a second change while one is
// not yet applied (ErrProposalDropped).
func (n *Node) ProposeMembership(typ pb.ConfChangeType, id uint64, addr string) *Proposal {
	return n.submit(nil, func(p *Proposal) {
		p.change = &pb.ConfChangeV2{Changes: []pb.ConfChangeSingle{{Type: typ, NodeID: id}},
			Context: encodeChangeContext(p.id, addr)}
	})
}

// ConfState is the membership as of the last change the raft step has
// applied; ok is false while a change the apply step has seen is not yet
// applied by the raft step (a checkpoint then waits).
func (n *Node) ConfState() (cs pb.ConfState, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.conf, n.pendingChanges == 0
}

// changeOf decodes a membership change entry (either version).
func changeOf(e pb.Entry) (pb.ConfChangeV2, error) {
	switch e.Type {
	case pb.EntryConfChange:
		var cc pb.ConfChange
		if err := cc.Unmarshal(e.Data); err != nil {
			return pb.ConfChangeV2{}, fmt.Errorf("decoding a membership change: %w", err)
		}
		return cc.AsV2(), nil
	default:
		var cc pb.ConfChangeV2
		if err := cc.Unmarshal(e.Data); err != nil {
			return pb.ConfChangeV2{}, fmt.Errorf("decoding a membership change: %w", err)
		}
		return cc, nil
	}
}

// installSnapshot installs a snapshot the leader sent (the append step):
// its data into the state machine, then the raft storage starts after it.
func (n *Node) installSnapshot(snap pb.Snapshot) error {
	in, ok := n.sm.(SnapshotInstaller)
	if !ok && len(snap.Data) > 0 {
		return fmt.Errorf("cluster: a snapshot with data (index %d) and a state machine that cannot install one", snap.Metadata.Index)
	}
	var restart error
	if ok {
		if err := in.InstallSnapshot(snap); errors.Is(err, ErrRestartToInstall) {
			restart = err
		} else if err != nil {
			return fmt.Errorf("cluster: installing the snapshot at index %d: %w", snap.Metadata.Index, err)
		}
	}
	if err := n.st.installSnapshot(snap.Metadata); err != nil {
		return err
	}
	if restart != nil {
		return restart // the node stops; the member restarts from the snapshot
	}
	n.mu.Lock()
	n.conf = snap.Metadata.ConfState
	n.status.Applied = max(n.status.Applied, snap.Metadata.Index)
	n.status.Written = max(n.status.Written, snap.Metadata.Index)
	n.mu.Unlock()
	return nil
}

// applyIdle reports whether the apply step has nothing queued or running.
func (n *Node) applyIdle() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.applyQ) == 0 && !n.applying
}
