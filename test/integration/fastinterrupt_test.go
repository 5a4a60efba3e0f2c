package integration

import (
	"strconv"
	"testing"
	"time"
)

// TestFastPathStops: statements the fast path runs can run long — a
// primary key range over a big table reads every row in it, a locking
// read waits for a row lock up to innodb_lock_wait_timeout — and they stop
// as go-mysql-server's do: at max_execution_time with 3024, at KILL QUERY
// with 1317. The fast path ran them to the end whatever either said.
func TestFastPathStops(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	s, admin, holder := e.session("s"), e.session("admin"), e.session("holder")
	fillBig(s, 100000)
	s.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	s.exec("INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)")
	hits := func() int64 { return status(t, e.ctx, e.db, "SHOW GLOBAL STATUS")["Lockstep_fast_path_hits"] }
	// onFastPath runs query on s twice (the first teaches the fast path
	// the result's columns) and checks that the second ran there.
	onFastPath := func(query string) {
		t.Helper()
		s.exec(query)
		before := hits()
		s.exec(query)
		if hits() != before+1 {
			t.Fatalf("%s does not run on the fast path", query)
		}
	}

	// A range read of 100,000 rows under max_execution_time 1: stopped.
	rangeRead := "SELECT v FROM big WHERE id BETWEEN 0 AND 100000000"
	onFastPath(rangeRead)
	s.exec("SET SESSION max_execution_time = 1")
	before := hits()
	if err := s.execErr(rangeRead); errno(err) != erQueryTimeout {
		t.Errorf("a fast range read of 100,000 rows under max_execution_time 1: %v, want 3024", err)
	}
	if hits() != before+1 {
		t.Errorf("the timed range read did not run on the fast path")
	}
	s.wantInt(2, "SELECT v FROM t WHERE id = 2") // short reads go on
	s.exec("SET SESSION max_execution_time = 0")

	// A locking point read waiting for a row lock.
	lockRead := "SELECT v FROM t WHERE id = 1 FOR UPDATE"
	onFastPath("SELECT v FROM t WHERE id = 2 FOR UPDATE")
	s.exec("SET SESSION innodb_lock_wait_timeout = 30")
	holder.exec("BEGIN")
	holder.exec("SELECT v FROM t WHERE id = 1 FOR UPDATE")

	s.exec("SET SESSION max_execution_time = 300")
	start := time.Now()
	before = hits()
	err := s.execErr(lockRead)
	if errno(err) != erQueryTimeout {
		t.Errorf("a fast locking read waiting for a lock under max_execution_time 300: %v, want 3024", err)
	} else if d := time.Since(start); d < 300*time.Millisecond || d > 300*time.Millisecond+killAnswer {
		t.Errorf("the timed locking read stopped after %v, want about 300ms", d)
	}
	if hits() != before+1 {
		t.Errorf("the timed locking read did not run on the fast path")
	}
	s.exec("SET SESSION max_execution_time = 0")

	id := s.int("SELECT CONNECTION_ID()")
	p := s.goExec(lockRead)
	select {
	case <-p.done:
		t.Fatalf("the locking read ended before KILL QUERY: %v", p.err)
	case <-time.After(300 * time.Millisecond):
	}
	admin.exec("KILL QUERY " + strconv.FormatInt(id, 10))
	killed := time.Now()
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the locking read still waited 20 s after KILL QUERY")
	}
	if d := time.Since(killed); d > killAnswer {
		t.Errorf("the locking read ran %v after KILL QUERY, want at most %v", d, killAnswer)
	}
	if errno(p.err) != erQueryInterrupted {
		t.Errorf("the killed locking read: %v, want 1317", p.err)
	}

	// A write by key waiting for the row lock: KILL QUERY stops it, and
	// it changed nothing.
	before = hits()
	s.exec("UPDATE t SET v = 20 WHERE id = 2")
	if hits() != before+1 {
		t.Fatalf("the UPDATE by key does not run on the fast path")
	}
	p = s.goExec("UPDATE t SET v = 10 WHERE id = 1")
	select {
	case <-p.done:
		t.Fatalf("the UPDATE ended before KILL QUERY: %v", p.err)
	case <-time.After(300 * time.Millisecond):
	}
	admin.exec("KILL QUERY " + strconv.FormatInt(id, 10))
	if err := p.wait(t); errno(err) != erQueryInterrupted {
		t.Errorf("the killed UPDATE: %v, want 1317", err)
	}
	holder.exec("COMMIT")
	s.wantInt(1, lockRead) // the connection goes on, the lock is free, the row unchanged
}
