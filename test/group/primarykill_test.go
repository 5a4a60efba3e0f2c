package group

import (
	"testing"
	"time"
)

const (
	defaultKillRounds = 3
	// loadBefore, loadAfter: how long the clients write before the kill
	// and to the new primary before the killed member restarts;
	// loadCatchUp: while it catches up.
	loadBefore, loadAfter, loadCatchUp = 700 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond
)

// TestGroupPrimaryKill: under a bank-transfer load, the primary is killed
// (SIGKILL); another member becomes primary and the load goes on against
// it; the killed member restarts on its data directory and catches up.
// After each round every acknowledged transfer is on every member, no
// refused one is anywhere, the balances add up and the members' tables
// are identical. LOCKSTEP_GROUP_ROUNDS sets the number of rounds.
func TestGroupPrimaryKill(t *testing.T) {
	rounds := envInt(t, "LOCKSTEP_GROUP_ROUNDS", defaultKillRounds)
	c := startCluster(t)
	b := newBank(t, c)
	b.setup(c.waitPrimary(0))
	c.waitConverged()
	b.verify("after setup")

	var failovers []time.Duration
	for b.round = 1; b.round <= rounds; b.round++ {
		b.start()
		b.run(loadBefore)
		old := c.waitPrimary(0)
		if cur := b.target.Load(); cur == nil || cur.m != old {
			// The primary changed since the clients last followed it.
			t.Logf("round %d: member %d became the primary just before the kill", b.round, old.id)
			b.setTarget(old)
		}
		killedAt := time.Now()
		c.kill(old)
		b.setTarget(nil)
		np := c.waitPrimary(old.id)
		elected := time.Since(killedAt)
		b.setTarget(np)
		b.run(loadAfter)
		c.start(old, false)
		b.run(loadCatchUp)
		acked, unknown, refused := b.stop()

		failover := b.failover(t, old, np)
		failovers = append(failovers, failover)

		idx := c.waitConverged()
		b.verify("after the killed primary caught up")
		c.checkChecksums("round " + itoa(b.round) + ", after the killed primary caught up")
		t.Logf("round %d: killed primary member %d; member %d primary after %v; failover (last ack of the old primary to first ack of the new) %v; %d acknowledged, %d unknown, %d refused; converged at index %d",
			b.round, old.id, np.id, elected.Round(time.Millisecond), failover.Round(time.Millisecond), acked, unknown, refused, idx)
	}
	ack, ref, unk, kept, lost := b.ledger.counts()
	t.Logf("summary: %d rounds (seed %d): %d transfers acknowledged, %d refused, %d unknown (%d there, %d not); failovers %v",
		rounds, b.seed, ack, ref, unk, kept, lost, failovers)
	t.Logf("failover: %s", summarize(failovers))
}
