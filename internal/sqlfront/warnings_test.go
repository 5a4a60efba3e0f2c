package sqlfront

import (
	"fmt"
	"testing"
)

func TestMySQLWarningMessage(t *testing.T) {
	tests := []struct {
		code      int
		msg, want string
	}{
		{1062, "duplicate primary key given: Duplicate entry '1' for key 't.PRIMARY'", "Duplicate entry '1' for key 't.PRIMARY'"},
		{1062, "duplicate unique key given: Duplicate entry '10' for key 't.u'", "Duplicate entry '10' for key 't.u'"},
		{1062, "Duplicate entry '1' for key 't.PRIMARY'", "Duplicate entry '1' for key 't.PRIMARY'"},
		{1048, "column name 'v' is non-nullable but attempted to set a value of null", "Column 'v' cannot be null"},
		{1048, "something else", "something else"},
		{1048, "column name 'unterminated", "column name 'unterminated"},
		{1264, "Out of range value for column 'x' at row 1", "Out of range value for column 'x' at row 1"},
	}
	for _, tt := range tests {
		if got := mysqlWarningMessage(tt.code, tt.msg); got != tt.want {
			t.Errorf("mysqlWarningMessage(%d, %q) = %q, want %q", tt.code, tt.msg, got, tt.want)
		}
	}
}

// TestWarningLevels: conditions a statement goes on past are Warnings (as
// in MySQL), notes stay Notes, and @@warning_count counts the previous
// statement's conditions.
func TestWarningLevels(t *testing.T) {
	f := newTestFE(t)
	f.mustExec(f.ctx, "CREATE DATABASE w")
	f.ctx.SetCurrentDatabase("w")
	f.mustExec(f.ctx, "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)")
	f.mustExec(f.ctx, "INSERT INTO t VALUES (1, 1)")
	f.mustExec(f.ctx, "INSERT IGNORE INTO t VALUES (1, 2), (2, NULL)")
	rows, err := f.query(f.ctx, "SHOW WARNINGS")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range rows {
		got[fmt.Sprint(r...)] = true
	}
	for _, want := range []string{
		"Warning1062Duplicate entry '1' for key 't.PRIMARY'",
		"Warning1048Column 'v' cannot be null",
	} {
		if !got[want] || len(rows) != 2 {
			t.Fatalf("SHOW WARNINGS = %v, want %q among 2 rows", rows, want)
		}
	}
	f.mustExec(f.ctx, "INSERT IGNORE INTO t VALUES (1, 3)")
	if rows, err := f.query(f.ctx, "SELECT @@warning_count"); err != nil || fmt.Sprint(rows) != "[[1]]" {
		t.Fatalf("@@warning_count = %v, %v; want 1", rows, err)
	}
	if rows, err := f.query(f.ctx, "SELECT @@warning_count"); err != nil || fmt.Sprint(rows) != "[[0]]" {
		t.Fatalf("@@warning_count after a clean statement = %v, %v; want 0", rows, err)
	}
	f.mustExec(f.ctx, "CREATE DATABASE IF NOT EXISTS w")
	if rows, err := f.query(f.ctx, "SHOW WARNINGS"); err != nil || len(rows) != 1 || rows[0][0] != "Note" {
		t.Fatalf("SHOW WARNINGS after CREATE DATABASE IF NOT EXISTS = %v, %v; want one Note", rows, err)
	}
}
