package sqlfront

import (
	"context"
	"strconv"
	"strings"
	"testing"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// BenchmarkPlanLongList measures a statement with a long IN list on the
// primary key (1k, 10k, 100k values) and a long UNION ALL chain (500, 1k,
// 5k SELECTs) through the whole SQL layer in process: parsing, planning
// and analysis dominate (the table has three rows). Growth should be
// linear in the list's length (n log n for the union): go-mysql-server
// alone took O(n^2) for the IN list and O(n^3) for the union.
//
//	go test -run XXX -bench PlanLongList -benchtime 3x ./internal/sqlfront/
func BenchmarkPlanLongList(b *testing.B) {
	f := newTestFE(b)
	f.mustExec(f.ctx, "CREATE DATABASE d")
	f.ctx.SetCurrentDatabase("d")
	f.mustExec(f.ctx, "CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (2, 2), (4, 4), (6, 6)")
	for _, n := range []int{1000, 10000, 100000} {
		q := inListQuery(n)
		b.Run("in="+strconv.Itoa(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rows, err := f.query(f.ctx, q)
				if err != nil || len(rows) != 3 {
					b.Fatal(err, len(rows))
				}
			}
		})
	}
	for _, n := range []int{500, 1000, 5000} {
		q := unionQuery(n)
		b.Run("union="+strconv.Itoa(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rows, err := f.query(f.ctx, q)
				if err != nil || len(rows) != n {
					b.Fatal(err, len(rows))
				}
			}
		})
	}
}

// inListQuery selects from t by an IN list of n values on its key.
func inListQuery(n int) string {
	var b strings.Builder
	b.WriteString("SELECT id FROM t WHERE id IN (")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i * 2))
	}
	b.WriteString(")")
	return b.String()
}

// unionQuery is n SELECTs of a constant joined by UNION ALL.
func unionQuery(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		b.WriteString("SELECT ")
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

// BenchmarkVitessPrepareParse measures vitess's own parse of a
// COM_STMT_PREPARE's text, which the protocol layer runs on the
// connection's goroutine before lockstep's handler sees it (KILL cannot
// stop it; it is answered when the parse ends): an IN list of 100k, 1M
// and 5M values and one filling max_allowed_packet (64 MiB), and a
// 50k-SELECT UNION ALL. It should grow linearly.
//
//	go test -run XXX -bench VitessPrepareParse -benchtime 1x ./internal/sqlfront/
func BenchmarkVitessPrepareParse(b *testing.B) {
	inList := func(n, size int) string {
		var s strings.Builder
		s.WriteString("SELECT COUNT(*) FROM t WHERE id IN (?")
		for i := 0; i < n || s.Len() < size; i++ {
			s.WriteString(", ")
			s.WriteString(strconv.Itoa(100000000000 + i))
		}
		return s.String() + ")"
	}
	cases := []struct {
		name string
		q    string
	}{
		{"in=100k", inList(100000, 0)},
		{"in=1M", inList(1000000, 0)},
		{"in=5M", inList(5000000, 0)},
		{"in=64MiB", inList(0, 64<<20-64)},
		{"union=50k", unionQuery(50000)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.q)))
			for i := 0; i < b.N; i++ {
				if _, err := ast.ParseWithOptions(context.Background(), c.q, ast.ParserOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
