package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestLockingClauses covers MySQL 8's locking-read options and the way the
// server learns that a statement locks (per session and statement, never
// by a shared table of query texts).
func TestLockingClauses(t *testing.T) {
	srv := startServer(t)

	// NOWAIT fails at once with 3572 on a row another transaction holds,
	// and reads normally when nothing is in the way; the transaction stays
	// open (only the statement fails).
	t.Run("NoWait", func(t *testing.T) {
		cases := []struct{ holder, requester string }{
			{"SELECT v FROM t WHERE id = 1 FOR UPDATE", "SELECT v FROM t WHERE id = 1 FOR UPDATE NOWAIT"},
			{"SELECT v FROM t WHERE id = 1 FOR UPDATE", "SELECT v FROM t WHERE id = 1 FOR SHARE NOWAIT"},
			{"SELECT v FROM t WHERE id = 1 FOR SHARE", "SELECT v FROM t WHERE id = 1 FOR UPDATE NOWAIT"},
			{"UPDATE t SET v = 5 WHERE id = 1", "SELECT v FROM t FOR UPDATE NOWAIT"},
			{"UPDATE t SET v = 5 WHERE id = 1", "select v from t where id = 1\n  for update\n  nowait ;"},
		}
		for i, c := range cases {
			t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
				e := newDatabase(t, srv)
				h, r := e.session("holder"), e.session("requester")
				lockTable(h)
				r.exec("SET innodb_lock_wait_timeout = 20")
				h.exec("BEGIN")
				h.exec(c.holder)
				r.exec("BEGIN")
				r.wantInt(0, "SELECT v FROM t WHERE id = 2 FOR UPDATE NOWAIT") // free row: fine
				start := time.Now()
				r.mustFail(3572, c.requester)
				if d := time.Since(start); d > 5*time.Second {
					t.Fatalf("NOWAIT took %v: it waited", d)
				}
				// Still in the transaction, still holding row 2.
				r.wantInt(1, "SELECT COUNT(*) FROM t WHERE id = 2 FOR UPDATE")
				h.mustFail(3572, "SELECT v FROM t WHERE id = 2 FOR UPDATE NOWAIT")
				h.exec("COMMIT")
				r.exec("COMMIT")
			})
		}
	})

	// SKIP LOCKED leaves out the rows another transaction holds.
	t.Run("SkipLocked", func(t *testing.T) {
		cases := []struct {
			holder, requester string
			want              []int64
		}{
			{"SELECT v FROM t WHERE id = 1 FOR UPDATE", "SELECT id FROM t ORDER BY id FOR UPDATE SKIP LOCKED", []int64{2, 3}},
			{"SELECT v FROM t WHERE id = 2 FOR UPDATE", "SELECT id FROM t ORDER BY id FOR SHARE SKIP LOCKED", []int64{1, 3}},
			{"SELECT v FROM t WHERE id = 2 FOR SHARE", "SELECT id FROM t ORDER BY id FOR SHARE SKIP LOCKED", []int64{1, 2, 3}},
			{"SELECT v FROM t WHERE id = 2 FOR SHARE", "SELECT id FROM t ORDER BY id FOR UPDATE SKIP LOCKED", []int64{1, 3}},
			{"UPDATE t SET v = 1 WHERE id IN (1, 3)", "SELECT id FROM t WHERE k >= 10 FOR UPDATE SKIP LOCKED", []int64{2}},
		}
		for i, c := range cases {
			t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
				e := newDatabase(t, srv)
				h, r := e.session("holder"), e.session("requester")
				lockTable(h)
				h.exec("BEGIN")
				h.exec(c.holder)
				r.exec("BEGIN")
				r.wantInts(c.want, c.requester)
				// The rows it returned are locked by it now.
				h.mustFail(3572, fmt.Sprintf("SELECT v FROM t WHERE id = %d FOR UPDATE NOWAIT", c.want[0]))
				h.exec("COMMIT")
				r.exec("COMMIT")
			})
		}
	})

	// A FOR UPDATE split over lines, and as a prepared statement, locks.
	t.Run("Recognised", func(t *testing.T) {
		h, r := holdingRow1(t, newDatabase(t, srv))
		r.mustFail(1205, "SELECT v FROM t WHERE id = 1 FOR\nUPDATE")
		r.mustFail(1205, "SELECT v FROM t WHERE id = 1\tFOR\t\tSHARE")
		r.mustFail(1205, "SELECT v FROM t WHERE id = ? FOR UPDATE", 1) // server-side prepared
		h.exec("COMMIT")
		r.exec("COMMIT")
	})

	// FOR SHARE, NOWAIT and SKIP LOCKED in server-side prepared statements
	// (COM_STMT_PREPARE, as go-sql-driver sends a query with arguments):
	// the protocol layer parses the text itself with a parser that knows
	// neither FOR SHARE nor NOWAIT, and these failed to prepare with 1105
	// "syntax error" (execHook.rewrite).
	t.Run("PreparedOptions", func(t *testing.T) {
		h, r := holdingRow1(t, newDatabase(t, srv))
		r.wantInt(0, "SELECT v FROM t WHERE id = ? FOR SHARE", 2)
		r.mustFail(3572, "SELECT v FROM t WHERE id = ? FOR UPDATE NOWAIT", 1)
		r.mustFail(3572, "SELECT v FROM t WHERE id = ? FOR SHARE NOWAIT", 1)
		r.mustFail(3572, "select v from t where id = ?\n  for update\n  nowait ;", 1)
		r.mustFail(1205, "SELECT v FROM t WHERE id = ? FOR SHARE", 1)
		r.wantInts([]int64{2, 3}, "SELECT id FROM t WHERE id >= ? ORDER BY id FOR SHARE SKIP LOCKED", 1)
		r.wantInts([]int64{2, 3}, "SELECT id FROM t WHERE id >= ? ORDER BY id FOR UPDATE SKIP LOCKED", 1)
		h.exec("COMMIT")
		r.exec("COMMIT")
	})

	// A prepared FOR UPDATE keeps locking after 20,000 other distinct
	// locking statements (a bounded cache of locking texts, cleared when
	// full, once turned it into a snapshot read).
	t.Run("PreparedAfterManyStatements", func(t *testing.T) {
		e := newDatabase(t, srv)
		h, r, other := e.session("holder"), e.session("requester"), e.session("other")
		lockTable(h)
		r.exec("SET innodb_lock_wait_timeout = 1")
		stmt, err := r.c.PrepareContext(r.ctx, "SELECT v FROM t WHERE id = ? FOR UPDATE")
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		for i := 0; i < 20000; i++ {
			other.exec(fmt.Sprintf("SELECT v FROM t WHERE id = %d FOR UPDATE", 1000+i))
		}
		h.exec("BEGIN")
		h.exec("SELECT v FROM t WHERE id = 1 FOR UPDATE")
		r.exec("BEGIN")
		_, err = stmt.ExecContext(r.ctx, 1)
		expectErrno(t, err, 1205, "prepared FOR UPDATE on a locked row")
		h.exec("COMMIT")
		r.exec("COMMIT")
	})

	// A locking read by a row constructor IN list (the shape TPC-C drivers
	// send) reads through the index and locks only the rows it names — as
	// text and as a prepared statement, for SELECT and DELETE.
	t.Run("RowInLocksOnlyItsRows", func(t *testing.T) {
		e := newDatabase(t, srv)
		h, r := e.session("holder"), e.session("requester")
		h.exec("CREATE TABLE stock (w INT, i INT, q INT, PRIMARY KEY (w, i))")
		h.exec("INSERT INTO stock VALUES (1,1,10),(1,2,20),(1,3,30),(2,1,40),(2,2,50)")
		for _, holder := range []struct {
			stmt string
			args []any
		}{
			{"SELECT q FROM stock WHERE (w, i) IN ((1, 2), (2, 1)) FOR UPDATE", nil},
			{"SELECT q FROM stock WHERE (w, i) IN ((?, ?), (?, ?)) FOR UPDATE", []any{1, 2, 2, 1}},
			{"DELETE FROM stock WHERE (w, i) IN ((1, 2), (2, 1))", nil},
		} {
			h.exec("BEGIN")
			h.exec(holder.stmt, holder.args...)
			r.exec("BEGIN")
			r.wantInts([]int64{10, 30, 50}, "SELECT q FROM stock ORDER BY w, i FOR UPDATE SKIP LOCKED")
			r.mustFail(3572, "SELECT q FROM stock WHERE w = 1 AND i = 2 FOR UPDATE NOWAIT")
			r.mustFail(3572, "SELECT q FROM stock WHERE w = 2 AND i = 1 FOR SHARE NOWAIT")
			r.exec("ROLLBACK")
			h.exec("ROLLBACK")
		}
		plan := strings.Join(queryStrings(t, h, "EXPLAIN PLAN SELECT q FROM stock WHERE (w, i) IN ((1, 2), (2, 1)) FOR UPDATE"), "\n")
		if !strings.Contains(plan, "IndexedTableAccess") {
			t.Fatalf("row IN list not read through the index:\n%s", plan)
		}
	})
}

// queryStrings returns the first column of every row of query.
func queryStrings(t *testing.T, s *session, query string, args ...any) []string {
	t.Helper()
	rows, err := s.c.QueryContext(s.ctx, query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// holdingRow1 returns two sessions in transactions on lockTable's table:
// the holder has row 1 locked FOR UPDATE, the requester waits at most 1 s
// for a lock.
func holdingRow1(t *testing.T, e *env) (holder, requester *session) {
	t.Helper()
	h, r := e.session("holder"), e.session("requester")
	lockTable(h)
	r.exec("SET innodb_lock_wait_timeout = 1")
	h.exec("BEGIN")
	h.exec("SELECT v FROM t WHERE id = 1 FOR UPDATE")
	r.exec("BEGIN")
	return h, r
}
