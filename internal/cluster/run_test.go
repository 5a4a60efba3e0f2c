package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"lockstep/internal/txlog"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// listSM records applied entries (the runtime test's state machine).
type listSM struct {
	mu   sync.Mutex
	last uint64
	data map[uint64]string
}

func (m *listSM) Apply(index, _ uint64, data []byte, _ bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if index != m.last+1 {
		return fmt.Errorf("applied %d after %d", index, m.last)
	}
	m.last = index
	if data != nil {
		m.data[index] = string(data)
	}
	return nil
}

func (m *listSM) applied() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last
}

type tcpMember struct {
	id   uint64
	dir  string
	addr string
	st   *Storage
	n    *Node
	rt   *Runtime
	tr   *Transport
	sm   *listSM
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func (m *tcpMember) start(t *testing.T, peers map[uint64]string, bootstrap []uint64) {
	t.Helper()
	st, err := OpenStorage(StorageOptions{Dir: m.dir, Log: txlog.Options{MarkInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if bootstrap != nil {
		if err := st.Bootstrap(bootstrap); err != nil {
			t.Fatal(err)
		}
	}
	m.st = st
	m.sm = &listSM{last: st.persistedState().snap.Index, data: map[uint64]string{}}
	var tr *Transport
	n, err := NewNode(Config{ID: m.id, Storage: st, StateMachine: m.sm,
		Send: func(ms []pb.Message) { tr.Send(ms) }, ElectionTick: 10, HeartbeatTick: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr, err = NewTransport(TransportOptions{ID: m.id, Listen: m.addr, Peers: peers,
		Deliver: n.Receive, Unreachable: n.ReportUnreachable})
	if err != nil {
		t.Fatal(err)
	}
	m.n, m.tr = n, tr
	m.rt = Start(n, 20*time.Millisecond)
}

func (m *tcpMember) stop() {
	m.rt.Stop()
	m.tr.Close()
	m.st.Close()
}

func waitLeader(t *testing.T, ms []*tcpMember, skip uint64) *tcpMember {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range ms {
			if m.id != skip && m.n.Status().State == raft.StateLeader {
				return m
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no leader within 10 s")
	return nil
}

// startTCPGroup starts three bootstrapped members on real logs and the
// TCP transport; they stop when the test ends (those not stopped before).
func startTCPGroup(t *testing.T) (map[uint64]string, []*tcpMember) {
	t.Helper()
	peers := map[uint64]string{}
	var ms []*tcpMember
	for id := uint64(1); id <= 3; id++ {
		m := &tcpMember{id: id, dir: t.TempDir(), addr: freeAddr(t)}
		peers[id] = m.addr
		ms = append(ms, m)
	}
	for _, m := range ms {
		m.start(t, peers, []uint64{1, 2, 3})
	}
	t.Cleanup(func() {
		for _, m := range ms {
			if m.rt != nil {
				m.stop()
			}
		}
	})
	return peers, ms
}

// TestGroupOverTCP runs three members with the runtime, real logs in
// temporary directories and the TCP transport: a leader is elected,
// proposals commit and reach every member; the leader stops, another is
// elected and goes on; the old one restarts and catches up.
func TestGroupOverTCP(t *testing.T) {
	peers, ms := startTCPGroup(t)

	propose := func(l *tcpMember, from, to int) uint64 {
		var ps []*Proposal
		for i := from; i < to; i++ {
			ps = append(ps, l.n.Propose([]byte(fmt.Sprintf("v%d", i))))
		}
		var last uint64
		for _, p := range ps {
			select {
			case <-p.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("a proposal did not end within 10 s")
			}
			if err := p.Err(); err != nil {
				t.Fatalf("proposal: %v", err)
			}
			last = max(last, p.Index())
		}
		return last
	}
	waitApplied := func(idx uint64, members ...*tcpMember) {
		deadline := time.Now().Add(10 * time.Second)
		for _, m := range members {
			for m.sm.applied() < idx {
				if time.Now().After(deadline) {
					t.Fatalf("member %d applied %d, want %d", m.id, m.sm.applied(), idx)
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
	}

	l := waitLeader(t, ms, 0)
	last := propose(l, 0, 500)
	waitApplied(last, ms...)

	// The leader stops; the others elect one of themselves.
	l.stop()
	l.rt = nil
	stopped := time.Now()
	l2 := waitLeader(t, ms, l.id)
	t.Logf("new leader %d elected %v after the old one stopped", l2.id, time.Since(stopped))
	last = propose(l2, 500, 1000)
	var others []*tcpMember
	for _, m := range ms {
		if m != l {
			others = append(others, m)
		}
	}
	waitApplied(last, others...)

	// The old leader restarts and catches up.
	l.start(t, peers, nil)
	waitApplied(last, l)
	for _, m := range ms {
		for i := uint64(2); i <= last; i++ {
			if got, want := m.sm.data[i], others[0].sm.data[i]; got != want {
				t.Fatalf("member %d index %d = %q, member %d has %q", m.id, i, got, others[0].id, want)
			}
		}
	}
}

// TestReadIndex: every member, leader or follower, gets a read index at or
// above what was committed before it asked; with the leader gone and no
// quorum, the request times out.
func TestReadIndex(t *testing.T) {
	_, ms := startTCPGroup(t)
	l := waitLeader(t, ms, 0)
	var last uint64
	for i := 0; i < 20; i++ {
		p := l.n.Propose([]byte(fmt.Sprint(i)))
		<-p.Done()
		if p.Err() != nil {
			t.Fatal(p.Err())
		}
		last = p.Index()
	}
	for _, m := range ms {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		idx, err := m.n.ReadIndex(ctx)
		cancel()
		if err != nil || idx < last {
			t.Fatalf("member %d: read index %d, %v; want >= %d", m.id, idx, err, last)
		}
	}
	// Two members down: no quorum, no read index.
	var survivor *tcpMember
	for _, m := range ms {
		if m != l && survivor == nil {
			survivor = m
			continue
		}
		m.stop()
		m.rt = nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	if idx, err := survivor.n.ReadIndex(ctx); !errors.Is(err, ErrNoReadIndex) {
		t.Fatalf("read index without a quorum: %d, %v", idx, err)
	}
}
