package compare

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// server is a target while compare runs: its DSN and, for a server compare
// started, the process (to watch its CPU and to stop it).
type server struct {
	spec Spec
	dsn  string
	pid  int // 0: not ours (a dsn target), nothing to watch or stop
	stop func() error
}

const (
	readyTimeout = 2 * time.Minute
	stopTimeout  = 2 * time.Minute
)

// start brings a target up. dir is a fresh directory for its data and logs.
func start(ctx context.Context, s Spec, dir string) (*server, error) {
	switch s.Kind {
	case DSN:
		return &server{spec: s, dsn: s.DSN, stop: func() error { return nil }}, nil
	case Lockstep:
		return startLockstep(ctx, s, dir)
	case MariaDB:
		return startMariaDB(ctx, s, dir)
	}
	return nil, fmt.Errorf("target %s: unknown kind %v", s.Name, s.Kind)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// process runs a server command with its output in logPath; its stop sends
// SIGTERM and waits (SIGKILL after stopTimeout).
type process struct {
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error
}

func spawn(logPath, bin string, args ...string) (*process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p := &process{cmd: exec.Command(bin, args...), log: log, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = log, log
	setProcAttr(p.cmd)
	if err := p.cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *process) stop() error {
	if p.exited() {
		return fmt.Errorf("exited early: %v", p.err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // it may be exiting
	select {
	case <-p.done:
		return nil
	case <-time.After(stopTimeout):
		p.cmd.Process.Kill() //nolint:errcheck // best effort
		<-p.done
		return errors.New("did not stop within 2 minutes of SIGTERM; killed")
	}
}

// waitReady polls SELECT 1 on dsn until it answers, the process exits or
// the time runs out.
func waitReady(ctx context.Context, dsn string, p *process, logPath string) error {
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		return err
	}
	mc.DBName = ""
	mc.Timeout = 2 * time.Second
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	deadline := time.Now().Add(readyTimeout)
	for {
		var one int
		err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
		if err == nil {
			return nil
		}
		if p.exited() {
			return fmt.Errorf("the server exited (%v); see %s", p.err, logPath)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not answering after %s (%v); see %s", readyTimeout, err, logPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func startLockstep(ctx context.Context, s Spec, dir string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	datadir := filepath.Join(dir, "data")
	args := append([]string{"serve", "--datadir", datadir, "--port", strconv.Itoa(port), "--bind-address", "127.0.0.1"}, s.Args...)
	logPath := filepath.Join(dir, "server.log")
	p, err := spawn(logPath, s.Binary, args...)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", s.Name, err)
	}
	dsn := fmt.Sprintf("root@tcp(127.0.0.1:%d)/sbtest", port)
	if err := waitReady(ctx, dsn, p, logPath); err != nil {
		p.stop() //nolint:errcheck // reporting the first error
		return nil, fmt.Errorf("target %s: %s %s: %w", s.Name, s.Binary, strings.Join(args, " "), err)
	}
	for _, g := range s.Globals {
		name, val, _ := strings.Cut(g, "=")
		if err := execSQL(ctx, fmt.Sprintf("root@tcp(127.0.0.1:%d)/", port), "SET GLOBAL "+name+" = "+val); err != nil {
			p.stop() //nolint:errcheck // reporting the first error
			return nil, fmt.Errorf("target %s: @%s: %w", s.Name, g, err)
		}
	}
	return &server{spec: s, dsn: dsn, pid: p.cmd.Process.Pid, stop: func() error {
		err := p.stop()
		if rerr := os.RemoveAll(datadir); err == nil {
			err = rerr
		}
		return err
	}}, nil
}

// mariadbConfig is scripts/mariadb-lib.sh's my.cnf with the binary log
// (../shared/mariadb-baseline's settings): InnoDB's redo log and the binary
// log fsynced at every commit (innodb_flush_log_at_trx_commit=1,
// sync_binlog=1), lockstep's durability; a 2 GB buffer pool that holds the
// benchmark's tables; extra lines after everything else.
func mariadbConfig(dir string, port int, extra []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[mysqld]\nuser=%s\ndatadir=%s\nsocket=%s\npid-file=%s\nlog-error=%s\nport=%d\n",
		runUser(), filepath.Join(dir, "data"), filepath.Join(dir, "mdb.sock"), filepath.Join(dir, "mdb.pid"), filepath.Join(dir, "mdb.err"), port)
	b.WriteString("bind-address=127.0.0.1\nskip-name-resolve\nmax_connections=512\n")
	b.WriteString("innodb_flush_log_at_trx_commit=1\ninnodb_buffer_pool_size=2G\n")
	fmt.Fprintf(&b, "log-bin=%s\nbinlog_format=ROW\nsync_binlog=1\nserver_id=1\n", filepath.Join(dir, "binlog"))
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// lookMariaDB finds mariadbd and mariadb-install-db (in /usr/sbin too),
// installing Debian's mariadb-server with apt-get when they are missing.
func lookMariaDB(ctx context.Context, logPath string) (mariadbd, installDB string, err error) {
	find := func() (string, string, error) {
		var paths [2]string
		for i, n := range []string{"mariadbd", "mariadb-install-db"} {
			p, err := exec.LookPath(n)
			if err != nil {
				for _, d := range []string{"/usr/sbin", "/sbin", "/usr/bin"} {
					if _, serr := os.Stat(filepath.Join(d, n)); serr == nil {
						p, err = filepath.Join(d, n), nil
						break
					}
				}
			}
			if err != nil {
				return "", "", err
			}
			paths[i] = p
		}
		return paths[0], paths[1], nil
	}
	if a, b, err := find(); err == nil {
		return a, b, nil
	}
	log, err := os.Create(logPath)
	if err != nil {
		return "", "", err
	}
	defer log.Close()
	for _, args := range [][]string{{"update", "-qq"}, {"install", "-y", "-qq", "mariadb-server"}} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return "", "", fmt.Errorf("mariadbd not found, and apt-get %s failed (%v); see %s", strings.Join(args, " "), err, logPath)
		}
	}
	return find()
}

func startMariaDB(ctx context.Context, s Spec, dir string) (*server, error) {
	mariadbd, installDB, err := lookMariaDB(ctx, filepath.Join(dir, "apt.log"))
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", s.Name, err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cnf := filepath.Join(dir, "my.cnf")
	if err := os.WriteFile(cnf, []byte(mariadbConfig(dir, port, s.Args)), 0o644); err != nil {
		return nil, err
	}
	datadir := filepath.Join(dir, "data")
	// root@localhost (the socket) with an empty password rather than
	// unix_socket authentication, which go-sql-driver does not speak.
	install := exec.CommandContext(ctx, installDB, "--no-defaults", "--datadir="+datadir, "--user="+runUser(), "--auth-root-authentication-method=normal")
	if out, err := install.CombinedOutput(); err != nil {
		os.WriteFile(filepath.Join(dir, "install.log"), out, 0o644) //nolint:errcheck // the error says more
		return nil, fmt.Errorf("target %s: mariadb-install-db: %v; see %s", s.Name, err, filepath.Join(dir, "install.log"))
	}
	logPath := filepath.Join(dir, "mdb.err")
	p, err := spawn(filepath.Join(dir, "mariadbd.out"), mariadbd, "--defaults-file="+cnf)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", s.Name, err)
	}
	fail := func(err error) (*server, error) {
		p.stop() //nolint:errcheck // reporting the first error
		return nil, fmt.Errorf("target %s: %w", s.Name, err)
	}
	sock := "root@unix(" + filepath.Join(dir, "mdb.sock") + ")/"
	if err := waitReady(ctx, sock, p, logPath); err != nil {
		return fail(err)
	}
	// The benchmark connects over TCP, as to lockstep.
	if err := execSQL(ctx, sock, "CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY 'bench'",
		"GRANT ALL PRIVILEGES ON *.* TO 'bench'@'127.0.0.1'"); err != nil {
		return fail(err)
	}
	return &server{spec: s, dsn: fmt.Sprintf("bench:bench@tcp(127.0.0.1:%d)/sbtest", port), pid: p.cmd.Process.Pid, stop: func() error {
		err := p.stop()
		if rerr := os.RemoveAll(datadir); err == nil {
			err = rerr
		}
		return err
	}}, nil
}

// runUser is the user mariadbd runs as: this process's (root when root).
func runUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "root"
}

func execSQL(ctx context.Context, dsn string, stmts ...string) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}
