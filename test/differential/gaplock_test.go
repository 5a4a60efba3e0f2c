package differential

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// TestGapLocksAgainstMariaDB runs InnoDB's classic gap-lock cases with two
// sessions on lockstep and on MariaDB 10.11 and checks both servers give
// the outcome each step expects. Blocking is observed, not assumed: the
// second session runs with innodb_lock_wait_timeout=1 and a blocked
// statement fails with 1205.
//
// The table is t(id INT PRIMARY KEY, k INT) with ids 10, 20, 30, 40.
func TestGapLocksAgainstMariaDB(t *testing.T) {
	mdb := startMariaDB(t)
	ls := testutil.StartServer(t)
	sides := []server{
		{name: "lockstep", addr: ls.Addr, user: "root"},
		{name: "mariadb", addr: mdb.addr, user: "diff"},
	}
	type step struct {
		a    bool   // session A (else B)
		sql  string // statement
		want int    // 0 ok, else the error code
	}
	A := func(q string) step { return step{a: true, sql: q} }
	B := func(q string, want int) step { return step{sql: q, want: want} }
	const timeout, deadlock = 1205, 1213
	scenarios := []struct {
		name  string
		steps []step
	}{
		{"range FOR UPDATE blocks phantoms (RR)", []step{
			A("BEGIN"),
			A("SELECT id FROM t WHERE id BETWEEN 10 AND 25 FOR UPDATE"),
			B("INSERT INTO t VALUES (15, 0)", timeout),
			B("INSERT INTO t VALUES (25, 0)", timeout), // gap before 30, the first row past the range
			B("INSERT INTO t VALUES (5, 0)", 0),        // the range starts at row 10 itself
			B("INSERT INTO t VALUES (35, 0)", 0),
		}},
		{"range FOR UPDATE takes no gap locks (RC)", []step{
			A("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"),
			A("BEGIN"),
			A("SELECT id FROM t WHERE id BETWEEN 10 AND 25 FOR UPDATE"),
			B("INSERT INTO t VALUES (15, 0)", 0),
			B("INSERT INTO t VALUES (25, 0)", 0),
			B("UPDATE t SET k = 1 WHERE id = 20", timeout), // the rows stay locked
		}},
		{"unique equality locks no gap", []step{
			A("BEGIN"),
			A("SELECT * FROM t WHERE id = 20 FOR UPDATE"),
			B("INSERT INTO t VALUES (15, 0)", 0),
			B("INSERT INTO t VALUES (25, 0)", 0),
			B("UPDATE t SET k = 1 WHERE id = 20", timeout),
		}},
		{"unique equality that finds nothing locks the gap", []step{
			A("BEGIN"),
			A("SELECT * FROM t WHERE id = 25 FOR UPDATE"),
			B("INSERT INTO t VALUES (22, 0)", timeout),
			B("INSERT INTO t VALUES (35, 0)", 0),
		}},
		{"range UPDATE blocks inserts into the gap", []step{
			A("BEGIN"),
			// (Not BETWEEN: go-mysql-server plans UPDATE ... BETWEEN as a
			// full scan, which locks every gap, as InnoDB's would.)
			A("UPDATE t SET k = k + 1 WHERE id >= 10 AND id <= 25"),
			B("INSERT INTO t VALUES (12, 0)", timeout),
			B("INSERT INTO t VALUES (45, 0)", 0),
		}},
		{"range DELETE blocks inserts into the gap", []step{
			A("BEGIN"),
			A("DELETE FROM t WHERE id > 15 AND id < 35"),
			B("INSERT INTO t VALUES (17, 0)", timeout),
			B("INSERT INTO t VALUES (33, 0)", timeout), // gap before 40
			B("INSERT INTO t VALUES (45, 0)", 0),
		}},
		{"supremum gap after the last row", []step{
			A("BEGIN"),
			A("SELECT id FROM t WHERE id > 35 FOR UPDATE"),
			B("INSERT INTO t VALUES (100, 0)", timeout),
			B("INSERT INTO t VALUES (37, 0)", timeout),
			B("INSERT INTO t VALUES (25, 0)", 0),
		}},
		{"the gap is released at commit", []step{
			A("BEGIN"),
			A("SELECT id FROM t WHERE id > 35 FOR UPDATE"),
			B("INSERT INTO t VALUES (100, 0)", timeout),
			A("COMMIT"),
			B("INSERT INTO t VALUES (100, 0)", 0),
		}},
	}
	for _, side := range sides {
		var waitsBefore int
		if side.name == "lockstep" {
			waitsBefore = gapStatus(t, side, "Lockstep_insert_intention_waits")
		}
		for i, sc := range scenarios {
			t.Run(side.name+"/"+sc.name, func(t *testing.T) {
				db := fmt.Sprintf("gap_%d", i)
				a, b := gapSessions(t, side, db)
				for _, st := range sc.steps {
					c := b
					if st.a {
						c = a
					}
					if code := gapExec(t, c, st.sql); code != st.want {
						t.Fatalf("%s: error %d, want %d", st.sql, code, st.want)
					}
				}
			})
		}
		// Insert intention against gap: both sessions lock the gap of the
		// missing row 25, both insert into it; one insert waits, the other
		// closes the cycle; the server rolls one back with 1213 and the
		// other's insert then succeeds.
		t.Run(side.name+"/insert intention vs gap deadlock", func(t *testing.T) {
			a, b := gapSessions(t, side, "gap_dl")
			for _, c := range []*conn{a, b} {
				gapExec(t, c, "SET SESSION innodb_lock_wait_timeout = 20")
				gapExec(t, c, "BEGIN")
				if code := gapExec(t, c, "SELECT * FROM t WHERE id = 25 FOR UPDATE"); code != 0 {
					t.Fatalf("locking read of a missing row: error %d", code)
				}
			}
			ach := make(chan int, 1)
			go func() { ach <- gapExec(t, a, "INSERT INTO t VALUES (21, 0)") }()
			select {
			case code := <-ach:
				t.Fatalf("A's insert did not wait (error %d)", code)
			case <-time.After(300 * time.Millisecond):
			}
			bcode := gapExec(t, b, "INSERT INTO t VALUES (22, 0)")
			if bcode == 0 {
				gapExec(t, b, "ROLLBACK") // cannot both succeed; let A finish to report it
			}
			var acode int
			select {
			case acode = <-ach:
			case <-time.After(15 * time.Second):
				t.Fatal("A's insert still waits")
			}
			if !(acode == deadlock && bcode == 0 || acode == 0 && bcode == deadlock) {
				t.Fatalf("inserts: A error %d, B error %d; want one 1213 and one success", acode, bcode)
			}
		})
		if side.name == "lockstep" {
			// Every blocked insert above waited on an insert intention.
			if n := gapStatus(t, side, "Lockstep_insert_intention_waits") - waitsBefore; n < 10 {
				t.Errorf("Lockstep_insert_intention_waits grew by %d, want >= 10", n)
			}
			if n := gapStatus(t, side, "Lockstep_gap_lock_requests"); n == 0 {
				t.Error("Lockstep_gap_lock_requests is 0")
			}
		}
	}
}

// gapStatus reads a global status counter.
func gapStatus(t *testing.T, side server, name string) int {
	t.Helper()
	c, err := dial(side.addr, side.user, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	o, err := c.query("SHOW GLOBAL STATUS LIKE '" + name + "'")
	if err != nil || o.err != nil || len(o.rows) != 1 || o.rows[0][1] == nil {
		t.Fatalf("SHOW GLOBAL STATUS LIKE '%s': %v %v %v", name, err, o.err, o.rows)
	}
	n, err := strconv.Atoi(*o.rows[0][1])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// gapSessions creates database db with the test table and returns two
// sessions on it; B waits at most 1s for a lock.
func gapSessions(t *testing.T, side server, db string) (a, b *conn) {
	t.Helper()
	var cs [2]*conn
	for i := range cs {
		c, err := dial(side.addr, side.user, "")
		if err != nil {
			t.Fatalf("%s: %v", side.name, err)
		}
		t.Cleanup(c.close)
		cs[i] = c
	}
	for _, q := range []string{
		"DROP DATABASE IF EXISTS " + db,
		"CREATE DATABASE " + db,
		"CREATE TABLE " + db + ".t (id INT PRIMARY KEY, k INT) ENGINE=InnoDB",
		"INSERT INTO " + db + ".t VALUES (10, 10), (20, 20), (30, 30), (40, 40)",
	} {
		if code := gapExec(t, cs[0], q); code != 0 {
			t.Fatalf("%s: %s: error %d", side.name, q, code)
		}
	}
	for _, c := range cs {
		gapExec(t, c, "USE "+db)
	}
	gapExec(t, cs[1], "SET SESSION innodb_lock_wait_timeout = 1")
	return cs[0], cs[1]
}

// gapExec runs q and returns its error code (0: success). A broken
// connection fails the test.
func gapExec(t *testing.T, c *conn, q string) int {
	o, err := c.query(q)
	if err != nil {
		t.Errorf("%s: %v", q, err)
		return -1
	}
	if o.err != nil {
		return int(o.err.code)
	}
	return 0
}
