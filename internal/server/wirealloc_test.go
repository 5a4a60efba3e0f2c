package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkWirePointSelect runs sysbench's prepared point select through a
// server in this process over TCP with go-sql-driver (one connection):
// allocations per statement of both sides, the server's share told apart
// with a memory profile (-memprofile, focus handleNextCommand). Issue 35;
// docs/benchmarks/notes.md, 2026-11-28.
func BenchmarkWirePointSelect(b *testing.B) {
	s := startInProcess(b, nil)
	ctx := context.Background()
	const n = 1000
	for _, q := range []string{
		"CREATE DATABASE sbtest",
		`CREATE TABLE sbtest.sbtest1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0,
			c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id))`,
	} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	var sb strings.Builder
	sb.WriteString("INSERT INTO sbtest.sbtest1 (id, k, c, pad) VALUES ")
	for i := 1; i <= n; i++ {
		if i > 1 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "(%d, %d, '%s', '%s')", i, i, strings.Repeat("1234567890-", 10), strings.Repeat("abcde-", 10))
	}
	if _, err := s.db.ExecContext(ctx, sb.String()); err != nil {
		b.Fatal(err)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	stmt, err := conn.PrepareContext(ctx, "SELECT c FROM sbtest.sbtest1 WHERE id=?")
	if err != nil {
		b.Fatal(err)
	}
	defer stmt.Close()
	var c []byte
	b.Run("point_select", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := stmt.QueryRowContext(ctx, i%n+1).Scan(&c); err != nil {
				b.Fatal(err)
			}
		}
	})
}
