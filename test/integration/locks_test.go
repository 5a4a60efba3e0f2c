package integration

import (
	"fmt"
	"testing"
	"time"
)

// lockTable creates t(id PK, k UNIQUE, v) with rows id 1..3, k = id*10.
func lockTable(s *session) {
	s.t.Helper()
	s.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, v INT, UNIQUE KEY uk (k))")
	s.exec("INSERT INTO t VALUES (1, 10, 0), (2, 20, 0), (3, 30, 0)")
}

func TestLocks(t *testing.T) {
	srv := startServer(t)

	t.Run("Matrix", func(t *testing.T) {
		// holder runs in an open transaction; then requester (in its own
		// transaction) either waits until the holder commits or runs at
		// once.
		cases := []struct {
			holder, requester string
			blocks            bool
		}{
			{"SELECT v FROM t WHERE id = 1 FOR UPDATE", "SELECT v FROM t WHERE id = 1 FOR UPDATE", true},
			{"SELECT v FROM t WHERE id = 1 FOR UPDATE", "SELECT v FROM t WHERE id = 1 FOR SHARE", true},
			{"SELECT v FROM t WHERE id = 1 FOR UPDATE", "SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE", true},
			{"SELECT v FROM t WHERE id = 1 FOR UPDATE", "UPDATE t SET v = v + 1 WHERE id = 1", true},
			{"SELECT v FROM t WHERE id = 1 FOR UPDATE", "DELETE FROM t WHERE id = 1", true},
			{"SELECT v FROM t WHERE id = 1 FOR UPDATE", "SELECT v FROM t WHERE id = 1", false},
			{"SELECT v FROM t WHERE id = 1 FOR UPDATE", "SELECT COUNT(*) FROM t", false},
			{"SELECT v FROM t WHERE id = 1 FOR UPDATE", "SELECT v FROM t WHERE id = 2 FOR UPDATE", false},
			{"SELECT v FROM t WHERE id = 1 FOR SHARE", "SELECT v FROM t WHERE id = 1 FOR SHARE", false},
			{"SELECT v FROM t WHERE id = 1 FOR SHARE", "SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE", false},
			{"SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE", "SELECT v FROM t WHERE id = 1 FOR SHARE", false},
			{"SELECT v FROM t WHERE id = 1 FOR SHARE", "SELECT v FROM t WHERE id = 1", false},
			{"SELECT v FROM t WHERE id = 1 FOR SHARE", "SELECT v FROM t WHERE id = 1 FOR UPDATE", true},
			{"SELECT v FROM t WHERE id = 1 FOR SHARE", "UPDATE t SET v = v + 1 WHERE id = 1", true},
			{"SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE", "UPDATE t SET v = v + 1 WHERE id = 1", true},
			{"SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE", "DELETE FROM t WHERE id = 1", true},
			{"UPDATE t SET v = v + 1 WHERE id = 1", "SELECT v FROM t WHERE id = 1", false},
			{"UPDATE t SET v = v + 1 WHERE id = 1", "UPDATE t SET v = v + 1 WHERE id = 1", true},
			{"UPDATE t SET v = v + 1 WHERE id = 1", "SELECT v FROM t WHERE id = 1 FOR SHARE", true},
			{"UPDATE t SET v = v + 1 WHERE id = 1", "UPDATE t SET v = v + 1 WHERE id = 2", false},
			{"DELETE FROM t WHERE id = 1", "SELECT COUNT(*) FROM t", false},
			{"DELETE FROM t WHERE id = 1", "UPDATE t SET v = v + 1 WHERE id = 1", true},
			// The same row reached through the unique secondary index.
			{"SELECT v FROM t WHERE k = 10 FOR UPDATE", "UPDATE t SET v = v + 1 WHERE id = 1", true},
			{"UPDATE t SET v = v + 1 WHERE id = 1", "SELECT v FROM t WHERE k = 10 FOR UPDATE", true},
			{"UPDATE t SET v = v + 1 WHERE k = 10", "UPDATE t SET v = v + 1 WHERE k = 20", false},
		}
		for i, c := range cases {
			name := fmt.Sprintf("%02d", i)
			t.Run(name, func(t *testing.T) {
				t.Logf("holder: %s; requester: %s; blocks: %v", c.holder, c.requester, c.blocks)
				e := newDatabase(t, srv)
				h, r := e.session("holder"), e.session("requester")
				lockTable(h)
				// A requester that wrongly waits fails fast with 1205.
				r.exec("SET SESSION innodb_lock_wait_timeout = 2")
				h.exec("BEGIN")
				h.exec(c.holder)
				r.exec("BEGIN")
				p := r.goExec(c.requester)
				if c.blocks {
					p.mustBlock(t)
					h.exec("COMMIT")
					p.mustSucceed(t)
				} else {
					p.mustSucceed(t)
					h.exec("COMMIT")
				}
				r.exec("COMMIT")
			})
		}
	})

	t.Run("BlockedDeleteThenInsert", func(t *testing.T) {
		// The waiting UPDATE finds the row gone once the deleter commits.
		e := newDatabase(t, srv)
		a, b := e.session("A"), e.session("B")
		lockTable(a)
		a.exec("BEGIN")
		a.exec("DELETE FROM t WHERE id = 1")
		b.exec("BEGIN")
		p := b.goExec("UPDATE t SET v = 99 WHERE id = 1")
		p.mustBlock(t)
		a.exec("COMMIT")
		p.mustSucceed(t)
		b.exec("COMMIT")
		b.wantInt(0, "SELECT COUNT(*) FROM t WHERE id = 1")
		b.wantInt(0, "SELECT COUNT(*) FROM t WHERE v = 99")
	})

	t.Run("BlockedUntilRollback", func(t *testing.T) {
		// A waiter released by a ROLLBACK works on the restored row.
		e := newDatabase(t, srv)
		a, b := e.session("A"), e.session("B")
		lockTable(a)
		a.exec("BEGIN")
		a.exec("UPDATE t SET v = 100 WHERE id = 1")
		p := b.goExec("UPDATE t SET v = v + 1 WHERE id = 1") // autocommit
		p.mustBlock(t)
		a.exec("ROLLBACK")
		p.mustSucceed(t)
		a.wantInt(1, "SELECT v FROM t WHERE id = 1")
	})

	t.Run("Deadlock", func(t *testing.T) {
		cases := []struct {
			name             string
			aFirst, bFirst   string // each session's first lock
			aSecond, bSecond string // each then asks for the other's
			// rows 1 and 2 ("1:v 2:v") after the winner commits
			wantIfAWins, wantIfBWins string
		}{
			{
				name:   "UpdateUpdate",
				aFirst: "UPDATE t SET v = 1 WHERE id = 1", bFirst: "UPDATE t SET v = 2 WHERE id = 2",
				aSecond: "UPDATE t SET v = 1 WHERE id = 2", bSecond: "UPDATE t SET v = 2 WHERE id = 1",
				wantIfAWins: "1:1 2:1", wantIfBWins: "1:2 2:2",
			},
			{
				name:   "ForUpdateForUpdate",
				aFirst: "SELECT v FROM t WHERE id = 1 FOR UPDATE", bFirst: "SELECT v FROM t WHERE id = 2 FOR UPDATE",
				aSecond: "SELECT v FROM t WHERE id = 2 FOR UPDATE", bSecond: "SELECT v FROM t WHERE id = 1 FOR UPDATE",
				wantIfAWins: "1:0 2:0", wantIfBWins: "1:0 2:0",
			},
			{
				// Both hold a shared lock on the same row and then
				// want to change it.
				name:   "ShareUpgrade",
				aFirst: "SELECT v FROM t WHERE id = 1 FOR SHARE", bFirst: "SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE",
				aSecond: "UPDATE t SET v = 1 WHERE id = 1", bSecond: "UPDATE t SET v = 2 WHERE id = 1",
				wantIfAWins: "1:1 2:0", wantIfBWins: "1:2 2:0",
			},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				e := newDatabase(t, srv)
				a, b := e.session("A"), e.session("B")
				lockTable(a)
				// Each first inserts a marker row, to check that the
				// victim's whole transaction is undone.
				a.exec("BEGIN")
				a.exec("INSERT INTO t VALUES (101, 1010, 0)")
				a.exec(c.aFirst)
				b.exec("BEGIN")
				b.exec("INSERT INTO t VALUES (102, 1020, 0)")
				b.exec(c.bFirst)
				pa := a.goExec(c.aSecond)
				pa.mustBlock(t)
				pb := b.goExec(c.bSecond)
				// One of them is chosen as the victim at once; the
				// other then gets its lock.
				var errA, errB error
				select {
				case <-pb.done:
					errB = pb.err
					errA = pa.wait(t)
				case <-pa.done:
					errA = pa.err
					errB = pb.wait(t)
				case <-time.After(returnWait):
					t.Fatalf("no deadlock detected after %v", returnWait)
				}
				victim, winner, victimMarker, winnerMarker, want := a, b, 101, 102, c.wantIfBWins
				switch {
				case errno(errA) == erLockDeadlock && errB == nil:
				case errno(errB) == erLockDeadlock && errA == nil:
					victim, winner, victimMarker, winnerMarker, want = b, a, 102, 101, c.wantIfAWins
				default:
					t.Fatalf("want exactly one 1213 and one success; A: %v, B: %v", errA, errB)
				}
				t.Logf("victim: %s", victim.name)
				// The victim's transaction is rolled back as a whole:
				// its marker row and first change are gone, for itself
				// and for others.
				victim.wantInt(0, "SELECT COUNT(*) FROM t WHERE id = ?", victimMarker)
				winner.wantInt(0, "SELECT COUNT(*) FROM t WHERE id = ?", victimMarker)
				winner.wantInt(1, "SELECT COUNT(*) FROM t WHERE id = ?", winnerMarker)
				winner.wantRows(want, "SELECT id, v FROM t WHERE id IN (1, 2) ORDER BY id")
				// The winner commits; the victim's session is usable.
				winner.exec("COMMIT")
				victim.exec("SET SESSION innodb_lock_wait_timeout = 1")
				victim.exec("BEGIN")
				victim.wantInt(3, "SELECT COUNT(*) FROM t WHERE id <= 3 FOR SHARE")
				victim.exec("COMMIT")
				victim.wantRows(want, "SELECT id, v FROM t WHERE id IN (1, 2) ORDER BY id")
				victim.wantInt(1, "SELECT COUNT(*) FROM t WHERE id = ?", winnerMarker)
				victim.wantInt(0, "SELECT COUNT(*) FROM t WHERE id = ?", victimMarker)
			})
		}
	})

	t.Run("DeadlockThreeSessions", func(t *testing.T) {
		// A cycle through three transactions is found too.
		e := newDatabase(t, srv)
		s := []*session{e.session("A"), e.session("B"), e.session("C")}
		lockTable(s[0])
		for i, x := range s {
			x.exec("BEGIN")
			x.exec("UPDATE t SET v = ? WHERE id = ?", 10+i, i+1)
		}
		// A waits for B's row 2, B for C's row 3, C for A's row 1.
		p0 := s[0].goExec("UPDATE t SET v = 10 WHERE id = 2")
		p1 := s[1].goExec("UPDATE t SET v = 11 WHERE id = 3")
		p0.mustBlock(t)
		p2 := s[2].goExec("UPDATE t SET v = 12 WHERE id = 1")
		ps := []*pending{p0, p1, p2}
		victims := 0
		// The victim's rollback releases its lock; commit the others as
		// they get theirs, in order.
		deadline := time.After(returnWait)
		for left := len(ps); left > 0; {
			progressed := false
			for !progressed {
				for i, p := range ps {
					if p == nil {
						continue
					}
					select {
					case <-p.done:
						ps[i] = nil
						left--
						progressed = true
						switch {
						case errno(p.err) == erLockDeadlock:
							victims++
						case p.err != nil:
							t.Fatalf("%s: %v", p.query, p.err)
						default:
							s[i].exec("COMMIT")
						}
					default:
					}
				}
				if !progressed {
					select {
					case <-deadline:
						t.Fatalf("%d statements still blocked after %v", left, returnWait)
					case <-time.After(10 * time.Millisecond):
					}
				}
			}
		}
		if victims != 1 {
			t.Fatalf("%d deadlock victims, want 1", victims)
		}
	})

	t.Run("LockWaitTimeout", func(t *testing.T) {
		for _, stmt := range []string{
			"UPDATE t SET v = v + 100 WHERE id >= 1",
			"SELECT v FROM t WHERE id = 1 FOR UPDATE",
			"SELECT v FROM t WHERE id = 1 FOR SHARE",
			"DELETE FROM t WHERE id = 1",
		} {
			t.Run(stmt, func(t *testing.T) {
				e := newDatabase(t, srv)
				a, b := e.session("A"), e.session("B")
				lockTable(a)
				a.exec("BEGIN")
				a.exec("UPDATE t SET v = 1 WHERE id = 1")

				b.exec("SET SESSION innodb_lock_wait_timeout = 1")
				b.wantInt(1, "SELECT @@innodb_lock_wait_timeout")
				b.wantInt(1, "SELECT @@SESSION.innodb_lock_wait_timeout")
				b.exec("BEGIN")
				b.exec("UPDATE t SET v = 3 WHERE id = 3") // an earlier change in the same transaction
				start := time.Now()
				err := b.execErr(stmt)
				took := time.Since(start)
				expectErrno(t, err, erLockWaitTimeout, "B: "+stmt)
				if took < 900*time.Millisecond || took > 3*time.Second {
					t.Fatalf("1205 after %v, want about 1s", took)
				}
				// Only the statement is rolled back: B's earlier change
				// stays (innodb_rollback_on_timeout=OFF) and whatever
				// the failed statement changed before waiting is undone.
				b.wantRows("1:0 2:0 3:3", "SELECT id, v FROM t ORDER BY id")
				b.exec("UPDATE t SET v = 2 WHERE id = 2")
				b.exec("COMMIT")
				a.exec("COMMIT")
				a.wantRows("1:1 2:2 3:3", "SELECT id, v FROM t ORDER BY id")
			})
		}
	})

	t.Run("LockWaitTimeoutGlobal", func(t *testing.T) {
		// SET GLOBAL innodb_lock_wait_timeout applies to new sessions.
		e := newDatabase(t, srv)
		admin := e.session("admin")
		admin.exec("SET GLOBAL innodb_lock_wait_timeout = 1")
		t.Cleanup(func() {
			h := e.openDB("")
			h.ExecContext(e.ctx, "SET GLOBAL innodb_lock_wait_timeout = 50")
		})
		admin.wantInt(1, "SELECT @@GLOBAL.innodb_lock_wait_timeout")
		a := e.session("A")
		lockTable(a)
		a.exec("BEGIN")
		a.exec("UPDATE t SET v = 1 WHERE id = 1")
		b := newSession(t, e.ctx, e.openDB(""), "B")
		b.wantInt(1, "SELECT @@innodb_lock_wait_timeout")
		start := time.Now()
		b.mustFail(erLockWaitTimeout, "UPDATE t SET v = 2 WHERE id = 1")
		if took := time.Since(start); took > 3*time.Second {
			t.Fatalf("1205 after %v, want about 1s", took)
		}
		a.exec("COMMIT")
	})

	t.Run("ConcurrentDuplicateInsert", func(t *testing.T) {
		cases := []struct {
			name, first, second string
			firstEnds           string // COMMIT or ROLLBACK
			wantErr             uint16 // for the second, after the first ends
		}{
			{"PK/commit", "INSERT INTO t VALUES (5, 50, 0)", "INSERT INTO t VALUES (5, 51, 0)", "COMMIT", erDupEntry},
			{"PK/rollback", "INSERT INTO t VALUES (5, 50, 0)", "INSERT INTO t VALUES (5, 51, 0)", "ROLLBACK", 0},
			{"unique/commit", "INSERT INTO t VALUES (5, 50, 0)", "INSERT INTO t VALUES (6, 50, 0)", "COMMIT", erDupEntry},
			{"unique/rollback", "INSERT INTO t VALUES (5, 50, 0)", "INSERT INTO t VALUES (6, 50, 0)", "ROLLBACK", 0},
			{"unique-by-update/commit", "UPDATE t SET k = 50 WHERE id = 1", "INSERT INTO t VALUES (6, 50, 0)", "COMMIT", erDupEntry},
			{"unique-by-update/rollback", "UPDATE t SET k = 50 WHERE id = 1", "INSERT INTO t VALUES (6, 50, 0)", "ROLLBACK", 0},
			// A key freed by an uncommitted delete is not free yet.
			{"deleted-PK/commit", "DELETE FROM t WHERE id = 1", "INSERT INTO t VALUES (1, 11, 0)", "COMMIT", 0},
			{"deleted-PK/rollback", "DELETE FROM t WHERE id = 1", "INSERT INTO t VALUES (1, 11, 0)", "ROLLBACK", erDupEntry},
			{"deleted-unique/commit", "DELETE FROM t WHERE id = 1", "INSERT INTO t VALUES (7, 10, 0)", "COMMIT", 0},
			{"deleted-unique/rollback", "DELETE FROM t WHERE id = 1", "INSERT INTO t VALUES (7, 10, 0)", "ROLLBACK", erDupEntry},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				e := newDatabase(t, srv)
				a, b := e.session("A"), e.session("B")
				lockTable(a)
				a.exec("BEGIN")
				a.exec(c.first)
				b.exec("BEGIN")
				p := b.goExec(c.second)
				p.mustBlock(t)
				a.exec(c.firstEnds)
				err := p.wait(t)
				if c.wantErr == 0 {
					if err != nil {
						t.Fatalf("B after A's %s: %v, want success", c.firstEnds, err)
					}
				} else {
					expectErrno(t, err, c.wantErr, "B after A's "+c.firstEnds)
				}
				b.exec("COMMIT")
			})
		}
		t.Run("autocommit", func(t *testing.T) {
			// The same without an explicit transaction on B's side.
			e := newDatabase(t, srv)
			a, b := e.session("A"), e.session("B")
			lockTable(a)
			a.exec("BEGIN")
			a.exec("INSERT INTO t VALUES (5, 50, 0)")
			p := b.goExec("INSERT INTO t VALUES (5, 50, 0)")
			p.mustBlock(t)
			a.exec("COMMIT")
			expectErrno(t, p.wait(t), erDupEntry, "B's insert")
			b.wantInt(4, "SELECT COUNT(*) FROM t")
		})
	})

	t.Run("FailedAutocommitStatementReleasesLocks", func(t *testing.T) {
		// An autocommit statement that fails ends its transaction: the
		// session, left idle, holds no locks.
		for _, c := range []struct {
			stmt string
			code uint16
		}{
			{"UPDATE t SET v = 'abc' WHERE id = 1", erTruncatedWrongVal},
			{"UPDATE t SET k = 20 WHERE id = 1", erDupEntry},
			{"UPDATE t SET k = k + 10 WHERE id <= 2 ORDER BY id DESC", erDupEntry},
			{"INSERT INTO t VALUES (1, 99, 0)", erDupEntry},
			{"INSERT INTO t VALUES (4, 40, 0), (1, 99, 0)", erDupEntry},
			{"UPDATE t SET v = NULL + 'x' WHERE id = 1 AND (SELECT 1 FROM nosuch) = 1", erNoSuchTable},
		} {
			t.Run(c.stmt, func(t *testing.T) {
				e := newDatabase(t, srv)
				a, b := e.session("A"), e.session("B")
				lockTable(a)
				a.mustFail(c.code, c.stmt)
				b.exec("SET SESSION innodb_lock_wait_timeout = 1")
				err := b.execErr("UPDATE t SET v = 5 WHERE id IN (1, 2)")
				if err != nil {
					t.Fatalf("B: %v", err)
				}
				a.wantRows("1:5 2:5 3:0", "SELECT id, v FROM t ORDER BY id")
				a.wantInt(3, "SELECT COUNT(*) FROM t")
			})
		}
	})

	t.Run("GapLockRR", func(t *testing.T) {
		// InnoDB RR: a locking range read locks the gaps too (next-key
		// locks), so an insert into the range waits; RC takes no gap
		// locks.
		for _, rc := range []bool{false, true} {
			name := map[bool]string{false: "RR", true: "RC"}[rc]
			t.Run(name, func(t *testing.T) {
				e := newDatabase(t, srv)
				a, b := e.session("A"), e.session("B")
				a.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, KEY ik (k))")
				a.exec("INSERT INTO t VALUES (1, 10), (2, 20), (3, 30), (4, 40)")
				if rc {
					a.exec("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
				}
				b.exec("SET SESSION innodb_lock_wait_timeout = 1")
				a.exec("BEGIN")
				a.wantInt(2, "SELECT COUNT(*) FROM t WHERE k BETWEEN 15 AND 35 FOR UPDATE")
				err := b.execErr("INSERT INTO t VALUES (5, 25)")
				a.exec("COMMIT")
				if rc {
					if err != nil {
						t.Fatalf("RC: insert into a locked range: %v, want success", err)
					}
					return
				}
				// Next-key locks (issue 33): the insert waits, 1205 after
				// B's innodb_lock_wait_timeout.
				expectErrno(t, err, erLockWaitTimeout, "RR: an insert into a range locked by SELECT ... FOR UPDATE")
			})
		}
	})
}
