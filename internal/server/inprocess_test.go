package server

import (
	"context"
	gosql "database/sql"
	"errors"
	"strconv"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"lockstep/internal/config"
)

// procServer is a server run by Run in this test process.
type procServer struct {
	addr    string
	datadir string
	db      *gosql.DB // no default database
	stop    func() error
}

// startInProcess runs a server with a fresh datadir on a free port in this
// process. edit, if set, adjusts the configuration. The server is stopped
// when the test ends (or earlier with stop, which reports Run's error).
func startInProcess(t testing.TB, edit func(*config.Config)) *procServer {
	t.Helper()
	cfg := config.Default()
	cfg.Datadir = t.TempDir()
	cfg.Port = 0
	if edit != nil {
		edit(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, func(addr string) { ready <- addr }) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("server did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("server did not start within 60s")
	}
	db, err := gosql.Open("mysql", "root@tcp("+addr+")/")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	stopped := false
	s := &procServer{addr: addr, datadir: cfg.Datadir, db: db}
	s.stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		db.Close()
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			return errors.New("server did not stop within 30s")
		}
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("stopping the server on %s: %v", addr, err)
		}
	})
	return s
}

func (s *procServer) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := s.db.Exec(q, args...); err != nil {
		t.Fatalf("%s on %s: %v", q, s.addr, err)
	}
}

// str returns the single value q selects, as a string ("NULL" for NULL).
func (s *procServer) str(t *testing.T, q string) string {
	t.Helper()
	return queryString(t, s.db, q)
}

type querier interface {
	QueryRowContext(context.Context, string, ...any) *gosql.Row
}

func queryString(t *testing.T, db querier, q string) string {
	t.Helper()
	var v gosql.NullString
	if err := db.QueryRowContext(context.Background(), q).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if !v.Valid {
		return "NULL"
	}
	return v.String
}

// status returns one counter of SHOW [GLOBAL] STATUS.
func (s *procServer) status(t *testing.T, scope, name string) int64 {
	t.Helper()
	var k, v string
	if err := s.db.QueryRow("SHOW "+scope+" STATUS LIKE '"+name+"'").Scan(&k, &v); err != nil {
		t.Fatalf("SHOW %s STATUS LIKE '%s' on %s: %v", scope, name, s.addr, err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s = %q: %v", name, v, err)
	}
	return n
}

// variable returns one row of SHOW [GLOBAL] VARIABLES.
func (s *procServer) variable(t *testing.T, scope, name string) string {
	t.Helper()
	var k, v string
	if err := s.db.QueryRow("SHOW "+scope+" VARIABLES LIKE '"+name+"'").Scan(&k, &v); err != nil {
		t.Fatalf("SHOW %s VARIABLES LIKE '%s' on %s: %v", scope, name, s.addr, err)
	}
	return v
}

// newSession opens a new connection (not one from the pool, which may
// predate a SET GLOBAL), closed when the test ends.
func (s *procServer) newSession(t *testing.T) *gosql.Conn {
	t.Helper()
	db, err := gosql.Open("mysql", "root@tcp("+s.addr+")/")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		db.Close()
		t.Fatalf("connect to %s: %v", s.addr, err)
	}
	t.Cleanup(func() { conn.Close(); db.Close() })
	return conn
}
