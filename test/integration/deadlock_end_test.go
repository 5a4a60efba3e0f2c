package integration

import (
	"testing"
	"time"
)

// TestDeadlockEndsTransaction: after a deadlock (1213) the victim's
// transaction is over, as in MySQL. With autocommit on, its next statement
// commits by itself: another session sees it at once, and a ROLLBACK that
// follows changes nothing.
func TestDeadlockEndsTransaction(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	a, b, c := e.session("A"), e.session("B"), e.session("C")
	a.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	a.exec("INSERT INTO t VALUES (1, 0), (2, 0), (3, 0)")
	a.exec("BEGIN")
	a.exec("UPDATE t SET v = 1 WHERE id = 1")
	b.exec("BEGIN")
	b.exec("UPDATE t SET v = 2 WHERE id = 2")
	pa := a.goExec("UPDATE t SET v = 1 WHERE id = 2")
	pa.mustBlock(t)
	errB := b.execErr("UPDATE t SET v = 2 WHERE id = 1")
	victim, winner, pw := b, a, pa
	if errno(errB) != erLockDeadlock {
		t.Fatalf("want B to be the deadlock victim (1213), got %v", errB)
	}
	if err := pw.wait(t); err != nil {
		t.Fatalf("winner's blocked update: %v", err)
	}
	// The victim is out of its transaction: this update autocommits.
	victim.exec("UPDATE t SET v = 30 WHERE id = 3")
	victim.exec("ROLLBACK")
	done := make(chan int64, 1)
	go func() { done <- c.int("SELECT v FROM t WHERE id = 3") }()
	select {
	case v := <-done:
		if v != 30 {
			t.Fatalf("row 3 = %d after the victim's autocommitted update, want 30", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading row 3 hung")
	}
	winner.exec("COMMIT")
	c.wantInts([]int64{1, 1, 30}, "SELECT v FROM t ORDER BY id")
}
