package sqlfront

import (
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// loadSbtest creates sysbench's table layout with n rows.
func loadSbtest(b testing.TB, f *testFE, n int) {
	f.mustExec(f.ctx, "CREATE DATABASE IF NOT EXISTS sbtest")
	f.ctx.SetCurrentDatabase("sbtest")
	f.mustExec(f.ctx, `CREATE TABLE sbtest1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0,
		c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id))`)
	for i := 0; i < n; i += 1000 {
		var sb strings.Builder
		sb.WriteString("INSERT INTO sbtest1 (id, k, c, pad) VALUES ")
		for j := i; j < i+1000 && j < n; j++ {
			if j > i {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d, %d, '%s', '%s')", j+1, rand.Intn(n), strings.Repeat("1234567890-", 10), strings.Repeat("abcde-", 10))
		}
		f.mustExec(f.ctx, sb.String())
	}
	f.mustExec(f.ctx, "CREATE INDEX k_1 ON sbtest1 (k)")
}

// BenchmarkPointSelect measures one sysbench point select through the whole
// SQL layer in process (no network), the ceiling for the server path.
func BenchmarkPointSelect(b *testing.B) {
	f := newTestFE(b)
	const n = 100000
	loadSbtest(b, f, n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := fmt.Sprintf("SELECT c FROM sbtest1 WHERE id=%d", i%n+1)
		rows, err := f.query(f.ctx, q)
		if err != nil || len(rows) != 1 {
			b.Fatalf("%v %d", err, len(rows))
		}
	}
}

// BenchmarkPointSelectFast measures a prepared sysbench point select on the
// fast path in process (no network, no packet encoding): what FastExecute
// costs per execution, allocations included. BenchmarkPointSelect is the
// same read through go-mysql-server.
func BenchmarkPointSelectFast(b *testing.B) {
	f := newTestFE(b)
	const n = 100000
	loadSbtest(b, f, n)
	s, err := f.fe.NewSession(context.Background(), &mysql.Conn{ConnectionID: 77}, "127.0.0.1:3306")
	if err != nil {
		b.Fatal(err)
	}
	sess := s.(*Session)
	sess.SetCurrentDatabase("sbtest")
	const q = "SELECT c FROM sbtest1 WHERE id=?"
	f.fe.FastPrepare(77, 1, q, []*querypb.Field{{Name: "c", Type: querypb.Type_CHAR}})
	bv := &querypb.BindVariable{Type: querypb.Type_INT32}
	bind := map[string]*querypb.BindVariable{"v1": bv}
	ids := make([][]byte, 1024)
	for i := range ids {
		ids[i] = []byte(strconv.Itoa(rand.Intn(n) + 1))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bv.Value = ids[i%len(ids)]
		res, ok, err := f.fe.FastExecute(context.Background(), 77, 1, q, bind)
		if err != nil || !ok || len(res.Rows) != 1 {
			b.Fatalf("handled %v, err %v", ok, err)
		}
	}
}
