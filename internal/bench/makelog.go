package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"lockstep/internal/config"
	"lockstep/internal/server"
)

// MakeLogConfig describes a log to write: a lockstep server is run in
// process on Datadir, a sysbench-like table is loaded, and Transactions
// oltp_write_only-like transactions are committed by Threads connections;
// then the server is stopped cleanly and its data directory holds the log.
type MakeLogConfig struct {
	Datadir      string  // must not exist, or be empty
	Transactions int     // workload transactions (the load's are extra)
	ConflictRate float64 // fraction of transactions whose rows come from the hot set
	HotRows      int     // the hot set: ids 1..HotRows
	Rows         int     // table size
	Threads      int
	Seed         uint64 // 0: random
	// CheckpointLogSize is the server's --checkpoint-log-size (0: no
	// checkpoint; the log reaches back to the start).
	CheckpointLogSize int64
	// LargeTxnRows, if not 0, adds one transaction of that many rows
	// after the workload (largeTxn: a table sbtest.large filled by one
	// INSERT ... SELECT).
	LargeTxnRows   int
	ReportInterval time.Duration
	Out            io.Writer // the summary
	Progress       io.Writer // progress lines (stderr)
}

// SourceInfo is what the generator measured, written to
// DATADIR/replay-source.json for `bench replay` to compare against.
type SourceInfo struct {
	Transactions int             `json:"transactions"` // workload transactions
	LoadTxns     int             `json:"load_transactions"`
	Seconds      float64         `json:"seconds"` // the workload's
	Rate         float64         `json:"transactions_per_second"`
	Threads      int             `json:"threads"`
	ConflictRate float64         `json:"conflict_rate"`
	HotRows      int             `json:"hot_rows"`
	Rows         int             `json:"rows"`
	Retries      int64           `json:"retries"`
	Checksums    []TableChecksum `json:"checksums"`
	Date         string          `json:"date"`
}

// SourceFile is the generator's record in a data directory.
const SourceFile = "replay-source.json"

// Validate reports the first invalid setting.
func (c *MakeLogConfig) Validate() error {
	switch {
	case c.Datadir == "":
		return errors.New("--datadir is required")
	case c.Transactions < 0:
		return errors.New("--transactions must not be negative")
	case c.ConflictRate < 0 || c.ConflictRate > 1:
		return fmt.Errorf("--conflict-rate must be 0..1, not %g", c.ConflictRate)
	case c.Rows < 1:
		return fmt.Errorf("--rows must be at least 1, not %d", c.Rows)
	case c.HotRows < 1 || c.HotRows > c.Rows:
		return fmt.Errorf("--hot-rows must be 1..--rows (%d), not %d", c.Rows, c.HotRows)
	case c.Threads < 1 || c.Threads > 10000:
		return fmt.Errorf("--threads must be 1..10000, not %d", c.Threads)
	case c.LargeTxnRows < 0 || c.LargeTxnRows > 100_000_000:
		return fmt.Errorf("--large-txn-rows must be 0..100000000, not %d", c.LargeTxnRows)
	}
	return nil
}

// MakeLog writes the log.
func MakeLog(ctx context.Context, c MakeLogConfig) (*SourceInfo, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	out, prog := orDiscard(c.Out), orDiscard(c.Progress)
	if ents, err := os.ReadDir(c.Datadir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("%s is not empty: --make-log writes a new data directory", c.Datadir)
	}
	seed := c.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	cfg := config.Default()
	cfg.Datadir = c.Datadir
	cfg.Port = 0
	cfg.BindAddress = "127.0.0.1"
	cfg.CheckpointLogSize = c.CheckpointLogSize

	sctx, stop := context.WithCancel(ctx)
	defer stop()
	addrc := make(chan string, 1)
	runErr := make(chan error, 1)
	go func() { runErr <- server.Run(sctx, cfg, func(a string) { addrc <- a }) }()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-runErr:
		return nil, fmt.Errorf("start the server on %s: %v", c.Datadir, err)
	}
	info, werr := c.workload(ctx, addr, seed, out, prog)
	stop()
	if err := <-runErr; err != nil && werr == nil {
		werr = fmt.Errorf("stop the server: %v", err)
	}
	if werr != nil {
		return nil, werr
	}
	b, _ := json.MarshalIndent(info, "", "  ")
	if err := os.WriteFile(filepath.Join(c.Datadir, SourceFile), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "wrote %s: %d rows loaded in %d transactions, then %d transactions (conflict rate %g on %d hot rows, %d threads, seed %d) in %.2f s: %.0f transactions/s, %d retries\n",
		c.Datadir, c.Rows, info.LoadTxns, info.Transactions, c.ConflictRate, c.HotRows, c.Threads, seed, info.Seconds, info.Rate, info.Retries)
	printChecksums(out, info.Checksums, nil)
	return info, nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

const loadBatch = 500

func (c *MakeLogConfig) workload(ctx context.Context, addr string, seed uint64, out, prog io.Writer) (*SourceInfo, error) {
	db, err := sql.Open("mysql", "root@tcp("+addr+")/")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(c.Threads + 1)
	db.SetMaxIdleConns(c.Threads + 1)
	for _, q := range []string{
		"CREATE DATABASE sbtest",
		"CREATE TABLE sbtest.sbtest1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k))",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("%s: %v", q, err)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	loadTxns := 0
	for lo := 1; lo <= c.Rows; lo += loadBatch {
		hi := min(lo+loadBatch-1, c.Rows)
		var sb strings.Builder
		sb.WriteString("INSERT INTO sbtest.sbtest1 (id, k, c, pad) VALUES ")
		for id := lo; id <= hi; id++ {
			if id > lo {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d,%d,'%s','%s')", id, rng.IntN(c.Rows)+1, sbString(rng, 10), sbString(rng, 5))
		}
		if _, err := db.ExecContext(ctx, sb.String()); err != nil {
			return nil, fmt.Errorf("load: %v", err)
		}
		loadTxns++
	}
	fmt.Fprintf(prog, "make-log: loaded %d rows in %d transactions\n", c.Rows, loadTxns)

	var next, done, retries atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, c.Threads)
	start := time.Now()
	stopProg := make(chan struct{})
	progDone := make(chan struct{})
	go func() {
		defer close(progDone)
		if c.ReportInterval <= 0 {
			<-stopProg
			return
		}
		tk := time.NewTicker(c.ReportInterval)
		defer tk.Stop()
		for {
			select {
			case <-stopProg:
				return
			case <-tk.C:
				n := done.Load()
				fmt.Fprintf(prog, "make-log: %d of %d transactions, %.0f transactions/s, %d retries\n",
					n, c.Transactions, float64(n)/time.Since(start).Seconds(), retries.Load())
			}
		}
	}()
	for th := 0; th < c.Threads; th++ {
		wg.Add(1)
		go func(th int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(th)+2))
			if err := c.worker(ctx, db, r, &next, &done, &retries); err != nil {
				errc <- err
			}
		}(th)
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stopProg)
	<-progDone
	close(errc)
	if err := <-errc; err != nil {
		return nil, err
	}
	if c.LargeTxnRows > 0 {
		if err := c.largeTxn(ctx, db, prog); err != nil {
			return nil, err
		}
	}
	sums, err := checksums(dbQuerier(ctx, db))
	if err != nil {
		return nil, err
	}
	n := int(done.Load())
	return &SourceInfo{Transactions: n, LoadTxns: loadTxns, Seconds: elapsed.Seconds(), Rate: float64(n) / elapsed.Seconds(),
		Threads: c.Threads, ConflictRate: c.ConflictRate, HotRows: c.HotRows, Rows: c.Rows, Retries: retries.Load(),
		Checksums: sums, Date: time.Now().UTC().Format(time.RFC3339)}, nil
}

// worker runs oltp_write_only-like transactions until Transactions have
// been taken: an index update, a non-index update, a delete and an insert
// of the same id. With probability ConflictRate the two ids come from the
// hot set, otherwise from the rest of the table.
func (c *MakeLogConfig) worker(ctx context.Context, db *sql.DB, r *rand.Rand, next, done, retries *atomic.Int64) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	stmts := make([]*sql.Stmt, 4)
	for i, q := range []string{
		"UPDATE sbtest.sbtest1 SET k = k + 1 WHERE id = ?",
		"UPDATE sbtest.sbtest1 SET c = ? WHERE id = ?",
		"DELETE FROM sbtest.sbtest1 WHERE id = ?",
		"INSERT INTO sbtest.sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)",
	} {
		if stmts[i], err = conn.PrepareContext(ctx, q); err != nil {
			return fmt.Errorf("prepare %s: %v", q, err)
		}
		defer stmts[i].Close()
	}
	for next.Add(1) <= int64(c.Transactions) {
		// Two ids: both from the hot set (a conflicting transaction), or
		// both from the rest of the table.
		lo, n := c.HotRows+1, c.Rows-c.HotRows
		if n == 0 || r.Float64() < c.ConflictRate {
			lo, n = 1, c.HotRows
		}
		id1, id2 := lo+r.IntN(n), lo+r.IntN(n)
		cval, k, pad := sbString(r, 10), r.IntN(c.Rows)+1, sbString(r, 5)
		for attempt := 0; ; attempt++ {
			err := func() error {
				tx, err := conn.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				for _, s := range []struct {
					st   *sql.Stmt
					args []any
				}{
					{stmts[0], []any{id1}},
					{stmts[1], []any{cval, id2}},
					{stmts[2], []any{id1}},
					{stmts[3], []any{id1, k, cval, pad}},
				} {
					if _, err := tx.StmtContext(ctx, s.st).ExecContext(ctx, s.args...); err != nil {
						tx.Rollback()
						return err
					}
				}
				return tx.Commit()
			}()
			if err == nil {
				break
			}
			var me *mysql.MySQLError
			if errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205) && attempt < 100 {
				retries.Add(1)
				continue
			}
			return fmt.Errorf("transaction: %v", err)
		}
		done.Add(1)
	}
	return nil
}

// sbString is sysbench's c/pad pattern: groups of 11 digits joined by '-'.
func sbString(r *rand.Rand, groups int) string {
	b := make([]byte, 0, groups*12)
	for g := 0; g < groups; g++ {
		if g > 0 {
			b = append(b, '-')
		}
		for i := 0; i < 11; i++ {
			b = append(b, byte('0'+r.IntN(10)))
		}
	}
	return string(b)
}
