package sqlfront

import (
	"strconv"
	"strings"
	"testing"
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
