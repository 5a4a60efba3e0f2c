package differential

import (
	"fmt"
	"strings"
	"testing"

	"lockstep/internal/testutil"
)

// TestMetadataLocksAgainstMariaDB runs metadata lock cases with two
// sessions on lockstep and on MariaDB 10.11 (whose metadata locks are
// MySQL 8's for these statements) and checks both servers give the
// outcome each step expects. Session B waits at most lock_wait_timeout=1
// s: a statement that waits for a metadata lock fails with 1205.
//
// Each case has its own database (%s in a statement) holding t(id INT
// PRIMARY KEY, k INT) with four rows.
func TestMetadataLocksAgainstMariaDB(t *testing.T) {
	mdb := startMariaDB(t)
	ls := testutil.StartServer(t)
	sides := []server{
		{name: "lockstep", addr: ls.Addr, user: "root"},
		{name: "mariadb", addr: mdb.addr, user: "diff"},
	}
	type step struct {
		a    bool
		sql  string
		want int
	}
	A := func(q string) step { return step{a: true, sql: q} }
	B := func(q string, want int) step { return step{sql: q, want: want} }
	const timeout = 1205
	scenarios := []struct {
		name  string
		steps []step
	}{
		{"LOCK TABLES WRITE holds others' reads, writes and DDL", []step{
			A("LOCK TABLES t WRITE"),
			A("INSERT INTO t VALUES (50, 0)"),
			A("SELECT * FROM t"),
			B("SELECT * FROM t", timeout),
			B("INSERT INTO t VALUES (60, 0)", timeout),
			B("ALTER TABLE t ADD COLUMN c INT", timeout),
			A("UNLOCK TABLES"),
			B("SELECT * FROM t", 0),
			B("INSERT INTO t VALUES (60, 0)", 0),
		}},
		{"LOCK TABLES READ lets reads through and holds writes and DDL", []step{
			A("LOCK TABLES t READ"),
			B("SELECT * FROM t", 0),
			B("INSERT INTO t VALUES (60, 0)", timeout),
			B("UPDATE t SET k = 1 WHERE id = 10", timeout),
			B("CREATE INDEX ik ON t (k)", timeout),
			B("DROP TABLE t", timeout),
			A("UNLOCK TABLES"),
			B("INSERT INTO t VALUES (60, 0)", 0),
		}},
		{"LOCK TABLES of a view locks the tables under it", []step{
			A("CREATE VIEW v AS SELECT t.id, t.k FROM t JOIN t AS t2 ON t2.id = t.id"), // a join: not a single-table chain
			A("LOCK TABLES v READ"),
			B("SELECT * FROM t", 0),
			B("INSERT INTO t VALUES (60, 0)", timeout),
			B("ALTER TABLE t ADD COLUMN c INT", timeout),
			A("LOCK TABLES v WRITE"),
			B("SELECT * FROM t", timeout),
			A("UNLOCK TABLES"),
			B("INSERT INTO t VALUES (60, 0)", 0),
		}},
		{"a new LOCK TABLES gives back the tables locked before", []step{
			A("CREATE TABLE u (id INT PRIMARY KEY)"),
			A("LOCK TABLES t WRITE"),
			A("LOCK TABLES u READ"),
			B("INSERT INTO t VALUES (60, 0)", 0),
			B("INSERT INTO u VALUES (1)", timeout),
			A("UNLOCK TABLES"),
			B("INSERT INTO u VALUES (1)", 0),
		}},
		{"LOCK TABLES in a transaction commits it", []step{
			A("BEGIN"),
			A("SELECT * FROM t"),
			A("LOCK TABLES t READ"),
			A("UNLOCK TABLES"),
			B("ALTER TABLE t ADD COLUMN c INT", 0), // the read's lock ended with the commit
		}},
		{"DROP DATABASE waits for a transaction that used a table", []step{
			A("BEGIN"),
			A("SELECT * FROM t"),
			B("DROP DATABASE %s", timeout),
			A("SELECT * FROM t"),
			A("COMMIT"),
			B("DROP DATABASE %s", 0),
		}},
		{"a transaction's write and read hold DDL", []step{
			A("BEGIN"),
			A("UPDATE t SET k = 5 WHERE id = 10"),
			B("SELECT * FROM t WHERE id = 20", 0),
			B("INSERT INTO t VALUES (60, 0)", 0),
			B("RENAME TABLE t TO t2", timeout),
			B("TRUNCATE TABLE t", timeout),
			A("ROLLBACK"),
			B("RENAME TABLE t TO t2", 0),
		}},
	}
	for _, side := range sides {
		for i, sc := range scenarios {
			t.Run(side.name+"/"+sc.name, func(t *testing.T) {
				db := fmt.Sprintf("mdl_%d", i)
				a, b := gapSessions(t, side, db)
				gapExec(t, b, "SET SESSION lock_wait_timeout = 1")
				for _, st := range sc.steps {
					c := b
					if st.a {
						c = a
					}
					q := strings.ReplaceAll(st.sql, "%s", db)
					if code := gapExec(t, c, q); code != st.want {
						t.Fatalf("%s: error %d, want %d", q, code, st.want)
					}
				}
				gapExec(t, a, "UNLOCK TABLES")
			})
		}
		// RENAME TABLE of qualified names needs no current database.
		t.Run(side.name+"/RENAME qualified names without a current database", func(t *testing.T) {
			gapSessions(t, side, "mdl_rename")
			c, err := dial(side.addr, side.user, "")
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			if code := gapExec(t, c, "RENAME TABLE mdl_rename.t TO mdl_rename.t2"); code != 0 {
				t.Fatalf("RENAME: error %d", code)
			}
			if code := gapExec(t, c, "SELECT * FROM mdl_rename.t2"); code != 0 {
				t.Fatalf("SELECT from the renamed table: error %d", code)
			}
		})
	}
}
