package integration

import (
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// TestLockStatusCounters checks that SHOW STATUS reports InnoDB's row lock
// and deadlock counters and that they move with lock waits, lock wait
// timeouts and deadlocks. Tests run one at a time, so the deltas are its own.
func TestLockStatusCounters(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	a, b := e.session("A"), e.session("B")
	lockTable(a)

	rowLock := []string{
		"Innodb_row_lock_current_waits",
		"Innodb_row_lock_time",
		"Innodb_row_lock_time_avg",
		"Innodb_row_lock_time_max",
		"Innodb_row_lock_waits",
	}
	read := func(t *testing.T) map[string]int64 {
		t.Helper()
		m := map[string]int64{}
		for _, stmt := range []string{
			"SHOW STATUS LIKE 'Innodb_row_lock%'",
			"SHOW STATUS LIKE 'Innodb_deadlocks'",
		} {
			for k, v := range status(t, e.ctx, e.db, stmt) {
				m[k] = v
			}
		}
		for _, name := range append(rowLock, "Innodb_deadlocks") {
			if _, ok := m[name]; !ok {
				t.Fatalf("SHOW STATUS has no %s (got %v)", name, m)
			}
		}
		return m
	}

	before := read(t)
	if v := before["Innodb_row_lock_current_waits"]; v != 0 {
		t.Errorf("before: Innodb_row_lock_current_waits = %d with no waits, want 0", v)
	}
	// GLOBAL and the default scope report the same.
	global := status(t, e.ctx, e.db, "SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_waits'")
	if _, ok := global["Innodb_row_lock_waits"]; !ok {
		t.Fatalf("SHOW GLOBAL STATUS has no Innodb_row_lock_waits")
	}

	// 1. A lock wait of at least notReturnedWait, seen while it waits.
	a.exec("BEGIN")
	a.exec("UPDATE t SET v = 1 WHERE id = 1")
	p := b.goExec("UPDATE t SET v = 2 WHERE id = 1")
	p.mustBlock(t)
	during := read(t)
	if during["Innodb_row_lock_current_waits"] != 1 {
		t.Errorf("while B waits: Innodb_row_lock_current_waits = %d, want 1", during["Innodb_row_lock_current_waits"])
	}
	a.exec("COMMIT")
	p.mustSucceed(t)

	// 2. A lock wait timeout.
	a.exec("BEGIN")
	a.exec("UPDATE t SET v = 3 WHERE id = 2")
	b.exec("SET SESSION innodb_lock_wait_timeout = 1")
	b.mustFail(erLockWaitTimeout, "UPDATE t SET v = 4 WHERE id = 2")
	a.exec("COMMIT")

	// 3. A deadlock.
	a.exec("BEGIN")
	b.exec("BEGIN")
	a.exec("UPDATE t SET v = 5 WHERE id = 1")
	b.exec("UPDATE t SET v = 5 WHERE id = 2")
	pa := a.goExec("UPDATE t SET v = 6 WHERE id = 2")
	pa.mustBlock(t)
	errB := b.execErr("UPDATE t SET v = 6 WHERE id = 1")
	errA := pa.wait(t)
	if aDead, bDead := errno(errA) == erLockDeadlock, errno(errB) == erLockDeadlock; aDead == bDead ||
		(aDead && errB != nil) || (bDead && errA != nil) {
		t.Fatalf("want one 1213; A: %v, B: %v", errA, errB)
	}
	a.exec("ROLLBACK")
	b.exec("ROLLBACK")

	after := read(t)
	t.Logf("before: %v", before)
	t.Logf("after:  %v", after)
	delta := func(name string) int64 { return after[name] - before[name] }
	// Waits: the blocked update, the timed-out one and the deadlock's
	// first waiter (InnoDB counts the victim's request too, and may not).
	if d := delta("Innodb_row_lock_waits"); d < 3 {
		t.Errorf("Innodb_row_lock_waits went up by %d, want at least 3", d)
	}
	// At least 300 ms (first wait) + 1 s (timeout) + 300 ms (deadlock).
	minMillis := int64((2*notReturnedWait + time.Second) / time.Millisecond)
	if d := delta("Innodb_row_lock_time"); d < minMillis {
		t.Errorf("Innodb_row_lock_time went up by %d ms, want at least %d", d, minMillis)
	}
	if v := after["Innodb_row_lock_time_max"]; v < int64(time.Second/time.Millisecond) {
		t.Errorf("Innodb_row_lock_time_max = %d ms, want at least 1000 (the timed-out wait)", v)
	}
	if v := after["Innodb_row_lock_time_avg"]; v <= 0 || v > after["Innodb_row_lock_time_max"] {
		t.Errorf("Innodb_row_lock_time_avg = %d, want in (0, max=%d]", v, after["Innodb_row_lock_time_max"])
	}
	if v := after["Innodb_row_lock_current_waits"]; v != 0 {
		t.Errorf("Innodb_row_lock_current_waits = %d after all waits ended, want 0", v)
	}
	if d := delta("Innodb_deadlocks"); d != 1 {
		t.Errorf("Innodb_deadlocks went up by %d, want 1", d)
	}

	// The WHERE form clients use works too.
	var name string
	var val sql.NullString
	if err := e.db.QueryRowContext(e.ctx, "SHOW GLOBAL STATUS WHERE Variable_name = 'Innodb_deadlocks'").
		Scan(&name, &val); err != nil {
		t.Errorf("SHOW GLOBAL STATUS WHERE Variable_name = 'Innodb_deadlocks': %v", err)
	} else if want := fmt.Sprint(after["Innodb_deadlocks"]); val.String != want {
		t.Errorf("SHOW GLOBAL STATUS WHERE ...: Innodb_deadlocks = %q, want %s", val.String, want)
	}
}
