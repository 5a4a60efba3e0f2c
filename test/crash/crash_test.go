// Package crash proves that lockstep's commits are durable: it SIGKILLs the
// real server while clients are committing and checks, after every restart
// on the same data directory, that
//
//   - every transaction whose COMMIT returned OK is there (no lost commits),
//   - nothing is there that a client did not commit (no invented rows, and a
//     transaction whose COMMIT never got a reply stays present or absent
//     once a restart has decided it),
//   - every transaction is all there or not at all (no torn transactions):
//     each account's balance equals what the transfers table implies,
//   - money is conserved, and
//   - DDL (CREATE/ALTER/CREATE INDEX/DROP TABLE) done before a crash is there,
//     and so are accounts (CREATE USER, GRANT, DROP USER) with their
//     password hashes.
//
// The record of what was acknowledged lives in the test process, never in
// the database under test. The tests are skipped under -short.
//
//	go test ./test/crash/                              # 20 rounds
//	LOCKSTEP_CRASH_ROUNDS=100 go test -v -timeout 30m ./test/crash/
//	LOCKSTEP_CRASH_SEED=123 go test -v -run CrashRecovery ./test/crash/
package crash

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"lockstep/internal/testutil"
)

const (
	numAccounts    = 50
	initialBalance = 1000
	numWorkers     = 8
	defaultRounds  = 20
	minRun, maxRun = 200 * time.Millisecond, 800 * time.Millisecond
	// stepTimeout bounds setup, DDL and verification after a restart (the
	// server may need a while to recover; StartServer allows it 30 s more).
	stepTimeout = 60 * time.Second
	// dsnTimeouts keep a client from waiting forever on a killed server.
	dsnTimeouts = "&timeout=5s&readTimeout=30s&writeTimeout=30s&interpolateParams=true"
)

// MySQL errors after which a transfer is retried (the transaction was rolled
// back, or we roll it back).
const (
	erLockWaitTimeout = 1205
	erLockDeadlock    = 1213
)

func init() {
	// The driver logs every connection the kill breaks; the errors it
	// returns are what the test looks at.
	mysql.SetLogger(log.New(io.Discard, "", 0))
}

func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts a lockstep server many times")
	}
	rounds := envInt(t, "LOCKSTEP_CRASH_ROUNDS", defaultRounds)
	seed := uint64(envInt(t, "LOCKSTEP_CRASH_SEED", int(time.Now().UnixNano()&0x7fffffffffff)))
	t.Logf("seed %d, %d rounds (LOCKSTEP_CRASH_SEED=%d reproduces the kill times and the transfers each client tries; thread timing still varies)", seed, rounds, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	datadir := filepath.Join(t.TempDir(), "data")
	c := &crashTest{t: t, seed: seed, ledger: newLedger()}
	began := time.Now()

	for c.round = 1; c.round <= rounds+1; c.round++ {
		start := time.Now()
		// Small checkpoints, so that kills also land during a checkpoint
		// and recovery starts from one and replays the log after it.
		// Small segments, so that kills also land while the log moves to
		// a preallocated segment or the preallocator writes one.
		// Every other round keeps several fsyncs in flight, so that kills
		// also land while a later group's fsync has ended before an
		// earlier one's.
		args := []string{"--datadir", datadir, "--checkpoint-log-size", "16K", "--log-segment-size", "64K"}
		if c.round%2 == 0 {
			args = append(args, "--log-syncs-in-flight", "3")
		}
		// Every third round recovers with the parallel applier (the
		// previous round's kill is replayed by 4 workers, commit order
		// kept: internal/apply).
		if c.round%3 == 0 {
			args = append(args, "--replica-parallel-workers", "4")
		}
		s := testutil.StartServer(t, args...)
		admin := openDB(t, s, "")
		conn := c.adminConn(admin)
		if c.round == 1 {
			c.setup(conn)
		}
		c.verify(conn)
		c.checkRecoveryReport(s.Stderr())
		recovered := time.Since(start)
		if c.round == rounds+1 {
			conn.Close()
			admin.Close()
			break // the final restart is verified; the testutil cleanup stops the server
		}
		if c.round%3 == 1 {
			c.ddl(conn)
		}
		conn.Close()
		admin.Close()

		run := minRun + time.Duration(rng.Int64N(int64(maxRun-minRun)))
		nAcked, nUnknown := c.workloadAndKill(s, run)
		t.Logf("round %d: restart+verify %v, killed after %v: %d acknowledged, %d unknown", c.round, recovered.Round(time.Millisecond), run, nAcked, nUnknown)
	}
	a, u, kept, lost := c.ledger.counts()
	t.Logf("summary: %d rounds (seed %d), %d transfers acknowledged, %d unknown (%d found after restart, %d not), %v total",
		rounds, seed, a, u, kept, lost, time.Since(began).Round(time.Millisecond))
	// The rounds must have gone through checkpoints, not only the log.
	t.Logf("preallocated log segments written into, summed over the rounds: %d", c.preallocUsed)
	if c.preallocUsed == 0 {
		t.Errorf("no round wrote into a preallocated log segment (Lockstep_log_segments_preallocated_used stayed 0)")
	}
	if ckpts, _ := filepath.Glob(filepath.Join(datadir, "checkpoint", "checkpoint-*.ckpt")); len(ckpts) == 0 {
		t.Errorf("no checkpoint was written in %d rounds (--checkpoint-log-size 16K)", rounds)
	}
}

// crashTest is the state the test keeps across restarts.
type crashTest struct {
	t      *testing.T
	seed   uint64
	round  int
	ledger *ledger
	schema schema
	nextID atomic.Int64 // transfer ids, unique over the whole test
	// preallocUsed sums Lockstep_log_segments_preallocated_used read just
	// before each kill.
	preallocUsed int64
}

func (c *crashTest) adminConn(db *sql.DB) *sql.Conn {
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		c.t.Fatalf("round %d (seed %d): connecting after restart: %v", c.round, c.seed, err)
	}
	return conn
}

// setup creates the bank: numAccounts accounts of initialBalance each.
func (c *crashTest) setup(conn *sql.Conn) {
	c.exec(conn,
		"CREATE DATABASE bank",
		"CREATE TABLE bank.accounts (id INT PRIMARY KEY, balance BIGINT NOT NULL)",
		"CREATE TABLE bank.transfers (id BIGINT PRIMARY KEY, src INT NOT NULL, dst INT NOT NULL, amount INT NOT NULL)")
	q := "INSERT INTO bank.accounts VALUES "
	for id := 1; id <= numAccounts; id++ {
		if id > 1 {
			q += ", "
		}
		q += fmt.Sprintf("(%d, %d)", id, initialBalance)
	}
	c.exec(conn, q)
}

// exec runs statements one by one (each autocommitted) and fails the test on
// the first error.
func (c *crashTest) exec(conn *sql.Conn, stmts ...string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			c.t.Fatalf("round %d (seed %d): %s: %v", c.round, c.seed, q, err)
		}
	}
}

// workloadAndKill runs numWorkers clients making transfers, SIGKILLs the
// server after run while they are still at it, and waits for the clients to
// notice. It returns how many transfers were acknowledged and how many are
// unknown in this round.
func (c *crashTest) workloadAndKill(s *testutil.Server, run time.Duration) (nAcked, nUnknown int) {
	return c.workload(s.DSN("bank"), run, func() {
		c.preallocUsed += statusValue(s.DSN(""), "Lockstep_log_segments_preallocated_used")
		if c.round%3 == 1 {
			c.failingDDL(s.DSN(""))
		}
		s.Kill()
	})
}

// statusValue reads one global status counter; 0 if it cannot.
func statusValue(dsn, name string) int64 {
	db, err := sql.Open("mysql", dsn+dsnTimeouts)
	if err != nil {
		return 0
	}
	defer db.Close()
	var k string
	var v int64
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&k, &v); err != nil {
		return 0
	}
	return v
}

// workload runs the clients against dsn for run, then calls crash while
// they are still running, and waits for them to stop.
func (c *crashTest) workload(dsn string, run time.Duration, crash func()) (nAcked, nUnknown int) {
	db, err := sql.Open("mysql", dsn+dsnTimeouts)
	if err != nil {
		c.t.Fatalf("sql.Open: %v", err)
	}
	defer db.Close()
	var killed, stop atomic.Bool
	var wg sync.WaitGroup
	workers := make([]*worker, numWorkers)
	for i := range workers {
		w := &worker{
			c: c, db: db, killed: &killed, stop: &stop,
			rng: rand.New(rand.NewPCG(c.seed, uint64(c.round)<<8|uint64(i+1))),
		}
		workers[i] = w
		wg.Add(1)
		go func() { defer wg.Done(); w.run() }()
	}
	time.Sleep(run)
	killed.Store(true) // from here on, client errors are expected
	crash()
	stop.Store(true)
	wg.Wait()

	for i, w := range workers {
		nAcked += w.nAcked
		nUnknown += w.nUnknown
		if w.unexpected != nil {
			c.t.Fatalf("round %d (seed %d): client %d failed before the kill: %v", c.round, c.seed, i+1, w.unexpected)
		}
	}
	return nAcked, nUnknown
}

// worker is one client making random transfers until stop is set.
type worker struct {
	c            *crashTest
	db           *sql.DB
	killed, stop *atomic.Bool
	rng          *rand.Rand

	nAcked, nUnknown int
	unexpected       error // the first error seen before the kill
}

func (w *worker) run() {
	ctx := context.Background()
	for !w.stop.Load() {
		conn, err := w.db.Conn(ctx)
		if err != nil {
			w.fail(err)
			time.Sleep(5 * time.Millisecond)
			continue
		}
		for !w.stop.Load() {
			if err := w.transfer(ctx, conn); err != nil {
				w.fail(err)
				break // the connection may be dead: take a new one
			}
		}
		conn.Close()
	}
}

func (w *worker) fail(err error) {
	if !w.killed.Load() && w.unexpected == nil {
		w.unexpected = err
	}
}

// transfer moves a random amount between two random accounts, retrying on
// deadlocks and lock wait timeouts (each attempt with a new id). A nil error
// means the transfer committed or was skipped (source account empty).
func (w *worker) transfer(ctx context.Context, conn *sql.Conn) error {
	src := 1 + w.rng.IntN(numAccounts)
	dst := 1 + w.rng.IntN(numAccounts-1)
	if dst >= src {
		dst++
	}
	amount := int64(1 + w.rng.IntN(100))
	for {
		err := w.attempt(ctx, conn, transfer{src: int64(src), dst: int64(dst), amount: amount})
		if n := errno(err); n != erLockDeadlock && n != erLockWaitTimeout {
			return err
		}
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			return err
		}
	}
}

func (w *worker) attempt(ctx context.Context, conn *sql.Conn, tr transfer) (err error) {
	id := w.c.nextID.Add(1)
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	// Lock both rows in id order, so that clients never deadlock.
	bal := map[int64]int64{}
	for _, acct := range []int64{min(tr.src, tr.dst), max(tr.src, tr.dst)} {
		var b int64
		if err := conn.QueryRowContext(ctx, "SELECT balance FROM accounts WHERE id = ? FOR UPDATE", acct).Scan(&b); err != nil {
			return fmt.Errorf("SELECT account %d FOR UPDATE: %w", acct, err)
		}
		bal[acct] = b
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
		{"UPDATE accounts SET balance = balance - ? WHERE id = ?", []any{tr.amount, tr.src}},
		{"UPDATE accounts SET balance = balance + ? WHERE id = ?", []any{tr.amount, tr.dst}},
		{"INSERT INTO transfers (id, src, dst, amount) VALUES (?, ?, ?, ?)", []any{id, tr.src, tr.dst, tr.amount}},
	} {
		if _, err := conn.ExecContext(ctx, st.q, st.args...); err != nil {
			return fmt.Errorf("transfer %d: %s: %w", id, st.q, err)
		}
	}
	// From the moment COMMIT is sent the transfer may be durable.
	w.c.ledger.sent(id, tr, w.c.round)
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		w.nUnknown++
		return fmt.Errorf("transfer %d: COMMIT: %w", id, err)
	}
	w.c.ledger.ack(id)
	w.nAcked++
	return nil
}

func errno(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// openDB opens a pool with client timeouts; the caller closes it (pools must
// be closed before the server they talk to is killed).
func openDB(t *testing.T, s *testutil.Server, db string) *sql.DB {
	t.Helper()
	h, err := sql.Open("mysql", s.DSN(db)+dsnTimeouts)
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	return h
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
