package cluster

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// TestTransportSnapshotFile: a snapshot whose data names a file travels
// as its message and then the file's bytes, streamed: the receiver gets
// a reference to a file of its own snapshot directory holding the same
// bytes, and the messages after it arrive intact. A file
// that is gone when its turn to be sent comes is a failed snapshot.
func TestTransportSnapshotFile(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 3<<20+12345)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	src := filepath.Join(dir, "ckpt")
	if err := os.WriteFile(src, data, 0o640); err != nil {
		t.Fatal(err)
	}

	got := make(chan pb.Message, 16)
	recvDir := filepath.Join(dir, "received")
	rx, err := NewTransport(TransportOptions{ID: 2, Listen: "127.0.0.1:0", Deliver: func(m pb.Message) { got <- m },
		Unreachable: func(uint64) {}, SnapshotDir: recvDir})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	var snapFailed atomic.Int64
	tx, err := NewTransport(TransportOptions{ID: 1, Listen: "127.0.0.1:0", Peers: map[uint64]string{2: rx.Addr()},
		Deliver: func(pb.Message) {}, Unreachable: func(uint64) {}, SnapshotFailed: func(uint64) { snapFailed.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()

	snap := pb.Message{Type: pb.MsgSnap, To: 2, From: 1, Term: 3,
		Snapshot: &pb.Snapshot{Metadata: pb.SnapshotMetadata{Index: 40, Term: 3}, Data: FileRef(src, int64(len(data)))}}
	after := pb.Message{Type: pb.MsgHeartbeat, To: 2, From: 1, Term: 3, Commit: 40}
	tx.Send([]pb.Message{snap, after})
	wait := func() pb.Message {
		t.Helper()
		select {
		case m := <-got:
			return m
		case <-time.After(20 * time.Second):
			t.Fatal("nothing delivered in 20 s")
		}
		return pb.Message{}
	}
	m := wait()
	if m.Type != pb.MsgSnap || m.Snapshot == nil || m.Snapshot.Metadata.Index != 40 {
		t.Fatalf("first message: %v, want the snapshot at 40", m.Type)
	}
	path, size, ok := ParseFileRef(m.Snapshot.Data)
	if !ok || size != int64(len(data)) || filepath.Dir(path) != recvDir {
		t.Fatalf("delivered snapshot data %q: want a reference to a file in %s of %d bytes", m.Snapshot.Data[:min(len(m.Snapshot.Data), 64)], recvDir, len(data))
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(b, data) {
		t.Fatalf("received file: %d bytes, %v; want the %d bytes sent", len(b), err, len(data))
	}
	if m := wait(); m.Type != pb.MsgHeartbeat || m.Commit != 40 {
		t.Fatalf("the message after the snapshot: %v (commit %d), want the heartbeat", m.Type, m.Commit)
	}

	// A second snapshot replaces the first's file; one whose file is gone
	// fails, and the connection carries on.
	os.Remove(src)
	tx.Send([]pb.Message{snap})
	deadline := time.Now().Add(10 * time.Second)
	for snapFailed.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if snapFailed.Load() == 0 {
		t.Fatal("a snapshot whose file is gone was not reported failed")
	}
	tx.Send([]pb.Message{after})
	if m := wait(); m.Type != pb.MsgHeartbeat {
		t.Fatalf("after the failed snapshot: %v, want the heartbeat", m.Type)
	}
}

// TestFileRef: a reference reads back; the snapshot's own data is not one.
func TestFileRef(t *testing.T) {
	p, n, ok := ParseFileRef(FileRef("/d/checkpoint-1.ckpt", 1<<40))
	if !ok || p != "/d/checkpoint-1.ckpt" || n != 1<<40 {
		t.Fatalf("ParseFileRef(FileRef) = %q, %d, %v", p, n, ok)
	}
	for _, d := range [][]byte{nil, []byte("LSCKPT checkpoint bytes"), []byte(snapFileMagic)} {
		if _, _, ok := ParseFileRef(d); ok {
			t.Errorf("ParseFileRef(%q) took it for a reference", d)
		}
	}
}
