package server

import (
	"context"
	gosql "database/sql"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRenameBetweenDatabasesLocks: a move between databases takes
// exclusive metadata locks on its names, as MySQL does. It waits for a
// transaction that read the table ("Waiting for table metadata lock") and
// runs when it commits; with lock_wait_timeout=1, a statement one of whose
// tables a transaction holds gives 1205 and renames nothing.
func TestRenameBetweenDatabasesLocks(t *testing.T) {
	s := mdlServer(t)
	s.exec(t, "CREATE DATABASE e")
	s.exec(t, "CREATE TABLE e.u (a INT PRIMARY KEY)")
	mdlWaitsFor(t, s, []string{"SELECT * FROM d.t"}, "RENAME TABLE d.t TO e.t")
	if got := s.str(t, "SELECT COUNT(*) FROM e.t"); got != "2" {
		t.Fatalf("e.t after the move: %s rows, want 2", got)
	}

	a, b := mdlConnect(t, s), mdlConnect(t, s)
	a.exec("BEGIN")
	a.exec("SELECT * FROM e.u")
	b.exec("SET SESSION lock_wait_timeout = 1")
	err := mdlDone(t, "RENAME", b.async("RENAME TABLE e.t TO d.t, e.u TO d.u"))
	if mysqlCode(err) != 1205 {
		t.Fatalf("RENAME of a table a transaction holds: %v, want 1205", err)
	}
	a.exec("COMMIT")
	got := s.str(t, "SELECT GROUP_CONCAT(CONCAT(TABLE_SCHEMA, '.', TABLE_NAME) ORDER BY TABLE_SCHEMA, TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ('d', 'e')")
	if got != "e.t,e.u" {
		t.Fatalf("after the timed-out RENAME the tables are %s, want e.t,e.u", got)
	}
}

// TestRenameBetweenDatabasesPlans: statements prepared against the old
// name fail with 1146 after the move (the fast path's plan, and
// go-mysql-server's, named the old database), the new name works, and a
// table privilege granted on the old name stays there, as in MySQL ("Any
// privileges granted specifically for a renamed table or view are not
// migrated to the new name").
func TestRenameBetweenDatabasesPlans(t *testing.T) {
	s := mdlServer(t)
	s.exec(t, "CREATE DATABASE e")
	s.exec(t, "CREATE USER u")
	s.exec(t, "GRANT SELECT ON d.t TO u")
	ctx := context.Background()
	c, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	point, err := c.PrepareContext(ctx, "SELECT b FROM d.t WHERE a = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer point.Close()
	scan, err := c.PrepareContext(ctx, "SELECT COUNT(*) FROM d.t WHERE b >= ?")
	if err != nil {
		t.Fatal(err)
	}
	defer scan.Close()
	var n int
	for i := 0; i < 3; i++ { // the fast path has a plan once executed
		if err := point.QueryRowContext(ctx, 2).Scan(&n); err != nil || n != 2 {
			t.Fatalf("before the move: %d, %v", n, err)
		}
		if err := scan.QueryRowContext(ctx, 0).Scan(&n); err != nil || n != 2 {
			t.Fatalf("before the move: %d, %v", n, err)
		}
	}
	if hits := s.status(t, "GLOBAL", "Lockstep_fast_path_hits"); hits == 0 {
		t.Fatal("the point read never took the fast path")
	}
	if _, err := c.ExecContext(ctx, "RENAME TABLE d.t TO e.t"); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*gosql.Stmt{point, scan} {
		if err := st.QueryRowContext(ctx, 2).Scan(&n); mysqlCode(err) != 1146 {
			t.Fatalf("a statement prepared against d.t after the move: %v, want 1146", err)
		}
	}
	moved, err := c.PrepareContext(ctx, "SELECT b FROM e.t WHERE a = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer moved.Close()
	for i := 0; i < 3; i++ {
		if err := moved.QueryRowContext(ctx, 2).Scan(&n); err != nil || n != 2 {
			t.Fatalf("e.t after the move: %d, %v", n, err)
		}
	}
	if _, err := c.ExecContext(ctx, "UPDATE e.t SET b = 20 WHERE a = 2"); err != nil {
		t.Fatal(err)
	}
	if err := moved.QueryRowContext(ctx, 2).Scan(&n); err != nil || n != 20 {
		t.Fatalf("e.t after an update: %d, %v", n, err)
	}

	// The grant stayed on d.t.
	grants := strings.Join(grantRows(t, s.db, "SHOW GRANTS FOR u"), "; ")
	if !strings.Contains(grants, "GRANT SELECT ON `d`.`t` TO `u`@`%`") || strings.Contains(grants, "`e`") {
		t.Fatalf("u's grants after the move: %s; want SELECT on d.t kept, none on e", grants)
	}
	udb, err := gosql.Open("mysql", "u@tcp("+s.addr+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer udb.Close()
	if err := udb.QueryRow("SELECT COUNT(*) FROM e.t").Scan(&n); mysqlCode(err) != 1142 {
		t.Fatalf("u reads the moved table: %v, want 1142 (the grant is on d.t)", err)
	}
}

// grantRows returns the rows of a SHOW GRANTS.
func grantRows(t *testing.T, db *gosql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

// TestRenameBetweenDatabasesGroup: a group secondary's applier replays
// the move and ends with the table, its rows and its key in the new
// database, and writes after the move reach it there.
func TestRenameBetweenDatabasesGroup(t *testing.T) {
	ms := startGroupInProcess(t, 2)
	p, sec := ms[0], ms[1]
	for _, q := range []string{
		"CREATE DATABASE a",
		"CREATE DATABASE b",
		"CREATE TABLE a.p (id INT PRIMARY KEY)",
		"INSERT INTO a.p VALUES (1), (2)",
		"CREATE TABLE a.t (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES a.p (id))",
		"INSERT INTO a.t VALUES (1, 1), (2, 2)",
		"RENAME TABLE a.t TO b.t",
		"INSERT INTO b.t VALUES (3, 1)",
	} {
		p.exec(t, q)
	}
	set := p.str(t, "SELECT @@gtid_executed")
	if got := sec.str(t, fmt.Sprintf("SELECT WAIT_FOR_EXECUTED_GTID_SET('%s', 20)", set)); got != "0" {
		t.Fatalf("the secondary did not execute %s: %s", set, got)
	}
	if got := sec.str(t, "SELECT GROUP_CONCAT(id ORDER BY id) FROM b.t"); got != "1,2,3" {
		t.Fatalf("b.t on the secondary: %s, want 1,2,3", got)
	}
	var create string
	var name string
	if err := sec.db.QueryRow("SHOW CREATE TABLE b.t").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(create, "REFERENCES `a`.`p` (`id`)") {
		t.Fatalf("b.t on the secondary: %s; want its key to a.p", create)
	}
	var n int
	deadline := time.Now().Add(5 * time.Second)
	err := sec.db.QueryRow("SELECT COUNT(*) FROM a.t").Scan(&n)
	for mysqlCode(err) != 1146 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		err = sec.db.QueryRow("SELECT COUNT(*) FROM a.t").Scan(&n)
	}
	if mysqlCode(err) != 1146 {
		t.Fatalf("a.t on the secondary: %v, want 1146", err)
	}
}
