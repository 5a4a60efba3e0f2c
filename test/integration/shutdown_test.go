package integration

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// TestShutdownStatement: SHUTDOWN (the statement) and COM_SHUTDOWN
// (`mariadb-admin shutdown`) stop the server cleanly for an account with
// the SHUTDOWN privilege, answering OK first; any other account gets 1227
// and the server runs on (TestPrivilegeErrors); the data written before
// is there after a restart.
func TestShutdownStatement(t *testing.T) {
	bin := testutil.BuildBinary(t)
	datadir := filepath.Join(t.TempDir(), "data")
	start := func() (*exec.Cmd, string, chan error) {
		t.Helper()
		port, err := testutil.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "serve", "--datadir", datadir, "--port", strconv.Itoa(port))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		db, _ := sql.Open("mysql", "root@tcp("+addr+")/")
		defer db.Close()
		for i := 0; ; i++ {
			if db.Ping() == nil {
				break
			}
			if i == 300 {
				t.Fatalf("server on %s not ready after 30 s", addr)
			}
			time.Sleep(100 * time.Millisecond)
		}
		return cmd, addr, done
	}
	waitExit := func(done chan error, how string) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server after %s exited with %v, want a clean exit", how, err)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("server still running 15 s after %s", how)
		}
	}

	_, addr, done := start()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	db, err := sql.Open("mysql", "root@tcp("+addr+")/")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE DATABASE sd", "CREATE TABLE sd.t (a INT PRIMARY KEY)", "INSERT INTO sd.t VALUES (1)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "SHUTDOWN"); err != nil {
		t.Fatalf("root SHUTDOWN: %v, want OK", err)
	}
	db.Close()
	waitExit(done, "SHUTDOWN")

	// COM_SHUTDOWN, through MariaDB's admin tool.
	admin, err := exec.LookPath("mariadb-admin")
	if err != nil {
		admin, err = exec.LookPath("mysqladmin")
	}
	testutil.RequireInstalled(t, "mariadb-admin (Debian's mariadb-client)", err == nil)
	_, addr, done = start()
	host, port, _ := splitHostPort(addr)
	out, err := exec.Command(admin, "-h", host, "-P", port, "-uroot", "shutdown").CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb-admin shutdown: %v\n%s", err, out)
	}
	waitExit(done, "COM_SHUTDOWN")

	// Nothing written before is lost.
	_, addr, done = start()
	db, _ = sql.Open("mysql", "root@tcp("+addr+")/")
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sd.t").Scan(&n); err != nil || n != 1 {
		t.Errorf("rows after two shutdowns: %d (%v), want 1", n, err)
	}
	if _, err := db.ExecContext(ctx, "SHUTDOWN"); err != nil {
		t.Fatal(err)
	}
	waitExit(done, "the last SHUTDOWN")
}

func splitHostPort(addr string) (string, string, error) {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[:i], addr[i+1:], nil
		}
	}
	return addr, "", fmt.Errorf("no port in %q", addr)
}
