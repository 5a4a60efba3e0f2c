package server

import "testing"

func TestStmtKind(t *testing.T) {
	for _, tc := range []struct {
		q, kind string
	}{
		{"SELECT c FROM t WHERE id=?", "select"},
		{"  select 1", "select"},
		{"(SELECT 1) UNION (SELECT 2)", "select"},
		{"/* hint */ SELECT 1", "select"},
		{"/*+ MAX_EXECUTION_TIME(10) */select 1", "select"},
		{"-- c\nINSERT INTO t VALUES (1)", "insert"},
		{"# c\nreplace into t values (1)", "insert"},
		{"WITH x AS (SELECT 1) SELECT * FROM x", "select"},
		{"UPDATE t SET k=k+1", "update"},
		{"delete from t", "delete"},
		{"BEGIN", "transaction"},
		{"START TRANSACTION", "transaction"},
		{"commit", "transaction"},
		{"ROLLBACK", "transaction"},
		{"SET autocommit=0", "other"},
		{"CREATE TABLE t (id INT)", "other"},
		{"SHOW STATUS", "other"},
		{"", "other"},
		{"/* unterminated", "other"},
		{"--c\nSELECT 1", "other"}, // "--" without a blank is not a comment: an expression
		{"selectx 1", "other"},
		{"SELECTED", "other"},
	} {
		if got := stmtKinds[stmtKind(tc.q)]; got != tc.kind {
			t.Errorf("stmtKind(%q) = %s, want %s", tc.q, got, tc.kind)
		}
	}
}

func BenchmarkStmtLatency(b *testing.B) {
	l := newStmtLatency()
	for i := 0; i < b.N; i++ {
		t0 := l.start()
		l.done("SELECT c FROM sbtest1 WHERE id=?", t0)
	}
}
