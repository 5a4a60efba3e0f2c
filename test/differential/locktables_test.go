package differential

import (
	"fmt"
	"strings"
	"testing"

	"lockstep/internal/testutil"
)

// TestLockTablesAccessAgainstMariaDB: under LOCK TABLES a session uses only
// the tables it locked, each under the alias it was locked with and once
// per statement, and writes only WRITE-locked ones (docs/mdl.md, "Under
// LOCK TABLES"). The same statements on lockstep and MariaDB 10.11 must
// give the same error codes: 1100 ER_TABLE_NOT_LOCKED, 1099
// ER_TABLE_NOT_LOCKED_FOR_WRITE, or none. Statements lockstep's fast path
// would run (a point read whose shape it learned before LOCK TABLES, a
// point UPDATE) are among them.
func TestLockTablesAccessAgainstMariaDB(t *testing.T) {
	mdb := startMariaDB(t)
	ls := testutil.StartServer(t)
	sides := []server{
		{name: "lockstep", addr: ls.Addr, user: "root"},
		{name: "mariadb", addr: mdb.addr, user: "diff"},
	}
	const notLocked, readLocked = 1100, 1099
	type step struct {
		sql  string
		want int
		prep bool // as a prepared statement (COM_STMT_PREPARE, EXECUTE)
	}
	setup := []string{
		"CREATE TABLE u (id INT PRIMARY KEY, k INT)",
		"CREATE TABLE w (id INT PRIMARY KEY, k INT)",
		"INSERT INTO u VALUES (10, 1)",
		"INSERT INTO w VALUES (10, 1)",
		"CREATE VIEW v AS SELECT id, k FROM t",
		"CREATE VIEW v2 AS SELECT * FROM v",
		"CREATE TEMPORARY TABLE tmp (a INT)",
		// Teach the fast path the point read's shape (text queries run
		// there from the second of a shape on).
		"SELECT k FROM w WHERE id = 10",
		"SELECT k FROM w WHERE id = 10",
		"SELECT k FROM t WHERE id = 10",
		"SELECT k FROM t WHERE id = 10",
	}
	scenarios := []struct {
		name  string
		steps []step
	}{
		{"tables not locked and READ-locked tables written", []step{
			{sql: "LOCK TABLES t READ, u WRITE", want: 0},
			{sql: "SELECT * FROM w", want: notLocked},
			{sql: "SELECT k FROM w WHERE id = 10", want: notLocked}, // fast-path shape
			{sql: "SELECT k FROM t WHERE id = 10", want: 0},
			{sql: "INSERT INTO t VALUES (3, 3)", want: readLocked},
			{sql: "UPDATE t SET k = 5 WHERE id = 10", want: readLocked}, // fast-path shape
			{sql: "UPDATE t SET k = 2", want: readLocked},
			{sql: "DELETE FROM t WHERE id = 10", want: readLocked},
			{sql: "REPLACE INTO t VALUES (10, 1)", want: readLocked},
			{sql: "UPDATE u SET k = 7 WHERE id = 10", want: 0},
			{sql: "SELECT * FROM t JOIN u USING (id)", want: 0},
			{sql: "SELECT * FROM t AS a", want: notLocked},
			{sql: "SELECT * FROM t WHERE id IN (SELECT id FROM t)", want: notLocked},
			{sql: "SELECT * FROM u WHERE id IN (SELECT id FROM w)", want: notLocked},
			{sql: "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.id)", want: 0},
			{sql: "INSERT INTO u SELECT id + 100, k FROM t", want: 0},
			{sql: "INSERT INTO u SELECT id + 200, k FROM u", want: notLocked},
			{sql: "INSERT INTO w SELECT * FROM t", want: notLocked},
			{sql: "UPDATE u JOIN t USING (id) SET u.k = t.k", want: 0},
			{sql: "UPDATE u JOIN t USING (id) SET t.k = u.k", want: readLocked},
			{sql: "DELETE u FROM u JOIN t USING (id) WHERE t.k = 99", want: 0},
			{sql: "DELETE t FROM u JOIN t USING (id) WHERE t.k = 99", want: readLocked},
			{sql: "SELECT * FROM v", want: notLocked},
			{sql: "SELECT * FROM t JOIN w USING (id)", want: notLocked, prep: true},
			{sql: "UPDATE t SET k = 4 WHERE id = 20", want: readLocked, prep: true},
			{sql: "SELECT * FROM t JOIN u USING (id)", want: 0, prep: true},
			{sql: "SELECT * FROM tmp", want: 0},
			{sql: "INSERT INTO tmp VALUES (1)", want: 0},
			{sql: "SELECT COUNT(*) FROM information_schema.tables", want: 0},
			{sql: "UNLOCK TABLES", want: 0},
			{sql: "SELECT * FROM w", want: 0},
			{sql: "UPDATE t SET k = 5 WHERE id = 10", want: 0},
		}},
		{"aliases", []step{
			{sql: "LOCK TABLES t AS a READ, t WRITE", want: 0},
			{sql: "SELECT * FROM a", want: notLocked},
			{sql: "SELECT * FROM t AS a", want: 0},
			{sql: "SELECT * FROM t AS b", want: notLocked},
			{sql: "SELECT * FROM t", want: 0},
			{sql: "INSERT INTO t SELECT id + 100, k FROM t AS a", want: 0},
			{sql: "INSERT INTO t SELECT id + 200, k FROM t", want: notLocked},
			{sql: "UPDATE t AS a SET k = 1", want: readLocked},
			{sql: "UPDATE t SET k = 1 WHERE id = 10", want: 0},
			{sql: "SELECT * FROM t JOIN t AS a USING (id)", want: 0},
			{sql: "SELECT * FROM t AS a WHERE id IN (SELECT id FROM t)", want: 0},
		}},
		{"views", []step{
			{sql: "LOCK TABLES v READ", want: 0},
			{sql: "SELECT * FROM v", want: 0},
			{sql: "SELECT * FROM v AS x", want: 0},
			{sql: "SELECT * FROM v2", want: notLocked},
			{sql: "LOCK TABLES v2 READ", want: 0},
			{sql: "SELECT * FROM v2", want: 0},
			{sql: "SELECT * FROM v", want: 0},
			{sql: "SELECT * FROM t", want: 0},
			{sql: "SELECT * FROM u", want: notLocked},
			{sql: "LOCK TABLES v WRITE", want: 0},
			{sql: "SELECT * FROM t", want: 0},
			{sql: "SELECT * FROM v", want: 0},
			{sql: "SELECT * FROM missing", want: notLocked},
		}},
	}
	for _, side := range sides {
		for i, sc := range scenarios {
			t.Run(side.name+"/"+sc.name, func(t *testing.T) {
				db := fmt.Sprintf("lt_%d", i)
				c, _ := gapSessions(t, side, db)
				for _, q := range setup {
					if code := gapExec(t, c, q); code != 0 {
						t.Fatalf("%s: error %d", q, code)
					}
				}
				for _, st := range sc.steps {
					q := strings.ReplaceAll(st.sql, "%s", db)
					code := 0
					if st.prep {
						o, err := c.prepared(q)
						if err != nil {
							t.Fatalf("%s: %v", q, err)
						}
						if o.err != nil {
							code = int(o.err.code)
						}
					} else {
						code = gapExec(t, c, q)
					}
					if code != st.want {
						t.Errorf("%s: error %d, want %d", q, code, st.want)
					}
				}
				gapExec(t, c, "UNLOCK TABLES")
			})
		}
	}
}
