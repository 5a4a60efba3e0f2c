package sqlfront

import (
	"context"
	"math/rand"
	"strconv"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// Allocations per fast-path statement (issue 35): each sysbench statement
// oltp_point_select, oltp_read_only and oltp_write_only send, prepared and
// executed in process (no network, no packet encoding). allocs/op is the
// figure to compare (docs/benchmarks/notes.md, 2026-11-28).

// fastBench is a session with sysbench's table and statements prepared on
// the fast path.
type fastBench struct {
	tb   testing.TB
	fe   *Frontend
	s    *Session
	next uint32
}

const fastBenchConn = 78

func newFastBench(tb testing.TB, n int) *fastBench {
	f := newTestFE(tb)
	loadSbtest(tb, f, n)
	conn := &mysql.Conn{ConnectionID: fastBenchConn, UserData: sql.MysqlConnectionUser{User: "root", Host: "localhost"}}
	s, err := f.fe.NewSession(context.Background(), conn, "127.0.0.1:3306")
	if err != nil {
		tb.Fatal(err)
	}
	s.(*Session).SetCurrentDatabase("sbtest")
	return &fastBench{tb: tb, fe: f.fe, s: s.(*Session)}
}

// fastStmt is a statement prepared on the fast path.
type fastStmt struct {
	b    *fastBench
	id   uint32
	q    string
	bvs  []*querypb.BindVariable
	bind map[string]*querypb.BindVariable
	rows int
}

// prepare prepares q (fields: the result metadata go-mysql-server would
// give); exec fails unless the fast path ran it and returned rows rows
// (-1: any number).
func (b *fastBench) prepare(q string, fields []*querypb.Field, types []querypb.Type, rows int) *fastStmt {
	b.next++
	st := &fastStmt{b: b, id: b.next, q: q, bind: map[string]*querypb.BindVariable{}, rows: rows}
	b.fe.FastPrepare(fastBenchConn, st.id, q, fields)
	for i, t := range types {
		bv := &querypb.BindVariable{Type: t}
		st.bvs = append(st.bvs, bv)
		st.bind["v"+strconv.Itoa(i+1)] = bv
	}
	return st
}

// exec executes the statement with the bound values (a method, not a
// func value: its variadic slice stays on the stack).
func (st *fastStmt) exec(vals ...[]byte) {
	for i, v := range vals {
		st.bvs[i].Value = v
	}
	res, ok, err := st.b.fe.FastExecute(context.Background(), fastBenchConn, st.id, st.q, st.bind)
	if err != nil || !ok {
		st.b.tb.Fatalf("%s: handled %v, err %v", st.q, ok, err)
	}
	if st.rows >= 0 && len(res.Rows) != st.rows {
		st.b.tb.Fatalf("%s: %d rows, want %d", st.q, len(res.Rows), st.rows)
	}
}

var (
	charField = []*querypb.Field{{Name: "c", Type: querypb.Type_CHAR}}
	sumField  = []*querypb.Field{{Name: "SUM(k)", Type: querypb.Type_FLOAT64}}
	intT      = []querypb.Type{querypb.Type_INT32}
	twoIntT   = []querypb.Type{querypb.Type_INT32, querypb.Type_INT32}
)

// BenchmarkFastSysbench runs each sysbench statement on the fast path.
// Every sub-benchmark's op is one statement, except txn_* (one
// transaction: BEGIN, the statements, COMMIT).
func BenchmarkFastSysbench(b *testing.B) {
	const n = 10000
	fb := newFastBench(b, n)
	point := fb.prepare("SELECT c FROM sbtest1 WHERE id=?", charField, intT, 1)
	simple := fb.prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?", charField, twoIntT, 100)
	sum := fb.prepare("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?", sumField, twoIntT, 1)
	order := fb.prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c", charField, twoIntT, 100)
	distinct := fb.prepare("SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c", charField, twoIntT, -1)
	updIndex := fb.prepare("UPDATE sbtest1 SET k=k+1 WHERE id=?", nil, intT, 0)
	updNonIndex := fb.prepare("UPDATE sbtest1 SET c=? WHERE id=?", nil, []querypb.Type{querypb.Type_CHAR, querypb.Type_INT32}, 0)
	del := fb.prepare("DELETE FROM sbtest1 WHERE id=?", nil, intT, 0)
	ins := fb.prepare("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)", nil,
		[]querypb.Type{querypb.Type_INT32, querypb.Type_INT32, querypb.Type_CHAR, querypb.Type_CHAR}, 0)
	begin := fb.prepare("BEGIN", nil, nil, 0)
	commit := fb.prepare("COMMIT", nil, nil, 0)

	ids := make([][]byte, 1024)
	his := make([][]byte, len(ids))
	for i := range ids {
		id := rand.Intn(n-100) + 1
		ids[i], his[i] = []byte(strconv.Itoa(id)), []byte(strconv.Itoa(id+99))
	}
	cval := []byte("99999999999-99999999999-99999999999-99999999999-99999999999-99999999999-99999999999-99999999999-99999999999-99999999999")
	pad := []byte("88888888888-88888888888-88888888888-88888888888-88888888888")
	kval := []byte("4242")

	run := func(name string, op func(i int)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				op(i)
			}
		})
	}
	run("point_select", func(i int) { point.exec(ids[i%len(ids)]) })
	run("simple_range", func(i int) { simple.exec(ids[i%len(ids)], his[i%len(ids)]) })
	run("sum_range", func(i int) { sum.exec(ids[i%len(ids)], his[i%len(ids)]) })
	run("order_range", func(i int) { order.exec(ids[i%len(ids)], his[i%len(ids)]) })
	run("distinct_range", func(i int) { distinct.exec(ids[i%len(ids)], his[i%len(ids)]) })
	run("update_index", func(i int) { updIndex.exec(ids[i%len(ids)]) })
	run("update_non_index", func(i int) { updNonIndex.exec(cval, ids[i%len(ids)]) })
	run("delete_insert", func(i int) {
		id := ids[i%len(ids)]
		del.exec(id)
		ins.exec(id, kval, cval, pad)
	})
	run("txn_begin_point_commit", func(i int) {
		begin.exec()
		point.exec(ids[i%len(ids)])
		commit.exec()
	})
	run("txn_10_point", func(i int) {
		begin.exec()
		for j := 0; j < 10; j++ {
			point.exec(ids[(i*10+j)%len(ids)])
		}
		commit.exec()
	})
	run("txn_write_only", func(i int) {
		id := ids[i%len(ids)]
		begin.exec()
		updIndex.exec(id)
		updNonIndex.exec(cval, id)
		del.exec(id)
		ins.exec(id, kval, cval, pad)
		commit.exec()
	})
}

// TestPointSelectFastAllocs: a prepared autocommit point select on the
// fast path allocates twice: the storage transaction (with its txn.Trx and
// read view) and the result (with its key, row and values). It was eight.
func TestPointSelectFastAllocs(t *testing.T) {
	exec := preparedPointSelect(t, 100)
	id := []byte("42")
	if got := testing.AllocsPerRun(200, func() { exec(id) }); got > 2 {
		t.Fatalf("%v allocations per point select, want 2", got)
	}
}

// TestFastSumRangeOverflow: the fast range SUM keeps an int64 while the
// sum fits and goes on exactly past it (both signs, and unsigned values
// above the int64 range).
func TestFastSumRangeOverflow(t *testing.T) {
	f := newTestFE(t)
	f.mustExec(f.ctx, "CREATE DATABASE IF NOT EXISTS sbtest")
	f.ctx.SetCurrentDatabase("sbtest")
	f.mustExec(f.ctx, "CREATE TABLE s (id INT PRIMARY KEY, k BIGINT, u BIGINT UNSIGNED)",
		"INSERT INTO s VALUES (1, 9223372036854775807, 18446744073709551615), (2, 9223372036854775807, 18446744073709551615),"+
			" (3, -9223372036854775808, 1), (4, NULL, NULL), (5, -9223372036854775808, 0), (6, -9223372036854775808, 0), (7, 5, 5)")
	conn := &mysql.Conn{ConnectionID: fastBenchConn, UserData: sql.MysqlConnectionUser{User: "root", Host: "localhost"}}
	s, err := f.fe.NewSession(context.Background(), conn, "127.0.0.1:3306")
	if err != nil {
		t.Fatal(err)
	}
	s.(*Session).SetCurrentDatabase("sbtest")
	sumOf := func(col string, lo, hi int) string {
		q := "SELECT SUM(" + col + ") FROM s WHERE id BETWEEN ? AND ?"
		f.fe.FastPrepare(fastBenchConn, 1, q, []*querypb.Field{{Name: "SUM(" + col + ")", Type: querypb.Type_FLOAT64}})
		bind := map[string]*querypb.BindVariable{
			"v1": {Type: querypb.Type_INT32, Value: []byte(strconv.Itoa(lo))},
			"v2": {Type: querypb.Type_INT32, Value: []byte(strconv.Itoa(hi))},
		}
		res, ok, err := f.fe.FastExecute(context.Background(), fastBenchConn, 1, q, bind)
		if err != nil || !ok || len(res.Rows) != 1 {
			t.Fatalf("%s [%d, %d]: handled %v, err %v", q, lo, hi, ok, err)
		}
		if res.Rows[0][0].IsNull() {
			return "NULL"
		}
		return res.Rows[0][0].ToString()
	}
	for _, c := range []struct {
		col    string
		lo, hi int
		want   string
	}{
		{"k", 1, 1, "9223372036854775807"},
		{"k", 1, 2, "18446744073709551614"},
		{"k", 1, 3, "9223372036854775806"},
		{"k", 1, 7, "-9223372036854775805"},
		{"k", 3, 6, "-27670116110564327424"},
		{"k", 4, 4, "NULL"},
		{"k", 8, 9, "NULL"},
		{"u", 1, 2, "36893488147419103230"},
		{"u", 3, 7, "6"},
	} {
		if got := sumOf(c.col, c.lo, c.hi); got != c.want {
			t.Errorf("SUM(%s) over [%d, %d] = %s, want %s", c.col, c.lo, c.hi, got, c.want)
		}
	}
}

// TestRangeFastAllocs: a range read allocates its transaction, its result
// (with bounds, cursor and a SUM's row) and, for rows, their slice and
// values; SUM only the first two. They were 12 and 18.
func TestRangeFastAllocs(t *testing.T) {
	fb := newFastBench(t, 1000)
	simple := fb.prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?", charField, twoIntT, 100)
	sum := fb.prepare("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?", sumField, twoIntT, 1)
	lo, hi := []byte("101"), []byte("200")
	if got := testing.AllocsPerRun(100, func() { simple.exec(lo, hi) }); got > 4 {
		t.Errorf("%v allocations per range read, want 4", got)
	}
	if got := testing.AllocsPerRun(100, func() { sum.exec(lo, hi) }); got > 2 {
		t.Errorf("%v allocations per range SUM, want 2", got)
	}
}
