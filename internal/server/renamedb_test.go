package server

import (
	"fmt"
	"strings"
	"testing"

	"lockstep/internal/config"
)

// TestRenameBetweenDatabases: RENAME TABLE a.t TO b.t moves the table, as
// MySQL does (it answered 1235 before). The table keeps its rows, indexes
// and AUTO_INCREMENT counter; its own foreign key to a parent left in the
// old database still references that parent (SHOW CREATE TABLE names the
// old database); a key that referenced the moved table follows it; the
// errors are MySQL's and a failing pair leaves every pair undone. The
// catalog comes back the same after a restart that replays the log and
// after one that loads a checkpoint taken after the moves.
func TestRenameBetweenDatabases(t *testing.T) {
	for _, viaCheckpoint := range []bool{false, true} {
		t.Run(fmt.Sprintf("checkpoint=%v", viaCheckpoint), func(t *testing.T) {
			cfg := config.Default()
			cfg.Datadir = t.TempDir()
			cfg.CheckpointLogSize = 0 // checkpoints only when the test asks
			s := openLocal(t, cfg, nil)
			s.exec(
				"CREATE DATABASE a",
				"CREATE DATABASE b",
				"CREATE TABLE a.p (id INT PRIMARY KEY)",
				"INSERT INTO a.p VALUES (1), (2)",
				"CREATE TABLE a.t (id INT AUTO_INCREMENT PRIMARY KEY, pid INT, v VARCHAR(10), KEY kv (v), FOREIGN KEY (pid) REFERENCES a.p (id))",
				"INSERT INTO a.t (pid, v) VALUES (1, 'x'), (2, 'y'), (1, 'z')",
				"DELETE FROM a.t WHERE id = 3", // the counter stays at 4
				"CREATE TABLE a.c (id INT PRIMARY KEY, tid INT, CONSTRAINT cfk FOREIGN KEY (tid) REFERENCES a.t (id))",
				"INSERT INTO a.c VALUES (1, 1)",
				"CREATE TABLE b.u (id INT PRIMARY KEY)",
				"INSERT INTO b.u VALUES (10)",
				"CREATE TABLE a.w (id INT PRIMARY KEY)",
				"CREATE TABLE a.trg (id INT PRIMARY KEY)",
				"CREATE TRIGGER a.tr BEFORE INSERT ON a.trg FOR EACH ROW SET NEW.id = NEW.id + 1",
				"CREATE VIEW a.v AS SELECT id FROM a.p",
			)
			// MySQL's errors, in its order, and nothing renamed by a
			// statement with a failing pair.
			s.mustFail(1050, "RENAME TABLE a.w TO b.u")
			s.mustFail(1146, "RENAME TABLE a.nope TO b.nope")
			s.mustFail(1049, "RENAME TABLE a.w TO nodb.w")
			s.mustFail(1049, "RENAME TABLE nodb.w TO a.w2")
			s.mustFail(1435, "RENAME TABLE a.trg TO b.trg")
			s.mustFail(1450, "RENAME TABLE a.v TO b.v")
			s.mustFail(1146, "RENAME TABLE a.w TO b.w, a.nope TO b.nope")
			s.mustFail(1050, "RENAME TABLE b.u TO a.u, a.w TO a.p")
			s.mustFail(1146, "RENAME TABLE a.w TO a.w3, a.nope TO a.z") // one database: all or none too
			if got := s.rowsString("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ('a', 'b') AND TABLE_TYPE = 'BASE TABLE' ORDER BY 1, 2"); got != "[[a c] [a p] [a t] [a trg] [a w] [b u]]" {
				t.Fatalf("after the failed renames the tables are %s", got)
			}

			// Several pairs, both ways, with no current database.
			s.exec("RENAME TABLE a.t TO b.t, b.u TO a.u")
			// From a current database, unqualified names are in it.
			s.exec("USE a", "RENAME TABLE w TO b.w2, b.w2 TO b.w")
			// A view renamed in its database comes back under its new
			// name from a checkpoint too (its stored CREATE VIEW named
			// the old one).
			s.exec("RENAME TABLE v TO v2")
			s.mustFail(1146, "SELECT * FROM a.t")
			checks := []string{
				"SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ('a', 'b') ORDER BY 1, 2",
				"SELECT id, pid, v FROM b.t ORDER BY id",
				"SELECT id FROM a.u",
				"SHOW CREATE TABLE b.t",
				"SHOW CREATE TABLE a.c",
				"SELECT id FROM b.t WHERE v = 'y'",
				"SELECT id FROM a.v2 ORDER BY id",
			}
			want := []string{
				"[[a c] [a p] [a trg] [a u] [a v2] [b t] [b w]]",
				"[[1 1 x] [2 2 y]]",
				"[[10]]",
				"", "", "[[2]]", "[[1] [2]]",
			}
			for i, q := range checks {
				got := s.rowsString(q)
				if want[i] != "" && got != want[i] {
					t.Errorf("%s = %s, want %s", q, got, want[i])
				}
				want[i] = got
			}
			if !strings.Contains(want[3], "REFERENCES `a`.`p` (`id`)") || !strings.Contains(want[3], "KEY `kv` (`v`)") {
				t.Errorf("the moved table's definition: %s; want its index and its key to a.p", want[3])
			}
			if !strings.Contains(want[4], "REFERENCES `b`.`t` (`id`)") {
				t.Errorf("the key on the moved table: %s; want it to follow to b.t", want[4])
			}
			// The keys still work, both ways.
			s.mustFail(1451, "DELETE FROM a.p WHERE id = 2")
			s.mustFail(1451, "DELETE FROM b.t WHERE id = 1")
			s.mustFail(1452, "INSERT INTO a.c VALUES (2, 99)")
			if viaCheckpoint {
				if _, err := s.d.checkpoint(s.fe); err != nil {
					t.Fatalf("checkpoint: %v", err)
				}
			}
			s.close()

			s = openLocal(t, cfg, nil)
			for i, q := range checks {
				if got := s.rowsString(q); got != want[i] {
					t.Errorf("after the restart %s = %s, want %s", q, got, want[i])
				}
			}
			// The AUTO_INCREMENT counter came along: the next id is 4.
			s.exec("INSERT INTO b.t (pid, v) VALUES (2, 'n')")
			if got := s.rowsString("SELECT MAX(id) FROM b.t"); got != "[[4]]" {
				t.Errorf("after the move the next AUTO_INCREMENT id is %s, want 4", got)
			}
			s.mustFail(1146, "SELECT * FROM a.t")
			s.mustFail(1451, "DELETE FROM a.p WHERE id = 2")
			s.mustFail(1452, "INSERT INTO a.c VALUES (2, 99)")
			s.mustFail(1452, "INSERT INTO b.t (pid, v) VALUES (9, 'q')")
		})
	}
}
