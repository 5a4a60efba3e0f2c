package integration

import (
	"context"
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
	conn := func(name string) *session {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return &session{t: t, ctx: ctx, name: name, c: c}
	}
	a, b := conn("a"), conn("b")
	want := func(s *session, wantRows, q string, args ...any) {
		t.Helper()
		if got := s.fkRows(q, args...); got != wantRows {
			t.Fatalf("%s: %s %v = %q, want %q", s.name, q, args, got, wantRows)
		}
	}

	a.exec("CREATE DATABASE tt")
	a.exec("USE tt")
	b.exec("USE tt")
	a.exec("CREATE TABLE p (id INT PRIMARY KEY, v INT)")
	a.exec("INSERT INTO p VALUES (1, 10)")
	// Warm the fast path's plans for the permanent table first.
	for i := 0; i < 2; i++ {
		want(a, "10", "SELECT v FROM p WHERE id = ?", 1)
		want(a, "10", "SELECT v FROM p WHERE id = 1")
	}
	a.exec("CREATE TEMPORARY TABLE p (id INT PRIMARY KEY, v INT)")
	a.exec("INSERT INTO p VALUES (2, 20)")
	want(a, "2,20", "SELECT * FROM p")
	want(b, "1,10", "SELECT * FROM p")
	want(a, "", "SELECT v FROM p WHERE id = ?", 1)
	want(a, "20", "SELECT v FROM p WHERE id = ?", 2)
	want(a, "", "SELECT v FROM p WHERE id = 1")
	a.exec("UPDATE p SET v = v + 1 WHERE id = ?", 2)
	a.exec("UPDATE p SET v = v + 1 WHERE id = 1") // no such row in the temporary table
	want(a, "21", "SELECT v FROM p WHERE id = 2")
	want(b, "1,10", "SELECT * FROM p")
	want(a, "p", "SHOW TABLES")
	want(a, "1", "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'tt'")

	// Transactional, and CREATE TEMPORARY TABLE does not commit.
	a.exec("BEGIN")
	a.exec("INSERT INTO p VALUES (3, 30)")
	a.exec("CREATE TEMPORARY TABLE q (x INT)")
	a.exec("ROLLBACK")
	want(a, "2,21", "SELECT * FROM p")
	a.exec("START TRANSACTION READ ONLY")
	a.exec("INSERT INTO q VALUES (1)")
	a.exec("COMMIT")
	want(a, "1", "SELECT x FROM q")
	// DDL on it, not logged.
	a.exec("ALTER TABLE p ADD COLUMN w INT")
	a.exec("CREATE INDEX pv ON p (v)")
	want(a, "2,21,NULL", "SELECT * FROM p WHERE v = 21")
	if err := a.execErr("CREATE TEMPORARY TABLE p (id INT)"); err == nil {
		t.Fatal("a second temporary table p was created")
	}

	// DROP TABLE drops the temporary table first.
	a.exec("DROP TABLE p")
	want(a, "1,10", "SELECT * FROM p")
	a.mustFail(1051, "DROP TEMPORARY TABLE p") // of a permanent table
	want(a, "1,10", "SELECT * FROM p")

	// Gone with the session.
	b.exec("CREATE TEMPORARY TABLE gone (x INT)")
	b.exec("INSERT INTO gone VALUES (1)")
	// Returning ErrBadConn from Raw makes the pool close the connection
	// (Close would keep it for reuse).
	_ = b.c.Raw(func(any) error { return driver.ErrBadConn })
	b.c.Close()
	c := conn("c")
	c.exec("USE tt")
	c.mustFail(erNoSuchTable, "SELECT * FROM gone") // a closed session's temporary table

	s1.Kill()
	s2 := testutil.StartServer(t, "--datadir", s1.Datadir)
	db = s2.DB(t, "")
	d := conn("d")
	d.exec("USE tt")
	want(d, "1,10", "SELECT * FROM p")
	want(d, "p", "SHOW TABLES")
	if strings.Contains(s2.Stderr(), "failed again") || strings.Contains(s2.Stderr(), "recovery: note:") {
		t.Errorf("recovery replayed DDL of temporary tables:\n%s", s2.Stderr())
	}
}
