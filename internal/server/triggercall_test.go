package server

import "testing"

// A procedure called from a trigger runs in the firing statement's
// transaction: go-mysql-server ran each of its statements as at the top
// level, committing, which ended the firing statement's transaction
// halfway (a DELETE of 300 rows failed with "transaction already finished"
// once its cursor went on, or waited 50 s for its own row locks), and a
// ROLLBACK did not take the procedure's writes back.
func TestTriggerCallsProcedureInStatement(t *testing.T) {
	s := startInProcess(t, nil)
	s.exec(t, "CREATE DATABASE d")
	for _, q := range []string{
		"CREATE TABLE d.t (i INT)",
		"INSERT INTO d.t WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 300) SELECT n FROM r",
		"CREATE TABLE d.log (m INT)",
		"CREATE PROCEDURE d.note(x INT) BEGIN INSERT INTO d.log VALUES (x); END",
		"CREATE TRIGGER d.trig BEFORE DELETE ON d.t FOR EACH ROW CALL d.note(OLD.i)",
	} {
		s.exec(t, q)
	}
	conn := mdlConnect(t, s)
	conn.exec("BEGIN")
	conn.exec("DELETE FROM d.t WHERE i <= 150")
	conn.exec("ROLLBACK")
	if got := s.str(t, "SELECT CONCAT(COUNT(*), '/', (SELECT COUNT(*) FROM d.log)) FROM d.t"); got != "300/0" {
		t.Fatalf("after a rolled-back DELETE whose trigger called a procedure: rows/log = %s, want 300/0", got)
	}
	s.exec(t, "DELETE FROM d.t WHERE i > 0")
	if got := s.str(t, "SELECT CONCAT(COUNT(*), '/', (SELECT COUNT(*) FROM d.log)) FROM d.t"); got != "0/300" {
		t.Fatalf("after the DELETE: rows/log = %s, want 0/300", got)
	}
	// A CALL at the top level still commits each of its statements in
	// autocommit mode, as MySQL does.
	s.exec(t, "CALL d.note(1000)")
	if got := s.str(t, "SELECT COUNT(*) FROM d.log WHERE m = 1000"); got != "1" {
		t.Fatalf("top-level CALL: %s rows", got)
	}
}
