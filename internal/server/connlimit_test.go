package server

import (
	"context"
	gosql "database/sql"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
)

// session opens one connection of db and checks that it logged in.
func session(t *testing.T, db *gosql.DB) (*gosql.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := db.Conn(ctx)
	if err == nil {
		if err = c.PingContext(ctx); err != nil {
			c.Close()
		}
	}
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// idleSockets opens n connections that never send a byte.
func idleSockets(t *testing.T, addr string, n int) []*rawConn {
	t.Helper()
	var cs []*rawConn
	for i := 0; i < n; i++ {
		c, err := dialRaw(addr)
		if err != nil {
			t.Fatalf("idle socket %d: %v", i, err)
		}
		t.Cleanup(func() { c.Close() })
		cs = append(cs, c)
	}
	return cs
}

// slowHandshake opens a connection that reads the greeting and then sends
// its handshake response one byte every `every`; done is closed once the
// server has closed the connection (a write or read failed).
func slowHandshake(t *testing.T, addr string, every time.Duration) (done chan struct{}) {
	t.Helper()
	c, err := dialRaw(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.read(10 * time.Second); err != nil {
		t.Fatalf("greeting: %v", err)
	}
	done = make(chan struct{})
	go func() {
		defer close(done)
		pkt := rawPacket(1, handshakeResponse("root", rawClientCaps))
		for _, b := range pkt[:len(pkt)-1] { // never the last byte
			time.Sleep(every)
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
		}
		closedWithin(c, time.Minute)
	}()
	return done
}

// TestConnectionExhaustion: sockets that never log in (idle, or sending
// their handshake a byte at a time) hold no max_connections slot and are
// closed after connect_timeout; ordinary accounts get max_connections
// sessions, an account with SUPER the one beyond (root got 1040 when
// eleven idle sockets held max_connections=10 and the extra slot), and
// the counters say so.
func TestConnectionExhaustion(t *testing.T) {
	s := startInProcess(t, nil)
	s.db.SetMaxOpenConns(1) // root's pool holds one session
	s.exec(t, "CREATE USER app")
	s.exec(t, "GRANT SELECT ON *.* TO app")
	s.exec(t, "CREATE USER boss")
	s.exec(t, "GRANT SUPER ON *.* TO boss")
	s.exec(t, "CREATE ROLE admins")
	s.exec(t, "GRANT SUPER ON *.* TO admins")
	s.exec(t, "CREATE USER viarole")
	s.exec(t, "GRANT admins TO viarole")
	_, prev, _ := sql.SystemVariables.GetGlobal("connect_timeout")
	t.Cleanup(func() { _, _ = s.db.Exec("SET GLOBAL connect_timeout = ?", prev) })
	s.exec(t, "SET GLOBAL connect_timeout = 3")
	s.exec(t, "SET GLOBAL max_connections = 3")
	refusedBefore := s.status(t, "GLOBAL", "Connection_errors_max_connections")
	abortedBefore := s.status(t, "GLOBAL", "Aborted_connects")

	start := time.Now()
	idle := idleSockets(t, s.addr, 20)
	var slow []chan struct{}
	for i := 0; i < 5; i++ {
		slow = append(slow, slowHandshake(t, s.addr, 100*time.Millisecond))
	}
	if n := s.status(t, "GLOBAL", "Lockstep_pending"); n < 25 {
		t.Errorf("Lockstep_pending = %d, want >= 25", n)
	}

	// root's one session and two of app's fill max_connections; the
	// third is refused.
	app := s.openAs(t, "app", "")
	for i := 0; i < 2; i++ {
		if _, err := session(t, app); err != nil {
			t.Fatalf("app's session %d with 25 sockets pending: %v", i+1, err)
		}
	}
	_, err := session(t, app)
	wantErrNum(t, "app beyond max_connections", err, 1040)
	// The slot beyond is an administrator's: boss (SUPER) gets it.
	bossDB := s.openAs(t, "boss", "")
	boss, err := session(t, bossDB)
	if err != nil {
		t.Fatalf("boss (SUPER) in the administrator's slot: %v", err)
	}
	// Then no one else, not even root.
	_, err = session(t, s.openAs(t, "root", ""))
	wantErrNum(t, "root beyond max_connections+1", err, 1040)
	if n := s.status(t, "GLOBAL", "Connection_errors_max_connections") - refusedBefore; n != 2 {
		t.Errorf("Connection_errors_max_connections grew by %d, want 2", n)
	}

	// connect_timeout (3 s) closes every pending socket, the slow ones
	// too (they were still sending).
	if el := time.Since(start); el < 2500*time.Millisecond && closedWithin(idle[0], 2500*time.Millisecond-el) {
		t.Fatal("an idle socket was closed before connect_timeout")
	}
	for i, c := range idle {
		if !closedWithin(c, 8*time.Second-time.Since(start)) {
			t.Fatalf("idle socket %d still open %v after its accept (connect_timeout = 3)", i, time.Since(start))
		}
	}
	for i, d := range slow {
		select {
		case <-d:
		case <-time.After(8*time.Second - time.Since(start)):
			t.Fatalf("slow handshake %d still open %v after its accept (connect_timeout = 3)", i, time.Since(start))
		}
	}
	if n := s.status(t, "GLOBAL", "Lockstep_connect_timeouts"); n < 25 {
		t.Errorf("Lockstep_connect_timeouts = %d, want >= 25", n)
	}
	if n := s.status(t, "GLOBAL", "Aborted_connects") - abortedBefore; n < 27 { // 25 + 2 refused
		t.Errorf("Aborted_connects grew by %d, want >= 27", n)
	}
	if n := s.status(t, "GLOBAL", "Lockstep_pending"); n != 0 {
		t.Errorf("Lockstep_pending = %d after the timeouts, want 0", n)
	}

	// SUPER through a role: viarole gets the administrator's slot once
	// boss has left it (the server notices the close asynchronously);
	// app still does not.
	boss.Close()   // back to its pool,
	bossDB.Close() // which closes it
	viarole := s.openAs(t, "viarole", "")
	for i := 0; ; i++ {
		_, err = session(t, viarole)
		if err == nil {
			break
		}
		if mysqlErrNum(err) != 1040 || i == 250 {
			t.Fatalf("viarole (SUPER through a role) after boss left: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, err = session(t, app)
	wantErrNum(t, "app with only the administrator's slot free", err, 1040)
}

// TestConnectTimeoutAppliesToNewConnections: SET GLOBAL connect_timeout
// changes the timeout of connections accepted after it, not before.
func TestConnectTimeoutAppliesToNewConnections(t *testing.T) {
	s := startInProcess(t, nil)
	_, prev, _ := sql.SystemVariables.GetGlobal("connect_timeout")
	t.Cleanup(func() { _, _ = s.db.Exec("SET GLOBAL connect_timeout = ?", prev) })
	s.exec(t, "SET GLOBAL connect_timeout = 2")
	old := idleSockets(t, s.addr, 1)[0]
	s.exec(t, "SET GLOBAL connect_timeout = 6")
	start := time.Now()
	newer := idleSockets(t, s.addr, 1)[0]
	if !closedWithin(old, 4*time.Second) {
		t.Fatal("a socket accepted with connect_timeout = 2 was still open after 4 s")
	}
	if time.Since(start) < 3*time.Second && closedWithin(newer, 10*time.Millisecond) {
		t.Fatalf("a socket accepted with connect_timeout = 6 was closed after %v", time.Since(start))
	}
	if !closedWithin(newer, 9*time.Second) {
		t.Fatal("a socket accepted with connect_timeout = 6 was still open after 9 s")
	}
}

// TestPendingCap: beyond the cap on connections that have not logged in,
// a new one closes the oldest pending one; a client that logs in gets in
// however many idle sockets came before it.
func TestPendingCap(t *testing.T) {
	s := startInProcess(t, nil)
	before := minPendingCap.Swap(8)
	t.Cleanup(func() { minPendingCap.Store(before) })
	s.exec(t, "SET GLOBAL max_connections = 4") // pendingCap = max(8, 5)
	evictedBefore := s.status(t, "GLOBAL", "Lockstep_pending_evicted")

	idle := idleSockets(t, s.addr, 30)
	for i, c := range idle[:22] {
		if !closedWithin(c, 5*time.Second) {
			t.Fatalf("idle socket %d of 30 still open (the cap is 8)", i)
		}
	}
	for i, c := range idle[22:] {
		if closedWithin(c, 10*time.Millisecond) {
			t.Fatalf("idle socket %d of 30 closed (one of the 8 newest)", 22+i)
		}
	}
	for i := 0; i < 3; i++ {
		c, err := dialRaw(s.addr)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.login("root"); err != nil {
			t.Fatalf("login %d with the pending cap full: %v", i, err)
		}
		c.Close()
	}
	// 22 idle sockets, and the oldest of the 8 others for the first login
	if n := s.status(t, "GLOBAL", "Lockstep_pending_evicted") - evictedBefore; n != 23 {
		t.Errorf("Lockstep_pending_evicted grew by %d, want 23", n)
	}
	if n := s.status(t, "GLOBAL", "Lockstep_pending"); n > 8 {
		t.Errorf("Lockstep_pending = %d, want <= 8", n)
	}
}

// TestLoginNames: what a client sends as its user name comes back
// bounded and as a MySQL error: a long name is cut in the 1045 message
// as MySQL cuts it (96 bytes), a handshake larger than any can be (a
// megabyte-long name, maxPendingPacket) and one that does not parse (a
// NUL inside the name ends it there) are 1043 "Bad handshake"; no panic
// either way.
func TestLoginNames(t *testing.T) {
	s := startInProcess(t, nil)
	panics := protocolPanics.Load()

	long := strings.Repeat("é", 30<<10) // 60 KiB
	err := s.openAs(t, long, "pw").Ping()
	wantErrNum(t, "a 60 KiB user name", err, 1045)
	if err != nil && !strings.Contains(err.Error(), "'"+strings.Repeat("é", 48)+"'@'localhost'") {
		t.Errorf("a 60 KiB user name: %.300v, want the name cut to 96 bytes", err)
	}

	err = s.openAs(t, strings.Repeat("u", 1<<20), "").Ping()
	wantErrNum(t, "a 1 MiB user name", err, 1043)

	err = s.openAs(t, "ro\x00ot", "").Ping()
	wantErrNum(t, "a NUL inside the user name", err, 1043)

	c, err := dialRaw(s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.read(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := c.write([]byte{0x85, 0xa6, 0x03, 0x00, 0, 0}); err != nil { // shorter than the fixed part
		t.Fatal(err)
	}
	if err := c.result(); err == nil || !strings.Contains(err.Error(), "ERROR 1043 (08S01): Bad handshake") {
		t.Errorf("a short handshake response: %v, want 1043", err)
	}

	if err := s.db.Ping(); err != nil {
		t.Fatal(err)
	}
	if n := protocolPanics.Load() - panics; n != 0 {
		t.Errorf("%d panics caught in the protocol layer", n)
	}
}
