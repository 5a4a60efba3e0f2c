package integration

import (
	"context"
	"database/sql"
	"io"
	"net"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// TestMaxConnections: @@max_connections is enforced as MySQL enforces it —
// max_connections + 1 sessions (the extra one is an administrator's;
// root is one) are let in, the next login is refused with 1040 "Too many
// connections" (it was let in: the variable said 151 and limited nothing),
// Connection_errors_max_connections counts it, and a closed connection
// frees its slot. The limit is the server's own (SET GLOBAL on one server
// does not limit another).
func TestMaxConnections(t *testing.T) {
	srv := testutil.StartServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	db := srv.DB(t, "")
	db.SetMaxIdleConns(0)

	var def int64
	if err := db.QueryRowContext(ctx, "SELECT @@global.max_connections").Scan(&def); err != nil || def != 151 {
		t.Fatalf("default max_connections = %d (%v), want 151", def, err)
	}
	admin, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "SET GLOBAL max_connections = 3"); err != nil {
		t.Fatal(err)
	}

	// The pool's earlier connection is closed, but the server notices
	// that asynchronously (slowly on a busy machine): wait until admin's
	// is the only one counted.
	for i := 0; ; i++ {
		var name string
		var open int64
		if err := admin.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Threads_connected'").Scan(&name, &open); err != nil {
			t.Fatal(err)
		}
		if open == 1 {
			break
		}
		if i == 500 {
			t.Fatalf("Threads_connected = %d after 5 s, want 1 (admin's)", open)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// admin holds one slot; three more fit (3 + 1), the fifth is refused.
	var held []*sql.Conn
	for i := 0; i < 3; i++ {
		c, err := db.Conn(ctx)
		if err == nil {
			err = c.PingContext(ctx)
		}
		if err != nil {
			t.Fatalf("connection %d of 4: %v", i+2, err)
		}
		held = append(held, c)
	}
	c, err := db.Conn(ctx)
	if err == nil {
		err = c.PingContext(ctx)
		c.Close()
	}
	expectErrno(t, err, 1040, "a fifth connection with max_connections = 3")

	var name string
	var refused int64
	if err := admin.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Connection_errors_max_connections'").Scan(&name, &refused); err != nil || refused < 1 {
		t.Fatalf("Connection_errors_max_connections = %d (%v), want >= 1", refused, err)
	}

	// A closed connection gives its slot back.
	held[0].Close()
	held = held[1:]
	var again *sql.Conn
	for i := 0; i < 50; i++ { // the server notices the close asynchronously
		if again, err = db.Conn(ctx); err == nil {
			if err = again.PingContext(ctx); err == nil {
				break
			}
			again.Close()
		}
	}
	if err != nil {
		t.Fatalf("after closing one connection: %v", err)
	}
	again.Close()
	for _, c := range held {
		c.Close()
	}

	// Another server keeps its own limit.
	other := testutil.StartServer(t)
	var otherMax int64
	if err := other.DB(t, "").QueryRowContext(ctx, "SELECT @@global.max_connections").Scan(&otherMax); err != nil || otherMax != 151 {
		t.Fatalf("a second server's max_connections = %d (%v), want 151", otherMax, err)
	}
}

// TestIdleSocketsHoldNoSlots: connections that never log in do not count
// against max_connections (eleven idle sockets used to hold
// max_connections=10 and the administrator's slot: root got 1040), and
// connect_timeout closes them (they were never closed), counted in
// Aborted_connects and Lockstep_connect_timeouts.
func TestIdleSocketsHoldNoSlots(t *testing.T) {
	srv := testutil.StartServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	db := srv.DB(t, "")
	db.SetMaxOpenConns(1)
	for _, q := range []string{"SET GLOBAL max_connections = 10", "SET GLOBAL connect_timeout = 2"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var idle []net.Conn
	for i := 0; i < 11; i++ {
		c, err := net.Dial("tcp", srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	accepted := time.Now()

	// db's one session and ten more: nine ordinary, the tenth root's in
	// the administrator's slot; then 1040.
	root, err := sql.Open("mysql", srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for i := 0; i < 10; i++ {
		c, err := root.Conn(ctx)
		if err == nil {
			err = c.PingContext(ctx)
		}
		if err != nil {
			t.Fatalf("session %d of 11 with 11 idle sockets: %v", i+2, err)
		}
		defer c.Close()
	}
	c, err := root.Conn(ctx)
	if err == nil {
		err = c.PingContext(ctx)
		c.Close()
	}
	expectErrno(t, err, 1040, "a twelfth session with max_connections = 10")

	for i, c := range idle {
		_ = c.SetReadDeadline(accepted.Add(8 * time.Second))
		if _, err := c.Read(make([]byte, 256)); err != nil {
			t.Fatalf("idle socket %d: %v before its greeting", i, err)
		}
		if _, err := io.Copy(io.Discard, c); err != nil { // EOF: the server closed it
			t.Fatalf("idle socket %d not closed %v after it was accepted (connect_timeout = 2): %v", i, time.Since(accepted), err)
		}
	}
	// The counters move as the server finishes with each socket, which may
	// be just after the client saw it closed: they are given 5 s.
	for name, least := range map[string]int64{"Aborted_connects": 11, "Lockstep_connect_timeouts": 11, "Connection_errors_max_connections": 1} {
		var k string
		var n int64
		var err error
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			err = db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&k, &n)
			if (err == nil && n >= least) || time.Now().After(deadline) {
				break
			}
		}
		if err != nil || n < least {
			t.Errorf("%s = %d (%v), want >= %d", name, n, err, least)
		}
	}
}
