package server

import (
	"fmt"
	"testing"

	"lockstep/internal/config"
)

// TestDDLSessionSurvivesRestart: a DDL statement's outcome depends on the
// session it ran in, and a restart must reproduce it, whether it replays
// the statement from the log or loads it from a checkpoint. Before the
// session was logged with the statement, a table created under
// ANSI_QUOTES failed to replay and the server did not start (every later
// record named a table it never had), a view created so failed to load
// from a checkpoint (same), and rows that ADD COLUMN ... DEFAULT (NOW())
// filled got the restart's time in the server's time zone.
func TestDDLSessionSurvivesRestart(t *testing.T) {
	for _, viaCheckpoint := range []bool{false, true} {
		t.Run(fmt.Sprintf("checkpoint=%v", viaCheckpoint), func(t *testing.T) {
			cfg := config.Default()
			cfg.Datadir = t.TempDir()
			cfg.CheckpointLogSize = 0 // checkpoints only when the test asks
			s := openLocal(t, cfg, nil)
			s.exec(
				"CREATE DATABASE d",
				"CREATE TABLE d.t (id INT PRIMARY KEY)",
				"INSERT INTO d.t VALUES (1), (2)",
				"SET time_zone = '+05:00'",
				"ALTER TABLE d.t ADD COLUMN c DATETIME(6) DEFAULT (NOW(6))",
				"SET time_zone = '+00:00'",
				"ALTER TABLE d.t ADD COLUMN u DATETIME(6) DEFAULT (UTC_TIMESTAMP(6))",
				`SET sql_mode = 'ANSI_QUOTES'`,
				`CREATE TABLE d."q" ("id" INT PRIMARY KEY, "s" VARCHAR(10) DEFAULT 'x')`,
				`INSERT INTO d."q" ("id") VALUES (7)`,
				`CREATE VIEW d."v" AS SELECT "id", 'lit' AS l FROM d."q" WHERE "s" = 'x'`,
				`CREATE TRIGGER d."tr" BEFORE INSERT ON d."q" FOR EACH ROW SET NEW."s" = CONCAT("s", 'y')`,
				`CREATE PROCEDURE d."p"() SELECT "id" FROM d."q" WHERE "id" < 100`,
				`CREATE EVENT d."ev" ON SCHEDULE EVERY 1 HOUR DISABLE DO INSERT INTO d."q" ("id") VALUES (99)`,
				"SET sql_mode = DEFAULT",
				"SET time_zone = DEFAULT",
				"USE d",
			)
			checks := []string{
				"SELECT id, CAST(c AS CHAR), CAST(u AS CHAR), TIMESTAMPDIFF(HOUR, u, c) FROM d.t ORDER BY id",
				"SELECT * FROM d.v",
				"CALL d.p()",
			}
			before := make([]string, len(checks))
			for i, q := range checks {
				before[i] = s.rowsString(q)
			}
			if want := "[[1 "; before[0][:len(want)] != want || s.rowsString("SELECT TIMESTAMPDIFF(HOUR, u, c) FROM d.t WHERE id = 1") != "[[5]]" {
				t.Fatalf("before the restart: %s; want c five hours ahead of u", before[0])
			}
			if viaCheckpoint {
				if _, err := s.d.checkpoint(s.fe); err != nil {
					t.Fatalf("checkpoint: %v", err)
				}
			}
			s.close()

			s = openLocal(t, cfg, nil)
			s.exec("USE d")
			for i, q := range checks {
				if got := s.rowsString(q); got != before[i] {
					t.Errorf("after the restart %s = %s, want %s", q, got, before[i])
				}
			}
			// The trigger still runs under ANSI_QUOTES: "s" is the column.
			s.exec(`INSERT INTO d.q (id) VALUES (1)`)
			if got := s.rowsString("SELECT s FROM d.q WHERE id = 1"); got != "[[xy]]" {
				t.Errorf("trigger after the restart set s = %s, want xy", got)
			}
		})
	}
}

// rowsString runs q and formats its rows.
func (s *localServer) rowsString(q string) string {
	s.t.Helper()
	rows, err := s.query(q)
	if err != nil {
		s.t.Fatalf("%s: %v", q, err)
	}
	return fmt.Sprint(rows)
}
