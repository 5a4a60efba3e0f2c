package server

import (
	"net"
	"strconv"

	"lockstep/internal/sqlfront"
)

// performance_schema.replication_group_members of a group member: one row
// per member of --group-seeds, in server id order, from the member's raft
// node's view (cluster.Node.Members: the leader's progress, which the
// followers receive from it).
//
//   - MEMBER_ID: the member's server_uuid (groupinfo.go); its server id
//     as text while this member has not heard it.
//   - MEMBER_HOST, MEMBER_PORT: the member's SQL host and port, as MySQL
//     shows them (groupinfo.go); its group address while this member has
//     not heard them.
//   - MEMBER_STATE: ONLINE for a member heard from recently in this
//     member's view, UNREACHABLE otherwise.
//   - MEMBER_ROLE: PRIMARY for the raft leader, SECONDARY for the others.
//   - MEMBER_VERSION: this server's version for every member (all run
//     the same binary); MEMBER_COMMUNICATION_STACK: "raft".

// groupMemberRows answers the table; uuid is this member's server_uuid.
func (g *group) groupMemberRows(uuid string) []sqlfront.GroupMember {
	view := map[uint64]struct{ active, leader bool }{}
	for _, m := range g.node.Members() {
		view[m.ID] = struct{ active, leader bool }{m.Active, m.Leader}
	}
	ids := g.addrs.ids() // in id order
	rows := make([]sqlfront.GroupMember, 0, len(ids))
	for _, id := range ids {
		r := sqlfront.GroupMember{ID: strconv.FormatUint(id, 10), State: "UNREACHABLE", Role: "SECONDARY",
			Version: version(), Stack: "raft"}
		if id == g.cfg.ServerID {
			r.ID = uuid
		}
		r.Host = g.addrs.get(id)
		if u, addr, ok := g.memberSQL(id); ok {
			r.ID, r.Host = u, addr
		}
		if h, p, err := net.SplitHostPort(r.Host); err == nil {
			r.Host = h
			r.Port, _ = strconv.Atoi(p)
		}
		if v, ok := view[id]; ok {
			if v.active {
				r.State = "ONLINE"
			}
			if v.leader {
				r.Role = "PRIMARY"
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// version is MEMBER_VERSION: lockstep's MySQL version without its suffix
// (MySQL prints 8.0.33).
func version() string {
	v := sqlfront.ServerVersion
	for i := 0; i < len(v); i++ {
		if v[i] == '-' {
			return v[:i]
		}
	}
	return v
}
