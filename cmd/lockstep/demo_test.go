package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// lockedBuffer is a bytes.Buffer for one writer and readers at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitOutput waits until re matches out and returns the submatches.
func waitOutput(t *testing.T, out *lockedBuffer, done chan int, re *regexp.Regexp, within time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m
		}
		select {
		case code := <-done:
			t.Fatalf("demo exited %d before printing %q:\n%s", code, re, out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("demo did not print %q within %v:\n%s", re, within, out)
	return nil
}

// TestDemo runs `lockstep demo --ports 0` (three members in this process,
// on free ports, data in a temporary directory): every member answers a
// real client; a write on the primary is read on a secondary, which
// refuses writes (1290); SIGINT stops the group, the demo exits 0 and its
// directory is gone.
func TestDemo(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() { done <- run(context.Background(), []string{"demo", "--ports", "0"}, &out, &errb) }()

	dirM := waitOutput(t, &out, done, regexp.MustCompile(`data in (\S+) \(removed at exit\)`), time.Minute)
	dir := dirM[1]
	if !strings.HasPrefix(dir, os.Getenv("TMPDIR")) {
		t.Fatalf("demo directory %s is not in TMPDIR", dir)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("demo directory: %v", err)
	}
	primM := waitOutput(t, &out, done, regexp.MustCompile(`the primary is member (\d) \(mysql -h 127\.0\.0\.1 -P (\d+) -u root\)`), time.Minute)
	ports := map[int]int{}
	for _, m := range regexp.MustCompile(`(?m)^  member (\d): mysql -h 127\.0\.0\.1 -P (\d+) -u root$`).FindAllStringSubmatch(out.String(), -1) {
		id, _ := strconv.Atoi(m[1])
		ports[id], _ = strconv.Atoi(m[2])
	}
	if len(ports) != 3 {
		t.Fatalf("want 3 members' connection lines:\n%s", out.String())
	}
	// Each member's metrics endpoint, its own.
	urls := regexp.MustCompile(`(?m)^  member (\d): .*\n    metrics: (http://127\.0\.0\.1:\d+/metrics)$`).FindAllStringSubmatch(out.String(), -1)
	if len(urls) != 3 {
		t.Fatalf("want 3 members' metrics lines:\n%s", out.String())
	}
	for _, u := range urls {
		resp, err := http.Get(u[2])
		if err != nil {
			t.Fatalf("member %s metrics: %v", u[1], err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "lockstep_group_replication_member_id " + u[1] + "\n"; !strings.Contains(string(body), want) {
			t.Fatalf("member %s's %s has no %q", u[1], u[2], want)
		}
	}
	primary, _ := strconv.Atoi(primM[1])
	if p, _ := strconv.Atoi(primM[2]); p != ports[primary] {
		t.Fatalf("the primary's line names port %d, member %d has %d", p, primary, ports[primary])
	}
	dbs := map[int]*sql.DB{}
	for id, port := range ports {
		db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/", port))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Ping(); err != nil {
			t.Fatalf("member %d: %v", id, err)
		}
		dbs[id] = db
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, q := range []string{"CREATE DATABASE demo", "CREATE TABLE demo.t (id INT PRIMARY KEY, v VARCHAR(10))",
		"INSERT INTO demo.t VALUES (1, 'written')"} {
		if _, err := dbs[primary].ExecContext(ctx, q); err != nil {
			t.Fatalf("on the primary, %s: %v", q, err)
		}
	}
	secondary := primary%3 + 1
	var v string
	for {
		err := dbs[secondary].QueryRowContext(ctx, "SELECT v FROM demo.t WHERE id = 1").Scan(&v)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("member %d never showed the row: %v", secondary, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if v != "written" {
		t.Fatalf("member %d reads %q", secondary, v)
	}
	_, err := dbs[secondary].ExecContext(ctx, "INSERT INTO demo.t VALUES (2, 'refused')")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1290 {
		t.Fatalf("a write on secondary %d: %v, want error 1290", secondary, err)
	}

	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("demo exited %d:\n%s\n%s", code, out.String(), errb.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("demo did not stop after SIGINT:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "interrupt signal received, stopping the group") {
		t.Fatalf("stdout:\n%s", out.String())
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the demo's directory %s is still there (%v)", dir, err)
	}
}

// TestDemoUsage: --members must be odd and 1..7 (exit 2, one line).
func TestDemoUsage(t *testing.T) {
	for _, args := range [][]string{{"demo", "--members", "2"}, {"demo", "--members", "9"}, {"demo", "--members", "0"}} {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), "must be odd, 1..7") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// TestDemoPortsTaken: when a member's port is taken the demo uses free
// ports instead and says which port was taken.
func TestDemoPortsTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().(*net.TCPAddr).Port
	ports, note, err := demoPorts(taken, 3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p == taken || seen[p] {
			t.Fatalf("ports %v (port %d taken)", ports, taken)
		}
		seen[p] = true
	}
	if len(ports) != 3 || !strings.Contains(note, fmt.Sprintf("port %d is taken", taken)) {
		t.Fatalf("ports %v, note %q", ports, note)
	}
}
