package server

import (
	"context"
	"io"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/config"
	"lockstep/internal/sqlfront"
	"lockstep/internal/txlog"
)

// localServer is a server's SQL front end and commit path without the
// listener: statements run in process.
type localServer struct {
	t      *testing.T
	fe     *sqlfront.Frontend
	d      *durable
	ctx    *sql.Context
	closed bool
}

// openLocal recovers cfg.Datadir and opens the commit path; fs, when not
// nil, is the log's file layer. It is closed when the test ends.
func openLocal(t *testing.T, cfg config.Config, fs txlog.FS) *localServer {
	t.Helper()
	fe, err := sqlfront.New(sqlfront.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := openDurableFS(cfg, fe, io.Discard, fs)
	if err != nil {
		fe.Close()
		t.Fatalf("open %s: %v", cfg.Datadir, err)
	}
	s := &localServer{t: t, fe: fe, d: d, ctx: fe.NewLocalContext(context.Background())}
	t.Cleanup(s.close)
	return s
}

func (s *localServer) close() {
	if s.closed {
		return
	}
	s.closed = true
	if err := s.d.close(); err != nil {
		s.t.Logf("closing the log: %v", err)
	}
	s.fe.Close()
}

// query runs q and returns its rows, as one command of the session (the
// protocol handler's lifecycle: logged DDL holds a lock until the end).
func (s *localServer) query(q string) ([]sql.Row, error) {
	ctx := s.ctx.WithQuery(q)
	if err := sql.SessionCommandBegin(ctx.Session); err != nil {
		return nil, err
	}
	defer sql.SessionCommandEnd(ctx.Session)
	_, iter, _, err := s.fe.Engine.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	rows, err := sql.RowIterToRows(ctx, iter)
	return rows, err
}

func (s *localServer) exec(qs ...string) {
	s.t.Helper()
	for _, q := range qs {
		if _, err := s.query(q); err != nil {
			s.t.Fatalf("%s: %v", q, err)
		}
	}
}
