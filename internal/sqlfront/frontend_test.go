package sqlfront

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
)

// testFE is an in-process frontend with one session.
type testFE struct {
	t   testing.TB
	fe  *Frontend
	ctx *sql.Context
}

func newTestFE(t testing.TB) *testFE {
	fe, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fe.Close)
	return &testFE{t: t, fe: fe, ctx: fe.NewLocalContext(context.Background())}
}

// session returns a new independent session context.
func (f *testFE) session() *sql.Context {
	c := f.fe.NewLocalContext(context.Background())
	c.SetCurrentDatabase(f.ctx.GetCurrentDatabase())
	return c
}

func (f *testFE) query(ctx *sql.Context, q string) ([]sql.Row, error) {
	ctx = ctx.WithQuery(q)
	_, iter, _, err := f.fe.Engine.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	var rows []sql.Row
	for {
		r, err := iter.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			iter.Close(ctx)
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, iter.Close(ctx)
}

func (f *testFE) mustExec(ctx *sql.Context, qs ...string) {
	f.t.Helper()
	for _, q := range qs {
		if _, err := f.query(ctx, q); err != nil {
			f.t.Fatalf("%s: %v", q, err)
		}
	}
}

func (f *testFE) rowsString(ctx *sql.Context, q string) string {
	f.t.Helper()
	rows, err := f.query(ctx, q)
	if err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintln(&b, r...)
	}
	return b.String()
}

func TestExplainUsesIndexes(t *testing.T) {
	f := newTestFE(t)
	loadSbtest(t, f, 100)
	for _, tc := range []struct{ q, want string }{
		{"SELECT c FROM sbtest1 WHERE id=2", "[sbtest1.id]"},
		{"SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 50", "[sbtest1.id]"},
		{"SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 5 AND 50", "[sbtest1.id]"},
		{"SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 50 ORDER BY c", "[sbtest1.id]"},
		{"SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 5 AND 50 ORDER BY c", "[sbtest1.id]"},
		{"UPDATE sbtest1 SET k=k+1 WHERE id=7", "[sbtest1.id]"},
		{"UPDATE sbtest1 SET c='x' WHERE id=7", "[sbtest1.id]"},
		{"DELETE FROM sbtest1 WHERE id=7", "[sbtest1.id]"},
		{"SELECT id, k, c, pad FROM sbtest1 WHERE k IN (1, 5, 9)", "[sbtest1.k]"},
		{"SELECT count(k) FROM sbtest1 WHERE k BETWEEN 1 AND 5 OR k BETWEEN 10 AND 15", "[sbtest1.k]"},
	} {
		got := f.rowsString(f.ctx, "EXPLAIN PLAN "+tc.q)
		if !strings.Contains(got, "IndexedTableAccess") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: want indexed access on %s, plan:\n%s", tc.q, tc.want, got)
		}
	}
}
