package cluster

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// viewString renders a view: id, L for the leader, + active or - not.
func viewString(ms []Member) string {
	s := ""
	for _, m := range ms {
		s += fmt.Sprint(m.ID)
		if m.Leader {
			s += "L"
		}
		if m.Active {
			s += "+ "
		} else {
			s += "- "
		}
	}
	return s
}

// waitView waits until member m's view of the group is want.
func waitView(t *testing.T, m *tcpMember, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var got string
	for time.Now().Before(deadline) {
		if got = viewString(m.n.Members()); got == want {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("member %d sees %q, want %q within %v", m.id, got, want, within)
}

// TestMembersView: every member of a running group sees every member
// active and the same leader — the followers through the leader's
// members messages — and keeps seeing them so across raft's quorum checks
// (which clear RecentActive every election timeout); a stopped member is
// inactive in the view of the others within a few election timeouts.
func TestMembersView(t *testing.T) {
	_, ms := startTCPGroup(t)
	l := waitLeader(t, ms, 0)
	all := ""
	for _, m := range ms {
		all += fmt.Sprint(m.id)
		if m == l {
			all += "L"
		}
		all += "+ "
	}
	for _, m := range ms {
		waitView(t, m, all, 5*time.Second)
	}
	// Ten election timeouts (20 ms ticks): no live member ever shows
	// inactive, on the leader or through it.
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(7 * time.Millisecond) {
		for _, m := range ms {
			if got := viewString(m.n.Members()); got != all {
				t.Fatalf("member %d sees %q, want %q", m.id, got, all)
			}
		}
	}
	if got := l.n.Members(); got[int(l.id)-1].Match == 0 {
		t.Fatalf("the leader's view has no match index for itself: %+v", got)
	}

	// The leader stops: the two others elect one of them, and both see
	// the old leader inactive.
	l.stop()
	l.rt = nil
	nl := waitLeader(t, ms, l.id)
	want := ""
	for _, m := range ms {
		want += fmt.Sprint(m.id)
		switch m {
		case nl:
			want += "L+ "
		case l:
			want += "- "
		default:
			want += "+ "
		}
	}
	for _, m := range ms {
		if m != l {
			waitView(t, m, want, 3*time.Second)
		}
	}
}

func TestMembersMessageEncoding(t *testing.T) {
	ms := []Member{{ID: 1, Leader: true, Active: true, Match: 1 << 40}, {ID: 7, Learner: true}, {ID: 300, Active: true, Match: 5}}
	got, err := decodeMembers(encodeMembers(ms))
	if err != nil || !reflect.DeepEqual(got, ms) {
		t.Fatalf("decode(encode(%+v)) = %+v, %v", ms, got, err)
	}
	b := encodeMembers(ms)
	if _, err := decodeMembers(b[:len(b)-1]); err == nil {
		t.Fatal("a truncated members message decodes")
	}
}

// TestMembersInfo: what each member says of itself (SetInfo, set after
// the group runs, as the server does once it listens) reaches every other
// member, in Members and MemberInfo; a new Info replaces the old one.
func TestMembersInfo(t *testing.T) {
	_, ms := startTCPGroup(t)
	waitLeader(t, ms, 0)
	for _, m := range ms {
		m.n.SetInfo([]byte(fmt.Sprintf("sql-%d", m.id)))
	}
	ms[1].n.SetInfo([]byte("sql-2-again"))
	want := func(id uint64) string {
		if id == 2 {
			return "sql-2-again"
		}
		return fmt.Sprintf("sql-%d", id)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, m := range ms {
		for _, o := range ms {
			for string(m.n.MemberInfo(o.id)) != want(o.id) && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if got := string(m.n.MemberInfo(o.id)); got != want(o.id) {
				t.Fatalf("member %d has member %d's info %q, want %q", m.id, o.id, got, want(o.id))
			}
		}
		for _, v := range m.n.Members() {
			if string(v.Info) != want(v.ID) {
				t.Fatalf("member %d's view shows member %d's info %q, want %q", m.id, v.ID, v.Info, want(v.ID))
			}
		}
	}
}

// TestMembersInfoAtOnce: SetInfo sends the Info to every member in the
// view at once, not at the next share tick, asking (infoAsk) those whose
// Info it lacks for theirs; a member asked answers with its own, and one
// not asked does not (no echo between two members).
func TestMembersInfoAtOnce(t *testing.T) {
	var sent []pb.Message
	n := &Node{cfg: Config{ID: 1, Send: func(ms []pb.Message) { sent = append(sent, ms...) }}}
	n.members.local = []Member{{ID: 1}, {ID: 2}, {ID: 3}}
	n.members.infos = map[uint64][]byte{3: []byte("sql-3")}
	n.SetInfo([]byte("sql-1"))
	got := ""
	for _, m := range sent {
		got += fmt.Sprintf("%d->%d %s ask=%d; ", m.From, m.To, m.Context, m.Index)
	}
	if want := "1->2 sql-1 ask=1; 1->3 sql-1 ask=0; "; got != want {
		t.Fatalf("SetInfo sent %q, want %q", got, want)
	}
	sent = nil
	n.receiveInfo(pb.Message{Type: msgInfo, From: 2, To: 1, Context: []byte("sql-2"), Index: infoAsk})
	n.receiveInfo(pb.Message{Type: msgInfo, From: 3, To: 1, Context: []byte("sql-3b")})
	if len(sent) != 1 || sent[0].To != 2 || string(sent[0].Context) != "sql-1" || sent[0].Index != 0 {
		t.Fatalf("answers to two Info messages (one asking): %+v, want one to member 2 with sql-1", sent)
	}
	if string(n.MemberInfo(2)) != "sql-2" || string(n.MemberInfo(3)) != "sql-3b" {
		t.Fatalf("infos kept: 2=%q 3=%q", n.MemberInfo(2), n.MemberInfo(3))
	}
}
