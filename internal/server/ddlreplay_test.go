package server

import (
	"context"
	"testing"
	"time"

	"lockstep/internal/config"
)

// TestDDLReplaysSameData: DDL replayed from the log at another moment
// gives the data it gave when it ran (issue 31, item 1). Rows that ADD
// COLUMN fills from the statement's time (CURRENT_TIMESTAMP, NOW(6),
// CURDATE() in another time zone) or from the session's character set
// (SET NAMES latin1, then a default of COLLATION('a')) read the same after
// a restart that replays the log later; before the character set was
// logged with the statement the latter came back as utf8mb4's. A default
// that nothing logged can reproduce (UUID(), RAND(), SYSDATE()) is
// refused, as MySQL with GTIDs refuses it (3775), when the table has rows;
// on an empty table it fills nothing and rows inserted later carry their
// values in their records.
func TestDDLReplaysSameData(t *testing.T) {
	cfg := config.Default()
	cfg.Datadir = t.TempDir()
	cfg.CheckpointLogSize = 0
	s := openLocal(t, cfg, nil)
	s.exec(
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id INT PRIMARY KEY, v INT)",
		"INSERT INTO d.t VALUES (1, 10), (2, 20), (3, 30)",
		"ALTER TABLE d.t ADD COLUMN c DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6)",
		"SET time_zone = '-11:00'",
		"ALTER TABLE d.t ADD COLUMN n DATETIME(6) DEFAULT (NOW(6)), ADD COLUMN day DATE DEFAULT (CURDATE())",
		"SET time_zone = DEFAULT",
		"SET NAMES latin1",
		"ALTER TABLE d.t ADD COLUMN cs VARCHAR(64) DEFAULT (CONCAT(COLLATION('a'), ' ', CHARSET('b')))",
		"SET NAMES utf8mb4",
		"CREATE TABLE d.e (id INT PRIMARY KEY)",
		"ALTER TABLE d.e ADD COLUMN u VARCHAR(36) DEFAULT (UUID()), ADD COLUMN r DOUBLE DEFAULT (RAND())",
		"INSERT INTO d.e (id) VALUES (1), (2)",
	)
	for _, q := range []string{
		"ALTER TABLE d.t ADD COLUMN u VARCHAR(36) DEFAULT (UUID())",
		"ALTER TABLE d.t ADD COLUMN r DOUBLE DEFAULT (RAND() * 10)",
		"ALTER TABLE d.t ADD COLUMN s DATETIME DEFAULT (SYSDATE())",
		"ALTER TABLE d.t ADD COLUMN w VARCHAR(80) DEFAULT (CURRENT_USER())",
	} {
		s.mustFail(3775, q)
	}
	// Deterministic expressions, and a seeded RAND(), are not refused.
	s.exec("ALTER TABLE d.t ADD COLUMN k DOUBLE DEFAULT (RAND(7) + v)")

	checks := []string{
		"SELECT id, v, CAST(c AS CHAR), CAST(n AS CHAR), CAST(day AS CHAR), cs, k FROM d.t ORDER BY id",
		"SELECT id, u, r FROM d.e ORDER BY id",
		"SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'd' ORDER BY TABLE_NAME, ORDINAL_POSITION",
	}
	before := make([]string, len(checks))
	for i, q := range checks {
		before[i] = s.rowsString(q)
	}
	if got := s.rowsString("SELECT DISTINCT cs FROM d.t"); got != "[[latin1_swedish_ci latin1]]" {
		t.Fatalf("the character set default filled %s, want latin1's", got)
	}
	s.close()

	time.Sleep(20 * time.Millisecond) // replay at another moment
	s = openLocal(t, cfg, nil)
	for i, q := range checks {
		if got := s.rowsString(q); got != before[i] {
			t.Errorf("after replaying the log, %s\n = %s\nwant %s", q, got, before[i])
		}
	}
}

// TestDDLUnreplayableFillOfOldVersion: the refusal looks at committed
// rows. A deleted row whose old version an open snapshot still reads does
// not make ADD COLUMN ... DEFAULT (UUID()) refused; the version is filled
// for the snapshot, is in no later state, and a restart gives the same
// table.
func TestDDLUnreplayableFillOfOldVersion(t *testing.T) {
	cfg := config.Default()
	cfg.Datadir = t.TempDir()
	cfg.CheckpointLogSize = 0
	s := openLocal(t, cfg, nil)
	s.exec(
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id INT PRIMARY KEY)",
		"INSERT INTO d.t VALUES (1)",
	)
	reader := &localServer{t: t, fe: s.fe, d: s.d, ctx: s.fe.NewLocalContext(context.Background()), closed: true}
	reader.exec("START TRANSACTION WITH CONSISTENT SNAPSHOT")
	if got := reader.rowsString("SELECT COUNT(*) FROM d.t"); got != "[[1]]" {
		t.Fatalf("snapshot sees %s rows", got)
	}
	s.exec("DELETE FROM d.t", "ALTER TABLE d.t ADD COLUMN u VARCHAR(36) DEFAULT (UUID())")
	reader.exec("COMMIT")
	s.exec("INSERT INTO d.t (id) VALUES (2)")
	const rows = "SELECT id, u FROM d.t"
	before := s.rowsString(rows)
	s.close()
	s = openLocal(t, cfg, nil)
	if got := s.rowsString(rows); got != before {
		t.Errorf("after replaying the log %s = %s, want %s", rows, got, before)
	}
}
