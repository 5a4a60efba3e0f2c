// Package testutil runs the real lockstep binary for integration tests:
//
//	s := testutil.StartServer(t)
//	db := s.DB(t, "")
//	db.Exec("CREATE DATABASE d")
//
// The binary is built once per test process (with -race when the tests run
// with -race). Set LOCKSTEP_BIN to test a binary built elsewhere instead.
package testutil

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // registers the "mysql" driver
)

const (
	startTimeout = 30 * time.Second // until the server answers SELECT 1
	stopTimeout  = 10 * time.Second // SIGTERM to exit, before SIGKILL
)

var build struct {
	once sync.Once
	path string
	err  error
}

// BuildBinary builds ./cmd/lockstep once per test process and returns the
// binary's path. A failed build fails the test with the compiler's output.
// If LOCKSTEP_BIN is set, that binary is used and nothing is built.
func BuildBinary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() { build.path, build.err = buildBinary() })
	if build.err != nil {
		t.Fatalf("testutil: %v", build.err)
	}
	return build.path
}

func buildBinary() (string, error) {
	if bin := os.Getenv("LOCKSTEP_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			return "", fmt.Errorf("LOCKSTEP_BIN=%s: %v", bin, err)
		}
		if fi, err := os.Stat(abs); err != nil || fi.IsDir() {
			return "", fmt.Errorf("LOCKSTEP_BIN=%s is not a file", bin)
		}
		return abs, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	removeStaleBuilds()
	// The directory name carries our pid so that a later test process can
	// remove it once we are gone (a package-level build has no test to hang
	// a cleanup on).
	dir, err := os.MkdirTemp("", fmt.Sprintf("lockstep-testbin-%d-", os.Getpid()))
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "lockstep")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "./cmd/lockstep")
	cmd := exec.Command(goTool(), args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin, nil
}

// removeStaleBuilds deletes binaries left in the temp dir by test processes
// that have exited.
func removeStaleBuilds() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "lockstep-testbin-*"))
	for _, d := range dirs {
		f := strings.SplitN(strings.TrimPrefix(filepath.Base(d), "lockstep-testbin-"), "-", 2)
		pid, err := strconv.Atoi(f[0])
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		os.RemoveAll(d)
	}
}

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

func goTool() string {
	if p := os.Getenv("GOROOT"); p != "" {
		if g := filepath.Join(p, "bin", "go"); fileExists(g) {
			return g
		}
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// RequireInstalled is for a test that needs an outside program (a client,
// MariaDB): when ok is false it fails the test under CI (the README's test
// command installs what is named) and skips it otherwise, naming what is
// missing.
func RequireInstalled(t testing.TB, what string, ok bool) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed (scripts/test.sh installs it)", what)
	}
	t.Skipf("%s not installed", what)
}

// ModuleRoot returns the directory holding go.mod, found by walking up from
// the working directory (a test's working directory is its package).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fileExists(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testutil: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Server is a lockstep process started by StartServer.
type Server struct {
	Addr    string // host:port to connect to, e.g. 127.0.0.1:41234
	Port    int
	Datadir string

	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{} // closed when the process has exited and waitErr is set

	waitErr error

	mu        sync.Mutex
	requested bool // Stop or Kill was called: the exit is expected

	stopOnce sync.Once
	stopErr  error
}

// StartServer starts `lockstep serve` on a free port of 127.0.0.1 with a fresh
// data directory under t.TempDir(), and returns once a client can run
// SELECT 1. When the test ends the server is stopped with SIGTERM (SIGKILL
// after 10 s); the test fails if it had exited on its own or does not shut
// down cleanly, and the server's output is logged if the test failed.
//
// extraArgs are appended to the command line and so override the defaults:
// pass "--datadir", dir to restart on an existing data directory (after
// Kill, say), or "--port", "N" for a fixed port. Datadir and Port follow them.
func StartServer(t testing.TB, extraArgs ...string) *Server {
	t.Helper()
	return StartServerBinary(t, "", extraArgs...)
}

// StartServerBinary is StartServer with the lockstep binary at bin (""
// is BuildBinary's): a test comparing two builds in one run.
func StartServerBinary(t testing.TB, bin string, extraArgs ...string) *Server {
	t.Helper()
	s, err := start(t, bin, extraArgs)
	if err != nil {
		t.Fatalf("testutil: %v", err)
	}
	return s
}

// errPortTaken is returned when another process took the chosen port before
// the server could bind it; StartServer then retries on another port.
var errPortTaken = errors.New("port taken")

func start(t testing.TB, bin string, extraArgs []string) (*Server, error) {
	if bin == "" {
		bin = BuildBinary(t)
	}
	datadir, dirGiven := lastFlag(extraArgs, "datadir")
	if !dirGiven {
		datadir = filepath.Join(t.TempDir(), "data")
	}
	portArg, portGiven := lastFlag(extraArgs, "port")
	for attempt := 1; ; attempt++ {
		port := 0
		if portGiven {
			p, err := strconv.Atoi(portArg)
			if err != nil {
				return nil, fmt.Errorf("bad --port %q in extraArgs", portArg)
			}
			port = p
		} else {
			p, err := FreePort()
			if err != nil {
				return nil, err
			}
			port = p
		}
		args := []string{"serve", "--datadir", datadir, "--port", strconv.Itoa(port), "--bind-address", "127.0.0.1"}
		args = append(args, extraArgs...)
		s, err := launch(t, bin, args, datadir, port)
		if errors.Is(err, errPortTaken) && !portGiven && attempt < 5 {
			continue
		}
		return s, err
	}
}

// lastFlag returns the value of the last --name VALUE or --name=VALUE in args.
func lastFlag(args []string, name string) (string, bool) {
	val, found := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--"+name && i+1 < len(args):
			val, found = args[i+1], true
			i++
		case strings.HasPrefix(a, "--"+name+"="):
			val, found = strings.TrimPrefix(a, "--"+name+"="), true
		}
	}
	return val, found
}

// FreePort asks the kernel for a free port on 127.0.0.1 and releases it.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

var readyLine = regexp.MustCompile(`ready for connections on (\S+) \(datadir`)

func launch(t testing.TB, bin string, args []string, datadir string, port int) (*Server, error) {
	s := &Server{
		Addr:    net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Port:    port,
		Datadir: datadir,
		out:     &syncBuffer{},
		done:    make(chan struct{}),
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout = s.out
	s.cmd.Stderr = s.out
	setProcAttr(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %v", bin, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()

	if err := s.waitReady(); err != nil {
		s.kill()
		out := s.Stderr()
		if strings.Contains(out, "address already in use") {
			return nil, fmt.Errorf("%w: %v", errPortTaken, err)
		}
		return nil, fmt.Errorf("lockstep %s: %v\n--- server output ---\n%s", strings.Join(args, " "), err, out)
	}

	t.Cleanup(func() {
		s.mu.Lock()
		requested := s.requested
		s.mu.Unlock()
		switch {
		case requested:
			s.Stop() // no-op unless the test stopped it and it is somehow alive
		case s.exited():
			t.Errorf("testutil: lockstep server on %s exited during the test: %v", s.Addr, s.waitErr)
		default:
			if err := s.Stop(); err != nil {
				t.Errorf("testutil: lockstep server on %s did not shut down cleanly: %v", s.Addr, err)
			}
		}
		if t.Failed() {
			t.Logf("testutil: lockstep server output (%s):\n%s", s.Addr, s.Stderr())
		}
	})
	return s, nil
}

// waitReady waits for the ready line on stderr and then for a successful
// SELECT 1, failing early if the process exits.
func (s *Server) waitReady() error {
	deadline := time.Now().Add(startTimeout)
	sawReady := false
	var lastErr error
	for time.Now().Before(deadline) {
		if s.exited() {
			return fmt.Errorf("exited before it was ready: %v", s.waitErr)
		}
		if !sawReady {
			m := readyLine.FindStringSubmatch(s.Stderr())
			if m == nil {
				lastErr = errors.New(`no "ready for connections" line yet`)
				time.Sleep(20 * time.Millisecond)
				continue
			}
			sawReady = true
			if s.Port == 0 { // --port 0: learn the port the server picked
				if _, p, err := net.SplitHostPort(m[1]); err == nil {
					s.Port, _ = strconv.Atoi(p)
					s.Addr = net.JoinHostPort("127.0.0.1", p)
				}
			}
		}
		if lastErr = s.ping(); lastErr == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %v: %v", startTimeout, lastErr)
}

func (s *Server) ping() error {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return err
	}
	c.Close()
	db, err := sql.Open("mysql", s.DSN("")+"&timeout=2s&readTimeout=5s&writeTimeout=5s")
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var one int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("SELECT 1: %v", err)
	}
	if one != 1 {
		return fmt.Errorf("SELECT 1 returned %d", one)
	}
	return nil
}

// DSN returns a go-sql-driver/mysql data source name for database db ("" for
// none) as root without password.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("root@tcp(%s)/%s?parseTime=true&multiStatements=true&interpolateParams=false", s.Addr, db)
}

// DB opens a connection pool to database db, checks that it connects, and
// closes it when the test ends.
func (s *Server) DB(t testing.TB, db string) *sql.DB {
	t.Helper()
	h, err := sql.Open("mysql", s.DSN(db))
	if err != nil {
		t.Fatalf("testutil: sql.Open: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.PingContext(ctx); err != nil {
		t.Fatalf("testutil: connecting to %s database %q: %v", s.Addr, db, err)
	}
	return h
}

// PID is the server process's id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Kill ends the server with SIGKILL, as a crash would, and waits for it.
func (s *Server) Kill() {
	s.mu.Lock()
	s.requested = true
	s.mu.Unlock()
	s.kill()
}

func (s *Server) kill() {
	s.cmd.Process.Kill()
	<-s.done
}

// Stop sends SIGTERM and waits for the server to exit, with SIGKILL after
// 10 s. It returns nil if the server exited with status 0, and otherwise an
// error describing how it ended. Later calls return the first call's result.
func (s *Server) Stop() error {
	s.mu.Lock()
	s.requested = true
	s.mu.Unlock()
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	if s.exited() {
		return s.exitResult()
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return s.exitResult()
	case <-time.After(stopTimeout):
		s.kill()
		return fmt.Errorf("still running %v after SIGTERM; killed", stopTimeout)
	}
}

func (s *Server) exitResult() error {
	if s.waitErr != nil {
		return fmt.Errorf("exit: %v", s.waitErr)
	}
	return nil
}

func (s *Server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Stderr returns everything the server wrote so far (stderr and stdout).
func (s *Server) Stderr() string { return s.out.String() }

// syncBuffer is a bytes.Buffer safe for a writer and readers at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
