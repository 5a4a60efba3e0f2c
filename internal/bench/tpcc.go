// Package bench holds lockstep's client-side benchmarks; `lockstep bench`
// runs them against any MySQL-protocol server.
//
// TPCC is a TPC-C driver written from the specification (revision 5.11): the
// nine tables, the initial population of Clause 4.3 (optionally scaled down
// for tests), the five transactions of Clause 2 in the 45/43/4/4/4 mix, and
// the consistency conditions of Clause 3.3.2. Every terminal is one
// connection running transactions back to back (no keying or think times, so
// the tpmC it reports is not a TPC-C result) with server-side prepared
// statements, explicit BEGIN/COMMIT, SELECT ... FOR UPDATE, and row
// constructor IN lists where a transaction touches several rows of a table.
// A transaction that ends in a deadlock (1213) or a lock wait timeout (1205)
// is rolled back and retried with the same input; both are counted.
package bench

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"lockstep/internal/bench/errlog"
)

// Config is a TPC-C run.
type Config struct {
	DSN            string // go-sql-driver/mysql DSN; the database defaults to "tpcc"
	Warehouses     int
	Threads        int           // terminals (connections)
	Duration       time.Duration // measured window; 0 runs no transactions
	Warmup         time.Duration // before the measured window
	ReportInterval time.Duration // progress lines; 0 for none
	Load           bool          // create the schema and load the data first
	LoadThreads    int           // connections loading in parallel (0: Threads)
	ScaleDown      int           // divide items and customers by this (1: full scale)
	Check          bool          // run the consistency checks after the run
	Seed           uint64        // 0: random
	Out            io.Writer     // progress and report; nil for none
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.Warehouses < 1 || c.Warehouses > 65535:
		return fmt.Errorf("--warehouses must be 1..65535, not %d", c.Warehouses)
	case c.Threads < 1 || c.Threads > 10000:
		return fmt.Errorf("--threads must be 1..10000, not %d", c.Threads)
	case c.LoadThreads < 0:
		return fmt.Errorf("--load-threads must not be negative")
	case c.ScaleDown < 1 || c.ScaleDown > MaxScaleDown:
		return fmt.Errorf("--scale-down must be 1..%d, not %d", MaxScaleDown, c.ScaleDown)
	case c.Duration < 0:
		return errors.New("--duration must not be negative")
	case c.Warmup < 0:
		return errors.New("--warmup must not be negative")
	case c.ReportInterval < 0:
		return errors.New("--report-interval must not be negative")
	}
	_, err := c.driverConfig()
	return err
}

func (c *Config) driverConfig() (*mysql.Config, error) {
	mc, err := mysql.ParseDSN(c.DSN)
	if err != nil {
		return nil, fmt.Errorf("--dsn: %v", err)
	}
	mc.InterpolateParams = false // server-side prepared statements
	if mc.DBName == "" {
		mc.DBName = "tpcc"
	}
	return mc, nil
}

// Result is what a run measured and found.
type Result struct {
	Server   string // SELECT VERSION()
	Database string
	Scale    Scale
	Threads  int
	LoadRows int64
	LoadTime time.Duration
	Warmup   time.Duration
	Measured time.Duration // the measured window as run (shorter if interrupted)
	Types    [numTxTypes]TypeStats
	TpmC     float64 // New-Order transactions completed per minute of the measured window
	Errors   []ErrorCount
	Checks   []CheckResult // nil if not run
	Notes    []string      // the checks' observations that are not failures
}

// Total sums the five types.
func (r *Result) Total() TypeStats {
	var t TypeStats
	for i := range r.Types {
		t.merge(&r.Types[i])
	}
	t.Latencies = nil
	return t
}

// Err describes why the run failed: an unexpected error during the run, or a
// consistency check that did not pass; nil if neither.
func (r *Result) Err() error {
	var failed []string
	for _, c := range r.Checks {
		if !c.Pass {
			failed = append(failed, c.Clause)
		}
	}
	var n int64
	for _, e := range r.Errors {
		n += e.Count
	}
	switch {
	case len(failed) > 0 && n > 0:
		return fmt.Errorf("consistency checks failed (%s) and %d transactions failed with errors", strings.Join(failed, ", "), n)
	case len(failed) > 0:
		return fmt.Errorf("consistency checks failed: %s", strings.Join(failed, ", "))
	case n > 0:
		return fmt.Errorf("%d transactions failed with errors (see the report)", n)
	}
	return nil
}

// runner is one run's shared state.
type runner struct {
	cfg       Config
	db        *sql.DB
	scale     Scale
	consts    nuConsts
	live      live
	errs      errlog.Log
	start     time.Time
	warmupEnd time.Time
	end       time.Time
}

func (rn *runner) printf(format string, args ...any) {
	if rn.cfg.Out != nil {
		fmt.Fprintf(rn.cfg.Out, format, args...)
	}
}

// Run loads (if asked), runs and checks. An error means the run could not be
// carried out (no connection, a failed load); a run that completed returns a
// Result, whose Err says whether it passed.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	mc, _ := cfg.driverConfig()
	if cfg.LoadThreads == 0 {
		cfg.LoadThreads = cfg.Threads
	}
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()
	}
	rn := &runner{cfg: cfg, scale: NewScale(cfg.Warehouses, cfg.ScaleDown)}
	rn.consts = runConsts(newRNG(cfg.Seed, 0))
	res := &Result{Database: mc.DBName, Scale: rn.scale, Threads: cfg.Threads, Warmup: cfg.Warmup}

	if cfg.Load {
		admin := mc.Clone()
		admin.DBName = ""
		adb, err := openDB(admin, 1)
		if err != nil {
			return nil, err
		}
		_, err = adb.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+strings.ReplaceAll(mc.DBName, "`", "``")+"`")
		adb.Close()
		if err != nil {
			return nil, fmt.Errorf("CREATE DATABASE %s: %w", mc.DBName, err)
		}
	}
	db, err := openDB(mc, cfg.Threads+cfg.LoadThreads+2)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rn.db = db
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&res.Server); err != nil {
		return nil, fmt.Errorf("SELECT VERSION(): %w", err)
	}
	sc := rn.scale
	rn.printf("tpcc: server %s at %s, database %s: %d warehouses, %d items, %d customers per district, %d threads\n",
		res.Server, mc.Addr, mc.DBName, sc.Warehouses, sc.Items, sc.Customers, cfg.Threads)

	if cfg.Load {
		t0 := time.Now()
		if err := createSchema(ctx, db); err != nil {
			return nil, err
		}
		var progress func(int64)
		if cfg.ReportInterval > 0 {
			last := time.Now()
			progress = func(rows int64) {
				if time.Since(last) >= cfg.ReportInterval {
					last = time.Now()
					rn.printf("[load %4.0fs] %d rows\n", time.Since(t0).Seconds(), rows)
				}
			}
		}
		rows, err := load(ctx, db, sc, cfg.LoadThreads, cfg.Seed, progress)
		if err != nil {
			return nil, err
		}
		res.LoadRows, res.LoadTime = rows, time.Since(t0)
		rn.printf("tpcc: loaded %d rows in %.1f s (%.0f rows/s) with %d connections\n",
			rows, res.LoadTime.Seconds(), float64(rows)/res.LoadTime.Seconds(), cfg.LoadThreads)
	} else if err := verifyScale(ctx, db, sc); err != nil {
		return nil, err
	}

	if cfg.Duration > 0 {
		if err := rn.run(ctx, db, res); err != nil {
			return nil, err
		}
	}
	if cfg.Check {
		t0 := time.Now()
		res.Checks, res.Notes = runChecks(ctx, db, sc)
		rn.printf("tpcc: consistency checks took %.1f s\n", time.Since(t0).Seconds())
	}
	if cfg.Out != nil {
		res.Report(cfg.Out)
	}
	return res, nil
}

func openDB(mc *mysql.Config, conns int) (*sql.DB, error) {
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("--dsn: %v", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connecting to %s: %v", mc.Addr, err)
	}
	return db, nil
}

// verifyScale checks that an existing database has the size the flags say.
func verifyScale(ctx context.Context, db *sql.DB, sc Scale) error {
	var w, items, cust int
	err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM warehouse").Scan(&w)
	if err == nil {
		err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM item").Scan(&items)
	}
	if err == nil {
		err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM customer WHERE c_w_id = 1 AND c_d_id = 1").Scan(&cust)
	}
	if err != nil {
		return fmt.Errorf("reading the database's size (load it with --load): %v", err)
	}
	if w != sc.Warehouses || items != sc.Items || cust != sc.Customers {
		return fmt.Errorf("the database holds %d warehouses, %d items, %d customers per district; the flags say %d, %d, %d (check --warehouses and --scale-down, or --load)",
			w, items, cust, sc.Warehouses, sc.Items, sc.Customers)
	}
	return nil
}

// run drives the terminals through warm-up and the measured window.
func (rn *runner) run(ctx context.Context, db *sql.DB, res *Result) error {
	cfg := rn.cfg
	workers := make([]*worker, cfg.Threads)
	for i := range workers {
		conn, err := db.Conn(ctx)
		if err != nil {
			for _, w := range workers[:i] {
				w.conn.Close()
			}
			return fmt.Errorf("opening connection %d: %v", i+1, err)
		}
		workers[i] = &worker{
			run:   rn,
			conn:  conn,
			stmts: map[string]*sql.Stmt{},
			r:     newRNG(cfg.Seed, uint64(1000+i)),
			w:     i%rn.scale.Warehouses + 1,
			slD:   (i/rn.scale.Warehouses)%rn.scale.Districts + 1,
		}
	}
	rn.printf("tpcc: running %d threads: %s warm-up, %s measured\n", cfg.Threads, cfg.Warmup, cfg.Duration)
	rn.start = time.Now()
	rn.warmupEnd = rn.start.Add(cfg.Warmup)
	rn.end = rn.warmupEnd.Add(cfg.Duration)

	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(ctx)
		}()
	}
	stop := make(chan struct{})
	var rep sync.WaitGroup
	if cfg.ReportInterval > 0 && cfg.Out != nil {
		rep.Add(1)
		go func() {
			defer rep.Done()
			rn.report(stop)
		}()
	}
	wg.Wait()
	close(stop)
	rep.Wait()

	finished := time.Now()
	if finished.After(rn.end) {
		finished = rn.end
	}
	res.Measured = max(0, finished.Sub(rn.warmupEnd))
	for _, w := range workers {
		for t := range w.stats {
			res.Types[t].merge(&w.stats[t])
		}
		for _, s := range w.stmts {
			s.Close()
		}
		w.conn.Close()
	}
	for t := range res.Types {
		sortLatencies(&res.Types[t])
	}
	if res.Measured > 0 {
		res.TpmC = float64(res.Types[NewOrder].Completed()) / res.Measured.Minutes()
	}
	res.Errors = rn.errs.List()
	return nil
}

// report prints a progress line every interval until stop is closed.
func (rn *runner) report(stop <-chan struct{}) {
	tk := time.NewTicker(rn.cfg.ReportInterval)
	defer tk.Stop()
	lastNO, lastT := int64(0), rn.start
	for {
		select {
		case <-stop:
			return
		case now := <-tk.C:
			l := &rn.live
			no := l.completed[NewOrder].Load()
			interval := float64(no-lastNO) / now.Sub(lastT).Minutes()
			lastNO, lastT = no, now
			phase, sofar := "warm-up", ""
			if now.Sub(rn.warmupEnd) >= time.Second/2 {
				phase = "run"
				sofar = fmt.Sprintf("tpmC %.0f, ", float64(l.measuredNO.Load())/now.Sub(rn.warmupEnd).Minutes())
			}
			rn.printf("[%4.0fs] %-7s %slast %s %.0f | NO %d P %d OS %d D %d SL %d | rollbacks %d, retries 1213 %d / 1205 %d, errors %d\n",
				now.Sub(rn.start).Seconds(), phase, sofar, rn.cfg.ReportInterval, interval,
				no, l.completed[Payment].Load(), l.completed[OrderStatus].Load(), l.completed[Delivery].Load(), l.completed[StockLevel].Load(),
				l.rollbacks.Load(), l.deadlocks.Load(), l.lockTimeouts.Load(), l.errors.Load())
		}
	}
}

// maxRetries bounds the retries of one transaction.
const maxRetries = 100

// loop runs transactions back to back until the end of the measured window.
func (w *worker) loop(ctx context.Context) {
	for ctx.Err() == nil && time.Now().Before(w.run.end) {
		w.one(ctx, w.pickType())
	}
}

func (w *worker) inWindow(t time.Time) bool {
	return !t.Before(w.run.warmupEnd) && !t.After(w.run.end)
}

// one runs a transaction to its end, retrying deadlocks and lock wait
// timeouts.
func (w *worker) one(ctx context.Context, t TxType) {
	rn := w.run
	in := w.input(t)
	st := &w.stats[t]
	start := time.Now()
	for attempt := 0; ; attempt++ {
		rb, err := w.do(ctx, t, in)
		now := time.Now()
		if err == nil {
			rn.live.completed[t].Add(1)
			if rb {
				rn.live.rollbacks.Add(1)
			}
			if w.inWindow(now) {
				if t == NewOrder {
					rn.live.measuredNO.Add(1)
				}
				if rb {
					st.Rollbacks++
				} else {
					st.Commits++
				}
				st.Latencies = append(st.Latencies, now.Sub(start))
			}
			return
		}
		if ctx.Err() != nil {
			return // interrupted: not an error of the server
		}
		w.rollback(ctx)
		var me *mysql.MySQLError
		retry := errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205)
		if retry && attempt < maxRetries {
			if me.Number == 1213 {
				rn.live.deadlocks.Add(1)
				if w.inWindow(now) {
					st.Deadlocks++
				}
			} else {
				rn.live.lockTimeouts.Add(1)
				if w.inWindow(now) {
					st.LockTimeouts++
				}
			}
			continue
		}
		msg := err.Error()
		if retry {
			msg = fmt.Sprintf("gave up after %d retries: %s", maxRetries, msg)
		}
		rn.live.errors.Add(1)
		rn.errs.Add(t.String() + ": " + msg)
		if w.inWindow(now) {
			st.Errors++
		}
		if isConnError(err) {
			w.reconnect(ctx)
		}
		return
	}
}

func (w *worker) rollback(ctx context.Context) {
	w.conn.ExecContext(ctx, "ROLLBACK") //nolint:errcheck // the transaction may already be gone
}

func isConnError(err error) bool {
	var ne net.Error
	return errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.EOF) || errors.As(err, &ne)
}

// reconnect replaces a broken connection (and its prepared statements).
func (w *worker) reconnect(ctx context.Context) {
	for _, s := range w.stmts {
		s.Close()
	}
	w.stmts = map[string]*sql.Stmt{}
	w.conn.Raw(func(any) error { return driver.ErrBadConn }) //nolint:errcheck // discards the connection
	w.conn.Close()
	for ctx.Err() == nil && time.Now().Before(w.run.end) {
		db := w.run.db
		if c, err := db.Conn(ctx); err == nil {
			w.conn = c
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
