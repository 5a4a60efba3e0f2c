package integration

import (
	"strings"
	"testing"
)

// TestPrimaryKeyChanges: ALTER TABLE ADD/DROP PRIMARY KEY (was 1235) and a
// PRIMARY KEY on a column prefix (was enforced on the whole value), as
// MySQL 8 has them — 1062 naming the key, 1138 for a NULL in a new key
// column, 1075 for dropping the AUTO_INCREMENT column's only key, the
// ALTER waiting for a transaction that changed a row of the table (1205
// after innodb_lock_wait_timeout), the prefix in SHOW CREATE TABLE, the
// table COMMENT kept when the key is a clause — and all of it through kill
// -9, recovered from the log (which replays the ALTERs, hidden row ids
// included) and from a checkpoint.
func TestPrimaryKeyChanges(t *testing.T) {
	r := startRecovering(t)
	exec, must := r.exec, r.must
	errMsg := func(err error, code uint16, msg, what string) {
		t.Helper()
		expectErrno(t, err, code, what)
		if err != nil && !strings.Contains(err.Error(), msg) {
			t.Fatalf("%s: %v, want %q", what, err, msg)
		}
	}
	must("CREATE DATABASE pk")
	must("CREATE TABLE pk.h (a INT, b VARCHAR(10), KEY kb (b))")
	must("INSERT INTO pk.h VALUES (1, 'x'), (2, 'y'), (2, 'z')")
	errMsg(exec("ALTER TABLE pk.h ADD PRIMARY KEY (a)"), erDupEntry, "Duplicate entry '2' for key 'h.PRIMARY'", "ADD PRIMARY KEY over duplicates")
	must("DELETE FROM pk.h WHERE b = 'z'")
	must("INSERT INTO pk.h VALUES (NULL, 'n')")
	errMsg(exec("ALTER TABLE pk.h ADD PRIMARY KEY (a)"), 1138, "Invalid use of NULL value", "ADD PRIMARY KEY over a NULL")
	must("DELETE FROM pk.h WHERE a IS NULL")

	// A transaction that changed a row holds the ALTER back: 1205 after
	// the session's lock wait timeout, success once it ends. As in MySQL
	// the ALTER waits for the table's metadata lock (lock_wait_timeout)
	// first, which the transaction holds.
	holder, alterer := newSession(t, r.ctx, r.db, "holder"), newSession(t, r.ctx, r.db, "alterer")
	holder.exec("BEGIN")
	holder.exec("UPDATE pk.h SET b = 'w' WHERE a = 1")
	alterer.exec("SET innodb_lock_wait_timeout = 1, lock_wait_timeout = 1")
	alterer.mustFail(erLockWaitTimeout, "ALTER TABLE pk.h ADD PRIMARY KEY (a)")
	alterer.exec("SET innodb_lock_wait_timeout = 50, lock_wait_timeout = 50")
	alter := alterer.goExec("ALTER TABLE pk.h ADD PRIMARY KEY (a)")
	alter.mustBlock(t)
	holder.exec("COMMIT")
	alter.mustSucceed(t)
	errMsg(exec("INSERT INTO pk.h VALUES (2, 'q')"), erDupEntry, "Duplicate entry '2' for key 'h.PRIMARY'", "a duplicate under the new key")
	must("INSERT INTO pk.h VALUES (3, 'v')")

	// Prefix keys, and the table comment beside a PRIMARY KEY clause.
	must("CREATE TABLE pk.g (v VARCHAR(50), n INT, PRIMARY KEY (v(3))) COMMENT='kept'")
	must("INSERT INTO pk.g VALUES ('abcdef', 1), ('xyz', 2)")
	// The AUTO_INCREMENT column's only key cannot go.
	must("CREATE TABLE pk.ai (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
	errMsg(exec("ALTER TABLE pk.ai DROP PRIMARY KEY"), 1075, "there can be only one auto column and it must be defined as a key", "DROP PRIMARY KEY of an AUTO_INCREMENT key")
	// Back to hidden row ids; the rows changed afterwards are found again
	// when the log replays it.
	must("CREATE TABLE pk.d (a INT PRIMARY KEY, b INT)")
	must("INSERT INTO pk.d VALUES (5, 50), (3, 30), (4, 40)")
	must("ALTER TABLE pk.d DROP PRIMARY KEY")
	must("INSERT INTO pk.d VALUES (3, 31)")
	must("UPDATE pk.d SET b = b + 1 WHERE a = 4")
	must("DELETE FROM pk.d WHERE b = 30")

	check := func(when string) {
		t.Helper()
		for q, want := range map[string]string{
			"SELECT a, b FROM pk.h ORDER BY a":             "1,w;2,y;3,v",
			"SELECT v, n FROM pk.g WHERE v = 'abcdef'":     "abcdef,1",
			"SELECT COUNT(*) FROM pk.g WHERE v = 'abcxyz'": "0",
			"SELECT a, b FROM pk.d ORDER BY a, b":          "3,31;4,41;5,50",
			"SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'pk' AND TABLE_NAME = 'g'": "kept",
		} {
			if got := r.rows(q); got != want {
				t.Errorf("%s: %s = %q, want %q", when, q, got, want)
			}
		}
		errMsg(exec("INSERT INTO pk.g VALUES ('abcxyz', 3)"), erDupEntry, "Duplicate entry 'abc' for key 'g.PRIMARY'", when+": a duplicate prefix")
		errMsg(exec("INSERT INTO pk.h VALUES (1, 'again')"), erDupEntry, "for key 'h.PRIMARY'", when+": a duplicate under the added key")
		create := r.rows("SHOW CREATE TABLE pk.g")
		for _, want := range []string{"PRIMARY KEY (`v`(3))", "COMMENT='kept'"} {
			if !strings.Contains(create, want) {
				t.Errorf("%s: SHOW CREATE TABLE pk.g lacks %q:\n%s", when, want, create)
			}
		}
		if create := r.rows("SHOW CREATE TABLE pk.d"); strings.Contains(create, "PRIMARY KEY") || !strings.Contains(create, "`a` int NOT NULL") {
			t.Errorf("%s: SHOW CREATE TABLE pk.d after DROP PRIMARY KEY:\n%s", when, create)
		}
		// Hidden row ids keep finding the right rows.
		must("UPDATE pk.d SET b = b + 100 WHERE a = 5")
		must("UPDATE pk.d SET b = b - 100 WHERE a = 5")
	}
	check("before a restart")

	r.recoverTwice("pk.filler", check)
}
