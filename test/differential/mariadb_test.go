package differential

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// mariadb is a throwaway MariaDB server for the test: its own data directory
// under t.TempDir(), loopback TCP on a free port, stopped when the test ends.
type mariadb struct {
	addr   string
	client string // the mariadb CLI
	sock   string // root's Unix socket
}

// root runs statements as MariaDB's root (over the socket), failing the
// test on an error.
func (m *mariadb) root(t *testing.T, q string) {
	t.Helper()
	if out, err := exec.Command(m.client, "--no-defaults", "-S", m.sock, "-uroot", "-e", q).CombinedOutput(); err != nil {
		t.Fatalf("MariaDB root: %s: %v\n%s", q, err, out)
	}
}

// findTool looks a MariaDB program up on PATH and in the sbin directories
// Debian installs mariadbd in (not on a normal user's PATH); a missing one
// fails the test under CI and skips it otherwise.
func findTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	for _, dir := range []string{"/usr/sbin", "/usr/local/sbin"} {
		if err == nil {
			break
		}
		q := filepath.Join(dir, name)
		if _, serr := os.Stat(q); serr == nil {
			p, err = q, nil
		}
	}
	testutil.RequireInstalled(t, name+" (Debian's mariadb-server)", err == nil)
	return p
}

// startMariaDB installs a fresh data directory and starts mariadbd with an
// account diff@127.0.0.1 (no password, every privilege).
func startMariaDB(t *testing.T, extra ...string) *mariadb {
	t.Helper()
	mariadbd := findTool(t, "mariadbd")
	installDB := findTool(t, "mariadb-install-db")
	client := findTool(t, "mariadb")

	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	sock := filepath.Join(dir, "mdb.sock")
	if out, err := exec.Command(installDB, "--no-defaults", "--datadir="+data,
		"--user="+currentUser(), "--auth-root-authentication-method=normal",
		"--skip-test-db").CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	// The free port is picked before mariadbd binds it: another test may
	// take it meanwhile (the suite's packages run in parallel) and mariadbd
	// then exits. It is started again on another port, three times at most.
start:
	for attempt := 1; ; attempt++ {
		port, err := testutil.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(mariadbd, "--no-defaults", "--datadir="+data, "--socket="+sock,
			"--port="+strconv.Itoa(port), "--bind-address=127.0.0.1", "--skip-name-resolve",
			"--user="+currentUser(), "--pid-file="+filepath.Join(dir, "mdb.pid"),
			"--log-error="+filepath.Join(dir, "mdb.err"), "--innodb-buffer-pool-size=64M",
			"--skip-log-bin")
		cmd.Args = append(cmd.Args, extra...)
		if err := cmd.Start(); err != nil {
			t.Fatalf("mariadbd: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			select {
			case <-exited:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
			}
		})
		deadline := time.Now().Add(60 * time.Second)
		for {
			out, err := exec.Command(client, "--no-defaults", "-S", sock, "-uroot", "-e",
				"CREATE USER IF NOT EXISTS 'diff'@'127.0.0.1'; GRANT ALL PRIVILEGES ON *.* TO 'diff'@'127.0.0.1'").CombinedOutput()
			if err == nil {
				return &mariadb{addr: "127.0.0.1:" + strconv.Itoa(port), client: client, sock: sock}
			}
			logTail, _ := os.ReadFile(filepath.Join(dir, "mdb.err"))
			select {
			case <-exited:
				if attempt < 3 {
					t.Logf("mariadbd exited (attempt %d, port %d); starting it again\n%s", attempt, port, logTail)
					continue start
				}
				t.Fatalf("MariaDB exited at start, three times:\n%s", logTail)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("MariaDB did not start: %v\n%s\n%s", err, out, logTail)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	out, err := exec.Command("id", "-un").Output()
	if err != nil {
		return "root"
	}
	return strings.TrimSpace(string(out))
}
