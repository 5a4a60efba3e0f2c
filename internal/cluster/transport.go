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

	"lockstep/internal/stat"
	"lockstep/internal/txlog"
)

// Transport carries raft messages between members over TCP: each frame a
// 4-byte little-endian length and a raftpb.Message. One connection per
// peer per direction; a sender goroutine per peer drains its queue, writes
// a batch and flushes once, and on a broken connection reports the peer
// unreachable to raft at once and dials again after a pause.
//
// Flow control: a peer's queue is bounded in messages (queueLen) and in
// bytes (TransportOptions.MaxQueueBytes). A message that finds it full is
// dropped and the peer reported unreachable to raft (once until the next
// successful write), which puts it back to probing from what the peer has
// acknowledged: raft resends what matters, and memory held for a slow or
// stalled peer stays bounded whatever raft's own in-flight accounting
// believes (it resets at every report, while the messages it sent before
// may still sit in the queue). A dropped snapshot is reported as failed,
// so that raft sends it again.
//
// A snapshot whose data names a file (snapfile.go) is streamed: its
// message's frame, then the file's bytes.
//
// Not done: authentication and TLS of group traffic (the group address
// must be on a trusted network).
type Transport struct {
	id       uint64
	ln       net.Listener
	deliver  func(pb.Message)
	report   func(id uint64)
	snapFail func(id uint64)
	snapSent func(id uint64)
	connLost func(id uint64)
	maxBytes int64
	snapDir  string
	recvHook atomic.Pointer[func(size int)]

	mu     sync.Mutex
	peersP atomic.Pointer[map[uint64]*peer] // replaced whole by AddPeer
	conns  map[net.Conn]bool
	// cut drops every message sent and received (Isolate: a network
	// partition around this member, for tests).
	cut  atomic.Bool
	done chan struct{}
	wg   sync.WaitGroup
}

// MaxEntryData is the most data one entry proposed through a Node can
// carry: the log's largest payload (txlog.MaxPayload) less the entry's
// own bytes, with room to spare. A group member caps a commit group's
// entry at it (group_replication_transaction_size_limit, 0: this).
const MaxEntryData = txlog.MaxPayload - 4<<10

// maxFrame bounds one message on the wire: one entry of MaxEntryData
// (raft puts a large entry in a message of its own: MaxSizePerMsg, 1 MiB,
// admits a first entry of any size and adds others only while the
// message stays under it) and the message's own fields. A larger length
// is not a member speaking: the connection is dropped.
const maxFrame = MaxEntryData + 1<<20

// A message of at most smallMessage bytes (heartbeats, votes, responses;
// not a snapshot, which names a file to stream) is queued even when the peer's queue is over its byte bound (only the
// message bound applies): a large entry queued for a peer must not starve
// its heartbeats, or the peer stops hearing from the leader and elects
// another.
const smallMessage = 4 << 10

const queueLen = 4096

// DefaultMaxQueueBytes bounds the bytes queued for one peer: room for
// raft's in-flight window (Config.MaxInflightBytes, 32 MiB) and its
// heartbeats.
const DefaultMaxQueueBytes = 64 << 20

// writeTimeout bounds one batch's writes to a peer, plus a second per
// minWriteRate bytes of each frame (a large entry on a slow link); a peer
// that takes longer is treated as a broken connection.
const (
	writeTimeout = 5 * time.Second
	minWriteRate = 8 << 20 // bytes per second
)

// writeDeadline is the deadline for writing n more bytes from now.
func writeDeadline(n int) time.Time {
	return time.Now().Add(writeTimeout + time.Duration(n/minWriteRate)*time.Second)
}

type queued struct {
	m    pb.Message
	size int64
}

type peer struct {
	id   uint64
	addr string
	q    chan queued

	bytes, maxBytes, dropped, msgs atomic.Int64
	// reported: a drop was reported to raft since the last good write.
	reported atomic.Bool
}

func newPeer(id uint64, addr string) *peer {
	return &peer{id: id, addr: addr, q: make(chan queued, queueLen)}
}

// PeerStats is what the transport holds and has dropped for one peer.
type PeerStats struct {
	QueuedBytes    int64 // bytes queued now
	MaxQueuedBytes int64 // the most bytes queued at once since the start
	QueuedMsgs     int64 // messages queued now
	Dropped        int64 // messages dropped because the queue was full
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
	// Unreachable is told of a peer whose connection broke, or whose
	// queue was full (Node.ReportUnreachable).
	Unreachable func(id uint64)
	// SnapshotFailed is told of a snapshot that did not reach the peer
	// (Node.ReportSnapshotFailed); nil: not told.
	SnapshotFailed func(id uint64)
	// SnapshotSent is told of a snapshot written whole to the peer's
	// connection (Node.ReportSnapshotSent); nil: not told.
	SnapshotSent func(id uint64)
	// ConnLost is told of a member whose connection to this one broke
	// while this transport runs: the read of the member's messages ended
	// (Node.ReportConnLost, leaderlost.go); nil: not told.
	ConnLost func(id uint64)
	// MaxQueueBytes bounds the bytes queued per peer (0:
	// DefaultMaxQueueBytes). A message is queued while fewer bytes are
	// queued than this, so the queue holds at most this plus one message.
	MaxQueueBytes int64
	// SnapshotDir is where snapshot files sent to this member are
	// received (snapfile.go); "": a snapshot that names a file is dropped.
	SnapshotDir string
}

// NewTransport listens on o.Listen and starts a sender per peer.
func NewTransport(o TransportOptions) (*Transport, error) {
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, fmt.Errorf("cluster: listening for group traffic on %s: %w", o.Listen, err)
	}
	t := &Transport{id: o.ID, ln: ln, deliver: o.Deliver, report: o.Unreachable, snapFail: o.SnapshotFailed, snapSent: o.SnapshotSent, connLost: o.ConnLost,
		maxBytes: o.MaxQueueBytes, snapDir: o.SnapshotDir, conns: map[net.Conn]bool{}, done: make(chan struct{})}
	if t.snapDir != "" {
		removeSnapshotFiles(t.snapDir) // received before a restart, never installed
	}
	if t.maxBytes <= 0 {
		t.maxBytes = DefaultMaxQueueBytes
	}
	peers := map[uint64]*peer{}
	for id, addr := range o.Peers {
		if id == o.ID {
			continue
		}
		p := newPeer(id, addr)
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
	p := newPeer(id, addr)
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

// SetReceiveHook installs f to run before each message read (of size
// bytes) is delivered (nil: none): tests slow down or stall this member's
// receiving with it.
func (t *Transport) SetReceiveHook(f func(size int)) {
	if f == nil {
		t.recvHook.Store(nil)
		return
	}
	t.recvHook.Store(&f)
}

// Stats returns what is queued and was dropped for each peer.
func (t *Transport) Stats() map[uint64]PeerStats {
	out := map[uint64]PeerStats{}
	for id, p := range *t.peerMap() {
		out[id] = PeerStats{QueuedBytes: p.bytes.Load(), MaxQueuedBytes: p.maxBytes.Load(),
			QueuedMsgs: p.msgs.Load(), Dropped: p.dropped.Load()}
	}
	return out
}

// Send queues messages for their peers; it never blocks. A message that
// finds its peer's queue full (in messages or bytes) is dropped.
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
		size := int64(m.Size())
		if (size > smallMessage || m.Type == pb.MsgSnap) && p.bytes.Load() >= t.maxBytes {
			t.drop(p, m)
			continue
		}
		select {
		case p.q <- queued{m: m, size: size}:
			n := p.bytes.Add(size)
			stat.Inc(&p.msgs)
			if stat.On { // the high-water mark is only shown
				for cur := p.maxBytes.Load(); n > cur && !p.maxBytes.CompareAndSwap(cur, n); cur = p.maxBytes.Load() {
				}
			}
		default:
			t.drop(p, m)
		}
	}
}

// drop counts a message not queued for p and tells raft: the peer is
// unreachable (once until a write to it succeeds again), and a snapshot
// failed.
func (t *Transport) drop(p *peer, m pb.Message) {
	stat.Inc(&p.dropped)
	if m.Type == pb.MsgSnap && t.snapFail != nil {
		t.snapFail(p.id)
	}
	if p.reported.CompareAndSwap(false, true) {
		t.report(p.id)
	}
}

// dequeued accounts for a message taken off p's queue.
func (p *peer) dequeued(q queued) pb.Message {
	p.bytes.Add(-q.size)
	stat.Add(&p.msgs, -1)
	return q.m
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
	var from uint64 // the sender of the messages read so far
	defer func() {
		t.track(c, false)
		c.Close()
		t.lost(from)
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
		size := int(n)
		if m.Type == pb.MsgSnap && m.Snapshot != nil {
			if _, fsize, ok := ParseFileRef(m.Snapshot.Data); ok {
				// The file follows its message (snapfile.go).
				dir := t.snapDir
				if t.cut.Load() {
					dir = ""
				}
				path, err := receiveSnapshotFile(r, dir, m.Snapshot.Metadata.Index, m.Snapshot.Metadata.Term, fsize)
				if err != nil {
					return // the sender sees the connection break: the snapshot failed
				}
				if path == "" {
					continue // dropped (cut off, or nowhere to keep it)
				}
				m.Snapshot.Data = FileRef(path, fsize)
				size += int(min(fsize, 1<<30))
			}
		}
		if t.cut.Load() {
			continue
		}
		if h := t.recvHook.Load(); h != nil {
			(*h)(size)
		}
		from = m.From
		t.deliver(m)
	}
}

// lost reports that the connection member from's messages came on has
// broken, unless the transport is closing or cut off (Isolate) or no
// message came on it.
func (t *Transport) lost(from uint64) {
	if from == 0 || t.connLost == nil || t.cut.Load() {
		return
	}
	select {
	case <-t.done:
		return
	default:
	}
	t.connLost(from)
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
		case q := <-p.q:
			m = p.dequeued(q)
		}
		if c == nil {
			conn, err := net.DialTimeout("tcp", p.addr, time.Second)
			if err != nil {
				t.report(p.id)
				if m.Type == pb.MsgSnap && t.snapFail != nil {
					t.snapFail(p.id)
				}
				t.pause()
				continue // this message is dropped; raft resends
			}
			if !t.track(conn, true) {
				conn.Close()
				return
			}
			c, w = conn, bufio.NewWriterSize(conn, 64<<10)
		}
		// The deadline covers the batch's writes (a write that spills
		// the buffer blocks on the peer too), pushed back by each large
		// frame, and renewed for the flush.
		c.SetWriteDeadline(time.Now().Add(writeTimeout))
		err, snap := error(nil), false
		for {
			snap = snap || m.Type == pb.MsgSnap
			if buf, err = frame(buf[:0], m); err != nil {
				break
			}
			if len(buf) >= minWriteRate {
				c.SetWriteDeadline(writeDeadline(len(buf)))
			}
			if _, err = w.Write(buf); err != nil {
				break
			}
			if m.Type == pb.MsgSnap && m.Snapshot != nil {
				if path, size, ok := ParseFileRef(m.Snapshot.Data); ok {
					if err = sendSnapshotFile(w, c.SetWriteDeadline, path, size); err != nil {
						break
					}
				}
			}
			select {
			case q := <-p.q:
				m = p.dequeued(q)
				continue
			default:
			}
			break
		}
		if err == nil {
			c.SetWriteDeadline(time.Now().Add(writeTimeout))
			err = w.Flush()
		}
		if err != nil {
			closeConn()
			t.report(p.id)
			if snap && t.snapFail != nil {
				t.snapFail(p.id)
			}
			continue
		}
		p.reported.Store(false)
		if snap && t.snapSent != nil {
			t.snapSent(p.id)
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
