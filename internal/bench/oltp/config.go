package oltp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Config is one run (or prepare, or cleanup) against one server.
type Config struct {
	DSN            string // go-sql-driver/mysql DSN; the database defaults to "sbtest"
	Workload       Workload
	Threads        int           // connections running events (--threads)
	Duration       time.Duration // measured window (--time)
	Warmup         time.Duration // before the measured window, not counted (--warmup)
	ReportInterval time.Duration // progress lines on Progress; 0 for none
	Options        Options
	Seed           uint64    // --rand-seed; 0: a random one
	Progress       io.Writer // progress lines (stderr); nil for none
}

// DefaultConfig is a read_write run with sysbench's defaults, 1 thread,
// 10 s, progress every second.
func DefaultConfig() Config {
	return Config{
		DSN:            "root@tcp(127.0.0.1:3306)/sbtest",
		Workload:       ReadWrite,
		Threads:        1,
		Duration:       10 * time.Second,
		ReportInterval: time.Second,
		Options:        DefaultOptions(),
	}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.Workload < 0 || c.Workload >= numWorkloads:
		return fmt.Errorf("unknown workload %d", int(c.Workload))
	case c.Threads < 1 || c.Threads > 10000:
		return fmt.Errorf("--threads must be 1..10000, not %d", c.Threads)
	case c.Duration < 0:
		return errors.New("--time must not be negative")
	case c.Warmup < 0:
		return errors.New("--warmup must not be negative")
	case c.ReportInterval < 0:
		return errors.New("--report-interval must not be negative")
	}
	if err := c.Options.Validate(); err != nil {
		return err
	}
	_, err := c.driverConfig()
	return err
}

func (c *Config) driverConfig() (*mysql.Config, error) {
	mc, err := mysql.ParseDSN(c.DSN)
	if err != nil {
		return nil, fmt.Errorf("--dsn: %v", err)
	}
	mc.InterpolateParams = false // server-side prepared statements, as sysbench
	if mc.DBName == "" {
		mc.DBName = "sbtest"
	}
	return mc, nil
}

func (c *Config) printf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format, args...)
	}
}

func openDB(ctx context.Context, mc *mysql.Config, conns int) (*sql.DB, error) {
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("--dsn: %v", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connecting to %s: %v", mc.Addr, err)
	}
	return db, nil
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
