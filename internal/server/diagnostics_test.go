package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestErrorDiagnostics: a failed statement's error is in its diagnostics
// as MySQL keeps it — SHOW WARNINGS lists it (level Error), SHOW ERRORS
// lists only it, @@error_count counts it — whether the statement failed
// in the parser, the planner or while running, on the text and the
// prepared protocol; the next statement's diagnostics replace it.
func TestErrorDiagnostics(t *testing.T) {
	s := startInProcess(t, nil)
	s.exec(t, "CREATE DATABASE dg")
	s.exec(t, "CREATE TABLE dg.t (id INT PRIMARY KEY, v TINYINT)")
	ctx := context.Background()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	list := func(q string) string {
		t.Helper()
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var level, msg string
			var code int
			if err := rows.Scan(&level, &code, &msg); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s %d %s", level, code, msg))
		}
		return strings.Join(out, "; ")
	}
	counts := func() string {
		t.Helper()
		var e, w int
		if err := conn.QueryRowContext(ctx, "SELECT @@error_count, @@warning_count").Scan(&e, &w); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d/%d", e, w)
	}
	if _, err := conn.ExecContext(ctx, "INSERT IGNORE INTO dg.t VALUES (1, 300)"); err != nil {
		t.Fatal(err)
	}
	if got := list("SHOW WARNINGS"); !strings.HasPrefix(got, "Warning 1264") {
		t.Fatalf("after INSERT IGNORE: %s", got)
	}
	for _, tc := range []struct {
		stmt  string
		args  []any
		error string
	}{
		{stmt: "SELEC 1", error: "Error 1064 You have an error in your SQL syntax"},
		{stmt: "SELECT * FROM dg.nope", error: "Error 1146 Table 'dg.nope' doesn't exist"},
		{stmt: "INSERT INTO dg.t VALUES (1, 1)", error: "Error 1062 Duplicate entry '1' for key 't.PRIMARY'"},
		{stmt: "INSERT INTO dg.t VALUES (?, ?)", args: []any{2, 300}, error: "Error 1264 Out of range value for column 'v' at row 1"},
	} {
		if _, err := conn.ExecContext(ctx, tc.stmt, tc.args...); err == nil {
			t.Fatalf("%s: no error", tc.stmt)
		}
		if got := list("SHOW WARNINGS"); !strings.HasPrefix(got, tc.error) || strings.Contains(got, "Warning 1264") {
			t.Errorf("%s: SHOW WARNINGS: %s, want only %s...", tc.stmt, got, tc.error)
		}
		if got := list("SHOW ERRORS"); !strings.HasPrefix(got, tc.error) {
			t.Errorf("%s: SHOW ERRORS: %s", tc.stmt, got)
		}
		if got := list("SHOW ERRORS LIMIT 0"); got != "" {
			t.Errorf("%s: SHOW ERRORS LIMIT 0: %s", tc.stmt, got)
		}
		if got := counts(); got != "1/1" {
			t.Errorf("%s: @@error_count/@@warning_count = %s, want 1/1", tc.stmt, got)
		}
	}
	if _, err := conn.ExecContext(ctx, "INSERT INTO dg.t VALUES (3, 3)"); err != nil {
		t.Fatal(err)
	}
	if got := list("SHOW WARNINGS"); got != "" {
		t.Errorf("after a statement that succeeded: %s", got)
	}
}
