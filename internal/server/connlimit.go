package server

import (
	"container/list"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/sqlfront"
)

// Connection limits (docs/connections.md).
//
// A connection is pending from its accept until its login succeeds, then
// a session. limitListener enforces, as MySQL does:
//
//   - max_connections counts sessions only. A login that would make one
//     more than max_connections is refused with ER_CON_COUNT_ERROR (1040,
//     08004, "Too many connections"), except that one more, the
//     (max_connections+1)th, is let in for an account with SUPER or
//     CONNECTION_ADMIN: an administrator can still get in when ordinary
//     clients have taken every slot. (The slots used to be taken at
//     accept: eleven idle sockets held max_connections=10 and the extra
//     slot, and root got 1040.)
//   - connect_timeout (MySQL's default 10 s; SET GLOBAL applies to
//     connections accepted after it; go-mysql-server's variable, one for
//     the process): a connection still pending that long
//     after its accept is closed, whatever it is doing (idle, or sending
//     its handshake a byte at a time), as MySQL closes it.
//   - pending connections are capped at pendingCap (the larger of 1024
//     and max_connections+1): a new one beyond it closes the oldest
//     pending one. Refusing the new one instead would let anyone who keeps
//     the cap full of idle sockets lock everyone out; closing the oldest
//     leaves them only as long as a real client's handshake takes (a
//     millisecond on a LAN) to get in, and bounds the memory and file
//     descriptors that idle sockets hold.
//
// Before its login a connection's packets may be at most
// maxPendingPacket bytes (protoguard.go, enforced in wireConn): what a
// pending connection makes the server hold stays small.
//
// Counters (SHOW GLOBAL STATUS): Connection_errors_max_connections (the
// 1040s), Aborted_connects (connections closed before their login
// succeeded: a wrong password, a bad handshake, a timeout, a 1040, a
// client that went away), Lockstep_connect_timeouts,
// Lockstep_pending_evicted (closed for a newer one), Lockstep_pending
// (pending now).
type limitListener struct {
	net.Listener
	max     func() int64                          // the current @@global.max_connections
	timeout func() time.Duration                  // the current @@global.connect_timeout; nil: 10 s
	admin   func(user string, addr net.Addr) bool // SUPER or CONNECTION_ADMIN; nil: nobody
	stats   func() string                         // the COM_STATISTICS line (comstats.go); nil: not answered
	packet  func() int64                          // the current @@global.max_allowed_packet (maxpacket.go); nil: no limit
	tls     *tls.Config                           // TLS offered, ended in wireConn (tlsterm.go); nil: none
	open    atomic.Int64                          // connections accepted and not yet closed

	mu       sync.Mutex
	pending  list.List                 // *countedConn not logged in yet, oldest first
	sessions int64                     // connections logged in, counted against max_connections
	refused  int64                     // Connection_errors_max_connections
	aborted  int64                     // Aborted_connects
	timedOut int64                     // Lockstep_connect_timeouts
	evicted  int64                     // Lockstep_pending_evicted
	conns    map[*countedConn]struct{} // every connection open (closeAll)
}

const defaultConnectTimeout = 10 * time.Second

// minPendingCap is the least pendingCap: 1024 (tests lower it).
var minPendingCap = func() *atomic.Int64 {
	var n atomic.Int64
	n.Store(1024)
	return &n
}()

// pendingCap is how many connections may be pending at once.
func (l *limitListener) pendingCap() int {
	return int(max(minPendingCap.Load(), l.max()+1))
}

// Accept returns the next connection, pending until its login succeeds.
func (l *limitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.open.Add(1)
	cc := &countedConn{raw: c, l: l}
	cc.Conn = c
	if l.stats != nil {
		sc := &wireConn{Conn: c, answer: l.stats, pendingLogin: true, awaitResponse: true}
		if l.packet != nil {
			sc.maxPacket = l.packet()
		}
		if l.tls != nil {
			sc.hs = &tlsHandshake{config: l.tls}
		}
		cc.Conn = sc
	}
	timeout := defaultConnectTimeout
	if l.timeout != nil {
		timeout = l.timeout()
	}
	limit := l.pendingCap()
	var evict []*countedConn
	l.mu.Lock()
	for l.pending.Len() >= limit {
		old := l.pending.Remove(l.pending.Front()).(*countedConn)
		old.leavePending(stateEvicted)
		l.evicted++
		evict = append(evict, old)
	}
	cc.elem = l.pending.PushBack(cc)
	cc.timer = time.AfterFunc(timeout, cc.expire)
	if l.conns == nil {
		l.conns = map[*countedConn]struct{}{}
	}
	l.conns[cc] = struct{}{}
	l.mu.Unlock()
	for _, old := range evict {
		_ = old.raw.Close() // its goroutine in the protocol layer ends and closes it
	}
	return cc, nil
}

// connState is where a countedConn is in its life.
type connState int

const (
	statePending  connState = iota // accepted, not logged in
	stateSession                   // logged in: counted against max_connections
	stateRefused                   // logged in beyond max_connections (1040)
	stateTimedOut                  // pending longer than connect_timeout
	stateEvicted                   // closed for a newer pending connection
	stateClosed
)

// countedConn is a connection the listener counts: pending, then a
// session, until it is closed (once, however often Close is called).
type countedConn struct {
	net.Conn          // the wireConn, or raw
	raw      net.Conn // the accepted connection
	l        *limitListener
	once     sync.Once

	// under l.mu
	state connState
	elem  *list.Element // in l.pending while pending
	timer *time.Timer   // connect_timeout, while pending
}

// leavePending takes c out of the pending state (the caller has removed
// it from l.pending, under l.mu).
func (c *countedConn) leavePending(to connState) {
	c.state, c.elem = to, nil
	c.timer.Stop()
}

// expire closes c if it is still pending (connect_timeout).
func (c *countedConn) expire() {
	l := c.l
	l.mu.Lock()
	if c.state != statePending {
		l.mu.Unlock()
		return
	}
	l.pending.Remove(c.elem)
	c.leavePending(stateTimedOut)
	l.timedOut++
	l.mu.Unlock()
	_ = c.raw.Close()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		l := c.l
		l.mu.Lock()
		switch c.state {
		case statePending:
			l.pending.Remove(c.elem)
			c.leavePending(stateClosed)
			l.aborted++
		case stateSession:
			l.sessions--
		default: // refused, timed out, evicted: never logged in
			l.aborted++
		}
		c.state = stateClosed
		delete(l.conns, c)
		l.mu.Unlock()
		l.open.Add(-1)
	})
	return err
}

var (
	errTooManyConnections = mysql.NewSQLError(mysql.ERConCount, "08004", "Too many connections")
	errConnectionGone     = errors.New("lockstep: connection closed during its login")
)

// admit makes connection vc, whose login as user from addr has just
// succeeded, a session, or refuses it with 1040 (see limitListener). It
// runs on the connection's goroutine in the protocol layer, before the
// server's OK.
func (l *limitListener) admit(vc *mysql.Conn, user string, addr net.Addr) error {
	c := countedConnOf(vc.Conn)
	if c == nil || c.l != l {
		return nil
	}
	limit := l.max()
	admin, asked := false, false
	for {
		l.mu.Lock()
		if c.state != statePending {
			l.mu.Unlock()
			return errConnectionGone // timed out or evicted meanwhile
		}
		if l.sessions < limit || (admin && l.sessions < limit+1) {
			l.pending.Remove(c.elem)
			c.leavePending(stateSession)
			l.sessions++
			l.mu.Unlock()
			if wc := wireConnOf(c); wc != nil {
				wc.pendingLogin = false
			}
			return nil
		}
		if !asked && l.sessions < limit+1 && l.admin != nil {
			// The administrator's slot is free: ask (outside the lock)
			// whether the account may have it.
			l.mu.Unlock()
			admin, asked = l.admin(user, addr), true
			continue
		}
		l.pending.Remove(c.elem)
		c.leavePending(stateRefused)
		l.refused++
		l.mu.Unlock()
		return errTooManyConnections
	}
}

// closeAll closes every client connection (a server that restarts in the
// same process: its sessions end with it, as in a restart of mysqld).
func (l *limitListener) closeAll() {
	l.mu.Lock()
	cs := make([]*countedConn, 0, len(l.conns))
	for c := range l.conns {
		cs = append(cs, c)
	}
	l.mu.Unlock()
	for _, c := range cs {
		_ = c.raw.Close() // its goroutine in the protocol layer ends and closes it
	}
}

// status adds the listener's counters to SHOW STATUS.
func (l *limitListener) status(m map[string]int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m["Connection_errors_max_connections"] = l.refused
	m["Aborted_connects"] = l.aborted
	m["Lockstep_connect_timeouts"] = l.timedOut
	m["Lockstep_pending_evicted"] = l.evicted
	m["Lockstep_pending"] = int64(l.pending.Len())
	m["Lockstep_protocol_panics"] = protocolPanics.Load()        // protolog.go
	m["Lockstep_prepare_parse_kills"] = prepareParseKills.Load() // kill.go
}

// connectionAdmin reports whether an account logging in as user from
// addr has SUPER or CONNECTION_ADMIN (its own or through its roles), as
// MySQL asks for the connection beyond max_connections.
func connectionAdmin(fe *sqlfront.Frontend) func(user string, addr net.Addr) bool {
	return func(user string, addr net.Addr) bool {
		db := fe.Engine.Analyzer.Catalog.MySQLDb
		if !db.Enabled() {
			return true
		}
		host, _, err := net.SplitHostPort(addr.String())
		if err != nil {
			host = addr.String()
		}
		rd := db.Reader()
		defer rd.Close()
		u := db.GetUser(rd, user, host, false)
		if u == nil {
			return false
		}
		has := func(ps mysql_db.PrivilegeSet) bool {
			return ps.Has(sql.PrivilegeType_Super) || ps.HasDynamic("connection_admin")
		}
		if has(u.PrivilegeSet) {
			return true
		}
		for _, e := range rd.GetToUserRoleEdges(mysql_db.RoleEdgesToKey{ToHost: u.Host, ToUser: u.User}) {
			if r := db.GetUser(rd, e.FromUser, e.FromHost, true); r != nil && has(r.PrivilegeSet) {
				return true
			}
		}
		return false
	}
}

// connectTimeout reads @@global.connect_timeout: the server's own value
// if it keeps one, else go-mysql-server's (one for the process).
func connectTimeout(fe *sqlfront.Frontend) func() time.Duration {
	return func() time.Duration {
		v, ok := fe.GlobalVariable("connect_timeout")
		if !ok {
			_, v, ok = sql.SystemVariables.GetGlobal("connect_timeout")
		}
		var n int64
		switch x := v.(type) {
		case int64:
			n = x
		case uint64:
			n = int64(x)
		case int:
			n = int64(x)
		}
		if !ok || n <= 0 {
			return defaultConnectTimeout
		}
		return time.Duration(n) * time.Second
	}
}

// countedConnOf finds the countedConn under a connection the listener
// made.
func countedConnOf(c net.Conn) *countedConn {
	x, _ := c.(*countedConn)
	return x
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
