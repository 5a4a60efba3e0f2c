package group

import (
	"testing"
	"time"
)

// secondaryDown is how long the killed secondary stays down.
const secondaryDown = 4 * time.Second

// TestGroupSecondaryKill: a secondary is killed under load; the primary
// keeps committing every second it is down (after the first), stays the
// primary, and the secondary restarts and catches up to identical tables.
func TestGroupSecondaryKill(t *testing.T) {
	c := startCluster(t)
	b := newBank(t, c)
	p := c.waitPrimary(0)
	b.setup(p)
	c.waitConverged()
	b.round = 1
	b.start()
	var sec *member
	for _, m := range c.members {
		if m != p {
			sec = m
			break
		}
	}
	// Far enough that the secondary's restart replays its own log first.
	b.runPast(sec, 1100)
	killedAt := time.Now()
	c.kill(sec)
	b.run(secondaryDown)
	restartAt := time.Now()
	c.start(sec, false)
	b.run(time.Second)
	acked, unknown, refused := b.stop()

	// Commits per second while the secondary was down, from the
	// acknowledgements the clients saw.
	acks := b.ledger.ackTimes(b.round, p.id)
	var perSecond []int
	for from := killedAt; from.Add(time.Second).Before(restartAt); from = from.Add(time.Second) {
		n := 0
		for _, at := range acks {
			if !at.Before(from) && at.Before(from.Add(time.Second)) {
				n++
			}
		}
		perSecond = append(perSecond, n)
	}
	t.Logf("member %d (secondary) down %v; commits per second on the primary (member %d) meanwhile: %v; %d acknowledged, %d unknown, %d refused in all",
		sec.id, restartAt.Sub(killedAt).Round(time.Millisecond), p.id, perSecond, acked, unknown, refused)
	if len(perSecond) < 3 {
		t.Fatalf("the secondary was down only %d whole seconds", len(perSecond))
	}
	for i, n := range perSecond[1:] {
		if n == 0 {
			t.Errorf("no commit in second %d after the secondary was killed (per second: %v)", i+2, perSecond)
		}
	}
	if unknown != 0 || refused != 0 {
		t.Errorf("%d commits of unknown outcome and %d refused, want none: only a secondary died", unknown, refused)
	}
	for _, m := range c.members {
		if m != p && len(b.ledger.ackTimes(b.round, m.id)) > 0 {
			t.Errorf("member %d acknowledged commits: the primary changed while only a secondary was down", m.id)
		}
	}

	c.waitConverged()
	if now := c.findPrimary(t.Context()); now != p {
		t.Errorf("after the secondary's restart the primary is %v, want member %d", now, p.id)
	}
	b.verify("after the killed secondary caught up")
	c.checkChecksums("after the killed secondary caught up")
}
