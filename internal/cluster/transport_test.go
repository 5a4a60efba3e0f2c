package cluster

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// TestTransportQueueBound: messages for a peer that accepts the connection
// but never reads (stalled) fill the socket's buffers, then the peer's
// queue up to its byte bound and no further: the rest are dropped and
// counted, raft is told the peer is unreachable (once until a write
// succeeds) and that a dropped snapshot failed. Once the peer reads, the
// queue drains.
func TestTransportQueueBound(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	release := make(chan struct{})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				<-release // stalled until released, then reads everything
				buf := make([]byte, 1<<20)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()

	const bound = 1 << 20
	var unreachable, snapFailed atomic.Int64
	tr, err := NewTransport(TransportOptions{ID: 1, Listen: "127.0.0.1:0", Peers: map[uint64]string{2: ln.Addr().String()},
		Deliver: func(pb.Message) {}, Unreachable: func(uint64) { unreachable.Add(1) },
		SnapshotFailed: func(uint64) { snapFailed.Add(1) }, MaxQueueBytes: bound})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()

	data := make([]byte, 64<<10)
	msg := pb.Message{Type: pb.MsgApp, To: 2, From: 1, Entries: []pb.Entry{{Index: 1, Term: 1, Data: data}}}
	size := int64(msg.Size())
	const total = 2000 // 128 MiB: far more than the socket buffers hold
	for range total {
		tr.Send([]pb.Message{msg})
		time.Sleep(50 * time.Microsecond)
	}
	// Let the sender fill the socket and block.
	time.Sleep(200 * time.Millisecond)
	tr.Send([]pb.Message{{Type: pb.MsgSnap, To: 2, From: 1, Snapshot: &pb.Snapshot{Metadata: pb.SnapshotMetadata{Index: 5, Term: 1}}}})
	st := tr.Stats()[2]
	t.Logf("queued %d bytes (max %d) in %d messages, %d dropped, %d unreachable reports", st.QueuedBytes, st.MaxQueuedBytes, st.QueuedMsgs, st.Dropped, unreachable.Load())
	if st.MaxQueuedBytes > bound+size {
		t.Fatalf("the queue held up to %d bytes, bound %d (+ one message of %d)", st.MaxQueuedBytes, bound, size)
	}
	if st.Dropped == 0 {
		t.Fatal("nothing dropped: the peer did not stall the sender")
	}
	if unreachable.Load() == 0 {
		t.Fatal("raft was not told of the drops")
	}
	if unreachable.Load() > 3 {
		t.Fatalf("%d unreachable reports for one stall: want one until a write succeeds", unreachable.Load())
	}
	if snapFailed.Load() != 1 {
		t.Fatalf("a dropped snapshot reported failed %d times, want 1", snapFailed.Load())
	}

	close(release)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if st := tr.Stats()[2]; st.QueuedBytes == 0 && st.QueuedMsgs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue did not drain once the peer read: %+v", tr.Stats()[2])
		}
	}
}

// TestTransportLargeEntry: a message of 300 MB (over the old 256 MiB
// frame bound) reaches the peer whole, and heartbeats sent while it is
// queued over the queue's byte bound are queued behind it, not dropped
// (a dropped heartbeat is a leader the peer does not hear from: it
// elects another).
func TestTransportLargeEntry(t *testing.T) {
	got := make(chan pb.Message, 16)
	recv, err := NewTransport(TransportOptions{ID: 2, Listen: "127.0.0.1:0", Peers: map[uint64]string{},
		Deliver: func(m pb.Message) { got <- m }, Unreachable: func(uint64) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()
	var unreachable atomic.Int64
	send, err := NewTransport(TransportOptions{ID: 1, Listen: "127.0.0.1:0", Peers: map[uint64]string{2: recv.Addr()},
		Deliver: func(pb.Message) {}, Unreachable: func(uint64) { unreachable.Add(1) }, MaxQueueBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer send.Close()
	big := pb.Message{Type: pb.MsgApp, To: 2, From: 1, Entries: []pb.Entry{{Index: 1, Term: 1, Data: make([]byte, 300<<20)}}}
	hb := pb.Message{Type: pb.MsgHeartbeat, To: 2, From: 1, Term: 1}
	send.Send([]pb.Message{big, hb, hb, hb})
	want := []pb.MessageType{pb.MsgApp, pb.MsgHeartbeat, pb.MsgHeartbeat, pb.MsgHeartbeat}
	for i, typ := range want {
		select {
		case m := <-got:
			if m.Type != typ {
				t.Fatalf("message %d: %v, want %v", i, m.Type, typ)
			}
			if typ == pb.MsgApp && len(m.Entries[0].Data) != 300<<20 {
				t.Fatalf("the large entry arrived with %d bytes", len(m.Entries[0].Data))
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("message %d (%v) did not arrive; dropped %d, unreachable reports %d", i, typ, send.Stats()[2].Dropped, unreachable.Load())
		}
	}
	if d := send.Stats()[2].Dropped; d != 0 {
		t.Fatalf("%d messages dropped", d)
	}
}

// TestTransportConnLost: when a member's process goes (its transport
// closes, its connections with it), the transport that read its messages
// reports it once per broken connection (ConnLost); its own Close
// reports nothing.
func TestTransportConnLost(t *testing.T) {
	lost := make(chan uint64, 8)
	delivered := make(chan struct{}, 1)
	deliver := func(pb.Message) {
		select {
		case delivered <- struct{}{}:
		default:
		}
	}
	recv, err := NewTransport(TransportOptions{ID: 2, Listen: "127.0.0.1:0", Peers: map[uint64]string{},
		Deliver: deliver, Unreachable: func(uint64) {}, ConnLost: func(id uint64) { lost <- id }})
	if err != nil {
		t.Fatal(err)
	}
	send, err := NewTransport(TransportOptions{ID: 1, Listen: "127.0.0.1:0", Peers: map[uint64]string{2: recv.Addr()},
		Deliver: func(pb.Message) {}, Unreachable: func(uint64) {}})
	if err != nil {
		t.Fatal(err)
	}
	send.Send([]pb.Message{{Type: pb.MsgHeartbeat, From: 1, To: 2, Term: 1}})
	select {
	case <-delivered:
	case <-time.After(5 * time.Second):
		t.Fatal("the heartbeat did not arrive")
	}
	send.Close()
	select {
	case id := <-lost:
		if id != 1 {
			t.Fatalf("ConnLost(%d), want 1", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no ConnLost after the sender closed")
	}
	// The receiver's own Close: its connections end without a report.
	send2, err := NewTransport(TransportOptions{ID: 3, Listen: "127.0.0.1:0", Peers: map[uint64]string{2: recv.Addr()},
		Deliver: func(pb.Message) {}, Unreachable: func(uint64) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer send2.Close()
	send2.Send([]pb.Message{{Type: pb.MsgHeartbeat, From: 3, To: 2, Term: 1}})
	select {
	case <-delivered:
	case <-time.After(5 * time.Second):
		t.Fatal("the second heartbeat did not arrive")
	}
	recv.Close()
	select {
	case id := <-lost:
		t.Fatalf("ConnLost(%d) after the receiver's own Close", id)
	case <-time.After(200 * time.Millisecond):
	}
}
