package crash

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"lockstep/internal/testutil"
)

// TestRestartKeepsData writes a database, ends the server with SIGTERM
// (Stop) or SIGKILL (Kill), restarts it on the same data directory and
// checks that exactly the committed data is there: a transaction left open
// at the stop or kill must be gone.
func TestRestartKeepsData(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a lockstep server")
	}
	for _, how := range []string{"Stop", "Kill"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*stepTimeout)
			defer cancel()
			s := testutil.StartServer(t)
			db := openDB(t, s, "")
			mustExec(t, ctx, db,
				"CREATE DATABASE keep",
				"CREATE TABLE keep.t (id INT PRIMARY KEY, v VARCHAR(20))",
				"INSERT INTO keep.t VALUES (1, 'one'), (2, 'two'), (3, 'three')",
				"UPDATE keep.t SET v = 'TWO' WHERE id = 2",
				"DELETE FROM keep.t WHERE id = 3")
			committed := pin(t, ctx, db)
			mustExec(t, ctx, committed, "BEGIN", "INSERT INTO keep.t VALUES (4, 'four')", "COMMIT")
			open := pin(t, ctx, db)
			mustExec(t, ctx, open, "BEGIN",
				"INSERT INTO keep.t VALUES (5, 'uncommitted')",
				"UPDATE keep.t SET v = 'uncommitted' WHERE id = 1")
			committed.Close()
			want := []string{"1:one", "2:TWO", "4:four"}
			wantRows(t, ctx, db, "before the "+how, want)

			if how == "Stop" {
				if err := s.Stop(); err != nil {
					t.Fatalf("Stop: %v\n--- server output ---\n%s", err, s.Stderr())
				}
			} else {
				s.Kill()
			}
			open.Close()
			db.Close()

			s2 := testutil.StartServer(t, "--datadir", s.Datadir)
			db2 := openDB(t, s2, "")
			defer db2.Close()
			dbs, err := dbColumn(ctx, db2, "SHOW DATABASES")
			if err != nil {
				t.Fatalf("after %s and restart: SHOW DATABASES: %v", how, err)
			}
			if !slices.Contains(dbs, "keep") {
				t.Fatalf("after %s and restart: database keep is missing (SHOW DATABASES: %v)", how, dbs)
			}
			wantRows(t, ctx, db2, "after "+how+" and restart", want)
		})
	}
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func mustExec(t *testing.T, ctx context.Context, db execer, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// pin returns one connection of db, to hold a transaction on.
func pin(t *testing.T, ctx context.Context, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatalf("db.Conn: %v", err)
	}
	return c
}

// wantRows fails the test unless keep.t holds want ("id:v", by id).
func wantRows(t *testing.T, ctx context.Context, db *sql.DB, when string, want []string) {
	t.Helper()
	got, err := dbColumn(ctx, db, "SELECT CONCAT(id, ':', v) FROM keep.t ORDER BY id")
	if err != nil {
		t.Fatalf("%s: reading keep.t: %v", when, err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: keep.t holds %v, want %v", when, got, want)
	}
}

// dbColumn runs query on a connection of db and returns its first column.
func dbColumn(ctx context.Context, db *sql.DB, query string) ([]string, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return column(ctx, c, "", query)
}
