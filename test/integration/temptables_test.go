package integration

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// TestTemporaryTables: CREATE TEMPORARY TABLE (was 1235) as MySQL 8 has
// it: visible to its session only, hiding a permanent table of the same
// name (reads and writes, prepared and text, on the fast path's shapes
// too), not listed by SHOW TABLES, transactional, writable in a READ ONLY
// transaction, its DDL neither logged nor committing the open
// transaction, gone when the session ends — and absent after kill -9,
// with the permanent table intact and the log never naming it.
func TestTemporaryTables(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s1 := testutil.StartServer(t)
	db := s1.DB(t, "")
	conn := func() *sql.Conn {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := conn(), conn()
	exec := func(c *sql.Conn, q string, args ...any) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rows := func(c *sql.Conn, q string, args ...any) string {
		t.Helper()
		r, err := c.QueryContext(ctx, q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer r.Close()
		cols, _ := r.Columns()
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		var out []string
		for r.Next() {
			if err := r.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			parts := make([]string, len(vals))
			for i, v := range vals {
				parts[i] = v.String
			}
			out = append(out, strings.Join(parts, ","))
		}
		return strings.Join(out, ";")
	}
	want := func(c *sql.Conn, wantRows, q string, args ...any) {
		t.Helper()
		if got := rows(c, q, args...); got != wantRows {
			t.Fatalf("%s %v = %q, want %q", q, args, got, wantRows)
		}
	}

	exec(a, "CREATE DATABASE tt")
	exec(a, "USE tt")
	exec(b, "USE tt")
	exec(a, "CREATE TABLE p (id INT PRIMARY KEY, v INT)")
	exec(a, "INSERT INTO p VALUES (1, 10)")
	// Warm the fast path's plans for the permanent table first.
	for i := 0; i < 2; i++ {
		want(a, "10", "SELECT v FROM p WHERE id = ?", 1)
		want(a, "10", "SELECT v FROM p WHERE id = 1")
	}
	exec(a, "CREATE TEMPORARY TABLE p (id INT PRIMARY KEY, v INT)")
	exec(a, "INSERT INTO p VALUES (2, 20)")
	want(a, "2,20", "SELECT * FROM p")
	want(b, "1,10", "SELECT * FROM p")
	want(a, "", "SELECT v FROM p WHERE id = ?", 1)
	want(a, "20", "SELECT v FROM p WHERE id = ?", 2)
	want(a, "", "SELECT v FROM p WHERE id = 1")
	exec(a, "UPDATE p SET v = v + 1 WHERE id = ?", 2)
	exec(a, "UPDATE p SET v = v + 1 WHERE id = 1") // no such row in the temporary table
	want(a, "21", "SELECT v FROM p WHERE id = 2")
	want(b, "1,10", "SELECT * FROM p")
	want(a, "p", "SHOW TABLES")
	want(a, "1", "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'tt'")

	// Transactional, and CREATE TEMPORARY TABLE does not commit.
	exec(a, "BEGIN")
	exec(a, "INSERT INTO p VALUES (3, 30)")
	exec(a, "CREATE TEMPORARY TABLE q (x INT)")
	exec(a, "ROLLBACK")
	want(a, "2,21", "SELECT * FROM p")
	exec(a, "START TRANSACTION READ ONLY")
	exec(a, "INSERT INTO q VALUES (1)")
	exec(a, "COMMIT")
	want(a, "1", "SELECT x FROM q")
	// DDL on it, not logged.
	exec(a, "ALTER TABLE p ADD COLUMN w INT")
	exec(a, "CREATE INDEX pv ON p (v)")
	want(a, "2,21,", "SELECT * FROM p WHERE v = 21")
	if _, err := a.ExecContext(ctx, "CREATE TEMPORARY TABLE p (id INT)"); err == nil {
		t.Fatal("a second temporary table p was created")
	}

	// DROP TABLE drops the temporary table first.
	exec(a, "DROP TABLE p")
	want(a, "1,10", "SELECT * FROM p")
	_, err := a.ExecContext(ctx, "DROP TEMPORARY TABLE p")
	expectErrno(t, err, 1051, "DROP TEMPORARY TABLE of a permanent table")
	want(a, "1,10", "SELECT * FROM p")

	// Gone with the session.
	exec(b, "CREATE TEMPORARY TABLE gone (x INT)")
	exec(b, "INSERT INTO gone VALUES (1)")
	// Returning ErrBadConn from Raw makes the pool close the connection
	// (Close would keep it for reuse).
	_ = b.Raw(func(any) error { return driver.ErrBadConn })
	b.Close()
	c := conn()
	exec(c, "USE tt")
	_, err = c.ExecContext(ctx, "SELECT * FROM gone")
	expectErrno(t, err, erNoSuchTable, "a closed session's temporary table")

	s1.Kill()
	s2 := testutil.StartServer(t, "--datadir", s1.Datadir)
	db = s2.DB(t, "")
	d := conn()
	exec(d, "USE tt")
	want(d, "1,10", "SELECT * FROM p")
	want(d, "p", "SHOW TABLES")
	if strings.Contains(s2.Stderr(), "failed again") {
		t.Errorf("recovery replayed DDL of temporary tables:\n%s", s2.Stderr())
	}
}
