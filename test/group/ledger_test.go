package group

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// transfer is what a client wrote in one transaction.
type transfer struct{ src, dst, amount int64 }

// fate is what the test knows about a transfer whose COMMIT was sent.
type fate uint8

const (
	unknown fate = iota // no answer, 1180: present or absent, once decided for good
	acked               // COMMIT returned OK: present on every member from then on
	refused             // COMMIT failed with 3101 or 1290: never present
	kept                // was unknown, present at a verification: stays present
	lost                // was unknown, absent at a verification: stays absent
)

type entry struct {
	transfer
	round   int       // the round whose workload sent its COMMIT
	member  int       // the member it was sent to
	fate    fate      //
	ackAt   time.Time // when COMMIT returned OK
	decided int       // for kept and lost: the round whose verification decided it
}

// ledger is the test's record of every transfer whose COMMIT was sent.
// Transfers that never sent COMMIT are not in it and must never appear.
type ledger struct {
	mu sync.Mutex
	m  map[int64]*entry
}

func newLedger() *ledger { return &ledger{m: map[int64]*entry{}} }

func (l *ledger) sent(id int64, tr transfer, round, member int) {
	l.mu.Lock()
	l.m[id] = &entry{transfer: tr, round: round, member: member}
	l.mu.Unlock()
}

func (l *ledger) ack(id int64, at time.Time) {
	l.mu.Lock()
	l.m[id].fate, l.m[id].ackAt = acked, at
	l.mu.Unlock()
}

func (l *ledger) refused(id int64) {
	l.mu.Lock()
	l.m[id].fate = refused
	l.mu.Unlock()
}

// ackTimes returns the times of the acknowledgements member gave in
// round, in order.
func (l *ledger) ackTimes(round, member int) []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []time.Time
	for _, e := range l.m {
		if e.fate == acked && e.round == round && e.member == member {
			out = append(out, e.ackAt)
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

// counts sums the ledger: acknowledged, refused, and unknown (of which
// how many were found at a verification and how many not).
func (l *ledger) counts() (ack, ref, unk, found, notFound int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.m {
		switch e.fate {
		case acked:
			ack++
		case refused:
			ref++
		case kept:
			found++
		case lost:
			notFound++
		}
	}
	return ack, ref, len(l.m) - ack - ref, found, notFound
}

// verify checks the bank on every running member (no clients may be
// running, and the members must have converged): every acknowledged
// transfer is there, nothing else but transfers of unknown outcome, each
// as its client wrote it; every balance is what the transfers imply and
// the balances sum to the initial total. A transfer of unknown outcome is
// decided by the first member read, and must then be the same on every
// member and at every later verification.
func (b *bank) verify(when string) {
	b.t.Helper()
	b.ledger.mu.Lock()
	defer b.ledger.mu.Unlock()
	var decided map[int64]bool // unknown transfer -> present, from the first member
	for _, m := range b.c.up() {
		found, p := b.check(m, decided)
		if len(p) > 0 {
			const maxShown = 20
			n, more := len(p), ""
			if n > maxShown {
				more = fmt.Sprintf("\n  ... and %d more", n-maxShown)
				p = p[:maxShown]
			}
			b.t.Fatalf("round %d (seed %d), %s: member %d: %d problem(s):\n  %s%s\n%s",
				b.round, b.seed, when, m.id, n, strings.Join(p, "\n  "), more, b.c.describe())
		}
		if decided == nil {
			decided = map[int64]bool{}
			for id, e := range b.ledger.m {
				if e.fate == unknown {
					_, decided[id] = found[id]
				}
			}
		}
	}
	for id, present := range decided {
		e := b.ledger.m[id]
		e.decided = b.round
		if present {
			e.fate = kept
		} else {
			e.fate = lost
		}
	}
}

// check reads the bank on m and returns the transfers found and the
// problems. The ledger is locked.
func (b *bank) check(m *member, decided map[int64]bool) (map[int64]transfer, []string) {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()

	found := map[int64]transfer{}
	rows, err := m.db.QueryContext(ctx, "SELECT id, src, dst, amount FROM bank.transfers")
	if err != nil {
		add("reading bank.transfers: %v", err)
		return nil, p
	}
	for rows.Next() {
		var id int64
		var tr transfer
		if err := rows.Scan(&id, &tr.src, &tr.dst, &tr.amount); err != nil {
			rows.Close()
			add("reading bank.transfers: %v", err)
			return nil, p
		}
		found[id] = tr
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		add("reading bank.transfers: %v", err)
		return nil, p
	}

	for _, id := range slices.Sorted(maps.Keys(found)) {
		tr, e := found[id], b.ledger.m[id]
		switch {
		case e == nil:
			add("transfer %d (%d->%d, %d) is present but no client sent its COMMIT", id, tr.src, tr.dst, tr.amount)
		case e.fate == refused:
			add("transfer %d (round %d, to member %d) is present but its COMMIT failed with 3101/1290 (certainly not committed)", id, e.round, e.member)
		case e.fate == lost:
			add("transfer %d (round %d) was absent at round %d's verification but is there now", id, e.round, e.decided)
		case e.fate == unknown && decided != nil && !decided[id]:
			add("transfer %d (round %d, outcome unknown) is here but not on the member read first", id, e.round)
		case e.transfer != tr:
			add("transfer %d is %d->%d, %d; the client wrote %d->%d, %d", id, tr.src, tr.dst, tr.amount, e.src, e.dst, e.amount)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.ledger.m)) {
		e := b.ledger.m[id]
		if _, ok := found[id]; ok {
			continue
		}
		switch {
		case e.fate == acked:
			add("acknowledged transfer %d (round %d, member %d: %d->%d, %d) is missing", id, e.round, e.member, e.src, e.dst, e.amount)
		case e.fate == kept:
			add("transfer %d (round %d) was present at round %d's verification but is missing now", id, e.round, e.decided)
		case e.fate == unknown && decided != nil && decided[id]:
			add("transfer %d (round %d, outcome unknown) is missing here but present on the member read first", id, e.round)
		}
	}

	want := map[int64]int64{}
	for id := int64(1); id <= numAccounts; id++ {
		want[id] = initialBalance
	}
	for _, tr := range found {
		want[tr.src] -= tr.amount
		want[tr.dst] += tr.amount
	}
	rows, err = m.db.QueryContext(ctx, "SELECT id, balance FROM bank.accounts")
	if err != nil {
		add("reading bank.accounts: %v", err)
		return found, p
	}
	got := map[int64]int64{}
	var sum int64
	for rows.Next() {
		var id, bal int64
		if err := rows.Scan(&id, &bal); err != nil {
			rows.Close()
			add("reading bank.accounts: %v", err)
			return found, p
		}
		got[id] = bal
		sum += bal
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		add("reading bank.accounts: %v", err)
		return found, p
	}
	for id := int64(1); id <= numAccounts; id++ {
		if v, ok := got[id]; !ok {
			add("account %d is missing", id)
		} else if v != want[id] {
			add("account %d: balance %d, but the transfers imply %d (a torn transaction?)", id, v, want[id])
		}
	}
	if len(got) != numAccounts {
		add("%d accounts, want %d", len(got), numAccounts)
	}
	if total := int64(numAccounts * initialBalance); sum != total {
		add("the balances sum to %d, want %d", sum, total)
	}
	return found, p
}
