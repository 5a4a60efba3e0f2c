package oltp

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"lockstep/internal/bench/errlog"
)

// Latency is a latency distribution in milliseconds.
type Latency struct {
	Min  float64 `json:"min_ms"`
	Avg  float64 `json:"avg_ms"`
	P50  float64 `json:"p50_ms"`
	P95  float64 `json:"p95_ms"`
	P99  float64 `json:"p99_ms"`
	P999 float64 `json:"p99_9_ms"`
	Max  float64 `json:"max_ms"`
}

// Second is one second of the measured window.
type Second struct {
	T       int     `json:"t"` // seconds since the window began, at the end of this one
	TPS     float64 `json:"tps"`
	QPS     float64 `json:"qps"`
	P95     float64 `json:"p95_ms"`
	Errors  int64   `json:"errors"`
	Retries int64   `json:"retries"`
}

// ErrorCount is one distinct error message and how often it occurred.
type ErrorCount = errlog.Count

// Result is what one run measured. The counts and rates cover the measured
// window (events that ended in it); Inserted and Deleted cover the whole
// run, warm-up included.
type Result struct {
	Workload     string        `json:"workload"`
	Server       string        `json:"server"`
	Threads      int           `json:"threads"`
	Tables       int           `json:"tables"`
	TableSize    int           `json:"table_size"`
	Warmup       time.Duration `json:"warmup_ns"`
	Duration     time.Duration `json:"duration_ns"` // the measured window as run (shorter if interrupted)
	Transactions int64         `json:"transactions"`
	Queries      int64         `json:"queries"`
	Reads        int64         `json:"reads"`
	Writes       int64         `json:"writes"`
	Other        int64         `json:"other"`
	TPS          float64       `json:"tps"`
	QPS          float64       `json:"qps"`
	Latency      Latency       `json:"latency"`
	// Retries are attempts restarted after a deadlock (1213), a lock wait
	// timeout (1205) or 1020, which sysbench ignores (--mysql-ignore-errors'
	// default) and restarts the event on; Errors are events abandoned after
	// any other error; Reconnects follow a lost connection.
	Retries       int64        `json:"retries"`
	Errors        int64        `json:"errors"`
	Reconnects    int64        `json:"reconnects"`
	Inserted      int64        `json:"inserted"`
	Deleted       int64        `json:"deleted"`
	ErrorMessages []ErrorCount `json:"error_messages,omitempty"`
	Series        []Second     `json:"series"`
}

// retryable are the error numbers sysbench 1.0.20 ignores by default
// (--mysql-ignore-errors=1213,1020,1205): the event is run again.
func retryable(err error) (int, bool) {
	var me *mysql.MySQLError
	if errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205 || me.Number == 1020) {
		return int(me.Number), true
	}
	return 0, false
}

// maxRetries bounds the restarts of one event (sysbench has no bound).
const maxRetries = 1000

// runner is one run's shared state.
type runner struct {
	cfg       Config
	db        *sql.DB
	connector driver.Connector // the workers' connections, below database/sql
	rec       *recorder
	errs      errlog.Log
	start     time.Time
	warmupEnd time.Time
	end       time.Time
}

func randomSeed() uint64 { return rand.Uint64() | 1 }

// Run runs one workload at cfg.Threads connections for cfg.Warmup plus
// cfg.Duration against cfg.DSN (its tables made by Prepare) and returns
// what the measured window saw. Progress lines go to cfg.Progress; nothing
// else is printed. An error means the run could not be carried out (no
// connection, missing tables); errors of single events are counted in the
// Result.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Seed == 0 {
		cfg.Seed = randomSeed()
	}
	mc, _ := cfg.driverConfig()
	connector, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("--dsn: %v", err)
	}
	db, err := openDB(ctx, mc, 1)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	o := &cfg.Options
	res := &Result{Workload: cfg.Workload.String(), Threads: cfg.Threads, Tables: o.Tables, TableSize: o.TableSize, Warmup: cfg.Warmup}
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&res.Server); err != nil {
		return nil, fmt.Errorf("SELECT VERSION(): %w", err)
	}
	for n := 1; n <= o.Tables; n++ {
		rows, err := db.QueryContext(ctx, fmt.Sprintf("SELECT id FROM sbtest%d LIMIT 1", n))
		if err != nil {
			return nil, fmt.Errorf("table sbtest%d (run prepare first): %w", n, err)
		}
		rows.Close()
	}
	rn := &runner{cfg: cfg, db: db, connector: connector, rec: newRecorder()}
	workers := make([]*worker, cfg.Threads)
	defer func() {
		for _, w := range workers {
			if w != nil {
				w.close()
			}
		}
	}()
	for i := range workers {
		w := &worker{run: rn, rec: rn.rec.newShard(), g: gen{w: cfg.Workload, o: *o, r: newRNG(cfg.Seed, uint64(1000+i), o.Dist)}}
		if err := w.connect(ctx); err != nil {
			w.close() // what connect opened before it failed
			return nil, fmt.Errorf("connection %d: %w", i+1, err)
		}
		workers[i] = w
	}
	cfg.printf("oltp %s: server %s at %s, database %s: %d tables of %d rows, %d threads, %s warm-up, %s measured\n",
		cfg.Workload, res.Server, mc.Addr, mc.DBName, o.Tables, o.TableSize, cfg.Threads, cfg.Warmup, cfg.Duration)

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
	var tick sync.WaitGroup
	tick.Add(1)
	go func() {
		defer tick.Done()
		rn.ticks(stop, res)
	}()
	wg.Wait()
	close(stop)
	tick.Wait()

	finished := time.Now()
	if finished.After(rn.end) {
		finished = rn.end
	}
	res.Duration = max(0, finished.Sub(rn.warmupEnd))
	rn.fill(res)
	return res, nil
}

// fill computes the totals of the measured window.
func (rn *runner) fill(res *Result) {
	rec := rn.rec
	rec.flush()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	t := &rec.total
	res.Transactions = t.events
	res.Reads, res.Writes, res.Other = t.queries[Read], t.queries[Write], t.queries[Other]
	res.Queries = t.allQueries()
	res.Retries, res.Errors, res.Reconnects = t.retries, t.errors, t.reconnects
	res.Inserted, res.Deleted = rec.inserted, rec.deleted
	if s := res.Duration.Seconds(); s > 0 {
		res.TPS = float64(t.events) / s
		res.QPS = float64(res.Queries) / s
	}
	h := t.h
	ms := func(us int64) float64 { return float64(us) / 1000 }
	if h.TotalCount() > 0 {
		res.Latency = Latency{
			Min: ms(h.Min()), Avg: h.Mean() / 1000, P50: ms(h.ValueAtQuantile(50)), P95: ms(h.ValueAtQuantile(95)),
			P99: ms(h.ValueAtQuantile(99)), P999: ms(h.ValueAtQuantile(99.9)), Max: ms(h.Max()),
		}
	}
	res.ErrorMessages = rn.errs.List()
}

// ticks closes a second of the series every second and prints a progress
// line every report interval until stop is closed.
func (rn *runner) ticks(stop <-chan struct{}, res *Result) {
	tk := time.NewTicker(time.Second)
	defer tk.Stop()
	var rep <-chan time.Time
	if iv := rn.cfg.ReportInterval; iv > 0 && rn.cfg.Progress != nil {
		rt := time.NewTicker(iv)
		defer rt.Stop()
		rep = rt.C
	}
	lastRep, lastTick := rn.start, rn.start
	// second closes a second of the series: a tick's counts as they are,
	// the last (shorter) second's scaled to a rate.
	second := func(now time.Time, last bool) {
		c, p95 := rn.rec.take(&rn.rec.second)
		s := 1.0
		if last {
			s = now.Sub(lastTick).Seconds()
		}
		lastTick = now
		sinceWindow := now.Sub(rn.warmupEnd)
		t := int(sinceWindow.Round(time.Second) / time.Second)
		if sinceWindow > time.Second/2 && now.Before(rn.end.Add(time.Second/2)) && s > 0 &&
			(len(res.Series) == 0 || res.Series[len(res.Series)-1].T < t) {
			res.Series = append(res.Series, Second{
				T: t, TPS: float64(c.events) / s, QPS: float64(c.allQueries()) / s,
				P95: float64(p95) / float64(time.Millisecond), Errors: c.errors, Retries: c.retries,
			})
		}
	}
	for {
		select {
		case <-stop:
			// The workers can end before the ticker's last tick (it
			// started after them): close the last second here unless
			// less than half of it has passed.
			if now := time.Now(); now.Sub(lastTick) >= time.Second/2 {
				second(now, true)
			}
			return
		case now := <-tk.C:
			second(now, false)
		case now := <-rep:
			c, p95 := rn.rec.take(&rn.rec.report)
			s := now.Sub(lastRep).Seconds()
			lastRep = now
			phase := ""
			if now.Before(rn.warmupEnd) {
				phase = " (warm-up)"
			}
			rn.cfg.printf("[ %.0fs ]%s thds: %d tps: %.2f qps: %.2f (r/w/o: %.2f/%.2f/%.2f) lat (ms,95%%): %.2f err/s: %.2f retry/s: %.2f reconn/s: %.2f\n",
				now.Sub(rn.start).Seconds(), phase, rn.cfg.Threads, float64(c.events)/s, float64(c.allQueries())/s,
				float64(c.queries[Read])/s, float64(c.queries[Write])/s, float64(c.queries[Other])/s,
				float64(p95)/float64(time.Millisecond), float64(c.errors)/s, float64(c.retries)/s, float64(c.reconnects)/s)
		}
	}
}

func (w *worker) inWindow(t time.Time) bool {
	return !t.Before(w.run.warmupEnd) && !t.After(w.run.end)
}

// loop runs events back to back until the end of the run (sysbench's
// thread_run): an event that fails with an error sysbench ignores is run
// again, as a new event with new random values, within the same latency
// measurement.
//
// The statements run under a context that is never cancelled: database/sql
// starts a goroutine per query to watch a cancellable one, a client cost
// sysbench does not have. An interrupt ends the run after the events in
// flight.
func (w *worker) loop(ctx context.Context) {
	sctx := context.WithoutCancel(ctx)
	for ctx.Err() == nil {
		start := time.Now()
		if !start.Before(w.run.end) {
			return
		}
		var e event
		quit := false
		for attempt := 0; ; attempt++ {
			w.ops = w.g.event(w.ops)
			err := w.exec(sctx, w.ops, &e)
			if err == nil {
				e.c.events = 1
				break
			}
			if ctx.Err() != nil {
				return // interrupted: not the server's error
			}
			w.rollback(sctx)
			if _, ok := retryable(err); ok && attempt < maxRetries {
				e.c.retries++
				continue
			}
			e.c.errors++
			w.run.errs.Add(err.Error())
			if isConnError(err) {
				e.c.reconnects++
				quit = !w.reconnect(ctx)
			}
			break
		}
		now := time.Now()
		e.lat = now.Sub(start)
		w.rec.add(&e, w.inWindow(now))
		if quit {
			return
		}
	}
}

// stmtError names the statement an error came from.
type stmtError struct {
	kind Kind
	err  error
}

func (e *stmtError) Error() string { return e.kind.String() + ": " + e.err.Error() }
func (e *stmtError) Unwrap() error { return e.err }

func isConnError(err error) bool {
	var ne net.Error
	return errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.As(err, &ne)
}
