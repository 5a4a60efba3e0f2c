package integration

import (
	"testing"
	"time"
)

// TestDisconnectRollback checks that a client that goes away in the middle
// of a transaction has it rolled back and its locks released.
func TestDisconnectRollback(t *testing.T) {
	srv := startServer(t)
	cases := []struct {
		name string
		// drop ends session A's connection; A's pool allows one
		// connection at most and keeps none idle.
		drop func(a *session, cut func())
	}{
		{"CloseConn", func(a *session, _ func()) {
			// database/sql closes the connection (COM_QUIT) since the
			// pool keeps no idle connections.
			if err := a.c.Close(); err != nil {
				a.t.Fatalf("conn.Close: %v", err)
			}
		}},
		{"CutSocket", func(a *session, cut func()) {
			// The TCP connection just goes away, as when a client
			// crashes.
			cut()
			a.c.Close()
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newDatabase(t, srv)
			b := e.session("B")
			b.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
			b.exec("INSERT INTO t VALUES (1, 1), (2, 2)")

			adb, cut := e.dropConnDB()
			a := newSession(t, e.ctx, adb, "A")
			a.exec("BEGIN")
			a.exec("UPDATE t SET v = 100 WHERE id = 1")
			a.exec("INSERT INTO t VALUES (3, 3)")
			a.exec("DELETE FROM t WHERE id = 2")
			a.wantInt(1, "SELECT COUNT(*) FROM t WHERE id = 1 FOR UPDATE")

			// While A is connected, B waits for A's row lock.
			b.exec("SET SESSION innodb_lock_wait_timeout = 1")
			b.mustFail(erLockWaitTimeout, "UPDATE t SET v = v + 1 WHERE id = 1")

			c.drop(a, cut)

			// A's transaction is gone: B neither sees its changes nor
			// waits for its locks.
			b.exec("SET SESSION innodb_lock_wait_timeout = 5")
			b.exec("BEGIN")
			start := time.Now()
			b.exec("UPDATE t SET v = v + 1 WHERE id = 1")
			b.exec("INSERT INTO t VALUES (3, 30)")
			b.exec("UPDATE t SET v = v + 1 WHERE id = 2")
			if took := time.Since(start); took > time.Second {
				t.Fatalf("B's writes took %v after A disconnected; want no lock wait", took)
			}
			b.exec("COMMIT")
			b.wantRows("1:2 2:3 3:30", "SELECT id, v FROM t ORDER BY id")

			// The pool can reconnect and the new session is clean.
			a2 := newSession(t, e.ctx, adb, "A2")
			a2.wantRows("1:2 2:3 3:30", "SELECT id, v FROM t ORDER BY id")
		})
	}
}
