package crash

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// transfer is what a client wrote in one transaction.
type transfer struct{ src, dst, amount int64 }

// fate is what the test knows about a transfer whose COMMIT was sent.
type fate uint8

const (
	unknown fate = iota // no reply to COMMIT: present or absent after the crash
	acked               // COMMIT returned OK: must be present after every restart
	kept                // was unknown, present after a restart: must stay present
	lost                // was unknown, absent after a restart: must stay absent
)

type entry struct {
	transfer
	round   int // the round whose workload sent its COMMIT
	fate    fate
	decided int // for kept and lost: the round whose restart decided it
}

// ledger is the test's own record of every transfer whose COMMIT was sent.
// Transfers never sent a COMMIT are not in it and must never appear.
type ledger struct {
	mu sync.Mutex
	m  map[int64]*entry
}

func newLedger() *ledger { return &ledger{m: map[int64]*entry{}} }

func (l *ledger) sent(id int64, tr transfer, round int) {
	l.mu.Lock()
	l.m[id] = &entry{transfer: tr, round: round}
	l.mu.Unlock()
}

func (l *ledger) ack(id int64) {
	l.mu.Lock()
	l.m[id].fate = acked
	l.mu.Unlock()
}

// counts returns how many transfers were acknowledged, and how many were
// unknown, of which how many were then found and how many not.
func (l *ledger) counts() (ack, unk, found, notFound int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.m {
		switch e.fate {
		case acked:
			ack++
		case kept:
			found++
		case lost:
			notFound++
		}
	}
	return ack, len(l.m) - ack, found, notFound
}

// problems collects what a verification found wrong.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// verify checks the database after a restart (see the package comment) and
// fails the test with every problem found.
func (c *crashTest) verify(conn *sql.Conn) {
	c.t.Helper()
	var p problems
	c.check(conn, &p)
	if len(p) == 0 {
		return
	}
	const maxShown = 25
	n, more := len(p), ""
	if len(p) > maxShown {
		more = fmt.Sprintf("\n  ... and %d more", len(p)-maxShown)
		p = p[:maxShown]
	}
	when := fmt.Sprintf("after the restart that followed round %d's crash", c.round-1)
	if c.round == 1 {
		when = "after setup"
	}
	c.t.Fatalf("round %d (seed %d), %s: %d problem(s):\n  %s%s",
		c.round, c.seed, when, n, strings.Join(p, "\n  "), more)
}

func (c *crashTest) check(conn *sql.Conn, p *problems) {
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	dbs, err := column(ctx, conn, "Database", "SHOW DATABASES")
	if err != nil {
		p.add("SHOW DATABASES: %v", err)
		return
	}
	if !slices.Contains(dbs, "bank") {
		p.add("database bank is missing (SHOW DATABASES: %v)", dbs)
		return
	}
	tables := c.checkTables(ctx, conn, p)
	if !slices.Contains(tables, "accounts") || !slices.Contains(tables, "transfers") {
		return
	}

	// Transfers: all acknowledged ones there, nothing else.
	rows, err := conn.QueryContext(ctx, "SELECT id, src, dst, amount FROM bank.transfers")
	if err != nil {
		p.add("reading bank.transfers: %v", err)
		return
	}
	found := map[int64]transfer{}
	for rows.Next() {
		var id int64
		var tr transfer
		if err := rows.Scan(&id, &tr.src, &tr.dst, &tr.amount); err != nil {
			p.add("reading bank.transfers: %v", err)
			rows.Close()
			return
		}
		found[id] = tr
	}
	if err := rows.Err(); err != nil {
		p.add("reading bank.transfers: %v", err)
		return
	}
	c.ledger.mu.Lock()
	defer c.ledger.mu.Unlock()
	for _, id := range sortedKeys(found) {
		tr, e := found[id], c.ledger.m[id]
		switch {
		case e == nil:
			p.add("transfer %d (%d->%d, %d) is present but no client sent its COMMIT", id, tr.src, tr.dst, tr.amount)
		case e.fate == lost:
			p.add("transfer %d (round %d, COMMIT unanswered) was absent after the restart of round %d but is back now", id, e.round, e.decided)
		case e.transfer != tr:
			p.add("transfer %d is %d->%d, %d; the client wrote %d->%d, %d", id, tr.src, tr.dst, tr.amount, e.src, e.dst, e.amount)
		}
	}
	for _, id := range sortedKeys(c.ledger.m) {
		e := c.ledger.m[id]
		if _, ok := found[id]; ok || (e.fate != acked && e.fate != kept) {
			continue
		}
		if e.fate == acked {
			p.add("acknowledged transfer %d (round %d: %d->%d, %d) is missing", id, e.round, e.src, e.dst, e.amount)
		} else {
			p.add("transfer %d (round %d: %d->%d, %d) was present after the restart of round %d but is missing now", id, e.round, e.src, e.dst, e.amount, e.decided)
		}
	}

	// Balances: each must be what the transfers imply (no torn transaction),
	// and their sum the initial total.
	want := map[int64]int64{}
	for id := int64(1); id <= numAccounts; id++ {
		want[id] = initialBalance
	}
	for _, tr := range found {
		want[tr.src] -= tr.amount
		want[tr.dst] += tr.amount
	}
	rows, err = conn.QueryContext(ctx, "SELECT id, balance FROM bank.accounts")
	if err != nil {
		p.add("reading bank.accounts: %v", err)
		return
	}
	got := map[int64]int64{}
	var sum int64
	for rows.Next() {
		var id, bal int64
		if err := rows.Scan(&id, &bal); err != nil {
			p.add("reading bank.accounts: %v", err)
			rows.Close()
			return
		}
		got[id] = bal
		sum += bal
	}
	if err := rows.Err(); err != nil {
		p.add("reading bank.accounts: %v", err)
		return
	}
	for id := int64(1); id <= numAccounts; id++ {
		if b, ok := got[id]; !ok {
			p.add("account %d is missing", id)
		} else if b != want[id] {
			p.add("account %d: balance %d, but the transfers table implies %d (off by %+d)", id, b, want[id], b-want[id])
		}
	}
	for _, id := range sortedKeys(got) {
		if id < 1 || id > numAccounts {
			p.add("account %d should not exist (balance %d)", id, got[id])
		}
	}
	if total := int64(numAccounts * initialBalance); sum != total {
		p.add("the balances sum to %d, want %d (off by %+d)", sum, total, sum-total)
	}

	c.checkDDLRows(ctx, conn, tables, p)
	c.checkAccounts(ctx, conn, p)
	if len(*p) > 0 {
		return
	}
	// All good: a restart has now decided every unknown transfer.
	for id, e := range c.ledger.m {
		if e.fate != unknown {
			continue
		}
		e.decided = c.round
		if _, ok := found[id]; ok {
			e.fate = kept
		} else {
			e.fate = lost
		}
	}
}

// column runs query and returns the named column ("": the first) of every
// row as strings.
func column(ctx context.Context, conn *sql.Conn, name, query string, args ...any) ([]string, error) {
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	idx := 0 // name "" is the first column
	if name != "" {
		idx = slices.IndexFunc(cols, func(c string) bool { return strings.EqualFold(c, name) })
	}
	if idx < 0 || len(cols) == 0 {
		return nil, fmt.Errorf("%s: no column %q in %v", query, name, cols)
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals[idx].String)
	}
	return out, rows.Err()
}

func sortedKeys[V any](m map[int64]V) []int64 { return slices.Sorted(maps.Keys(m)) }
