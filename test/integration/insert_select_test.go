package integration

import (
	"fmt"
	"strings"
	"testing"
)

// TestInsertSelectSameTable: INSERT ... SELECT reading the table it writes
// sees the table as it was when the statement began (MySQL's behaviour),
// over the wire, for tables that span many storage scan batches. Before the
// fix a copy of a table of 128 or more rows read back its own new rows:
// with ids growing it never ended, filling memory.
func TestInsertSelectSameTable(t *testing.T) {
	srv := startServer(t)
	for _, n := range []int{128, 1000} {
		for _, shape := range []struct{ name, create, copy string }{
			{"pk", "CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t SELECT id + %[1]d, v FROM t"},
			{"no-pk", "CREATE TABLE t (id INT, v INT)", "INSERT INTO t SELECT id + %[1]d, v FROM t"},
			{"secondary", "CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY (v))", "INSERT INTO t SELECT id + %[1]d, v FROM t WHERE v >= 0"},
			{"replace", "CREATE TABLE t (id INT PRIMARY KEY, v INT)", "REPLACE INTO t SELECT id + %[1]d, v FROM t"},
			{"ignore", "CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT IGNORE INTO t SELECT id + %[1]d, v FROM t"},
			{"in-txn", "CREATE TABLE t (id INT PRIMARY KEY, v INT)", "BEGIN; INSERT INTO t SELECT id + %[1]d, v FROM t; COMMIT"},
		} {
			t.Run(fmt.Sprintf("%s/rows=%d", shape.name, n), func(t *testing.T) {
				e := newDatabase(t, srv)
				s := e.session("s")
				s.exec(shape.create)
				var b strings.Builder
				b.WriteString("INSERT INTO t VALUES ")
				for i := 1; i <= n; i++ {
					if i > 1 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, "(%d,%d)", i, i%7)
				}
				s.exec(b.String())
				for _, q := range strings.Split(fmt.Sprintf(shape.copy, n), "; ") {
					s.exec(q)
				}
				s.wantInt(int64(2*n), "SELECT COUNT(*) FROM t")
				s.wantInt(int64(2*n), "SELECT MAX(id) FROM t")
				s.wantInt(int64(n*(2*n+1)), "SELECT CAST(SUM(id) AS SIGNED) FROM t")
			})
		}
	}
}
