package cluster

import (
	"encoding/binary"
	"errors"
	"sort"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
)

// The group's members as one node sees them (Node.Members), for the SQL
// layer's performance_schema.replication_group_members.
//
// Only the leader knows how the members are doing: raft's progress per
// member (the highest index known to be in its log, and whether it was
// heard from since the last quorum check). The raft step copies it once
// per tick (RawNode is not safe for concurrent use, and WithProgress does
// not allocate), and the leader sends the copy to every follower every
// membersShareEvery ticks in a message of lockstep's own (msgMembers),
// which Receive takes before raft sees it. A follower answers with the
// leader's copy while it is fresh; otherwise (no leader, or none heard
// from for longer than an election timeout) it knows only itself, and
// every other member is not active in its view — as a MySQL member cut
// off from the others sees them UNREACHABLE.

// Member is one member of the group in a node's view.
type Member struct {
	ID      uint64
	Leader  bool
	Learner bool
	// Active: heard from recently. On the leader, raft's RecentActive
	// (set by any message from the member, cleared at every quorum
	// check, each election timeout) held for membersHoldTicks ticks so
	// that the clearing does not show a live member inactive until its
	// next heartbeat response. A node is always active in its own view.
	Active bool
	// Match is the highest log index the leader knows to be in the
	// member's log (0 when unknown).
	Match uint64
	// Info is what the member says of itself (Node.SetInfo: the server's
	// SQL address and uuid), as this node last received it; nil while
	// unknown.
	Info []byte
}

// msgMembers is the type of the leader's members message: a value raft's
// own types do not use (they end at 23, MsgForgetLeader).
const msgMembers pb.MessageType = 1000

// msgInfo is the type of a member's message about itself (its Info, in
// Context), sent by every member with an Info to every other member every
// membersShareEvery ticks: a member learns another's as soon as a message
// gets through, whoever leads, and a restarted member's new Info replaces
// its old one.
const msgInfo pb.MessageType = 1001

const (
	membersShareEvery = 2 // ticks between the leader's members messages
	membersHoldTicks  = 5 // ticks a member stays active after RecentActive
)

// membersState is the view's state, under Node.mu.
type membersState struct {
	ticks   uint64
	seen    map[uint64]uint64 // leader: the tick each member was last RecentActive
	local   []Member          // as of the last tick
	shared  []Member          // the leader's view, received
	from    uint64            // whose view shared is
	sharedT uint64            // the tick it arrived at
	info    []byte            // this member's Info (SetInfo)
	infos   map[uint64][]byte // the other members' Infos, received
}

// tickMembers runs in the raft step after it ticked raft's clock k times:
// it copies raft's progress into the view and, on the leader, shares it
// now and then.
func (n *Node) tickMembers(k uint64) {
	bs := n.rn.BasicStatus()
	leader := bs.RaftState == raft.StateLeader
	var ms []Member
	n.mu.Lock()
	v := &n.members
	before := v.ticks
	v.ticks += k
	if !leader {
		v.seen = nil
	} else if v.seen == nil {
		v.seen = map[uint64]uint64{}
	}
	n.rn.WithProgress(func(id uint64, typ raft.ProgressType, pr tracker.Progress) {
		m := Member{ID: id, Leader: id == bs.Lead, Learner: typ == raft.ProgressTypeLearner}
		if leader {
			m.Match = pr.Match
			if pr.RecentActive || id == n.cfg.ID {
				v.seen[id] = v.ticks
			}
			if t, ok := v.seen[id]; ok && v.ticks-t <= membersHoldTicks {
				m.Active = true
			}
		} else {
			m.Active = id == n.cfg.ID
		}
		ms = append(ms, m)
	})
	sort.Slice(ms, func(i, j int) bool { return ms[i].ID < ms[j].ID })
	v.local = ms
	due := v.ticks/membersShareEvery != before/membersShareEvery
	share := leader && due
	info := v.info
	n.mu.Unlock()
	if !due || n.cfg.Send == nil {
		return
	}
	var out []pb.Message
	var data []byte
	if share {
		data = encodeMembers(ms)
	}
	for _, m := range ms {
		if m.ID == n.cfg.ID {
			continue
		}
		if share {
			out = append(out, pb.Message{Type: msgMembers, From: n.cfg.ID, To: m.ID, Term: bs.Term, Context: data})
		}
		if info != nil {
			out = append(out, pb.Message{Type: msgInfo, From: n.cfg.ID, To: m.ID, Term: bs.Term, Context: info})
		}
	}
	if len(out) > 0 {
		n.cfg.Send(out)
	}
}

// infoAsk, in a msgInfo's Index, asks the receiver for its own Info at
// once: the sender does not know it yet (it has just started).
const infoAsk = 1

// SetInfo sets what this member tells the others of itself (the server's
// SQL address, known once it listens); Members shows it on every member.
// It is sent at once to every member in the view (and again every
// membersShareEvery ticks), asking those whose Info this member lacks for
// theirs, so that a member that has just started or restarted knows the
// others' SQL addresses within a round trip rather than a share period.
func (n *Node) SetInfo(info []byte) {
	n.mu.Lock()
	n.members.info = append([]byte(nil), info...)
	var out []pb.Message
	for _, m := range n.members.local {
		if m.ID == n.cfg.ID {
			continue
		}
		msg := pb.Message{Type: msgInfo, From: n.cfg.ID, To: m.ID, Context: n.members.info}
		if n.members.infos[m.ID] == nil {
			msg.Index = infoAsk
		}
		out = append(out, msg)
	}
	n.mu.Unlock()
	if len(out) > 0 && n.cfg.Send != nil {
		n.cfg.Send(out)
	}
}

// receiveInfo keeps a member's message about itself (Receive) and answers
// one that asks for this member's Info (infoAsk) with it.
func (n *Node) receiveInfo(m pb.Message) {
	info := append([]byte(nil), m.Context...)
	n.mu.Lock()
	if n.members.infos == nil {
		n.members.infos = map[uint64][]byte{}
	}
	n.members.infos[m.From] = info
	own := n.members.info
	n.mu.Unlock()
	if m.Index == infoAsk && own != nil && n.cfg.Send != nil {
		n.cfg.Send([]pb.Message{{Type: msgInfo, From: n.cfg.ID, To: m.From, Context: own}})
	}
}

// MemberInfo returns member id's Info as this node last received it (its
// own for itself); nil while unknown.
func (n *Node) MemberInfo(id uint64) []byte {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.memberInfoLocked(id)
}

func (n *Node) memberInfoLocked(id uint64) []byte {
	if id == n.cfg.ID {
		return n.members.info
	}
	return n.members.infos[id]
}

// receiveMembers keeps a leader's members message (Receive).
func (n *Node) receiveMembers(m pb.Message) {
	ms, err := decodeMembers(m.Context)
	if err != nil {
		return // not from a member of this version: ignored
	}
	n.mu.Lock()
	n.members.shared, n.members.from, n.members.sharedT = ms, m.From, n.members.ticks
	n.mu.Unlock()
}

// Members returns the group's members in this node's view, by id.
func (n *Node) Members() []Member {
	n.mu.Lock()
	defer n.mu.Unlock()
	v := &n.members
	src := v.local
	fresh := v.ticks-v.sharedT <= uint64(n.cfg.ElectionTick)+membersShareEvery
	if n.status.State != raft.StateLeader && n.status.Lead != 0 && v.from == n.status.Lead && fresh && v.shared != nil {
		src = v.shared
	}
	out := make([]Member, len(src))
	copy(out, src)
	for i := range out {
		if out[i].ID == n.cfg.ID {
			out[i].Active = true
		}
		out[i].Info = n.memberInfoLocked(out[i].ID)
	}
	return out
}

// encodeMembers: per member its id and match index (uvarints) and a
// flags byte (1 leader, 2 learner, 4 active).
func encodeMembers(ms []Member) []byte {
	b := make([]byte, 0, len(ms)*12)
	for _, m := range ms {
		b = binary.AppendUvarint(b, m.ID)
		b = binary.AppendUvarint(b, m.Match)
		var f byte
		if m.Leader {
			f |= 1
		}
		if m.Learner {
			f |= 2
		}
		if m.Active {
			f |= 4
		}
		b = append(b, f)
	}
	return b
}

var errMembersMessage = errors.New("cluster: a members message that does not decode")

func decodeMembers(b []byte) ([]Member, error) {
	var ms []Member
	for len(b) > 0 {
		id, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, errMembersMessage
		}
		b = b[k:]
		match, k := binary.Uvarint(b)
		if k <= 0 || len(b) < k+1 {
			return nil, errMembersMessage
		}
		f := b[k]
		b = b[k+1:]
		ms = append(ms, Member{ID: id, Match: match, Leader: f&1 != 0, Learner: f&2 != 0, Active: f&4 != 0})
	}
	return ms, nil
}
