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

// TestDeleteAllOtherDatabase: DELETE FROM db.t without a WHERE from a
// session with no current database deletes (it was 1049 Unknown database
// ”), and from a session in another database fires db.t's ON DELETE
// trigger for each row (go-mysql-server looked the triggers up in the
// current database); the session's database is the same afterwards.
func TestDeleteAllOtherDatabase(t *testing.T) {
	e := newDatabase(t, startServer(t))
	s := e.session("s")
	s.exec("CREATE TABLE t (id INT PRIMARY KEY)")
	s.exec("CREATE TABLE log (id INT)")
	s.exec("CREATE TRIGGER t_del AFTER DELETE ON t FOR EACH ROW INSERT INTO log VALUES (OLD.id)")
	s.exec("CREATE TABLE plain (id INT PRIMARY KEY)")
	s.exec("INSERT INTO t VALUES (1), (2), (3)")
	s.exec("INSERT INTO plain VALUES (1), (2)")

	none := newSession(t, e.ctx, e.srv.DB(t, ""), "no database")
	if n, _ := none.exec("DELETE FROM " + e.name + ".plain").RowsAffected(); n != 2 {
		t.Errorf("DELETE FROM db.plain with no current database affected %d rows, want 2", n)
	}
	if db := none.str("SELECT IFNULL(DATABASE(), 'NULL')"); db != "NULL" {
		t.Errorf("current database after the DELETE = %s, want none", db)
	}
	other := newSession(t, e.ctx, e.srv.DB(t, ""), "other database")
	other.exec("CREATE DATABASE IF NOT EXISTS " + e.name + "_other")
	other.exec("USE " + e.name + "_other")
	other.exec("CREATE TABLE t (id INT PRIMARY KEY)") // a t with no trigger here
	if n, _ := other.exec("DELETE FROM " + e.name + ".t").RowsAffected(); n != 3 {
		t.Errorf("DELETE FROM db.t from another database affected %d rows, want 3", n)
	}
	s.wantInt(3, "SELECT COUNT(*) FROM log")
	if db := other.str("SELECT DATABASE()"); db != e.name+"_other" {
		t.Errorf("current database after the DELETE = %s, want %s_other", db, e.name)
	}
}
