package group

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The workload: clients move money between accounts of one bank, each
// transfer a transaction that updates two balances and inserts a row with
// a client-chosen unique id into bank.transfers. The clients write to
// whichever member the test last found to be the primary.

const (
	numAccounts    = 40
	initialBalance = 1000
	numWorkers     = 6
)

// MySQL errors the clients meet.
const (
	erLockWaitTimeout  = 1205
	erLockDeadlock     = 1213
	erCommitError      = 1180 // ER_ERROR_DURING_COMMIT: outcome unknown
	erReadOnly         = 1290 // a secondary refuses the write
	erRollbackInCommit = 3101 // certainly not committed: no longer the primary
)

// target is the member the clients write to.
type target struct {
	m    *member
	db   *sql.DB
	down *atomic.Bool
	// ctx is the clients' context for this target; abandon cancels it.
	ctx       context.Context
	cancel    context.CancelFunc
	abandoned atomic.Bool
}

// bank drives the workload and keeps the ledger.
type bank struct {
	t      *testing.T
	c      *cluster
	seed   uint64
	round  int
	ledger *ledger
	nextID atomic.Int64
	target atomic.Pointer[target]

	// set by start, ended by stop
	stopFlag atomic.Bool
	wg       sync.WaitGroup
	workers  []*worker
}

func newBank(t *testing.T, c *cluster) *bank {
	seed := uint64(envInt(t, "LOCKSTEP_GROUP_SEED", int(time.Now().UnixNano()&0x7fffffffffff)))
	t.Logf("seed %d (LOCKSTEP_GROUP_SEED=%d repeats the transfers each client tries; timing still varies)", seed, seed)
	return &bank{t: t, c: c, seed: seed, ledger: newLedger()}
}

// setup creates the bank on the primary p.
func (b *bank) setup(p *member) {
	b.t.Helper()
	q := "INSERT INTO bank.accounts VALUES "
	for id := 1; id <= numAccounts; id++ {
		if id > 1 {
			q += ", "
		}
		q += fmt.Sprintf("(%d, %d)", id, initialBalance)
	}
	exec(b.t, p,
		"CREATE DATABASE bank",
		"CREATE TABLE bank.accounts (id INT PRIMARY KEY, balance BIGINT NOT NULL)",
		"CREATE TABLE bank.transfers (id BIGINT PRIMARY KEY, src INT NOT NULL, dst INT NOT NULL, amount INT NOT NULL, round INT NOT NULL)",
		q)
	b.setTarget(p)
}

// setTarget points the clients at m (nil: nowhere).
func (b *bank) setTarget(m *member) {
	if m == nil {
		b.target.Store(nil)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.target.Store(&target{m: m, db: m.db, down: m.down, ctx: ctx, cancel: cancel})
}

// abandon makes the clients give up on tg (after setTarget pointed them
// elsewhere): a statement still waiting there, a COMMIT most of all, ends
// now, as an application's client times out and reconnects to the new
// primary. Such a COMMIT's outcome is unknown.
func (b *bank) abandon(tg *target) {
	if tg != nil {
		tg.abandoned.Store(true)
		tg.cancel()
	}
}

// start starts the clients; stop ends them.
func (b *bank) start() {
	b.stopFlag.Store(false)
	b.workers = nil
	for i := range numWorkers {
		w := &worker{b: b, rng: rand.New(rand.NewPCG(b.seed, uint64(b.round)<<8|uint64(i+1)))}
		b.workers = append(b.workers, w)
		b.wg.Add(1)
		go func() { defer b.wg.Done(); w.run() }()
	}
}

// stop ends the clients and fails the test if one met an error it should
// not have (one on a member that was up, other than a refusal).
func (b *bank) stop() (acked, unknown, refused int) {
	b.t.Helper()
	b.stopFlag.Store(true)
	b.wg.Wait()
	for i, w := range b.workers {
		acked += w.acked
		unknown += w.unknown
		refused += w.refused
		if w.unexpected != nil {
			b.t.Fatalf("round %d (seed %d): client %d: %v", b.round, b.seed, i+1, w.unexpected)
		}
	}
	return acked, unknown, refused
}

// run lets the clients work for d, following the primary: every 20 ms it
// asks the members which one takes writes and points the clients there.
// failover is this round's failover time: from the old primary's last
// acknowledgement to the new one's first (both must have some).
func (b *bank) failover(t *testing.T, old, np *member) time.Duration {
	t.Helper()
	oldAcks, newAcks := b.ledger.ackTimes(b.round, old.id), b.ledger.ackTimes(b.round, np.id)
	if len(oldAcks) == 0 || len(newAcks) == 0 {
		t.Fatalf("round %d: %d transfers acknowledged by the old primary (member %d), %d by the new one (member %d): want some by both",
			b.round, len(oldAcks), old.id, len(newAcks), np.id)
	}
	return newAcks[0].Sub(oldAcks[len(oldAcks)-1])
}

func (b *bank) run(d time.Duration) {
	end := time.Now().Add(d)
	b.runUntil(func() bool { return !time.Now().Before(end) })
}

// runPast lets the clients work until m has applied past index
// (stepTimeout at most): a member restarted after that recovers from a
// commit index it saved (cluster.Config.CommitSaveEvery, 1024 entries)
// and replays its own log up to it before it takes clients.
func (b *bank) runPast(m *member, index int64) {
	b.t.Helper()
	deadline := time.Now().Add(stepTimeout)
	var applied int64
	b.runUntil(func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if st, err := status(ctx, m); err == nil {
			applied = st["applied_index"]
		}
		return applied > index || time.Now().After(deadline)
	})
	if applied <= index {
		b.t.Fatalf("member %d applied only up to %d in %v of load, want past %d", m.id, applied, stepTimeout, index)
	}
}

func (b *bank) runUntil(done func() bool) {
	for !done() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		p := b.c.findPrimary(ctx)
		cancel()
		if cur := b.target.Load(); p != nil && (cur == nil || cur.m != p || cur.down.Load()) {
			b.setTarget(p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// worker is one client.
type worker struct {
	b   *bank
	rng *rand.Rand

	acked, unknown, refused int
	unexpected              error
}

func (w *worker) run() {
	for !w.b.stopFlag.Load() {
		tg := w.b.target.Load()
		if tg == nil || tg.down.Load() || tg.abandoned.Load() {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		ctx := tg.ctx
		conn, err := tg.db.Conn(ctx)
		if err != nil {
			w.fail(tg, err)
			continue
		}
		for !w.b.stopFlag.Load() && w.b.target.Load() == tg {
			if err := w.transfer(ctx, conn, tg); err != nil {
				w.fail(tg, err)
				break // the connection may be dead: take a new one
			}
		}
		conn.Close()
	}
}

// fail records err unless it is expected: a refusal (the member is not
// the primary, or not any more: the test will find the new one) or any
// error from a member that was killed or stopped, or abandoned.
func (w *worker) fail(tg *target, err error) {
	switch n := errno(err); {
	case n == erReadOnly || n == erRollbackInCommit:
		time.Sleep(5 * time.Millisecond)
	case tg.down.Load() || tg.abandoned.Load():
		time.Sleep(time.Millisecond)
	case w.unexpected == nil:
		w.unexpected = fmt.Errorf("member %d (up): %w", tg.m.id, err)
	}
}

// transfer moves a random amount between two random accounts, retrying
// on deadlocks and lock wait timeouts. A nil error means it committed or
// was skipped (the source account is empty).
func (w *worker) transfer(ctx context.Context, conn *sql.Conn, tg *target) error {
	src := 1 + w.rng.IntN(numAccounts)
	dst := 1 + w.rng.IntN(numAccounts-1)
	if dst >= src {
		dst++
	}
	tr := transfer{src: int64(src), dst: int64(dst), amount: int64(1 + w.rng.IntN(100))}
	for {
		err := w.attempt(ctx, conn, tg, tr)
		if n := errno(err); n != erLockDeadlock && n != erLockWaitTimeout {
			return err
		}
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			return err
		}
	}
}

func (w *worker) attempt(ctx context.Context, conn *sql.Conn, tg *target, tr transfer) error {
	b := w.b
	id := b.nextID.Add(1)
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	// Both rows locked in id order: clients never deadlock.
	bal := map[int64]int64{}
	for _, acct := range []int64{min(tr.src, tr.dst), max(tr.src, tr.dst)} {
		var v int64
		if err := conn.QueryRowContext(ctx, "SELECT balance FROM bank.accounts WHERE id = ? FOR UPDATE", acct).Scan(&v); err != nil {
			return fmt.Errorf("SELECT account %d FOR UPDATE: %w", acct, err)
		}
		bal[acct] = v
	}
	tr.amount = min(tr.amount, bal[tr.src])
	if tr.amount <= 0 {
		_, err := conn.ExecContext(ctx, "ROLLBACK")
		return err
	}
	for _, st := range []struct {
		q    string
		args []any
	}{
		{"UPDATE bank.accounts SET balance = balance - ? WHERE id = ?", []any{tr.amount, tr.src}},
		{"UPDATE bank.accounts SET balance = balance + ? WHERE id = ?", []any{tr.amount, tr.dst}},
		{"INSERT INTO bank.transfers (id, src, dst, amount, round) VALUES (?, ?, ?, ?, ?)", []any{id, tr.src, tr.dst, tr.amount, b.round}},
	} {
		if _, err := conn.ExecContext(ctx, st.q, st.args...); err != nil {
			return fmt.Errorf("transfer %d: %s: %w", id, st.q, err)
		}
	}
	// From the moment COMMIT is sent the transfer may be committed.
	b.ledger.sent(id, tr, b.round, tg.m.id)
	_, err := conn.ExecContext(ctx, "COMMIT")
	switch n := errno(err); {
	case err == nil:
		b.ledger.ack(id, time.Now())
		w.acked++
		return nil
	case n == erReadOnly || n == erRollbackInCommit:
		b.ledger.refused(id)
		w.refused++
	default: // 1180, a broken connection, a timeout: unknown outcome
		w.unknown++
	}
	return fmt.Errorf("transfer %d: COMMIT: %w", id, err)
}
