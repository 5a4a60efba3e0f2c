package cluster

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// Transport carries raft messages between members over TCP: each frame a
// 4-byte little-endian length and a raftpb.Message. One connection per
// peer per direction; a sender goroutine per peer drains its queue, writes
// a batch and flushes once, and on a broken connection reports the peer
// unreachable to raft at once and dials again after a pause. A full queue
// drops messages (raft resends what matters).
//
// Not done: authentication and TLS of group traffic (the group address
// must be on a trusted network), and snapshots larger than a frame.
type Transport struct {
	id      uint64
	ln      net.Listener
	deliver func(pb.Message)
	report  func(id uint64)

	mu     sync.Mutex
	peersP atomic.Pointer[map[uint64]*peer] // replaced whole by AddPeer
	conns  map[net.Conn]bool
	// cut drops every message sent and received (Isolate: a network
	// partition around this member, for tests).
	cut  atomic.Bool
	done chan struct{}
	wg   sync.WaitGroup
}

// maxFrame bounds one message on the wire (a commit group is at most
// MaxSizePerMsg of entries, a few MiB; 256 MiB leaves room for a large
// transaction).
const maxFrame = 256 << 20

const queueLen = 4096

type peer struct {
	id   uint64
	addr string
	q    chan pb.Message
}

// TransportOptions configure NewTransport.
type TransportOptions struct {
	ID uint64
	// Listen is the address group traffic is received on.
	Listen string
	// Peers maps every other member's id to its group address.
	Peers map[uint64]string
	// Deliver receives each message read (Node.Receive).
	Deliver func(pb.Message)
	// Unreachable is told of a peer whose connection broke
	// (Node.ReportUnreachable).
	Unreachable func(id uint64)
}

// NewTransport listens on o.Listen and starts a sender per peer.
func NewTransport(o TransportOptions) (*Transport, error) {
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, fmt.Errorf("cluster: listening for group traffic on %s: %w", o.Listen, err)
	}
	t := &Transport{id: o.ID, ln: ln, deliver: o.Deliver, report: o.Unreachable,
		conns: map[net.Conn]bool{}, done: make(chan struct{})}
	peers := map[uint64]*peer{}
	for id, addr := range o.Peers {
		if id == o.ID {
			continue
		}
		p := &peer{id: id, addr: addr, q: make(chan pb.Message, queueLen)}
		peers[id] = p
		t.wg.Add(1)
		go t.sendLoop(p)
	}
	t.peersP.Store(&peers)
	t.wg.Add(1)
	go t.acceptLoop()
	return t, nil
}

// AddPeer makes the transport reach member id at addr (a member added to
// the group); a known member keeps its address.
func (t *Transport) AddPeer(id uint64, addr string) {
	if id == t.id || addr == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.done:
		return
	default:
	}
	peers := make(map[uint64]*peer, len(*t.peerMap())+1)
	for k, v := range *t.peerMap() {
		peers[k] = v
	}
	if _, ok := peers[id]; ok {
		return
	}
	p := &peer{id: id, addr: addr, q: make(chan pb.Message, queueLen)}
	peers[id] = p
	t.peersP.Store(&peers)
	t.wg.Add(1)
	go t.sendLoop(p)
}

func (t *Transport) peerMap() *map[uint64]*peer { return t.peersP.Load() }

// Addr is the address the transport listens on.
func (t *Transport) Addr() string { return t.ln.Addr().String() }

// Isolate cuts this member off from the others (every message it sends
// or receives is dropped) or heals the cut: a network partition, for
// tests of a primary cut off from the group.
func (t *Transport) Isolate(on bool) { t.cut.Store(on) }

// Send queues messages for their peers; it never blocks.
func (t *Transport) Send(msgs []pb.Message) {
	if t.cut.Load() {
		return
	}
	peers := *t.peerMap()
	for _, m := range msgs {
		p := peers[m.To]
		if p == nil {
			continue
		}
		select {
		case p.q <- m:
		default: // full: dropped, raft resends
		}
	}
}

// Close stops listening, closes every connection and waits for the
// transport's goroutines.
func (t *Transport) Close() error {
	close(t.done)
	err := t.ln.Close()
	t.mu.Lock()
	for c := range t.conns {
		c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
	return err
}

func (t *Transport) track(c net.Conn, on bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.done:
		return false
	default:
	}
	if on {
		t.conns[c] = true
	} else {
		delete(t.conns, c)
	}
	return true
}

func (t *Transport) acceptLoop() {
	defer t.wg.Done()
	for {
		c, err := t.ln.Accept()
		if err != nil {
			select {
			case <-t.done:
				return
			default:
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !t.track(c, true) {
			c.Close()
			return
		}
		t.wg.Add(1)
		go t.readLoop(c)
	}
}

func (t *Transport) readLoop(c net.Conn) {
	defer t.wg.Done()
	defer func() {
		t.track(c, false)
		c.Close()
	}()
	r := bufio.NewReaderSize(c, 64<<10)
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		n := binary.LittleEndian.Uint32(hdr[:])
		if n > maxFrame {
			return // not a member speaking: drop the connection
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return
		}
		var m pb.Message
		if err := m.Unmarshal(b); err != nil {
			return
		}
		if t.cut.Load() {
			continue
		}
		t.deliver(m)
	}
}

func (t *Transport) sendLoop(p *peer) {
	defer t.wg.Done()
	var (
		c   net.Conn
		w   *bufio.Writer
		buf []byte
	)
	closeConn := func() {
		if c != nil {
			t.track(c, false)
			c.Close()
			c = nil
		}
	}
	defer closeConn()
	for {
		var m pb.Message
		select {
		case <-t.done:
			return
		case m = <-p.q:
		}
		if c == nil {
			conn, err := net.DialTimeout("tcp", p.addr, time.Second)
			if err != nil {
				t.report(p.id)
				t.pause()
				continue // this message is dropped; raft resends
			}
			if !t.track(conn, true) {
				conn.Close()
				return
			}
			c, w = conn, bufio.NewWriterSize(conn, 64<<10)
		}
		err := error(nil)
		for {
			if buf, err = frame(buf[:0], m); err != nil {
				break
			}
			if _, err = w.Write(buf); err != nil {
				break
			}
			select {
			case m = <-p.q:
				continue
			default:
			}
			break
		}
		if err == nil {
			c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			err = w.Flush()
		}
		if err != nil {
			closeConn()
			t.report(p.id)
		}
	}
}

func (t *Transport) pause() {
	select {
	case <-t.done:
	case <-time.After(100 * time.Millisecond):
	}
}

func frame(dst []byte, m pb.Message) ([]byte, error) {
	n := m.Size()
	if n > maxFrame {
		return dst, errors.New("cluster: message larger than a frame")
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	off := len(dst)
	dst = append(dst, make([]byte, n)...)
	if _, err := m.MarshalTo(dst[off:]); err != nil {
		return dst[:off-4], fmt.Errorf("cluster: encoding a message: %w", err)
	}
	return dst, nil
}
