package crash

import (
	"context"
	"strconv"
	"testing"

	"lockstep/internal/testutil"
)

// TestFastWritesSurviveKill: inserts, updates and deletes that ran on the
// statement fast path (prepared, in autocommit mode and inside BEGIN ...
// COMMIT) and were acknowledged are all there after kill -9 and recovery;
// a transaction left open at the kill is not.
func TestFastWritesSurviveKill(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*stepTimeout)
	defer cancel()
	s := testutil.StartServer(t)
	db := openDB(t, s, "")
	mustExec(t, ctx, db, "CREATE DATABASE keep", "CREATE TABLE keep.t (id INT PRIMARY KEY, v VARCHAR(20), n INT NOT NULL)")
	hits := func() int {
		c := pin(t, ctx, db)
		defer c.Close()
		var name string
		var n int
		if err := c.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Lockstep_fast_path_hits'").Scan(&name, &n); err != nil {
			t.Fatalf("SHOW GLOBAL STATUS: %v", err)
		}
		return n
	}
	before := hits()
	c := pin(t, ctx, db)
	for id := 1; id <= 50; id++ {
		if _, err := c.ExecContext(ctx, "INSERT INTO keep.t (id, v, n) VALUES (?, ?, ?)", id, "v"+strconv.Itoa(id), 0); err != nil {
			t.Fatal(err)
		}
	}
	for id := 1; id <= 50; id += 2 {
		if _, err := c.ExecContext(ctx, "UPDATE keep.t SET n = n + ? WHERE id = ?", id, id); err != nil {
			t.Fatal(err)
		}
	}
	for id := 10; id <= 50; id += 10 {
		if _, err := c.ExecContext(ctx, "DELETE FROM keep.t WHERE id = ?", id); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, ctx, c, "BEGIN")
	for _, st := range []struct {
		q    string
		args []any
	}{
		{"INSERT INTO keep.t (id, v, n) VALUES (?, ?, ?)", []any{100, "in txn", 7}},
		{"UPDATE keep.t SET v = ? WHERE id = ?", []any{"changed", 1}},
		{"DELETE FROM keep.t WHERE id = ?", []any{2}},
	} {
		if _, err := c.ExecContext(ctx, st.q, st.args...); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, ctx, c, "COMMIT")
	open := pin(t, ctx, db)
	mustExec(t, ctx, open, "BEGIN")
	if _, err := open.ExecContext(ctx, "UPDATE keep.t SET v = ? WHERE id = ?", "uncommitted", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := open.ExecContext(ctx, "INSERT INTO keep.t (id, v, n) VALUES (?, ?, ?)", 200, "uncommitted", 0); err != nil {
		t.Fatal(err)
	}
	if got := hits() - before; got < 85 {
		t.Fatalf("the fast path ran %d of the writes, want at least 85", got)
	}
	const q = "SELECT CONCAT(id, ':', v, ':', n) FROM keep.t ORDER BY id"
	want, err := dbColumn(ctx, db, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 50-5-1+1 {
		t.Fatalf("before the kill: %d rows, want 45: %v", len(want), want)
	}
	s.Kill()
	c.Close()
	open.Close()
	db.Close()

	s2 := testutil.StartServer(t, "--datadir", s.Datadir)
	db2 := openDB(t, s2, "")
	defer db2.Close()
	got, err := dbColumn(ctx, db2, q)
	if err != nil {
		t.Fatalf("after kill -9 and restart: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("after kill -9 and restart: %d rows, want %d\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("after kill -9 and restart: row %d is %s, want %s", i, got[i], want[i])
		}
	}
}
