package integration

import (
	"fmt"
	"strings"
	"testing"
)

// TestExplainTabular: EXPLAIN answers MySQL's table — one row per table
// access of the plan go-mysql-server runs, with the access type, key,
// key_len in MySQL's bytes, ref, a rows estimate and Extra — where
// go-mysql-server sent one placeholder row of NULLs.
func TestExplainTabular(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	s := e.session("s")
	s.exec("CREATE TABLE c (w INT, d INT, id INT, last VARCHAR(16), first VARCHAR(16), bal DECIMAL(12,2), " +
		"PRIMARY KEY (w, d, id), KEY name (w, d, last, first))")
	s.exec("CREATE TABLE o (id INT PRIMARY KEY, cid INT, v INT, KEY kc (cid))")
	s.exec("INSERT INTO c VALUES (1,1,1,'a','b',1.0), (1,1,2,'a','c',2.0)")
	s.exec("INSERT INTO o VALUES (1,1,1), (2,2,2)")
	s.exec("CREATE TABLE l (o INT, n INT, PRIMARY KEY (o, n))")
	var lines []string // 20 orders of 2 lines each
	for o := 1; o <= 20; o++ {
		lines = append(lines, fmt.Sprintf("(%d,1),(%d,2)", o, o))
	}
	s.exec("INSERT INTO l VALUES " + strings.Join(lines, ","))
	for _, c := range []struct{ q, want string }{
		// A unique point: const, the whole key (3 x INT = 12 bytes).
		{"EXPLAIN SELECT * FROM c WHERE w = 1 AND d = 1 AND id = 1",
			"1:SIMPLE:c:NULL:const:PRIMARY:PRIMARY:12:const,const,const:1:100:Using where"},
		// A prefix of a secondary key: ref; key_len counts the nullable
		// VARCHAR(16) utf8mb4 as 16*4+2+1; rows are the index entries in
		// the range, counted (both customers; it said a tenth of the table).
		{"EXPLAIN SELECT id FROM c WHERE w = 1 AND d = 1 AND last = 'a' ORDER BY first",
			"1:SIMPLE:c:NULL:ref:name:name:75:const,const,const:2:100:Using where"},
		{"EXPLAIN SELECT id FROM c WHERE w = 1 AND d = 1 AND last = 'z'",
			"1:SIMPLE:c:NULL:ref:name:name:75:const,const,const:1:100:Using where"},
		{"EXPLAIN SELECT * FROM c WHERE w = 1 AND d = 1 AND id IN (1, 2, 3)",
			"1:SIMPLE:c:NULL:range:PRIMARY:PRIMARY:12:NULL:3:100:Using where"},
		{"EXPLAIN SELECT * FROM c WHERE bal > 1", "1:SIMPLE:c:NULL:ALL:NULL:NULL:NULL:NULL:2:100:Using where"},
		{"EXPLAIN SELECT * FROM o ORDER BY v", "1:SIMPLE:o:NULL:ALL:NULL:NULL:NULL:NULL:2:100:Using filesort"},
		{"EXPLAIN SELECT 1", "1:SIMPLE:NULL:NULL:NULL:NULL:NULL:NULL:NULL:NULL:NULL:No tables used"},
		{"EXPLAIN UPDATE o SET v = 3 WHERE id = 1", "1:UPDATE:o:NULL:const:PRIMARY:PRIMARY:4:const:1:100:Using where"},
		{"EXPLAIN DELETE FROM o WHERE cid = 2", "1:DELETE:o:NULL:ref:kc:kc:5:const:1:100:Using where"},
		{"EXPLAIN SELECT * FROM (SELECT id FROM o) t",
			"1:PRIMARY:<derived2>:NULL:ALL:NULL:NULL:NULL:NULL:1:100:NULL 2:DERIVED:o:NULL:ALL:NULL:NULL:NULL:NULL:2:100:NULL"},
		// A subquery in an expression has rows of its own (issue 35: it had
		// none), numbered as MySQL numbers SELECTs — by their place in the
		// text: the select list's before the FROM's derived table.
		{"EXPLAIN SELECT (SELECT MAX(v) FROM o), x.id FROM (SELECT id FROM c) x",
			"1:PRIMARY:<derived3>:NULL:ALL:NULL:NULL:NULL:NULL:1:100:NULL 2:SUBQUERY:o:NULL:ALL:NULL:NULL:NULL:NULL:2:100:NULL " +
				"3:DERIVED:c:NULL:ALL:NULL:NULL:NULL:NULL:2:100:NULL"},
		{"EXPLAIN SELECT (SELECT MAX(v) FROM o)",
			"1:PRIMARY:NULL:NULL:NULL:NULL:NULL:NULL:NULL:NULL:NULL:No tables used 2:SUBQUERY:o:NULL:ALL:NULL:NULL:NULL:NULL:2:100:NULL"},
		// One that reads the outer row is DEPENDENT; its lookup by the outer
		// row's column is ref, the column named in ref, rows the table's
		// rows per distinct key (each o.cid once: 1).
		{"EXPLAIN SELECT id FROM c WHERE bal > (SELECT SUM(v) FROM o WHERE o.cid = c.id)",
			"1:PRIMARY:c:NULL:ALL:NULL:NULL:NULL:NULL:2:100:Using where " +
				"2:DEPENDENT SUBQUERY:o:NULL:ref:kc:kc:5:" + e.name + ".c.id:1:100:Using where"},
		// By the first of two key columns, 20 values in 40 rows: 2 rows per
		// key (it said a tenth of the table, 4).
		{"EXPLAIN SELECT id FROM o WHERE v < (SELECT SUM(n) FROM l WHERE l.o = o.id)",
			"1:PRIMARY:o:NULL:ALL:NULL:NULL:NULL:NULL:2:100:Using where " +
				"2:DEPENDENT SUBQUERY:l:NULL:ref:PRIMARY:PRIMARY:4:" + e.name + ".o.id:2:100:Using where"},
		// A select-list subquery that the outer WHERE uses by its alias is in
		// go-mysql-server's plan twice (below and above the filter): one
		// SELECT, one set of rows.
		{"EXPLAIN SELECT COUNT(*) FROM (SELECT c.id, c.bal b, (SELECT SUM(v) FROM o WHERE o.cid = c.id) s FROM c) t WHERE b <> s",
			"1:PRIMARY:<derived2>:NULL:ALL:NULL:NULL:NULL:NULL:1:100:NULL 2:DERIVED:c:NULL:ALL:NULL:NULL:NULL:NULL:2:100:Using where " +
				"3:DEPENDENT SUBQUERY:o:NULL:ref:kc:kc:5:" + e.name + ".c.id:1:100:Using where"},
		{"DESCRIBE SELECT v FROM o WHERE id = 2", "1:SIMPLE:o:NULL:const:PRIMARY:PRIMARY:4:const:1:100:Using where"},
		// GROUP BY aggregates in a temporary table: MySQL marks the first
		// table (issue 30: no "Using temporary", and both sides of a merge
		// join said range with 1 row).
		{"EXPLAIN SELECT cid, COUNT(*) FROM o GROUP BY cid", "1:SIMPLE:o:NULL:ALL:NULL:NULL:NULL:NULL:2:100:Using temporary"},
		// The sides of a merge join read their whole index in order: index,
		// every row.
		{"EXPLAIN SELECT p.v, SUM(o.v) FROM o p JOIN o ON o.cid = p.id GROUP BY p.v",
			"1:SIMPLE:p:NULL:index:PRIMARY:PRIMARY:4:NULL:2:100:Using temporary 1:SIMPLE:o:NULL:index:kc:kc:5:NULL:2:100:NULL"},
	} {
		s.wantRows(c.want, c.q)
	}
	// EXPLAIN PLAN keeps go-mysql-server's plan text.
	if plan := s.str("EXPLAIN PLAN SELECT * FROM o WHERE id = 1"); plan == "" {
		t.Fatal("EXPLAIN PLAN returned nothing")
	}
}
