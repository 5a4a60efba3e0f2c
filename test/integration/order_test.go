package integration

import (
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
