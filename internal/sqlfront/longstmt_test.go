package sqlfront

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// unionText joins n SELECTs: "SELECT 0 <op> SELECT 1 ...", op(i) joining
// the i-th.
func unionText(n int, op func(i int) string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(" " + op(i) + " ")
		}
		b.WriteString("SELECT " + strconv.Itoa(i%7))
	}
	return b.String()
}

// TestBalanceUnions: a long chain becomes a balanced tree of the same
// operands in the same order, with MySQL's grouping for a mix of ALL and
// DISTINCT; short chains, recursive CTEs' unions and INTERSECT/EXCEPT stay.
func TestBalanceUnions(t *testing.T) {
	depth := func(s ast.SelectStatement) int {
		var d func(ast.SelectStatement) int
		d = func(s ast.SelectStatement) int {
			u, ok := s.(*ast.SetOp)
			if !ok {
				return 0
			}
			return 1 + max(d(u.Left), d(u.Right))
		}
		return d(s)
	}
	leaves := func(s ast.SelectStatement) string {
		var out []string
		var walk func(ast.SelectStatement)
		walk = func(s ast.SelectStatement) {
			if u, ok := s.(*ast.SetOp); ok {
				walk(u.Left)
				walk(u.Right)
				return
			}
			out = append(out, ast.String(s))
		}
		walk(s)
		return strings.Join(out, ",")
	}
	parse := func(q string) ast.Statement {
		st, err := ast.Parse(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return st
	}

	q := unionText(1000, func(int) string { return "UNION ALL" }) + " ORDER BY 1 LIMIT 3"
	st := parse(q)
	before := leaves(st.(*ast.SetOp))
	balanceUnions(st)
	top := st.(*ast.SetOp)
	if d := depth(top); d > 11 {
		t.Errorf("1000 operands: depth %d, want at most 11", d)
	}
	if got := leaves(top); got != before {
		t.Error("the operands changed order")
	}
	if len(top.OrderBy) != 1 || top.Limit == nil {
		t.Error("the top lost its ORDER BY or LIMIT")
	}

	// 40 operands, DISTINCT joining the 30th: the first 30 form one
	// DISTINCT union, the other 10 are UNION ALL after it.
	st = parse(unionText(40, func(i int) string {
		if i == 29 {
			return "UNION"
		}
		return "UNION ALL"
	}))
	balanceUnions(st)
	var check func(s ast.SelectStatement, inDistinct bool) (n int)
	check = func(s ast.SelectStatement, inDistinct bool) int {
		u, ok := s.(*ast.SetOp)
		if !ok {
			return 1
		}
		if _, all := isUnion(u.Type); inDistinct && all {
			t.Errorf("a UNION ALL inside the DISTINCT part")
		}
		_, all := isUnion(u.Type)
		return check(u.Left, inDistinct || !all) + check(u.Right, inDistinct || !all)
	}
	check(st.(*ast.SetOp), false)
	// The DISTINCT part is the leftmost subtree holding exactly 30 operands.
	var distinctSize func(s ast.SelectStatement) int
	distinctSize = func(s ast.SelectStatement) int {
		u, ok := s.(*ast.SetOp)
		if !ok {
			return 0
		}
		if _, all := isUnion(u.Type); !all {
			return strings.Count(leaves(u), ",") + 1
		}
		return distinctSize(u.Left)
	}
	if n := distinctSize(st.(*ast.SetOp)); n != 30 {
		t.Errorf("the DISTINCT union holds %d operands, want 30", n)
	}

	// Left alone (ast.String prints a tree and its chain alike, so the
	// depth is compared).
	outerDepth := func(st ast.Statement) (d int) {
		_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
			if u, ok := n.(*ast.SetOp); ok && d == 0 {
				d = depth(u)
			}
			return true, nil
		}, st)
		return d
	}
	for _, q := range []string{
		unionText(minBalancedUnion-1, func(int) string { return "UNION ALL" }),
		unionText(40, func(int) string { return "INTERSECT" }),
		"WITH RECURSIVE c(n) AS (" + unionText(40, func(int) string { return "UNION ALL" }) + ") SELECT * FROM c",
	} {
		st := parse(q)
		want := outerDepth(st)
		balanceUnions(st)
		if got := outerDepth(st); got != want {
			t.Errorf("%.60s...: depth %d, was %d", q, got, want)
		}
	}
	// In a derived table and a (non-recursive) CTE.
	for _, q := range []string{
		"SELECT COUNT(*) FROM (" + unionText(100, func(int) string { return "UNION ALL" }) + ") AS u",
		"WITH c(n) AS (" + unionText(100, func(int) string { return "UNION ALL" }) + ") SELECT * FROM c",
	} {
		st := parse(q)
		balanceUnions(st)
		if d := outerDepth(st); d != 7 {
			t.Errorf("%.60s...: depth %d, want 7", q, d)
		}
	}
}

// TestLongUnionResults: long chains give the rows MySQL's rules give.
func TestLongUnionResults(t *testing.T) {
	f := newTestFE(t)
	for _, tc := range []struct {
		n        int
		distinct func(i int) bool // the i-th operand joins with UNION (DISTINCT)
	}{
		{300, func(int) bool { return false }},
		{300, func(int) bool { return true }},
		{300, func(i int) bool { return i == 150 }},
		{300, func(i int) bool { return i%50 == 0 }},
		{40, func(i int) bool { return i == 39 }},
	} {
		q := unionText(tc.n, func(i int) string {
			if tc.distinct(i) {
				return "UNION"
			}
			return "UNION ALL"
		})
		// MySQL: the operands up to the last DISTINCT are deduplicated
		// together, the rest appended.
		last := 0
		for i := 1; i < tc.n; i++ {
			if tc.distinct(i) {
				last = i
			}
		}
		var want []string
		seen := map[int]bool{}
		for i := 0; i < tc.n; i++ {
			v := i % 7
			if last > 0 && i <= last {
				if seen[v] {
					continue
				}
				seen[v] = true
			}
			want = append(want, strconv.Itoa(v))
		}
		rows, err := f.query(f.ctx, q)
		if err != nil {
			t.Fatalf("%d operands: %v", tc.n, err)
		}
		var got []string
		for _, r := range rows {
			got = append(got, fmt.Sprint(r[0]))
		}
		if last > 0 {
			// DISTINCT output order is not defined: compare the distinct
			// part as a set, the appended rows in order.
			k := len(seen)
			if len(got) != len(want) {
				t.Fatalf("%d operands, last DISTINCT %d: %d rows, want %d", tc.n, last, len(got), len(want))
			}
			a, b := append([]string(nil), got[:k]...), append([]string(nil), want[:k]...)
			sort.Strings(a)
			sort.Strings(b)
			got, want = append(a, got[k:]...), append(b, want[k:]...)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%d operands, last DISTINCT %d:\n got %v\nwant %v", tc.n, last, got, want)
		}
	}
	// ORDER BY and LIMIT apply to the whole union. (ORDER BY 1 sorts by
	// the constant 1 in go-mysql-server, long union or not.)
	q := "SELECT 0 AS a UNION ALL " + unionText(100, func(int) string { return "UNION ALL" }) + " ORDER BY a DESC LIMIT 3"
	if got := f.rowsString(f.ctx, q); got != "6\n6\n6\n" {
		t.Errorf("ORDER BY ... LIMIT over a long union: %q", got)
	}
}

// TestLongInLookup: an IN list of minLongIn values or more on an indexed
// column is read through the index and gives the rows a scan gives.
func TestLongInLookup(t *testing.T) {
	f := newTestFE(t)
	f.mustExec(f.ctx, "CREATE DATABASE d")
	f.ctx.SetCurrentDatabase("d")
	f.mustExec(f.ctx,
		"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10), u TINYINT UNSIGNED, k INT, KEY ks (s), KEY ku (u, k))",
		"CREATE TABLE scan (id INT, s VARCHAR(10), u TINYINT UNSIGNED, k INT)")
	var b strings.Builder
	b.WriteString("INSERT INTO t VALUES ")
	for i := 0; i < 2000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "(%d, 'v%d', %d, %d)", i*3, i%400, i%256, i%5)
	}
	f.mustExec(f.ctx, b.String(), "INSERT INTO scan SELECT * FROM t")

	r := rand.New(rand.NewSource(1))
	list := func(n int, item func() string) string {
		items := make([]string, n)
		for i := range items {
			items[i] = item()
		}
		return strings.Join(items, ", ")
	}
	ints := func() string {
		switch r.Intn(20) {
		case 0:
			return "NULL"
		case 1:
			return strconv.Itoa(-r.Intn(100))
		case 2:
			return fmt.Sprintf("%d.5", r.Intn(6000))
		case 3:
			return fmt.Sprintf("'%d'", r.Intn(6000))
		case 4:
			return "3.0"
		}
		return strconv.Itoa(r.Intn(6000))
	}
	strs := func() string {
		if r.Intn(10) == 0 {
			return fmt.Sprintf("'V%d'", r.Intn(500)) // case differs: equal under the default collation
		}
		return fmt.Sprintf("'v%d'", r.Intn(500))
	}
	small := func() string { return strconv.Itoa(r.Intn(300) - 20) }
	for _, tc := range []struct{ where string }{
		{"id IN (" + list(150, ints) + ")"},
		{"id IN (" + list(3000, ints) + ")"},
		{"id IN (" + list(500, ints) + ") AND k = 2"},
		{"s IN (" + list(300, strs) + ")"},
		{"u IN (" + list(200, small) + ")"},
		{"u IN (" + list(200, small) + ") AND k = 3"},
		{"u IN (" + list(200, small) + ") AND k = 3 AND id > 1000"},
		{"id IN (" + list(200, ints) + ") OR k = 1"},
		{"NOT id IN (" + list(200, ints) + ")"},
	} {
		got := f.rowsString(f.ctx, "SELECT * FROM t WHERE "+tc.where+" ORDER BY id")
		want := f.rowsString(f.ctx, "SELECT * FROM scan WHERE "+tc.where+" ORDER BY id")
		if got != want {
			t.Errorf("WHERE %.80s...: the index read gives\n%.300s\nthe scan\n%.300s", tc.where, got, want)
		}
	}

	// In joins (go-mysql-server's join planner asks the table too).
	for _, q := range []string{
		"SELECT COUNT(*), SUM(%[1]s.k) FROM %[1]s JOIN scan s2 ON %[1]s.id = s2.id WHERE %[1]s.id IN (" + list(300, ints) + ")",
		"SELECT COUNT(*), SUM(s2.k) FROM scan s2 LEFT JOIN %[1]s ON %[1]s.id = s2.id AND %[1]s.u IN (" + list(200, small) + ")",
		"SELECT COUNT(*) FROM %[1]s WHERE %[1]s.k IN (SELECT k FROM scan s2 WHERE s2.id IN (" + list(200, ints) + "))",
	} {
		got := f.rowsString(f.ctx, fmt.Sprintf(q, "t"))
		want := f.rowsString(f.ctx, fmt.Sprintf(q, "scan"))
		if got != want {
			t.Errorf("%.80s...: the index read gives %q, the scan %q", q, got, want)
		}
	}

	// The plan reads the index.
	rows, err := f.query(f.ctx, "EXPLAIN PLAN SELECT * FROM t WHERE id IN ("+list(200, ints)+")")
	if err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	for _, r := range rows {
		fmt.Fprintln(&plan, r...)
	}
	if !strings.Contains(plan.String(), "IndexedTableAccess") {
		t.Errorf("a 200-value IN list on the primary key is not read through it:\n%.500s", plan.String())
	}
}

// TestAnalysisInterrupted: a cancelled statement's analysis stops at the
// next rule (it used to run to its end: a 20,000-SELECT union planned for
// seconds after KILL QUERY).
func TestAnalysisInterrupted(t *testing.T) {
	f := newTestFE(t)
	q := unionText(20000, func(int) string { return "UNION ALL" })
	ctx, cancel := context.WithCancel(context.Background())
	sctx := f.session()
	sctx = sctx.WithContext(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := f.query(sctx, q)
		done <- err
	}()
	time.Sleep(500 * time.Millisecond)
	cancel()
	start := time.Now()
	select {
	case err := <-done:
		// Some rules report the cancellation in an error of their own
		// with the same text.
		if !errors.Is(err, context.Canceled) && (err == nil || !strings.Contains(err.Error(), context.Canceled.Error())) {
			t.Errorf("the cancelled statement: %v, want context canceled", err)
		}
		// Uncancelled, the analysis runs for seconds (longer on a loaded
		// machine); cancelled, it stops at the next rule. 3 s: room for
		// a rule on a machine at load 20 (1 s failed there once).
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("the statement ran %v after it was cancelled", d)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the cancelled statement did not stop in 60 s")
	}
}

// TestCTERecursionDepth: @@cte_max_recursion_depth as MySQL applies it.
func TestCTERecursionDepth(t *testing.T) {
	f := newTestFE(t)
	cte := func(n int) string {
		return fmt.Sprintf("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < %d) SELECT COUNT(*) FROM c", n)
	}
	if got := f.rowsString(f.ctx, cte(1000)); got != "1000\n" {
		t.Errorf("1000 rows under the default depth: %q", got)
	}
	_, err := f.query(f.ctx, cte(1001))
	var se *mysql.SQLError
	if !errors.As(err, &se) || se.Num != 3636 || se.Message != "Recursive query aborted after 1001 iterations. Try increasing @@cte_max_recursion_depth to a larger value." {
		t.Errorf("1001 rows under the default depth: %v, want 3636", err)
	}
	f.mustExec(f.ctx, "SET cte_max_recursion_depth = 20000")
	if got := f.rowsString(f.ctx, cte(15000)); got != "15000\n" {
		t.Errorf("15000 rows under depth 20000: %q", got) // go-mysql-server stopped at 10,001
	}
	f.mustExec(f.ctx, "SET cte_max_recursion_depth = 0")
	if _, err := f.query(f.ctx, cte(2)); !errors.As(err, &se) || se.Num != 3636 {
		t.Errorf("depth 0: %v, want 3636", err)
	}
	// Iteration 1 reads the anchor's row, so it runs (and fails) even
	// though it adds nothing (MySQL's FollowTailIterator counts so).
	if _, err := f.query(f.ctx, "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1) SELECT COUNT(*) FROM c"); !errors.As(err, &se) || se.Num != 3636 {
		t.Errorf("depth 0, a recursive part that adds nothing: %v, want 3636", err)
	}
	if got := f.rowsString(f.ctx, "WITH RECURSIVE c(n) AS (SELECT 1 FROM dual WHERE 1 = 0 UNION ALL SELECT n + 1 FROM c) SELECT COUNT(*) FROM c"); got != "0\n" {
		t.Errorf("depth 0, an empty anchor: %q", got)
	}
	// A recursive CTE whose anchor is a long union (left a chain:
	// go-mysql-server splits the chain into anchor and recursive parts).
	var anchors []string
	for i := 1; i <= 40; i++ {
		anchors = append(anchors, fmt.Sprintf("SELECT %d", i))
	}
	f.mustExec(f.ctx, "SET cte_max_recursion_depth = 1000")
	if got := f.rowsString(f.ctx, "WITH RECURSIVE c(n) AS ("+strings.Join(anchors, " UNION ALL ")+" UNION ALL SELECT n + 100 FROM c WHERE n < 300) SELECT COUNT(*), SUM(n) FROM c"); got != "160 "+strconv.Itoa(4*820+40*600)+"\n" {
		t.Errorf("a 40-operand anchor: %q", got)
	}
	// UNION (DISTINCT) stops when an iteration adds nothing new.
	f.mustExec(f.ctx, "SET cte_max_recursion_depth = 1000")
	if got := f.rowsString(f.ctx, "WITH RECURSIVE c(n) AS (SELECT 1 UNION SELECT (n + 1) % 5 FROM c) SELECT COUNT(*) FROM c"); got != "5\n" {
		t.Errorf("a UNION that closes its cycle: %q", got)
	}
}

// TestResultLargerThanPacket: string functions return NULL with warning
// 1301 instead of a value larger than max_allowed_packet.
func TestResultLargerThanPacket(t *testing.T) {
	f := newTestFE(t)
	f.mustExec(f.ctx, "SET max_allowed_packet = 1048576")
	for _, tc := range []struct{ expr, fn string }{
		{"REPEAT('ab', 600000)", "repeat"},
		{"SPACE(1048577)", "space"},
		{"LPAD('a', 300000, 'b')", "lpad"}, // 300,000 characters of up to 4 bytes: MySQL's test
		{"RPAD('a', 300000, 'b')", "rpad"},
		{"CONCAT(REPEAT('a', 600000), REPEAT('b', 600000))", "concat"},
		{"CONCAT_WS(',', REPEAT('a', 600000), REPEAT('b', 600000))", "concat_ws"},
		{"REPLACE(REPEAT('a', 600000), 'a', 'aa')", "replace"},
		{"TO_BASE64(REPEAT('a', 900000))", "to_base64"},
	} {
		start := time.Now()
		if got := f.rowsString(f.ctx, "SELECT "+tc.expr+" IS NULL"); got != "true\n" {
			t.Errorf("%s IS NULL: %q", tc.expr, got)
		}
		w := f.ctx.Session.Warnings()
		msg := fmt.Sprintf("Result of %s() was larger than max_allowed_packet (1048576) - truncated", tc.fn)
		if len(w) != 1 || w[0].Code != 1301 || w[0].Level != "Warning" || w[0].Message != msg {
			t.Errorf("%s: warnings %+v, want 1301 %q", tc.expr, w, msg)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s took %v", tc.expr, d)
		}
	}
	// Values that fit are go-mysql-server's, without warnings.
	for q, want := range map[string]string{
		"SELECT REPEAT('ab', 3), LENGTH(SPACE(1048576)), SPACE(-1) = ''":                    "ababab 1048576 true\n",
		"SELECT LPAD('a', 5, 'xy'), RPAD('a', 5, 'xy'), LPAD('abcdef', 3, 'x')":             "xyxya axyxy abc\n",
		"SELECT CONCAT('a', NULL), CONCAT('a', 'b'), REPEAT(NULL, 2), LPAD('a', NULL, 'x')": "<nil> ab <nil> <nil>\n",
	} {
		if got := f.rowsString(f.ctx, q); got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
		if w := f.ctx.Session.Warnings(); len(w) != 0 {
			t.Errorf("%s: warnings %+v", q, w)
		}
	}
	if _, err := f.query(f.ctx, "SELECT REPEAT('a', -1)"); err == nil {
		t.Error("REPEAT with a negative count: no error (go-mysql-server's)")
	}
	_ = sql.Row{}
}
