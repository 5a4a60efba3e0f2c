package server

import (
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"

	"github.com/dolthub/vitess/go/mysql"
)

// wireConn is the connection under the protocol layer (vitess): every
// byte between the client and vitess passes through it, so lockstep can
// answer or change what vitess cannot.
//
// Reading, it parses the client's bytes as a stream of packets from the
// first one (the handshake response): a packet is a 3-byte length, a
// sequence byte and the payload, and a command starts at sequence 0. It
// answers COM_STATISTICS itself (comstats.go), hands COM_REFRESH on as
// its FLUSH statement (comrefresh.go), offers COM_STMT_EXECUTE and
// COM_STMT_PREPARE packets to the execute hook (execproto.go), and passes
// everything else unchanged. Writing, it gives OK packets' info strings
// their length (okinfo.go). It ends TLS itself, so all of this works over
// TLS too (tlsterm.go). It refuses handshakes vitess could not read,
// answers the commands vitess would mishandle, and bounds what a
// connection may send before its login (protoguard.go, connlimit.go). It
// hands vitess one packet at a time, so a packet it answers is at the head
// of the stream, with nothing read before it still waiting for vitess:
// replies keep the commands' order, and vitess's state is what it will be
// when it reads the packet.

// wireConn is a connection the protocol layer reads and writes through.
type wireConn struct {
	net.Conn
	answer func() string // the statistics line

	buf   []byte // bytes read from Conn; buf[:ready] may be handed out
	ready int
	// afterMax: the last packet was of the largest size, so the next one
	// (even empty) continues its payload rather than starting a command.
	afterMax bool
	pending  int    // payload bytes of the current packet not yet passed
	through  bool   // a partial packet at the end of the stream: no more parsing
	back     []byte // buf's backing array, reused once buf is drained

	// hook sees the prepared-statement commands (execproto.go's execHook);
	// nil: every command goes to the protocol layer unseen.
	hook commandHook

	// okInfo is the info string of the OK packet the protocol layer is
	// about to write, set by handler.sendOK around it; Write gives the
	// string its length (okinfo.go).
	okInfo string

	// hs is the handshake's state when the server offers TLS, until the
	// handshake is over; tls is the TLS connection once the client has
	// switched to it (tlsterm.go).
	hs  *tlsHandshake
	tls *tls.Conn

	// maxPacket is the connection's max_allowed_packet (0: no limit);
	// cmdBytes the payload of the command so far, continued whether the
	// last packet was of the largest size (maxpacket.go).
	maxPacket int64
	cmdBytes  int64
	continued bool

	// pendingLogin: the connection has not logged in yet (connlimit.go's
	// admit clears it): its packets may be at most maxPendingPacket bytes,
	// and a command sent before the login is over waits for it.
	// awaitResponse: the client's handshake response is still to come; it
	// is checked before the protocol layer reads it (protoguard.go).
	pendingLogin  bool
	awaitResponse bool

	// out follows the server's packets (protoguard.go): after a LOCAL
	// INFILE request the client's packets are the file, not commands.
	out      outTracker
	fileDone int // out.count when the last file ended
	// fileOf is out.count when the file being read was asked for, fileSeq
	// the sequence number its next packet must carry.
	fileOf  int
	fileSeq byte

	// ended holds why the stream was refused (its answer written): every
	// read and write after it fails. Written by the goroutine reading,
	// read by the one writing too.
	ended atomic.Value // error

	// wmu orders the server's writes: vitess's (Write) and an answer
	// written ahead of it (interject), after which swallow drops
	// vitess's answer to the same command, up to its next read.
	wmu     sync.Mutex
	swallow atomic.Bool
	// parseDone, armed while vitess parses a COM_STMT_PREPARE, ends that
	// parse's marks at vitess's first write after it: the prepare's
	// answer, or the parse's error (the handler never sees that prepare).
	// Held under wmu, so that interject's claim comes before it or not at
	// all.
	parseDone func(p []byte) []byte
	held      []byte // a packet header written while parseDone is armed
	// lastSeq is the sequence number of the client's last packet parsed:
	// an answer to a command sent in several packets follows its last.
	lastSeq atomic.Uint32
}

// commandHook is what wireConn asks about prepared-statement commands.
type commandHook interface {
	// execute answers a COM_STMT_EXECUTE payload itself, or reports that
	// it did not.
	execute(payload []byte) (bool, error)
	// rewrite returns the replacement for a COM_STMT_PREPARE payload, or
	// nil to pass it unchanged.
	rewrite(payload []byte) []byte
}

// Read hands out the client's bytes minus the packets answered here.
func (c *wireConn) Read(p []byte) (int, error) {
	if err := c.endedErr(); err != nil {
		return 0, err // refused: every read after it fails too
	}
	if c.swallow.Load() {
		// vitess reads its next command: it has answered the last one
		// (dropped, answered ahead of it).
		c.wmu.Lock()
		c.swallow.Store(false)
		c.wmu.Unlock()
	}
	for {
		if c.ready > 0 {
			n := copy(p, c.buf[:c.ready])
			c.buf = c.buf[n:]
			c.ready -= n
			return n, nil
		}
		if c.through && len(c.buf) == 0 {
			return c.conn().Read(p)
		}
		if err := c.parse(); err != nil {
			return 0, err
		}
		if c.ready > 0 {
			continue
		}
		// Read into the buffer's spare room: one copy of the client's
		// bytes (to p), no allocation once the buffer exists.
		switch {
		case len(c.buf) == 0:
			if c.back == nil {
				c.back = make([]byte, 16<<10)
			}
			c.buf = c.back[:0]
		case len(c.buf) == cap(c.buf):
			if c.pendingLogin && len(c.buf) >= maxPendingPacket+4 {
				return 0, c.refuseHandshake(0) // commands piling up before the login
			}
			c.buf = append(make([]byte, 0, 2*cap(c.buf)), c.buf...)
		}
		n, err := c.conn().Read(c.buf[len(c.buf):cap(c.buf)])
		c.buf = c.buf[:len(c.buf)+n]
		if err != nil && n == 0 {
			if len(c.buf) > 0 && !c.inFile() {
				// A partial packet at the end of the stream: hand it on,
				// the protocol layer reports the short read (a file's is
				// dropped: see parse).
				c.ready, c.through = len(c.buf), true
				continue
			}
			return 0, err
		}
	}
}

// parse moves c.ready over complete packet headers and payload bytes,
// dropping the packets answered here (COM_STATISTICS, executes the hook
// answers: only at the head of the buffer, nothing before them waiting)
// and replacing the ones handed on changed (COM_REFRESH, prepares the
// hook rewrites).
func (c *wireConn) parse() error {
	for c.ready < len(c.buf) {
		rest := c.buf[c.ready:]
		switch {
		case c.through:
			c.ready = len(c.buf)
			continue
		case c.pending > 0:
			k := min(c.pending, len(rest))
			c.pending -= k
			c.ready += k
			continue
		case len(rest) < 4:
			return nil // a header still arriving
		case c.ready > 0:
			// One packet at a time: what the next one is depends on what
			// the protocol layer does with this one (a LOCAL INFILE
			// request makes it the file's; vitess's state decides the
			// guards' answers).
			return nil
		}
		size := int(rest[0]) | int(rest[1])<<8 | int(rest[2])<<16
		seq := rest[3]
		c.lastSeq.Store(uint32(seq))
		continued := c.afterMax
		c.afterMax = size == maxPacketPayload
		if c.countPacket(size, seq) {
			if c.pendingLogin {
				return c.refuseHandshake(seq) // protoguard.go
			}
			return c.refuseTooLarge(seq) // maxpacket.go
		}
		if c.hs != nil && c.hs.step == stepRequest {
			// The client's first packet: an SSLRequest (tlsterm.go), or
			// the handshake response of a plain connection.
			if seq == 1 && size == 32 {
				if len(rest) < 4+size {
					return nil
				}
				if isSSLRequest(rest[:4+size]) {
					if err := c.startTLS(rest[4+size:]); err != nil {
						return err
					}
					c.buf = c.buf[:c.ready]
					continue
				}
			}
			c.hs = nil
		}
		if c.awaitResponse {
			// The handshake response: refused here if the protocol layer
			// could not read it (protoguard.go).
			if len(rest) < 4+size {
				return nil
			}
			c.awaitResponse = false
			if handshakeFault(rest[4:4+size]) != "" {
				return c.refuseHandshake(seq)
			}
		} else if seq == 0 && c.pendingLogin {
			return nil // a command before the login is over: after it
		}
		// A command starts at sequence number 0, but the packets of a file
		// the server asked for (LOAD DATA LOCAL INFILE), up to an empty
		// one, are the file's whatever their numbers. They are handed on
		// whole: the protocol layer reads the file on a goroutine of its
		// own, and a packet cut short by the end of the stream left the
		// connection in a state that made the error after it panic.
		// The protocol layer reads any packet outside a file and a
		// continued payload as the next command, whatever its sequence
		// number: an empty one (data[0] panicked in vitess) is answered by
		// the guard as at sequence 0 (TestProtocolFuzz).
		command := seq == 0 || (size == 0 && !continued && !c.awaitResponse)
		if c.inFile() {
			if len(rest) < 4+size {
				return nil
			}
			// The file's packets are numbered on from the server's
			// request. vitess reading one out of order failed the
			// statement but left its payload unread, to be read as the
			// header of the next command (an empty packet: data[0]
			// panicked; TestProtocolFuzz). MySQL ends the connection.
			if c.fileOf != c.out.count {
				c.fileOf, c.fileSeq = c.out.count, c.out.seq+1
			}
			if seq != c.fileSeq {
				return c.refuseOutOfOrder(seq) // protoguard.go
			}
			c.fileSeq++
			command = false
			if size == 0 {
				c.fileDone = c.out.count
			}
		}
		if command && size == 1 {
			if len(rest) < 5 {
				return nil
			}
			if rest[4] == comShutdown {
				// COM_SHUTDOWN becomes the SHUTDOWN statement (shutdown.go).
				size = c.replacePacket(5, append([]byte{comQuery}, shutdownQuery...))
				rest = c.buf[c.ready:]
			} else if rest[4] == comStatistics {
				if c.ready > 0 {
					return nil // earlier commands first
				}
				if err := c.reply(); err != nil {
					return err
				}
				c.dropAnswered(5)
				continue
			}
		}
		if command && size == 2 {
			if len(rest) < 6 {
				return nil
			}
			if rest[4] == comShutdown { // with its shutdown level
				size = c.replacePacket(6, append([]byte{comQuery}, shutdownQuery...))
				rest = c.buf[c.ready:]
			} else if rest[4] == comRefresh {
				// COM_REFRESH becomes the FLUSH statement it stands for
				// (comrefresh.go): the protocol layer does not know it.
				size = c.replacePacket(6, append([]byte{comQuery}, refreshQuery(rest[5])...))
				rest = c.buf[c.ready:]
			}
		}
		if command && c.hook != nil && size > 0 && size < maxPacketPayload {
			if len(rest) < 5 {
				return nil // the command byte first
			}
			if cmd := rest[4]; cmd == comStmtPrepare || cmd == comStmtExecute {
				if cmd == comStmtExecute && c.ready > 0 {
					return nil // earlier commands first: the hook answers
				}
				if len(rest) < 4+size {
					return nil // the whole packet first
				}
				if cmd == comStmtPrepare {
					if repl := c.hook.rewrite(rest[4 : 4+size]); repl != nil {
						size = c.replacePacket(4+size, repl)
						rest = c.buf[c.ready:]
					}
				} else {
					handled, err := c.hook.execute(rest[4 : 4+size])
					if err != nil {
						return err
					}
					if handled {
						c.dropAnswered(4 + size)
						continue
					}
				}
			}
		}
		if command && !c.pendingLogin {
			// (at the head of the stream: one packet at a time, above)
			answer, wait := c.guard(rest, size) // protoguard.go
			if wait {
				return nil // more of it first
			}
			if answer != nil {
				end, last, st := c.messageEnd(rest) // all its packets
				if st == messageShort {
					return nil
				}
				if st == messageWhole {
					w := packetWriter{seq: last + 1}
					w.errPacket(answer)
					if _, err := c.conn().Write(w.b); err != nil {
						return err
					}
					c.dropAnswered(end)
					c.afterMax, c.continued = false, false
					continue
				}
				// messageOver: handed on, refused as it arrives
			}
		}
		if c.hs != nil && c.hs.step == stepShifted {
			rest[3]-- // the protocol layer did not see the SSLRequest
		}
		c.ready += 4
		c.pending = size
	}
	return nil
}

// interject answers the command vitess is running with se, ahead of
// vitess, if claim (called with the server's writes held) allows: the
// answer vitess writes later for the same command is dropped.
func (c *wireConn) interject(se *mysql.SQLError, claim func() bool) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.swallow.Load() || !claim() {
		return false
	}
	w := packetWriter{seq: byte(c.lastSeq.Load()) + 1}
	w.errPacket(se)
	c.swallow.Store(true)
	_, _ = c.conn().Write(w.b)
	return true
}

// armParseDone arms f to run at vitess's next write (parseDone): f may
// return bytes to write in place of that write's.
func (c *wireConn) armParseDone(f func(p []byte) []byte) {
	c.wmu.Lock()
	c.parseDone = f
	c.wmu.Unlock()
}

// end refuses the stream for err (its answer written) and returns err.
func (c *wireConn) end(err error) error {
	c.ended.CompareAndSwap(nil, err)
	return err
}

// endedErr is why the stream was refused, or nil.
func (c *wireConn) endedErr() error {
	err, _ := c.ended.Load().(error)
	return err
}

// inFile reports whether the client is sending a file the server asked
// for (protoguard.go's outTracker).
func (c *wireConn) inFile() bool {
	return c.out.fileRequested() && c.out.count != c.fileDone
}

// dropAnswered removes the n bytes of the packet answered here from the
// head of the buffer.
func (c *wireConn) dropAnswered(n int) {
	c.buf = append(c.buf[:0], c.buf[n:]...)
}

// replacePacket replaces the n bytes of the packet at c.ready by a
// sequence-0 packet holding payload, and returns the payload's size.
func (c *wireConn) replacePacket(n int, payload []byte) int {
	rest := c.buf[c.ready+n:]
	c.buf = append(append(c.buf[:c.ready:c.ready], packetOf(0, payload)...), rest...)
	return len(payload)
}
