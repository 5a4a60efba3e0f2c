package testutil

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Proxy is a fault-injecting TCP proxy for tests of networked processes:
// it listens on 127.0.0.1 and forwards every connection it accepts to a
// target address, and the test can break the link:
//
//   - Cut: every live connection is closed (both sides) and new ones are
//     accepted and closed at once — a link that fails loudly: the peers
//     see errors.
//   - Blackhole: connections stay open and new ones are accepted, but
//     nothing is forwarded in either direction — a link that fails
//     silently, as when a network drops every packet: the peers see no
//     error (until their own timeouts or full buffers). What the proxy
//     read meanwhile is held, not dropped, and is delivered at Heal, as
//     TCP would retransmit it: a byte stream is never corrupted.
//   - Heal: forwarding resumes (new connections after a Cut, held bytes
//     after a Blackhole).
type Proxy struct {
	// Addr is the address to connect to instead of the target.
	Addr   string
	target string
	ln     net.Listener

	mu    sync.Mutex
	state ProxyState
	open  chan struct{} // closed while forwarding is allowed
	conns map[*proxyConn]struct{}
	done  bool
	wg    sync.WaitGroup
}

// ProxyState is what a Proxy does with traffic.
type ProxyState int

// The states of a Proxy.
const (
	ProxyPass ProxyState = iota
	ProxyCut
	ProxyBlackhole
)

func (s ProxyState) String() string {
	switch s {
	case ProxyPass:
		return "pass"
	case ProxyCut:
		return "cut"
	case ProxyBlackhole:
		return "blackhole"
	}
	return fmt.Sprintf("ProxyState(%d)", int(s))
}

// proxyConn is one accepted connection and its connection to the target.
type proxyConn struct {
	client, server net.Conn
	closed         chan struct{}
	once           sync.Once
}

func (c *proxyConn) close() {
	c.once.Do(func() {
		close(c.closed)
		c.client.Close()
		c.server.Close()
	})
}

// NewProxy listens on a free port of 127.0.0.1 and forwards to target.
// Close stops it.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy to %s: %w", target, err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln,
		open: make(chan struct{}), conns: map[*proxyConn]struct{}{}}
	close(p.open)
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// State is the proxy's current state.
func (p *Proxy) State() ProxyState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// Cut closes every live connection and refuses new ones until Heal.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.state = ProxyCut
	conns := p.conns
	p.conns = map[*proxyConn]struct{}{}
	p.mu.Unlock()
	for c := range conns {
		c.close()
	}
}

// Blackhole stops forwarding in both directions on every connection, live
// or new, without closing any, until Heal.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == ProxyPass {
		p.open = make(chan struct{})
	}
	p.state = ProxyBlackhole
}

// Heal makes the proxy forward again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == ProxyPass {
		return
	}
	p.state = ProxyPass
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.done = true
	conns := p.conns
	p.conns = map[*proxyConn]struct{}{}
	p.mu.Unlock()
	err := p.ln.Close()
	for c := range conns {
		c.close()
	}
	p.wg.Wait()
	return err
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if p.State() == ProxyCut {
			client.Close()
			continue
		}
		server, err := net.DialTimeout("tcp", p.target, time.Second)
		if err != nil {
			client.Close() // the target is down: so is the link
			continue
		}
		c := &proxyConn{client: client, server: server, closed: make(chan struct{})}
		p.mu.Lock()
		if p.done || p.state == ProxyCut {
			p.mu.Unlock()
			c.close()
			continue
		}
		p.conns[c] = struct{}{}
		p.wg.Add(2)
		p.mu.Unlock()
		go p.pump(c, client, server)
		go p.pump(c, server, client)
	}
}

// pump copies src to dst while the proxy lets it; the first error on
// either side ends the whole connection.
func (p *Proxy) pump(c *proxyConn, src, dst net.Conn) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
		c.close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait(c) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// wait blocks while the proxy holds traffic (Blackhole); false when the
// connection is to end (a Cut, Close, or the connection closed).
func (p *Proxy) wait(c *proxyConn) bool {
	for {
		p.mu.Lock()
		st, open, done := p.state, p.open, p.done
		p.mu.Unlock()
		switch {
		case done || st == ProxyCut:
			return false
		case st == ProxyPass:
			return true
		}
		select {
		case <-open:
		case <-c.closed:
			return false
		}
	}
}
