package sqlfront

import (
	"fmt"
	"strings"
	"testing"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

func TestExpandRowIn(t *testing.T) {
	tests := []struct{ in, want string }{
		{"select * from t where (a, b) in ((1, 2), (3, 4))",
			"select * from t where ((a = 1 and b = 2) or (a = 3 and b = 4))"},
		{"explain plan select * from t where (a, b) in ((1, 2))",
			"explain plan select * from t where ((a = 1 and b = 2))"},
		{"select * from t where (t.a, b, c) in ((?, ?, ?), (null, -1, 'x')) for update",
			"select * from t where ((t.a = :v1 and b = :v2 and c = :v3) or (t.a = null and b = -1 and c = 'x')) for update"},
		{"delete from t where (a, b) in ((1, 2)) and c > 0",
			"delete from t where ((a = 1 and b = 2)) and c > 0"},
		{"update t set c = 1 where x = 1 or ((a, b) in ((1, 2)))",
			"update t set c = 1 where x = 1 or (((a = 1 and b = 2)))"},
		{"select * from u where k in (select k from t where (a, b) in ((1, 2)))",
			"select * from u where k in (select k from t where ((a = 1 and b = 2)))"},
		{"select a, count(*) from t group by a, b having (a, b) in ((1, 2))",
			"select a, count(*) from t group by a, b having ((a = 1 and b = 2))"},
		{"select * from t where (a, (b + 1)) in ((1, c), (-2, 'x'))",
			"select * from t where ((a = 1 and (b + 1) = c) or (a = -2 and (b + 1) = 'x'))"},
		// Left alone.
		{"select * from t where (a, b) not in ((1, 2))", ""},
		{"select * from t where (a, b) in ((1, now()))", ""},
		{"select * from t where (a, rand()) in ((1, 2))", ""},
		{"select * from t where (a, (select 1)) in ((1, 2))", ""},
		{"select * from t where (a, b) in (select x, y from u)", ""},
		{"select * from t where (a, b) in ((1, 2, 3))", ""},
		{"select * from t where a in (1, 2)", ""},
		{"select (a, b) in ((1, 2)) as x from t",
			"select ((a = 1 and b = 2)) x from t"},
	}
	for _, tt := range tests {
		st, err := ast.Parse(tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		before := ast.String(st)
		want := tt.want
		if want == "" {
			want = before
		}
		expandRowIn(st)
		if got := ast.String(st); got != want {
			t.Errorf("%s\n got %s\nwant %s", tt.in, got, want)
		}
	}
}

func TestExpandRowInLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("select * from t where (a, b) in (")
	for i := range maxRowInTuples + 1 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, %d)", i, i)
	}
	b.WriteString(")")
	st, err := ast.Parse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	before := ast.String(st)
	expandRowIn(st)
	if ast.String(st) != before {
		t.Fatalf("a list of %d rows was rewritten", maxRowInTuples+1)
	}
}

func TestMayHaveRowIn(t *testing.T) {
	for q, want := range map[string]bool{
		"select * from t where (a, b) in ((1, 2))":     true,
		"select * from t where (a,b)IN((1,2))":         true,
		"select * from t where (a, b)\n\tin\n ((1,2))": true,
		"select * from t where a in (1, 2)":            false,
		"insert into t values (1), (2)":                false,
		"select (1) int_col from t":                    false,
	} {
		if got := mayHaveRowIn(q); got != want {
			t.Errorf("mayHaveRowIn(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestRowInResults runs row IN lists through the rewrite and expects the
// rows MariaDB 10.11 returns for the same table and statements (NULLs and
// type coercion included; the values avoid case differences, since the
// default collations differ), and an index access in the plan.
func TestRowInResults(t *testing.T) {
	f := newTestFE(t)
	for _, q := range []string{
		"CREATE DATABASE d", "USE d",
		"CREATE TABLE s (w INT, i INT, q INT, n VARCHAR(10), PRIMARY KEY (w, i), KEY qn (q, n))",
		"INSERT INTO s VALUES (1,1,1,'a'),(1,2,2,'B'),(1,3,NULL,'c'),(2,1,4,NULL),(2,2,NULL,NULL),(3,-1,0,'')",
	} {
		if _, err := f.query(f.ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	f.ctx.SetCurrentDatabase("d")
	tests := []struct{ cond, want string }{
		{"(w, i) IN ((1, 2), (2, 1))", "1:2 2:1"},
		{"(w, i) IN ((1, 2), (1, 2), (9, 9))", "1:2"},
		{"(w, i) IN ((1, NULL), (2, 1))", "2:1"},
		{"(w, i) IN ((NULL, NULL))", ""},
		{"(w, i) IN (('1', '2'), (3, -1))", "1:2 3:-1"},
		{"(w, i) IN ((1.0, 2.5), (2, 1.0))", "2:1"},
		{"(q, n) IN ((2, 'B'), (NULL, 'c'), (4, NULL), (0, ''))", "1:2 3:-1"},
		{"(i, w) IN ((1, 1), (1, 2)) AND q IS NOT NULL", "1:1 2:1"},
		{"(w, i) IN ((1, 1)) OR (q, n) IN ((4, NULL), (2, 'B'))", "1:1 1:2"},
		{"NOT ((w, i) IN ((1, NULL), (2, 2)))", "2:1 3:-1"},
		{"((w, i) IN ((1, 3), (2, NULL))) IS NULL", "2:1 2:2"},
	}
	for _, tt := range tests {
		// In a select list too: the value is TRUE, FALSE or NULL there.
		q := "SELECT w, i FROM (SELECT w, i, " + tt.cond + " AS c FROM s) x WHERE c ORDER BY w, i"
		rows, err := f.query(f.ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var inList []string
		for _, r := range rows {
			inList = append(inList, fmt.Sprintf("%v:%v", r[0], r[1]))
		}
		if g := strings.Join(inList, " "); g != tt.want {
			t.Errorf("%s: got %q, MariaDB %q", q, g, tt.want)
		}
		q = "SELECT w, i FROM s WHERE " + tt.cond + " ORDER BY w, i"
		rows, err = f.query(f.ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var got []string
		for _, r := range rows {
			got = append(got, fmt.Sprintf("%v:%v", r[0], r[1]))
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("%s: got %q, MariaDB %q", q, g, tt.want)
		}
	}
	for _, q := range []string{
		"EXPLAIN PLAN SELECT * FROM s WHERE (w, i) IN ((1, 2), (2, 1))",
		"EXPLAIN PLAN SELECT * FROM s WHERE (q, n) IN ((1, 'a'), (2, 'B')) FOR UPDATE",
		"EXPLAIN PLAN DELETE FROM s WHERE (w, i) IN ((1, 2))",
		"EXPLAIN PLAN UPDATE s SET q = 1 WHERE (w, i) IN ((1, 2))",
	} {
		plan, err := f.query(f.ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if s := fmt.Sprint(plan); !strings.Contains(s, "IndexedTableAccess") {
			t.Errorf("%s: not an index access:\n%s", q, s)
		}
	}
}
