package integration

import "testing"

// TestDeleteAllIsTransactional: DELETE without a WHERE clause (which
// go-mysql-server plans as a truncate) is an ordinary statement in MySQL:
// inside a transaction it can be rolled back, and other sessions keep
// seeing the rows until it commits.
func TestDeleteAllIsTransactional(t *testing.T) {
	e := newDatabase(t, startServer(t))
	a, b := e.session("a"), e.session("b")
	a.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	a.exec("INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)")
	a.exec("BEGIN")
	if n, _ := a.exec("DELETE FROM t").RowsAffected(); n != 3 {
		t.Fatalf("DELETE affected %d rows, want 3", n)
	}
	var cnt int
	if err := b.c.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM t").Scan(&cnt); err != nil || cnt != 3 {
		t.Fatalf("other session sees %d rows (%v) before the commit, want 3", cnt, err)
	}
	a.exec("ROLLBACK")
	if err := a.c.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM t").Scan(&cnt); err != nil || cnt != 3 {
		t.Fatalf("after ROLLBACK %d rows (%v), want 3", cnt, err)
	}
	a.exec("DELETE FROM t")
	if err := b.c.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM t").Scan(&cnt); err != nil || cnt != 0 {
		t.Fatalf("after an autocommit DELETE %d rows (%v), want 0", cnt, err)
	}
}
