package group

import (
	"slices"
	"testing"
	"time"
)

// TestGroupRestartAll: all three members stop (SIGTERM) and start again
// without --group-bootstrap: the data, the catalog and the accounts are
// all there on every member, and a primary takes writes again.
func TestGroupRestartAll(t *testing.T) {
	c := startCluster(t)
	b := newBank(t, c)
	p := c.waitPrimary(0)
	b.setup(p)
	exec(t, p,
		"CREATE TABLE bank.notes (id INT AUTO_INCREMENT PRIMARY KEY, body VARCHAR(100))",
		"INSERT INTO bank.notes (body) VALUES ('before the restart'), ('second')",
		"CREATE USER 'auditor'@'%' IDENTIFIED BY 'pw-2'",
		"GRANT SELECT ON bank.* TO 'auditor'@'%'",
	)
	b.round = 1
	b.start()
	// Far enough that each member's restart replays its own log first.
	for _, m := range c.members {
		b.runPast(m, 1100)
	}
	acked, _, _ := b.stop()
	if acked == 0 {
		t.Fatal("no transfer was acknowledged before the restart")
	}
	idx := c.waitConverged()
	b.verify("before the restart")
	c.checkChecksums("before the restart")

	for _, m := range c.members {
		c.stop(m)
	}
	if t.Failed() {
		t.FailNow()
	}
	started := time.Now()
	for _, m := range c.members {
		c.start(m, false)
	}
	np := c.waitPrimary(0)
	after := c.waitConverged()
	t.Logf("restarted all: member %d primary, converged at index %d (was %d) %v after the first start; %d transfers acknowledged before",
		np.id, after, idx, time.Since(started).Round(time.Millisecond), acked)
	if after < idx {
		t.Fatalf("the group converged at index %d after the restart, below %d before it", after, idx)
	}
	b.round = 2
	b.verify("after the restart")
	c.checkChecksums("after the restart")
	for _, m := range c.members {
		if got := rowsOf(t, m, "SELECT id, body FROM bank.notes ORDER BY id"); !slices.Equal(got, []string{"1 before the restart", "2 second"}) {
			t.Errorf("member %d: bank.notes = %q after the restart", m.id, got)
		}
		if got := rowsOf(t, m, "SHOW GRANTS FOR 'auditor'@'%'"); !slices.Equal(got, []string{"GRANT USAGE ON *.* TO `auditor`@`%`", "GRANT SELECT ON `bank`.* TO `auditor`@`%`"}) {
			t.Errorf("member %d: SHOW GRANTS FOR auditor = %q after the restart", m.id, got)
		}
	}

	// The primary takes writes again, and they reach everyone.
	exec(t, np, "INSERT INTO bank.notes (body) VALUES ('after the restart')")
	b.setTarget(np)
	b.round = 3
	b.start()
	b.run(time.Second)
	acked, _, _ = b.stop()
	if acked == 0 {
		t.Fatal("no transfer was acknowledged after the restart")
	}
	c.waitConverged()
	b.verify("after writing again")
	c.checkChecksums("after writing again")
	for _, m := range c.members {
		if got := rowsOf(t, m, "SELECT id, body FROM bank.notes ORDER BY id"); !slices.Equal(got, []string{"1 before the restart", "2 second", "3 after the restart"}) {
			t.Errorf("member %d: bank.notes = %q after writing again", m.id, got)
		}
	}
}
