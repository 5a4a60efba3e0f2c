package integration

import (
	"fmt"
	"strings"
	"testing"
)

// TestOrderByIndex: ORDER BY answered from an index returns rows in order
// — and an index on a column prefix, whose keys order only the prefix, is
// never used for it (it used to be: `ORDER BY c` with KEY (c(2)) returned
// 'abz' before 'aba'). A whole-column index still replaces the sort, both
// directions.
func TestOrderByIndex(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	s := e.session("s")
	s.exec("CREATE TABLE p (id INT PRIMARY KEY, c VARCHAR(10), KEY kc (c(2)))")
	s.exec("INSERT INTO p VALUES (1,'abz'),(2,'aba'),(3,'abm'),(4,'a'),(5,NULL)")
	s.wantRows("5:NULL 4:a 2:aba 3:abm 1:abz", "SELECT id, c FROM p ORDER BY c")
	s.wantRows("1:abz 3:abm 2:aba 4:a 5:NULL", "SELECT id, c FROM p ORDER BY c DESC")

	s.exec("CREATE TABLE w (id INT PRIMARY KEY, c VARCHAR(10), KEY kc (c))")
	s.exec("INSERT INTO w VALUES (1,'abz'),(2,'aba'),(3,'abm'),(4,'a'),(5,NULL)")
	s.wantRows("5:NULL 4:a 2:aba 3:abm 1:abz", "SELECT id, c FROM w ORDER BY c")
	s.wantRows("1:abz 3:abm 2:aba 4:a 5:NULL", "SELECT id, c FROM w ORDER BY c DESC")
	s.wantRows("1:abz 3:abm", "SELECT id, c FROM w ORDER BY c DESC LIMIT 2")
	for _, q := range []string{"SELECT id, c FROM w ORDER BY c", "SELECT id, c FROM w ORDER BY c DESC LIMIT 2", "SELECT id FROM w ORDER BY id DESC"} {
		if plan := explainPlan(s, q); strings.Contains(plan, "Sort(") {
			t.Errorf("%s sorts instead of reading the index in order:\n%s", q, plan)
		}
	}
	if plan := explainPlan(s, "SELECT id, c FROM p ORDER BY c"); !strings.Contains(plan, "Sort(") {
		t.Errorf("ORDER BY over a prefix index does not sort:\n%s", plan)
	}
}

// explainPlan returns EXPLAIN PLAN's text for q.
func explainPlan(s *session, q string) string {
	s.t.Helper()
	rows, err := s.c.QueryContext(s.ctx, "EXPLAIN PLAN "+q)
	if err != nil {
		s.t.Fatalf("EXPLAIN PLAN %s: %v", q, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			s.t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// TestOrderByAfterFixedColumns: with the leading index columns fixed by
// equality, ORDER BY the next column reads the index in order (forwards
// or backwards) instead of sorting, so `... ORDER BY o LIMIT 1 FOR UPDATE`
// (TPC-C's Delivery) reads and locks one row, not the whole district.
func TestOrderByAfterFixedColumns(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	s := e.session("s")
	s.exec("CREATE TABLE no (w INT, d INT, o INT, v INT, PRIMARY KEY (w, d, o))")
	s.exec("INSERT INTO no VALUES (1,1,5,0),(1,1,3,0),(1,1,9,0),(1,2,1,0),(1,2,7,0),(2,1,2,0)")
	cases := []struct {
		q, want string
		sorts   bool
	}{
		{"SELECT o, v FROM no WHERE w = 1 AND d = 1 ORDER BY o", "3:0 5:0 9:0", false},
		{"SELECT o, v FROM no WHERE w = 1 AND d = 1 ORDER BY o DESC", "9:0 5:0 3:0", false},
		{"SELECT o, v FROM no WHERE w = 1 AND d = 1 ORDER BY o LIMIT 1", "3:0", false},
		{"SELECT o, v FROM no WHERE d = 1 AND w = 1 ORDER BY o DESC LIMIT 1", "9:0", false},
		{"SELECT o, v FROM no WHERE w = 1 AND d = 1 ORDER BY d, o", "3:0 5:0 9:0", false},
		{"SELECT o, d FROM no WHERE w = 1 ORDER BY d, o", "3:1 5:1 9:1 1:2 7:2", false},
		{"SELECT o, v FROM no WHERE w = 1 AND d = 1 AND o > 3 ORDER BY o", "5:0 9:0", false},
		// Not an order the index gives: a sort stays.
		{"SELECT o, d FROM no WHERE w = 1 ORDER BY o", "1:2 3:1 5:1 7:2 9:1", true},
		{"SELECT o, d FROM no WHERE w = 1 AND d IN (1, 2) ORDER BY o", "1:2 3:1 5:1 7:2 9:1", true},
		{"SELECT o, v FROM no WHERE w = 1 AND d = 1 ORDER BY o, v DESC", "3:0 5:0 9:0", true},
	}
	for _, c := range cases {
		s.wantRows(c.want, c.q)
		if got := strings.Contains(explainPlan(s, c.q), "Sort("); got != c.sorts {
			t.Errorf("%s: sorts = %v, want %v:\n%s", c.q, got, c.sorts, explainPlan(s, c.q))
		}
	}
	// Prepared, as drivers send it, with the lock taken on one row only.
	const first = "SELECT o FROM no WHERE w = ? AND d = ? ORDER BY o LIMIT 1 FOR UPDATE"
	s.exec("BEGIN")
	s.wantInt(3, first, 1, 1)
	other := e.session("other")
	other.exec("UPDATE no SET v = 1 WHERE w = 1 AND d = 1 AND o = 9") // not locked
	p := other.goExec("UPDATE no SET v = 1 WHERE w = 1 AND d = 1 AND o = 3")
	p.mustBlock(t)
	s.exec("COMMIT")
	p.mustSucceed(t)
	s.wantInt(9, "SELECT o FROM no WHERE w = ? AND d = ? ORDER BY o DESC LIMIT 1", 1, 1)
}

// TestLongerEqualityPrefix: when the WHERE fixes a longer leading part of a
// secondary index than of the primary key the planner chose — and that part
// includes every column the chosen access fixes — the secondary index is
// read (TPC-C's customers by last name, orders by customer); results stay
// the same, and accesses that are already better are left alone.
func TestLongerEqualityPrefix(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	s := e.session("s")
	s.exec("CREATE TABLE c (w INT, d INT, id INT, last VARCHAR(16), first VARCHAR(16), PRIMARY KEY (w, d, id), KEY name (w, d, last, first), KEY byfirst (first))")
	var b strings.Builder
	b.WriteString("INSERT INTO c VALUES ")
	for i := 1; i <= 300; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "(%d,%d,%d,'L%d','F%03d')", 1+i%2, 1+i%3, i, i%7, 300-i)
	}
	s.exec(b.String())
	cases := []struct {
		q, index string
		sorts    bool
	}{
		{"SELECT id, first FROM c WHERE w = 1 AND d = 2 AND last = 'L3' ORDER BY first", "[c.w,c.d,c.last,c.first]", false},
		{"SELECT x.id, x.first FROM c AS x WHERE x.w = 1 AND x.d = 2 AND x.last = 'L3' ORDER BY x.first DESC", "[c.w,c.d,c.last,c.first]", false},
		{"SELECT id, first FROM c WHERE last = 'L3' AND d = 2 AND w = 1 AND first > 'F1' ORDER BY first", "[c.w,c.d,c.last,c.first]", false},
		// Already one row, or narrowed on a later column: left alone.
		{"SELECT id, first FROM c WHERE w = 1 AND d = 2 AND id = 3 AND last = 'L3'", "[c.w,c.d,c.id]", false},
		// Narrowed on a later column of the shorter prefix: the longer
		// equality prefix still wins (and the sort comes back).
		{"SELECT id, first FROM c WHERE w = 1 AND d = 2 AND id > 100 AND last = 'L3' ORDER BY id", "[c.w,c.d,c.last,c.first]", true},
		// Aggregates, DISTINCT, GROUP BY and joins: the same choice
		// (sysbench-tpcc's `SELECT count(c_id) ... c_last = ?` read the
		// whole district through the primary key).
		{"SELECT count(id) FROM c WHERE w = 1 AND d = 2 AND last = 'L3'", "[c.w,c.d,c.last,c.first]", false},
		{"SELECT count(*) AS n FROM c WHERE w = 1 AND d = 2 AND last = 'L3'", "[c.w,c.d,c.last,c.first]", false},
		{"SELECT SUM(id), MIN(id), MAX(id), AVG(id) FROM c WHERE w = 1 AND d = 2 AND last = 'L3'", "[c.w,c.d,c.last,c.first]", false},
		{"SELECT COUNT(DISTINCT first) FROM c WHERE w = 1 AND d = 2 AND last = 'L3'", "[c.w,c.d,c.last,c.first]", false},
		{"SELECT DISTINCT id FROM c WHERE w = 1 AND d = 2 AND last = 'L3' ORDER BY id", "[c.w,c.d,c.last,c.first]", true},
		{"SELECT id, COUNT(*) FROM c WHERE w = 1 AND d = 2 AND last = 'L3' GROUP BY id ORDER BY id", "[c.w,c.d,c.last,c.first]", true},
		{"SELECT COUNT(*) FROM c AS x JOIN c AS y ON y.w = x.w AND y.d = x.d AND y.id = x.id WHERE x.w = 1 AND x.d = 2 AND x.last = 'L3'", "[c.w,c.d,c.last,c.first]", false},
		{"SELECT DISTINCT id FROM c WHERE w = 1 AND d = 2 AND last = 'L3'", "[c.w,c.d,c.last,c.first]", false},
		{"SELECT id, COUNT(*) FROM c WHERE w = 1 AND d = 2 AND last = 'L3' GROUP BY id", "[c.w,c.d,c.last,c.first]", false},
		{"SELECT COUNT(*) FROM c WHERE w = 1 AND d = 2 AND last = 'L3' GROUP BY last", "[c.w,c.d,c.last,c.first]", false},
		// Order-dependent: a string MIN, DISTINCT or group value (which of
		// 'a' and 'A' is seen first): left as planned.
		{"SELECT MIN(first) FROM c WHERE w = 1 AND d = 2 AND last = 'L3'", "[c.w,c.d,c.id]", false},
		{"SELECT DISTINCT first FROM c WHERE w = 1 AND d = 2 AND last = 'L3'", "[c.w,c.d,c.id]", false},
		{"SELECT last, COUNT(*) FROM c WHERE w = 1 AND d = 2 AND last = 'L3' GROUP BY last", "[c.w,c.d,c.id]", false},
		{"SELECT id FROM c WHERE w = 1 AND d = 2 AND last = 'L3' AND id IN (SELECT id FROM c WHERE w = 1 ORDER BY id LIMIT 5)", "", true},
	}
	for _, c := range cases {
		plan := explainPlan(s, c.q)
		if c.index != "" && !strings.Contains(plan, "index: "+c.index) {
			t.Errorf("%s: not by index %s:\n%s", c.q, c.index, plan)
		}
		if got := strings.Contains(plan, "Sort("); got != c.sorts {
			t.Errorf("%s: sorts = %v, want %v:\n%s", c.q, got, c.sorts, plan)
		}
	}
	// Same rows as a plan that cannot use the index (IGNORE INDEX is not
	// honoured by the planner: compare with the rows computed another way).
	for _, q := range []struct{ got, want string }{
		{"SELECT id, first FROM c WHERE w = 1 AND d = 2 AND last = 'L3' ORDER BY first",
			"SELECT id, first FROM c WHERE CONCAT(w, ',', d, ',', last) = '1,2,L3' ORDER BY first"},
		{"SELECT id, first FROM c WHERE last = 'L3' AND d = 2 AND w = 1 AND first > 'F1' ORDER BY first",
			"SELECT id, first FROM c WHERE CONCAT(w, ',', d, ',', last) = '1,2,L3' AND first > 'F1' ORDER BY first"},
		{"SELECT id, first FROM c WHERE w = 2 AND d = 1 AND last = 'L0' ORDER BY first DESC",
			"SELECT id, first FROM c WHERE CONCAT(w, ',', d, ',', last) = '2,1,L0' ORDER BY first DESC"},
		{"SELECT count(id), SUM(id), MIN(id), MAX(id), COUNT(DISTINCT first) FROM c WHERE w = 2 AND d = 1 AND last = 'L0'",
			"SELECT count(id), SUM(id), MIN(id), MAX(id), COUNT(DISTINCT first) FROM c WHERE CONCAT(w, ',', d, ',', last) = '2,1,L0'"},
		{"SELECT COUNT(*) FROM c AS x JOIN c AS y ON y.w = x.w AND y.d = x.d AND y.id = x.id WHERE x.w = 1 AND x.d = 2 AND x.last = 'L3'",
			"SELECT COUNT(*) FROM c WHERE CONCAT(w, ',', d, ',', last) = '1,2,L3'"},
	} {
		got, want := s.rowsOf(q.got), s.rowsOf(q.want)
		if got != want || got == "" {
			t.Errorf("%s\n got: %s\nwant: %s", q.got, got, want)
		}
	}
}
