package cluster

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"lockstep/internal/txlog"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// batchSM is a BatchStateMachine: Apply only queues an entry; Flush
// applies what is queued (after a pause, as a parallel applier would
// take) and checks that the node never reported an entry applied before
// its Flush.
type batchSM struct {
	n *Node

	mu      sync.Mutex
	fed     uint64 // the last entry given to Apply
	applied uint64 // the last entry Flush applied
	flushes int
	failAt  uint64 // Flush fails once it would cover this entry
	errs    []string
}

func (m *batchSM) Apply(index, _ uint64, _ []byte, _ bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st := m.n.Status().Applied; st > m.applied {
		m.errs = append(m.errs, fmt.Sprintf("Status.Applied %d while entry %d was given to Apply and only %d flushed", st, index, m.applied))
	}
	m.fed = index
	return nil
}

func (m *batchSM) Flush() error {
	time.Sleep(time.Millisecond)
	m.mu.Lock()
	defer m.mu.Unlock()
	if st := m.n.Status().Applied; st > m.applied {
		m.errs = append(m.errs, fmt.Sprintf("Status.Applied %d before the flush of %d (flushed %d)", st, m.fed, m.applied))
	}
	if m.failAt != 0 && m.fed >= m.failAt {
		return errors.New("flush failed")
	}
	m.applied = m.fed
	m.flushes++
	return nil
}

// TestBatchStateMachine: with a BatchStateMachine the node reports an
// entry applied (Status.Applied) only after the Flush that covers it, its
// proposers still hear of their entries' commit at Apply, and a failed
// Flush stops the node.
func TestBatchStateMachine(t *testing.T) {
	st, err := OpenStorage(StorageOptions{Dir: t.TempDir(), Log: txlog.Options{MarkInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Bootstrap([]uint64{1}); err != nil {
		t.Fatal(err)
	}
	sm := &batchSM{}
	n, err := NewNode(Config{ID: 1, Storage: st, StateMachine: sm, Send: func([]pb.Message) {}, ElectionTick: 10, HeartbeatTick: 1})
	if err != nil {
		t.Fatal(err)
	}
	sm.n, sm.applied = n, n.Status().Applied
	rt := Start(n, 5*time.Millisecond)
	defer rt.Stop()
	for start := time.Now(); n.Status().State != raft.StateLeader; time.Sleep(time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the single member did not lead within 10 s")
		}
	}
	var ps []*Proposal
	for i := range 200 {
		ps = append(ps, n.Propose([]byte(fmt.Sprint(i))))
	}
	for _, p := range ps {
		select {
		case <-p.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("a proposal did not end within 10 s")
		}
		if p.Err() != nil {
			t.Fatal(p.Err())
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for n.Status().Applied < n.Status().Commit && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	sm.mu.Lock()
	for _, e := range sm.errs {
		t.Error(e)
	}
	if s := n.Status(); s.Applied != sm.applied || s.Applied != s.Commit || sm.flushes == 0 {
		t.Errorf("Status.Applied %d, commit %d, flushed up to %d in %d flushes", s.Applied, s.Commit, sm.applied, sm.flushes)
	}
	sm.failAt = sm.fed + 1
	sm.mu.Unlock()
	n.Propose([]byte("fails"))
	for n.Err() == nil && time.Now().Before(deadline.Add(5*time.Second)) {
		time.Sleep(time.Millisecond)
	}
	if err := n.Err(); err == nil {
		t.Fatal("a failed Flush did not stop the node")
	}
}
