package integration

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// AUTO_INCREMENT survives a restart as in MySQL 8: the counter, not the
// largest id present, decides the next id (issue 30, item 1). Each
// committed transaction's record carries the counters of the tables it
// changed and each checkpoint every table's counter (docs/durability.md,
// "AUTO_INCREMENT"); before, recovery set the counter past the largest id
// present, so the ids of deleted rows were handed out again.

// autoIncSetup creates database ai with one table per case and returns the
// next id each should hand out.
func autoIncSetup(t *testing.T, ctx context.Context, db *sql.DB) map[string]int64 {
	t.Helper()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		"CREATE DATABASE ai",
		"USE ai",
		// Rows 4 and 5 deleted: 6, not 4.
		"CREATE TABLE del (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
		"INSERT INTO del (v) VALUES (1), (2), (3)",
		"INSERT INTO del (v) VALUES (4)",
		"INSERT INTO del (v) VALUES (5)",
		"DELETE FROM del WHERE id IN (4, 5)",
		// ALTER TABLE ... AUTO_INCREMENT = 100 above the rows.
		"CREATE TABLE alt (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, v INT)",
		"INSERT INTO alt (v) VALUES (1), (2)",
		"ALTER TABLE alt AUTO_INCREMENT = 100",
		// A rolled-back transaction's ids (3, 4), then a committed insert
		// (5) that is deleted again: 6.
		"CREATE TABLE rb (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
		"INSERT INTO rb (v) VALUES (1), (2)",
		"BEGIN",
		"INSERT INTO rb (v) VALUES (3), (4)",
		"ROLLBACK",
		"INSERT INTO rb (v) VALUES (5)",
		"DELETE FROM rb WHERE id = 5",
		// A rolled-back transaction's ids (3, 4), then commits to other
		// tables only (those that follow): 5 (the next record written
		// carries the counter a rollback moved, as MySQL 8's redo log does
		// with the next commit's flush).
		"CREATE TABLE rbonly (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
		"INSERT INTO rbonly (v) VALUES (1), (2)",
		"BEGIN",
		"INSERT INTO rbonly (v) VALUES (3), (4)",
		"ROLLBACK",
		// TRUNCATE resets the counter (replayed in log order); the ids
		// after it count again.
		"CREATE TABLE tr (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
		"INSERT INTO tr (v) VALUES (1), (2), (3), (4), (5)",
		"TRUNCATE TABLE tr",
		"INSERT INTO tr (v) VALUES (1), (2)",
		"DELETE FROM tr WHERE id = 2",
		// An explicit id moves the counter (the fast path's insert); the
		// row is deleted: 11, not 2.
		"CREATE TABLE exp (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
		"INSERT INTO exp (v) VALUES (1)",
		"INSERT INTO exp (id, v) VALUES (10, 10)",
		"DELETE FROM exp WHERE id = 10",
		// DELETE without WHERE is a DELETE in MySQL, not a TRUNCATE: the
		// counter stays.
		"CREATE TABLE delall (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
		"INSERT INTO delall (v) VALUES (1), (2), (3)",
		"DELETE FROM delall",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	want := map[string]int64{"del": 6, "alt": 100, "rb": 6, "rbonly": 5, "tr": 3, "exp": 11, "delall": 4}
	// So it is before any restart (without taking an id).
	for table, next := range want {
		var got int64
		if err := db.QueryRowContext(ctx, "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'ai' AND TABLE_NAME = ?", table).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != next {
			t.Fatalf("before the restart: ai.%s's AUTO_INCREMENT is %d, want %d", table, got, next)
		}
	}
	return want
}

// autoIncCheck inserts a row into each table of want, expects the id
// want names, deletes the row again and moves want on past it (so the
// next check, after another restart, also tests that the counter this one
// moved survived).
func autoIncCheck(t *testing.T, ctx context.Context, db *sql.DB, want map[string]int64, when string) {
	t.Helper()
	for _, table := range []string{"del", "alt", "rb", "rbonly", "tr", "exp", "delall"} {
		res, err := db.ExecContext(ctx, "INSERT INTO ai."+table+" (v) VALUES (0)")
		if err != nil {
			t.Fatalf("%s: insert into ai.%s: %v", when, table, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			t.Fatal(err)
		}
		if id != want[table] {
			t.Errorf("%s: the next id of ai.%s is %d, want %d", when, table, id, want[table])
		}
		if _, err := db.ExecContext(ctx, fmt.Sprintf("DELETE FROM ai.%s WHERE id = %d", table, id)); err != nil {
			t.Fatal(err)
		}
		want[table] = id + 1
	}
}

// TestAutoIncrementDurableKill: kill -9, then recovery from the log; then
// (after a checkpoint) kill -9 and recovery from the checkpoint.
func TestAutoIncrementDurableKill(t *testing.T) {
	r := startRecovering(t)
	want := autoIncSetup(t, r.ctx, r.db)
	r.recoverTwice("ai.filler", func(when string) {
		autoIncCheck(t, r.ctx, r.db, want, when)
	})
}

// TestAutoIncrementDurableRestart: the same through clean shutdowns
// (SIGTERM): a restart that replays the log, then one that loads a
// checkpoint.
func TestAutoIncrementDurableRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s1 := testutil.StartServer(t, "--checkpoint-log-size", "64K")
	want := autoIncSetup(t, ctx, s1.DB(t, ""))
	if err := s1.Stop(); err != nil {
		t.Fatal(err)
	}
	s2 := testutil.StartServer(t, "--datadir", s1.Datadir, "--checkpoint-log-size", "64K")
	db := s2.DB(t, "")
	autoIncCheck(t, ctx, db, want, "after a restart that replayed the log")
	fillToCheckpoint(t, ctx, db, "ai.filler", s1.Datadir)
	if err := s2.Stop(); err != nil {
		t.Fatal(err)
	}
	s3 := testutil.StartServer(t, "--datadir", s1.Datadir)
	wantCheckpointLoaded(t, s3)
	autoIncCheck(t, ctx, s3.DB(t, ""), want, "after a restart from a checkpoint")
}
