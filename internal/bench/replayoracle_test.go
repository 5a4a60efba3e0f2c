package bench

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"lockstep/internal/config"
	"lockstep/internal/server"
)

// TestReplayOracleTPCC: a log written by TPC-C (the loader, then the mix
// with 4 threads) with DDL between its transactions — ADD COLUMN and
// CREATE INDEX on a table the mix writes between two runs, and, during the
// second run, a table created, filled and altered by another connection —
// replayed into fresh engines with 1, 2, 4, 8 and 16 workers (commit order
// preserved) gives the source's table checksums.
func TestReplayOracleTPCC(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cfg := config.Default()
	cfg.Datadir = dir
	cfg.Port = 0
	cfg.BindAddress = "127.0.0.1"
	cfg.CheckpointLogSize = 0
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	addrc := make(chan string, 1)
	runErr := make(chan error, 1)
	go func() { runErr <- server.Run(sctx, cfg, func(a string) { addrc <- a }) }()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-runErr:
		t.Fatalf("start the server: %v", err)
	}
	dsn := "root@tcp(" + addr + ")/tpcc?parseTime=true"
	var out bytes.Buffer
	tpcc := func(load bool, d time.Duration) {
		res, err := Run(ctx, Config{DSN: dsn, Warehouses: 1, Threads: 4, Duration: d, Load: load, ScaleDown: 100, Seed: 42, Out: &out})
		if err != nil {
			t.Fatalf("TPC-C: %v\n%s", err, out.String())
		}
		if res.Types[NewOrder].Commits == 0 || res.Types[Payment].Commits == 0 {
			t.Fatalf("TPC-C committed no New-Order or Payment\n%s", out.String())
		}
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string) {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	tpcc(true, 2*time.Second)
	exec("ALTER TABLE history ADD COLUMN h_note VARCHAR(20) DEFAULT 'before'")
	exec("CREATE INDEX h_amount ON history (h_amount)")

	// DDL between the mix's transactions.
	var wg sync.WaitGroup
	ddlErr := make(chan error, 1)
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		qs := []string{"CREATE TABLE audit (id INT PRIMARY KEY, w INT, note VARCHAR(20))"}
		for i := 1; i <= 40; i++ {
			qs = append(qs, fmt.Sprintf("INSERT INTO audit (id, w, note) VALUES (%d, %d, 'n%d')", i, i%3, i))
			switch i {
			case 10:
				qs = append(qs, "ALTER TABLE audit ADD COLUMN seen DATETIME(6) DEFAULT (NOW(6))")
			case 20:
				qs = append(qs, "CREATE INDEX audit_w ON audit (w)")
			case 30:
				qs = append(qs, "ALTER TABLE audit MODIFY note VARCHAR(40)", "UPDATE audit SET note = CONCAT(note, '!') WHERE w = 1")
			}
		}
		for _, q := range qs {
			select {
			case <-done:
			default:
				time.Sleep(20 * time.Millisecond)
			}
			if _, err := db.ExecContext(ctx, q); err != nil {
				ddlErr <- fmt.Errorf("%s: %w", q, err)
				return
			}
		}
	}()
	tpcc(false, 2*time.Second)
	close(done)
	wg.Wait()
	close(ddlErr)
	if err := <-ddlErr; err != nil {
		t.Fatal(err)
	}
	want, err := checksums(dbQuerier(ctx, db))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	stop()
	if err := <-runErr; err != nil {
		t.Fatalf("stop the server: %v", err)
	}
	if len(want) < 10 {
		t.Fatalf("source tables: %+v", want)
	}
	for _, workers := range []int{1, 2, 4, 8, 16} {
		var prog bytes.Buffer
		res, err := Replay(ctx, ReplayConfig{Datadir: dir, Workers: workers, PreserveCommitOrder: true, Out: io.Discard, Progress: &prog})
		if err != nil {
			t.Fatalf("%d workers: %v\n%s", workers, err, prog.String())
		}
		if !slices.Equal(res.Checksums, want) {
			t.Errorf("%d workers: replayed %+v\nsource %+v", workers, res.Checksums, want)
		}
		if workers == 1 {
			t.Logf("%d transactions, %d other records (DDL), %d entries", res.Transactions, res.OtherRecords, res.Entries)
		}
	}
}
