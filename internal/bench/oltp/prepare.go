package oltp

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"
)

// createTableSQL is create_table's statement for MySQL with --auto_inc on
// and the primary key on id (the defaults).
func createTableSQL(n int) string {
	return fmt.Sprintf("CREATE TABLE sbtest%d(\n"+
		"  id INTEGER NOT NULL AUTO_INCREMENT,\n"+
		"  k INTEGER DEFAULT '0' NOT NULL,\n"+
		"  c CHAR(120) DEFAULT '' NOT NULL,\n"+
		"  pad CHAR(60) DEFAULT '' NOT NULL,\n"+
		"  PRIMARY KEY (id)\n"+
		") /*! ENGINE = innodb */ ", n)
}

// bulkRows is how many rows one INSERT of the load carries (sysbench fills
// a buffer of rows and sends it when full; about 1000 of these rows).
const bulkRows = 1000

// Prepare is sysbench's prepare command: the database is created if
// missing (sysbench expects it), then each table is created, loaded with
// table_size rows by multi-row INSERTs (k from the default distribution, c
// and pad from the templates, id from AUTO_INCREMENT), and given its
// secondary index k_N afterwards. Tables are shared out over Threads
// connections as sysbench does (table i to thread (i-1) mod threads).
func Prepare(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Seed == 0 {
		cfg.Seed = randomSeed()
	}
	mc, _ := cfg.driverConfig()
	admin := mc.Clone()
	admin.DBName = ""
	adb, err := openDB(ctx, admin, 1)
	if err != nil {
		return err
	}
	_, err = adb.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(mc.DBName))
	adb.Close()
	if err != nil {
		return fmt.Errorf("CREATE DATABASE %s: %w", mc.DBName, err)
	}
	threads := min(cfg.Threads, cfg.Options.Tables)
	db, err := openDB(ctx, mc, threads)
	if err != nil {
		return err
	}
	defer db.Close()
	t0 := time.Now()
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for th := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newRNG(cfg.Seed, uint64(th), cfg.Options.Dist)
			for n := th + 1; n <= cfg.Options.Tables; n += threads {
				if err := createTable(ctx, db, &cfg, r, n); err != nil {
					errs[th] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	cfg.printf("oltp prepare: %d tables of %d rows in %.1f s\n", cfg.Options.Tables, cfg.Options.TableSize, time.Since(t0).Seconds())
	return nil
}

func createTable(ctx context.Context, db *sql.DB, cfg *Config, r *rng, n int) error {
	cfg.printf("Creating table 'sbtest%d'...\n", n)
	if _, err := db.ExecContext(ctx, createTableSQL(n)); err != nil {
		return fmt.Errorf("creating sbtest%d: %w", n, err)
	}
	size := cfg.Options.TableSize
	if size > 0 {
		cfg.printf("Inserting %d records into 'sbtest%d'\n", size, n)
	}
	var b strings.Builder
	for done := 0; done < size; {
		rows := min(bulkRows, size-done)
		b.Reset()
		fmt.Fprintf(&b, "INSERT INTO sbtest%d(k, c, pad) VALUES", n)
		for i := range rows {
			if i > 0 {
				b.WriteByte(',')
			}
			// create_table's order of draws: c, pad, then k
			c, pad := r.str(cTemplate), r.str(padTemplate)
			fmt.Fprintf(&b, "(%d, '%s', '%s')", r.def(1, uint32(size)), c, pad)
		}
		if _, err := db.ExecContext(ctx, b.String()); err != nil {
			return fmt.Errorf("loading sbtest%d: %w", n, err)
		}
		done += rows
	}
	cfg.printf("Creating a secondary index on 'sbtest%d'...\n", n)
	if _, err := db.ExecContext(ctx, fmt.Sprintf("CREATE INDEX k_%d ON sbtest%d(k)", n, n)); err != nil {
		return fmt.Errorf("creating index k_%d: %w", n, err)
	}
	return nil
}

// Cleanup is sysbench's cleanup command: DROP TABLE IF EXISTS sbtestN for
// every table.
func Cleanup(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	mc, _ := cfg.driverConfig()
	db, err := openDB(ctx, mc, 1)
	if err != nil {
		return err
	}
	defer db.Close()
	for n := 1; n <= cfg.Options.Tables; n++ {
		cfg.printf("Dropping table 'sbtest%d'...\n", n)
		if _, err := db.ExecContext(ctx, fmt.Sprintf("DROP TABLE IF EXISTS sbtest%d", n)); err != nil {
			return fmt.Errorf("dropping sbtest%d: %w", n, err)
		}
	}
	return nil
}

// CountRows returns the number of rows in each table (index 0 for sbtest1).
func CountRows(ctx context.Context, cfg Config) ([]int64, error) {
	mc, err := cfg.driverConfig()
	if err != nil {
		return nil, err
	}
	db, err := openDB(ctx, mc, 1)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	out := make([]int64, cfg.Options.Tables)
	for n := range out {
		if err := db.QueryRowContext(ctx, fmt.Sprintf("SELECT COUNT(*) FROM sbtest%d", n+1)).Scan(&out[n]); err != nil {
			return nil, fmt.Errorf("counting sbtest%d: %w", n+1, err)
		}
	}
	return out, nil
}
