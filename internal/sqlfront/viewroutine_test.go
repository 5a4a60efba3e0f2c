package sqlfront

import (
	"errors"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// TestCloneStatementIsDeep: viewRunner rewrites a copy of a procedure's
// statement; the interpreter's own (run again by a loop) keeps the view.
func TestCloneStatementIsDeep(t *testing.T) {
	for _, q := range []string{
		"UPDATE v AS q SET q.a = 1, b = b + 1 WHERE q.c = 2 ORDER BY a",
		"INSERT INTO v (a, b) VALUES (1, 2) ON DUPLICATE KEY UPDATE a = 3",
		"DELETE FROM v WHERE a IN (SELECT a FROM w)",
	} {
		st, err := ast.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		before := ast.String(st)
		c := cloneStatement(st)
		_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
			switch n := n.(type) {
			case *ast.ColName:
				n.Name = ast.NewColIdent("changed")
			case *ast.AliasedTableExpr:
				n.Expr = ast.TableName{Name: ast.NewTableIdent("base")}
			}
			return true, nil
		}, c)
		if ins, ok := c.(*ast.Insert); ok {
			ins.Table = ast.TableName{Name: ast.NewTableIdent("base")}
			ins.Columns[0] = ast.NewColIdent("changed")
		}
		if got := ast.String(st); got != before {
			t.Errorf("%s: the original changed with its copy:\n%s", q, got)
		}
		if ast.String(c) == before {
			t.Errorf("%s: the copy did not change", q)
		}
	}
}

// TestViewWritesInRoutines: in process, the writes through views of a
// trigger body and of a procedure (in a loop, from a trigger), the view's
// CHECK OPTION applied to that statement only, and an unwritable view's
// error raised when its statement runs.
func TestViewWritesInRoutines(t *testing.T) {
	f := newTestFE(t)
	ctx := f.ctx
	f.mustExec(ctx, "CREATE DATABASE vr", "USE vr")
	ctx.SetCurrentDatabase("vr")
	f.mustExec(ctx,
		"CREATE TABLE t (id INT PRIMARY KEY, k INT)",
		"CREATE VIEW vc AS SELECT id AS x, k AS y FROM t WHERE k < 10 WITH CHECK OPTION",
		"CREATE VIEW vg AS SELECT k, COUNT(*) AS n FROM t GROUP BY k",
		"CREATE TABLE c (id INT PRIMARY KEY, k INT)",
		"CREATE TRIGGER tc AFTER INSERT ON c FOR EACH ROW BEGIN IF NEW.k < 0 THEN INSERT INTO vg VALUES (1, 1); END IF; INSERT INTO vc VALUES (NEW.id, NEW.k); END",
		"CREATE PROCEDURE pl(n INT) BEGIN DECLARE i INT DEFAULT 0; WHILE i < n DO INSERT INTO vc (y, x) VALUES (i, 100 + i); SET i = i + 1; END WHILE; INSERT INTO t VALUES (200, 50); END",
		"CREATE TABLE d (id INT PRIMARY KEY)",
		"CREATE TRIGGER td AFTER INSERT ON d FOR EACH ROW CALL pl(NEW.id)",
		"INSERT INTO c VALUES (1, 5)",
		"INSERT INTO d VALUES (2)",
	)
	if got, want := f.rowsString(ctx, "SELECT id, k FROM t ORDER BY id"), "1 5\n100 0\n101 1\n200 50\n"; got != want {
		t.Errorf("rows: got\n%swant\n%s", got, want)
	}
	f.mustExec(ctx, "DELETE FROM t WHERE id >= 100")
	for _, c := range []struct {
		q    string
		code int
	}{
		{"INSERT INTO c VALUES (2, 50)", 3819}, // the server answers 1369
		{"INSERT INTO c VALUES (3, -1)", 1471},
		{"CALL pl(20)", 3819},
	} {
		_, err := f.query(ctx, c.q)
		var se *mysql.SQLError
		if err == nil || (c.code != 3819 && (!errors.As(err, &se) || se.Num != c.code)) ||
			(c.code == 3819 && !strings.Contains(err.Error(), ViewCheckPrefix+"vr.vc")) {
			t.Errorf("%s: got %v, want %d", c.q, err, c.code)
		}
	}
	if got, want := f.rowsString(ctx, "SELECT COUNT(*) FROM t WHERE id >= 100"), "10\n"; got != want {
		t.Errorf("rows the failed CALL wrote: %s, want %s", got, want)
	}
}

// TestSignalOfKeepsTheError: an unwritable view in a trigger body becomes
// a SIGNAL of MySQL's error, its message cut to what go-mysql-server takes.
func TestSignalOfKeepsTheError(t *testing.T) {
	sig, ok := signalOf(errNotInsertable(strings.Repeat("v", 100))).(*ast.Signal)
	if !ok || sig.SqlStateValue != "HY000" || len(sig.Info) != 2 {
		t.Fatalf("signal: %#v", sig)
	}
	if v := sig.Info[0].Value.(*ast.SQLVal); string(v.Val) != "1471" {
		t.Errorf("errno %s", v.Val)
	}
	if v := sig.Info[1].Value.(*ast.SQLVal); len(v.Val) != 128 || !strings.HasPrefix(string(v.Val), "The target table vvv") {
		t.Errorf("message %q", v.Val)
	}
}
