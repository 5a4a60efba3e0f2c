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
	f.mustExec(f.ctx, "CREATE DATABASE d")
	f.ctx.SetCurrentDatabase("d")
	f.mustExec(f.ctx, "CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY kk(k))",
		"INSERT INTO t VALUES (1,10,'a'),(2,20,'b'),(3,30,'c')")
	for _, tc := range []struct{ q, want string }{
		{"EXPLAIN PLAN SELECT c FROM t WHERE id=2", "[t.id]"},
		{"EXPLAIN PLAN SELECT c FROM t WHERE k BETWEEN 15 AND 35", "[t.k]"},
	} {
		got := f.rowsString(f.ctx, tc.q)
		if !strings.Contains(got, "IndexedTableAccess") || !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n%s", tc.q, got)
		}
	}
}
