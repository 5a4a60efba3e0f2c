package server

import (
	"crypto/tls"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// limitListener enforces @@max_connections as MySQL does: a connection
// beyond max_connections + 1 (MySQL keeps the extra one for an account with
// CONNECTION_ADMIN; lockstep's one account, root, has it) is refused at
// once with ER_CON_COUNT_ERROR (1040, "Too many connections") in place of
// the handshake. The protocol layer's own limit would make the client wait
// in a queue instead, and go-mysql-server does not set it.
type limitListener struct {
	net.Listener
	max     func() int64  // the current @@global.max_connections
	stats   func() string // the COM_STATISTICS line (comstats.go); nil: not answered
	packet  func() int64  // the current @@global.max_allowed_packet (maxpacket.go); nil: no limit
	tls     *tls.Config   // TLS offered, ended in wireConn (tlsterm.go); nil: none
	open    atomic.Int64  // connections accepted and not yet closed
	refused atomic.Int64  // Connection_errors_max_connections
}

// Accept returns the next connection within the limit; refused ones are
// answered and closed on their own goroutine.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if n := l.open.Add(1); n > l.max()+1 {
			l.open.Add(-1)
			l.refused.Add(1)
			go refuseConn(c)
			continue
		}
		if l.stats != nil {
			sc := &wireConn{Conn: c, answer: l.stats}
			if l.packet != nil {
				sc.maxPacket = l.packet()
			}
			if l.tls != nil {
				sc.hs = &tlsHandshake{config: l.tls}
			}
			c = sc
		}
		return &countedConn{Conn: c, l: l}, nil
	}
}

// status adds the listener's counter to SHOW STATUS.
func (l *limitListener) status(m map[string]int64) {
	m["Connection_errors_max_connections"] = l.refused.Load()
}

// countedConn gives its slot back when closed (once, however often Close
// is called).
type countedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}

// tooManyConnections is the ERR packet MySQL sends in place of the
// handshake: before capabilities are agreed it carries no SQL state.
var tooManyConnections = func() []byte {
	msg := "Too many connections"
	payload := make([]byte, 0, 3+len(msg))
	payload = append(payload, 0xff)
	payload = binary.LittleEndian.AppendUint16(payload, 1040)
	payload = append(payload, msg...)
	n := len(payload)
	pkt := []byte{byte(n), byte(n >> 8), byte(n >> 16), 0} // sequence 0
	return append(pkt, payload...)
}()

func refuseConn(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Write(tooManyConnections)
	_ = c.Close()
}

// wireConnOf finds the wireConn under a connection the listener made.
func wireConnOf(c net.Conn) *wireConn {
	for {
		switch x := c.(type) {
		case *wireConn:
			return x
		case *countedConn:
			c = x.Conn
		default:
			return nil
		}
	}
}
