package integration

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// TestLargeResultMemory: a result far larger than the server's data is
// streamed, not held: reading about 640 MB of rows moves the server's RSS
// by less than a fixed bound. (go-mysql-server kept every row's wire bytes
// of a statement in one buffer until it ended: a 2 GB result took the
// server from 0.7 to 4.5 GB; internal/server/resultbuf.go.) Both the text
// protocol and a prepared statement are read.
func TestLargeResultMemory(t *testing.T) {
	srv := testutil.StartServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	db := srv.DB(t, "")
	for _, q := range []string{
		"CREATE DATABASE big",
		"CREATE TABLE big.t (id INT PRIMARY KEY, v VARCHAR(1000))",
		"INSERT INTO big.t VALUES (1, REPEAT('x', 1000))",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 10; i++ { // 1,024 rows of 1 KB
		if _, err := db.ExecContext(ctx, "INSERT INTO big.t SELECT id + (SELECT MAX(id) FROM big.t), v FROM big.t"); err != nil {
			t.Fatal(err)
		}
	}
	const query = "SELECT a.id, a.v FROM big.t a, big.t b WHERE b.id <= 625" // 640,000 rows, ~640 MB
	const bound = 256 << 20
	pid := srv.PID()
	for _, mode := range []string{"text", "prepared"} {
		t.Run(mode, func(t *testing.T) {
			// A small query first, so the baseline includes a statement's
			// usual working set.
			var n int
			if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM big.t").Scan(&n); err != nil || n != 1024 {
				t.Fatalf("rows: %d, %v", n, err)
			}
			base := rss(t, pid)
			var peak atomic.Int64
			peak.Store(base)
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
						if r := rss(t, pid); r > peak.Load() {
							peak.Store(r)
						}
					}
				}
			}()
			var rows *sql.Rows
			var err error
			if mode == "text" {
				rows, err = db.QueryContext(ctx, query)
			} else {
				rows, err = db.QueryContext(ctx, query+" AND ? = ?", 1, 1) // a prepared statement
			}
			if err != nil {
				t.Fatal(err)
			}
			var count, bytes int64
			var id int64
			var v []byte
			for rows.Next() {
				if err := rows.Scan(&id, &v); err != nil {
					t.Fatal(err)
				}
				count++
				bytes += int64(len(v))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			close(stop)
			<-done
			growth := peak.Load() - base
			t.Logf("%s: %d rows, %d MB of values; server RSS %d MB before, peak %d MB (+%d MB)",
				mode, count, bytes>>20, base>>20, peak.Load()>>20, growth>>20)
			if count != 640000 {
				t.Errorf("rows read: %d, want 640000", count)
			}
			if growth > bound {
				t.Errorf("server RSS grew by %d MB while streaming %d MB, want under %d MB", growth>>20, bytes>>20, bound>>20)
			}
		})
	}
}

// rss is process pid's resident set size in bytes.
func rss(t *testing.T, pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the server's RSS: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
