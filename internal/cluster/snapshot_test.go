package cluster

import (
	"bytes"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"lockstep/internal/testutil/crashfs"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// TestSnapshotOffRaftStep: raft asks its storage for a snapshot on the
// raft step, again on every proposal while the answer is "temporarily
// unavailable" (a new member waits for the primary's checkpoint). The
// storage must not read the checkpoint there: Snapshot answers at once
// while the source is still reading (here, blocked), reads each snapshot
// once however often it is asked, and gives the data once read; a newer
// snapshot recorded drops the older data.
func TestSnapshotOffRaftStep(t *testing.T) {
	st := openTestStorage(t, crashfs.New())
	defer st.Close()
	if err := st.Bootstrap([]uint64{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, ents(1, 2, 20))
	meta := pb.SnapshotMetadata{Index: 10, Term: 1, ConfState: pb.ConfState{Voters: []uint64{1, 2, 3}, Learners: []uint64{4}}}
	if err := st.SetSnapshot(meta); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	release := make(chan struct{})
	st.SetSource(func(m pb.SnapshotMetadata) ([]byte, error) {
		calls.Add(1)
		<-release // a slow read of a large checkpoint
		return []byte("checkpoint@" + strconv.FormatUint(m.Index, 10)), nil
	})

	// As raft asks on every proposal: each call must answer without
	// waiting for the read.
	asked := make(chan error, 1)
	go func() {
		for range 1000 {
			if _, err := st.Snapshot(); !errors.Is(err, raft.ErrSnapshotTemporarilyUnavailable) {
				asked <- err
				return
			}
		}
		asked <- nil
	}()
	select {
	case err := <-asked:
		if err != nil {
			close(release)
			t.Fatalf("Snapshot while the checkpoint is being read: %v, want unavailable", err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("Snapshot waited for the checkpoint to be read: the raft step would be blocked")
	}
	close(release)
	var snap pb.Snapshot
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		s, err := st.Snapshot()
		if err == nil {
			snap = s
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the snapshot never became available: %v", err)
		}
	}
	if snap.Metadata.Index != 10 || !bytes.Equal(snap.Data, []byte("checkpoint@10")) {
		t.Fatalf("snapshot %d %q", snap.Metadata.Index, snap.Data)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the source read the snapshot %d times for 1,000+ requests, want once", n)
	}
	if _, err := st.Snapshot(); err != nil {
		t.Fatalf("a second request for the same snapshot: %v", err)
	}

	// A newer snapshot: the older data is dropped, the new one read.
	meta.Index = 15
	if err := st.SetSnapshot(meta); err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	held := st.prep.data
	st.mu.Unlock()
	if held != nil {
		t.Fatal("the older snapshot's data is still held")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		s, err := st.Snapshot()
		if err == nil {
			if s.Metadata.Index != 15 {
				t.Fatalf("snapshot at %d, want 15", s.Metadata.Index)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the newer snapshot never became available: %v", err)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d reads, want 2", n)
	}
}

// TestSnapshotSourceFailure: a source that cannot give the data yet (the
// checkpoint predates the membership) is not asked again at every
// request, and is asked again once a newer snapshot is recorded.
func TestSnapshotSourceFailure(t *testing.T) {
	st := openTestStorage(t, crashfs.New())
	defer st.Close()
	if err := st.Bootstrap([]uint64{1}); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, ents(1, 2, 20))
	if err := st.SetSnapshot(pb.SnapshotMetadata{Index: 10, Term: 1}); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	st.SetSource(func(m pb.SnapshotMetadata) ([]byte, error) {
		calls.Add(1)
		if m.Index < 12 {
			return nil, errors.New("predates the membership")
		}
		return []byte("ok"), nil
	})
	st.Snapshot()
	for deadline := time.Now().Add(10 * time.Second); calls.Load() == 0 || st.preparing(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the source was never asked")
		}
	}
	for range 1000 {
		if _, err := st.Snapshot(); err == nil {
			t.Fatal("a snapshot whose source failed was given")
		}
	}
	if n := calls.Load(); n > 2 {
		t.Fatalf("a failing source was asked %d times in a burst of requests", n)
	}
	if err := st.SetSnapshot(pb.SnapshotMetadata{Index: 12, Term: 1}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if s, err := st.Snapshot(); err == nil {
			if string(s.Data) != "ok" || s.Metadata.Index != 12 {
				t.Fatalf("snapshot %d %q", s.Metadata.Index, s.Data)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the newer snapshot never became available")
		}
	}
}

// preparing reports whether a goroutine is reading snapshot data.
func (s *Storage) preparing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prep.running
}
