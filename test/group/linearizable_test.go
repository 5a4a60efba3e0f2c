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

	"github.com/anishathalye/porcupine"
)

// The linearizability test: clients read, write and compare-and-set a few
// keys across failovers (the primary killed with SIGKILL and restarted),
// and porcupine checks that the history is linearizable per key.
//
// What goes into the history, and why:
//
//   - writes (UPDATE lin.kv SET v = ? WHERE k = ?) and CAS (UPDATE lin.kv
//     SET v = ? WHERE k = ? AND v = ?, autocommit) go to the member last
//     found to take writes. Acknowledged: the operation, with its
//     interval. Refused with 1290 (a secondary: refused before it is
//     proposed), 3101 (its entry was certainly not committed), 1205 or
//     1213 (rolled back): left out, which claims it never took effect — a
//     later read of its value fails the check. No answer (a broken
//     connection, a timeout) or 1180: outcome unknown, in the history with
//     an open end (pendingReturn) and any result, so it may have taken
//     effect at any point after its call, or never.
//   - a CAS's result is the statement's affected-rows count: the driver's
//     default (no CLIENT_FOUND_ROWS) counts rows changed, not rows
//     matched; every CAS writes a value different from the one it
//     expects (values are unique), so changed = matched here.
//   - reads (SELECT v FROM lin.kv WHERE k = ?) go to any running member,
//     primary or secondary, in sessions with group_replication_consistency
//     = BEFORE (docs/cluster.md: a read index confirmed by the leader's
//     quorum, then the member's applier; linearizable on every member).
//     Reads at the default consistency (BEFORE_ON_PRIMARY_FAILOVER, which
//     reads as EVENTUAL) promise nothing of the kind on a secondary and are
//     not recorded. A read that fails is left out (it changed nothing).

const (
	linKeys    = 4
	linClients = 6
	// defaultLinRounds: primary kills in CI (LOCKSTEP_GROUP_ROUNDS for more).
	defaultLinRounds = 2
	linCheckTimeout  = 60 * time.Second
	// beforeDSN asks for linearizable reads (the driver sends it as SET).
	beforeDSN = "&group_replication_consistency=%27BEFORE%27"
)

// linWorkload drives the clients and records the history.
type linWorkload struct {
	t    *testing.T
	c    *cluster
	h    *history
	seed uint64

	target atomic.Pointer[target] // where writes go
	// readers: a pool with BEFORE sessions per running member, replaced
	// at each start of a member (the value is a *linReader).
	readers sync.Map // member id -> *linReader

	stopFlag atomic.Bool
	wg       sync.WaitGroup

	mu                                         sync.Mutex
	acked, refused, unknown, reads, secReads   int
	failedReads, readsOnPrimary, unexpectedErr int
	unexpected                                 error
}

type linReader struct {
	m    *member
	db   *sql.DB
	down *atomic.Bool
}

func (w *linWorkload) addReader(m *member) {
	db, err := sql.Open("mysql", m.srv.DSN("")+dsnTimeouts+beforeDSN)
	if err != nil {
		w.t.Fatalf("sql.Open for member %d: %v", m.id, err)
	}
	if old, ok := w.readers.Swap(m.id, &linReader{m: m, db: db, down: m.down}); ok {
		old.(*linReader).db.Close()
	}
}

func (w *linWorkload) closeReaders() {
	w.readers.Range(func(_, v any) bool { v.(*linReader).db.Close(); return true })
}

func (w *linWorkload) setTarget(m *member) {
	if m == nil {
		w.target.Store(nil)
		return
	}
	w.target.Store(&target{m: m, db: m.db, down: m.down})
}

// follow lets the clients work for d, pointing writes at the member that
// takes writes (polled every 20 ms).
func (w *linWorkload) follow(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		p := w.c.findPrimary(ctx)
		cancel()
		if cur := w.target.Load(); p != nil && (cur == nil || cur.m != p || cur.down.Load()) {
			w.setTarget(p)
		}
	}
}

func (w *linWorkload) start() {
	for i := range linClients {
		rng := rand.New(rand.NewPCG(w.seed, uint64(i+1)))
		w.wg.Add(1)
		go func() { defer w.wg.Done(); w.client(i, rng) }()
	}
}

func (w *linWorkload) stop() {
	w.stopFlag.Store(true)
	w.wg.Wait()
}

// client runs operations until stopped. Values are unique: client i's
// n-th write writes (i+1)<<40 | n.
func (w *linWorkload) client(id int, rng *rand.Rand) {
	seen := make([]int64, linKeys+1) // the last value this client saw per key
	var n int64
	for !w.stopFlag.Load() {
		key := 1 + rng.IntN(linKeys)
		switch p := rng.IntN(10); {
		case p < 5:
			w.read(id, key, rng, seen)
		default:
			n++
			in := kvInput{op: opWrite, key: key, val: int64(id+1)<<40 | n}
			if p >= 8 {
				in.op, in.expect = opCAS, seen[key]
			}
			w.write(id, in, seen)
		}
	}
}

func (w *linWorkload) read(id, key int, rng *rand.Rand, seen []int64) {
	var rs []*linReader
	w.readers.Range(func(_, v any) bool {
		if r := v.(*linReader); !r.down.Load() {
			rs = append(rs, r)
		}
		return true
	})
	if len(rs) == 0 {
		time.Sleep(5 * time.Millisecond)
		return
	}
	r := rs[rng.IntN(len(rs))]
	tg := w.target.Load()
	onPrimary := tg != nil && tg.m == r.m
	call := w.h.now()
	var v int64
	err := r.db.QueryRowContext(context.Background(), "SELECT v FROM lin.kv WHERE k = ?", key).Scan(&v)
	ret := w.h.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		// A failed read changed nothing: left out. On a member that is
		// up, only 3100 (no read point within the wait) is expected.
		w.failedReads++
		if !r.down.Load() && errno(err) != 3100 {
			w.noteUnexpected(r.m, err)
		}
		time.Sleep(time.Millisecond)
		return
	}
	w.h.add(id, kvInput{op: opRead, key: key, member: r.m.id}, kvOutput{val: v}, call, ret)
	seen[key] = v
	w.reads++
	if onPrimary {
		w.readsOnPrimary++
	} else {
		w.secReads++
	}
}

func (w *linWorkload) write(id int, in kvInput, seen []int64) {
	tg := w.target.Load()
	if tg == nil || tg.down.Load() {
		time.Sleep(5 * time.Millisecond)
		return
	}
	in.member = tg.m.id
	q, args := "UPDATE lin.kv SET v = ? WHERE k = ?", []any{in.val, in.key}
	if in.op == opCAS {
		q, args = "UPDATE lin.kv SET v = ? WHERE k = ? AND v = ?", []any{in.val, in.key, in.expect}
	}
	call := w.h.now()
	res, err := tg.db.ExecContext(context.Background(), q, args...)
	var affected int64
	if err == nil {
		affected, err = res.RowsAffected()
	}
	ret := w.h.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	switch n := errno(err); {
	case err == nil:
		if in.op == opWrite && affected != 1 {
			w.noteUnexpected(tg.m, fmt.Errorf("write of key %d changed %d rows", in.key, affected))
		}
		w.h.add(id, in, kvOutput{ok: affected == 1}, call, ret)
		if in.op == opWrite || affected == 1 {
			seen[in.key] = in.val
		}
		w.acked++
	case n == erReadOnly || n == erRollbackInCommit || n == erLockDeadlock || n == erLockWaitTimeout:
		w.refused++ // certainly not committed: left out
		time.Sleep(5 * time.Millisecond)
	default:
		// 1180, a broken connection, a timeout: may have committed.
		w.h.add(id, in, kvOutput{unknown: true}, call, pendingReturn)
		w.unknown++
		if !tg.down.Load() && n != erCommitError {
			w.noteUnexpected(tg.m, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// noteUnexpected records an error a member that was up should not have
// given (w.mu held).
func (w *linWorkload) noteUnexpected(m *member, err error) {
	w.unexpectedErr++
	if w.unexpected == nil {
		w.unexpected = fmt.Errorf("member %d (up): %w", m.id, err)
	}
}

// TestGroupLinearizable: a read/write/CAS history over a few keys,
// recorded while the primary is killed (SIGKILL) and restarted
// (LOCKSTEP_GROUP_ROUNDS times, 2 by default), is linearizable per key
// (porcupine); and the same history with one stale read added is not (the
// check is live on this data).
func TestGroupLinearizable(t *testing.T) {
	rounds := envInt(t, "LOCKSTEP_GROUP_ROUNDS", defaultLinRounds)
	seed := uint64(envInt(t, "LOCKSTEP_GROUP_SEED", int(time.Now().UnixNano()&0x7fffffffffff)))
	t.Logf("seed %d", seed)
	c := startCluster(t)
	p := c.waitPrimary(0)
	q := "INSERT INTO lin.kv VALUES "
	for k := 1; k <= linKeys; k++ {
		if k > 1 {
			q += ", "
		}
		q += fmt.Sprintf("(%d, 0)", k)
	}
	exec(t, p, "CREATE DATABASE lin", "CREATE TABLE lin.kv (k INT PRIMARY KEY, v BIGINT NOT NULL)", q)
	c.waitConverged()

	w := &linWorkload{t: t, c: c, h: newHistory(), seed: seed}
	defer w.closeReaders()
	for _, m := range c.members {
		w.addReader(m)
	}
	w.setTarget(p)
	w.start()
	for round := 1; round <= rounds; round++ {
		w.follow(loadBefore)
		old := c.waitPrimary(0)
		killedAt := time.Now()
		c.kill(old)
		w.setTarget(nil)
		np := c.waitPrimary(old.id)
		w.setTarget(np)
		t.Logf("round %d: killed primary member %d; member %d took writes after %v", round, old.id, np.id, time.Since(killedAt).Round(time.Millisecond))
		w.follow(loadAfter)
		c.start(old, false)
		w.addReader(old)
		w.follow(loadCatchUp)
	}
	w.stop()
	if w.unexpected != nil {
		// Reported after the check, which says more.
		t.Errorf("%d unexpected errors, the first: %v", w.unexpectedErr, w.unexpected)
	}
	c.waitConverged()
	c.checkChecksums("after the last round")
	// Last, every member reads every key (the unknown writes are settled).
	for _, m := range c.up() {
		v, _ := w.readers.Load(m.id)
		r := v.(*linReader)
		for k := 1; k <= linKeys; k++ {
			call := w.h.now()
			var val int64
			if err := r.db.QueryRow("SELECT v FROM lin.kv WHERE k = ?", k).Scan(&val); err != nil {
				t.Fatalf("final read of key %d on member %d: %v", k, m.id, err)
			}
			w.h.add(linClients, kvInput{op: opRead, key: k, member: m.id}, kvOutput{val: val}, call, w.h.now())
		}
	}

	ops := w.h.snapshot()
	t.Logf("%d operations: %d writes and CAS acknowledged, %d refused (left out), %d unknown (open-ended); %d reads (%d on the primary, %d on secondaries), %d failed reads (left out)",
		len(ops), w.acked, w.refused, w.unknown, w.reads, w.readsOnPrimary, w.secReads, w.failedReads)
	if w.acked == 0 || w.readsOnPrimary == 0 || w.secReads == 0 {
		t.Fatal("the history lacks acknowledged writes, reads on the primary or reads on secondaries")
	}
	start := time.Now()
	checkLinearizable(t, "recorded history", ops, linCheckTimeout)
	t.Logf("linearizable (checked in %v)", time.Since(start).Round(time.Millisecond))

	// The check is live on this history: a stale read added at the end
	// (the value of an acknowledged write that another acknowledged write
	// of the same key followed) makes it fail.
	stale, ok := staleRead(ops)
	if !ok {
		t.Fatal("no key has two acknowledged writes one after the other: cannot inject a stale read")
	}
	if isLinearizable(append(ops, stale)) {
		t.Fatalf("the history with a stale read added (%s) passes the check", kvModel.DescribeOperation(stale.Input, stale.Output))
	}
}

// staleRead returns a read, after everything in ops, of the value of an
// acknowledged write w1 of a key that an acknowledged write w2 of the same
// key followed (w1 returned before w2 was called): values are unique, so
// no linearization can end with w1's value.
func staleRead(ops []porcupine.Operation) (porcupine.Operation, bool) {
	var end int64
	for _, op := range ops {
		if op.Return != pendingReturn {
			end = max(end, op.Return)
		}
	}
	for _, w1 := range ops {
		in := w1.Input.(kvInput)
		if in.op != opWrite || w1.Return == pendingReturn {
			continue
		}
		for _, w2 := range ops {
			in2 := w2.Input.(kvInput)
			if in2.op == opWrite && in2.key == in.key && w2.Return != pendingReturn && w2.Call > w1.Return {
				return porcupine.Operation{ClientId: linClients, Input: kvInput{op: opRead, key: in.key},
					Output: kvOutput{val: in.val}, Call: end + 1, Return: end + 2}, true
			}
		}
	}
	return porcupine.Operation{}, false
}
