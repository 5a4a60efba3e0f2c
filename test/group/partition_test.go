package group

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

const (
	defaultPartitionRounds = 2 // a cut, then a blackhole
	// electionTimeout is the members' (server/group.go: 10 ticks of
	// 100 ms). A primary cut off from the others must stop acknowledging
	// within it, and step down (CheckQuorum, checked once per election
	// timeout) within two.
	electionTimeout = time.Second
	maxStepDown     = 2*electionTimeout + 500*time.Millisecond
	// partitioned: how long the clients write to the new primary while
	// the old one is still cut off.
	partitioned = time.Second
)

// TestGroupPartition: under the bank-transfer load, the primary's group
// links to both secondaries break (testutil.Proxy between every pair of
// members: odd rounds Cut — connections closed, new ones refused —, even
// rounds Blackhole — connections open, nothing delivered, the harder case
// for failure detection). The old primary must acknowledge nothing after
// an election timeout and stop taking writes within two; a COMMIT sent to
// it just after the cut must not be acknowledged (3101, 1290 or no answer);
// the other two elect a primary that takes the load (the clients give up
// on the old primary: their COMMITs there end with an unknown outcome).
// The links heal; the old primary rejoins as a secondary; every
// acknowledged transfer is on every member, the balances add up and the
// members' tables are identical. LOCKSTEP_GROUP_ROUNDS sets the number of
// rounds.
func TestGroupPartition(t *testing.T) {
	rounds := envInt(t, "LOCKSTEP_GROUP_ROUNDS", defaultPartitionRounds)
	// Every commit is proposed at once (more sync slots than clients): the
	// commits in flight at the cut, and the probe's after it, are entries
	// raft holds on the old primary, not commits queued behind one.
	c := startClusterWith(t, clusterOptions{proxied: true, args: []string{"--log-syncs-in-flight", "8"}})
	b := newBank(t, c)
	b.setup(c.waitPrimary(0))
	c.waitConverged()
	b.verify("after setup")

	for b.round = 1; b.round <= rounds; b.round++ {
		how := testutil.ProxyCut
		if b.round%2 == 0 {
			how = testutil.ProxyBlackhole
		}
		b.start()
		b.run(loadBefore)
		old := c.waitPrimary(0)
		if cur := b.target.Load(); cur == nil || cur.m != old {
			t.Logf("round %d: member %d became the primary just before the partition", b.round, old.id)
			b.setTarget(old)
		}
		oldTarget := b.target.Load()
		pr := b.openProbe(old)

		cutAt := time.Now()
		c.isolate(old, how)
		pr.commit()
		stepDown, elected, np := c.watchPartition(old, cutAt, func(np *member) {
			b.setTarget(np)
			b.abandon(oldTarget)
		})
		b.run(partitioned)
		healAt := time.Now()
		c.heal()
		b.run(loadCatchUp)
		acked, unknown, refused := b.stop()
		probeErr := pr.wait(t)

		oldAcks, newAcks := b.ledger.ackTimes(b.round, old.id), b.ledger.ackTimes(b.round, np.id)
		var lastOld time.Duration
		if len(oldAcks) > 0 {
			lastOld = oldAcks[len(oldAcks)-1].Sub(cutAt)
		}
		duringPartition := 0
		for _, at := range newAcks {
			if at.Before(healAt) {
				duringPartition++
			}
		}
		idx := c.waitConverged()
		b.verify("after the partition healed")
		c.checkChecksums("round " + itoa(b.round) + ", after the partition healed")
		now := c.findPrimary(t.Context())
		t.Logf("round %d (%v): primary member %d cut off; its last acknowledgement %v after the cut, it stopped taking writes after %v; member %d primary after %v and acknowledged %d transfers before the heal; the COMMIT sent after the cut returned after %v: %v; %d acknowledged, %d unknown, %d refused; converged at index %d with member %d primary",
			b.round, how, old.id, lastOld.Round(time.Millisecond), stepDown.Round(time.Millisecond), np.id, elected.Round(time.Millisecond),
			duringPartition, pr.end.Sub(cutAt).Round(time.Millisecond), probeErr, acked, unknown, refused, idx, now.id)

		if lastOld > electionTimeout {
			t.Errorf("round %d: the old primary (member %d) acknowledged a commit %v after it was cut off, want none after %v",
				b.round, old.id, lastOld.Round(time.Millisecond), electionTimeout)
		}
		if stepDown > maxStepDown {
			t.Errorf("round %d: the old primary took writes for %v after it was cut off, want under %v", b.round, stepDown.Round(time.Millisecond), maxStepDown)
		}
		if probeErr == nil {
			t.Errorf("round %d: a COMMIT sent to the old primary after it was cut off was acknowledged", b.round)
		}
		if duringPartition == 0 {
			t.Errorf("round %d: the new primary (member %d) acknowledged nothing while the old one was cut off", b.round, np.id)
		}
		if now == old {
			t.Errorf("round %d: the old primary (member %d) is the primary again after the heal", b.round, old.id)
		}
	}
	ack, ref, unk, kept, lost := b.ledger.counts()
	t.Logf("summary: %d rounds (seed %d): %d transfers acknowledged, %d refused, %d unknown (%d there, %d not)",
		rounds, b.seed, ack, ref, unk, kept, lost)
}

// watchPartition polls, after old was cut off at cutAt, until old
// refuses writes and another member takes them (stepTimeout at most); it
// calls elected with that member as soon as it is found.
func (c *cluster) watchPartition(old *member, cutAt time.Time, onElected func(*member)) (stepDown, elected time.Duration, np *member) {
	c.t.Helper()
	deadline := cutAt.Add(stepTimeout)
	ask := func(m *member) (map[string]int64, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return status(ctx, m)
	}
	for (stepDown == 0 || np == nil) && time.Now().Before(deadline) {
		if stepDown == 0 {
			if st, err := ask(old); err == nil && st["primary"] == 0 {
				stepDown = time.Since(cutAt)
			}
		}
		if np == nil {
			for _, m := range c.up() {
				if m == old {
					continue
				}
				if st, err := ask(m); err == nil && st["primary"] == 1 {
					np, elected = m, time.Since(cutAt)
					onElected(np)
					break
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	if stepDown == 0 || np == nil {
		c.t.Fatalf("%v after member %d was cut off: it stopped taking writes: %v; a new primary: %v\n%s",
			stepTimeout, old.id, stepDown != 0, np != nil, c.describe())
	}
	return stepDown, elected, np
}

// probe is one transfer sent to a member by a session of its own: opened
// before the partition, its COMMIT sent just after it.
type probe struct {
	b    *bank
	m    *member
	conn *sql.Conn
	id   int64
	tr   transfer
	done chan error
	end  time.Time // when the COMMIT returned
}

// openProbe begins a transfer of 0 (a row in bank.transfers, no balance
// changed: it locks no account) on m.
func (b *bank) openProbe(m *member) *probe {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	conn, err := m.db.Conn(ctx)
	if err != nil {
		b.t.Fatalf("probe on member %d: %v", m.id, err)
	}
	pr := &probe{b: b, m: m, conn: conn, id: b.nextID.Add(1), tr: transfer{src: 1, dst: 2}, done: make(chan error, 1)}
	for _, q := range []string{"BEGIN", fmt.Sprintf("INSERT INTO bank.transfers (id, src, dst, amount, round) VALUES (%d, 1, 2, 0, %d)", pr.id, b.round)} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			b.t.Fatalf("probe on member %d: %s: %v", m.id, q, err)
		}
	}
	return pr
}

// commit sends the probe's COMMIT and records its outcome in the ledger,
// in the background.
func (pr *probe) commit() {
	pr.b.ledger.sent(pr.id, pr.tr, pr.b.round, pr.m.id)
	go func() {
		defer pr.conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
		defer cancel()
		_, err := pr.conn.ExecContext(ctx, "COMMIT")
		switch n := errno(err); {
		case err == nil:
			pr.b.ledger.ack(pr.id, time.Now())
		case n == erReadOnly || n == erRollbackInCommit:
			pr.b.ledger.refused(pr.id)
		}
		pr.end = time.Now()
		pr.done <- err
	}()
}

// wait returns the COMMIT's error (nil: acknowledged).
func (pr *probe) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-pr.done:
		return err
	case <-time.After(stepTimeout):
		t.Fatalf("the probe's COMMIT on member %d did not end within %v", pr.m.id, stepTimeout)
		return nil
	}
}
