package differential

import (
	"testing"

	"lockstep/internal/testutil"
)

// TestLockTablesDDLAgainstMariaDB: under LOCK TABLES, DDL changes only
// tables locked WRITE (1099 for a READ-locked one, 1100 for one not
// locked), CREATE TABLE is refused (1100), SHOW CREATE TABLE needs the
// table locked while DESCRIBE, SHOW COLUMNS and SHOW INDEX do not, DROP
// TABLE of a WRITE-locked table drops it and its lock, and a renamed table
// stays locked under its new name (docs/mdl.md, "Under LOCK TABLES").
// The same statements on lockstep and MariaDB 10.11; where MariaDB is not
// MySQL 8 (RENAME TABLE under LOCK TABLES is 1192 there; ALTER TABLE ...
// RENAME unlocks the table there), the step says both answers and
// lockstep gives MySQL 8's.
func TestLockTablesDDLAgainstMariaDB(t *testing.T) {
	mdb := startMariaDB(t)
	ls := testutil.StartServer(t)
	sides := []server{
		{name: "lockstep", addr: ls.Addr, user: "root"},
		{name: "mariadb", addr: mdb.addr, user: "diff"},
	}
	const notLocked, readLocked, lockedOrActive, timeout, noTable = 1100, 1099, 1192, 1205, 1146
	A, B, differs := lockA, lockB, lockDiffers
	setup := []string{
		"CREATE TABLE u (id INT PRIMARY KEY, k INT)",
		"CREATE TABLE w (id INT PRIMARY KEY, k INT)",
		"CREATE TRIGGER tr BEFORE INSERT ON w FOR EACH ROW SET NEW.k = 1",
		"CREATE TRIGGER tr2 BEFORE INSERT ON t FOR EACH ROW SET NEW.k = 1",
		"CREATE TEMPORARY TABLE tmp (a INT)",
	}
	scenarios := []lockScenario{
		{"DDL of tables not locked and locked READ", []lockStep{
			A("LOCK TABLES t READ, u WRITE", 0),
			A("ALTER TABLE w ADD COLUMN c INT", notLocked),
			A("ALTER TABLE t ADD COLUMN c INT", readLocked),
			A("ALTER TABLE u ADD COLUMN c INT", 0),
			A("ALTER TABLE w ADD COLUMN c2 INT, ADD INDEX ic (k)", notLocked),
			A("ALTER TABLE u ADD COLUMN c2 INT, ADD INDEX ic (k)", 0),
			A("TRUNCATE TABLE w", notLocked),
			A("TRUNCATE TABLE t", readLocked),
			A("TRUNCATE TABLE u", 0),
			A("CREATE INDEX ik ON w (k)", notLocked),
			A("CREATE INDEX ik ON t (k)", readLocked),
			A("CREATE INDEX ik ON u (k)", 0),
			A("DROP INDEX ik ON u", 0),
			A("ALTER TABLE w RENAME TO w2", notLocked),
			A("ALTER TABLE t RENAME TO t2", readLocked),
			A("CREATE TRIGGER tw BEFORE INSERT ON w FOR EACH ROW SET NEW.k = 1", notLocked),
			A("CREATE TRIGGER tt BEFORE INSERT ON t FOR EACH ROW SET NEW.k = 1", readLocked),
			A("CREATE TRIGGER tu BEFORE INSERT ON u FOR EACH ROW SET NEW.k = 1", 0),
			A("DROP TRIGGER tu", 0),
			A("DROP TRIGGER tr", notLocked),
			A("DROP TRIGGER tr2", readLocked),
			A("CREATE TABLE n (a INT)", notLocked),
			A("CREATE TABLE n2 LIKE t", notLocked),
			A("CREATE TABLE n3 AS SELECT * FROM t", notLocked),
			A("CREATE TEMPORARY TABLE tmp2 (a INT)", 0),
			A("CREATE TEMPORARY TABLE tmp3 LIKE w", notLocked),
			A("CREATE TEMPORARY TABLE tmp4 LIKE t", 0),
			A("CREATE TEMPORARY TABLE tmp5 AS SELECT * FROM w", notLocked),
			A("CREATE TEMPORARY TABLE tmp6 AS SELECT * FROM t", 0),
			A("ALTER TABLE tmp ADD COLUMN b INT", 0),
			A("TRUNCATE TABLE tmp", 0),
			A("SHOW CREATE TABLE w", notLocked),
			A("SHOW CREATE TABLE t", 0),
			A("SHOW CREATE TABLE missing", notLocked),
			A("DESCRIBE w", 0),
			A("SHOW COLUMNS FROM w", 0),
			A("SHOW INDEX FROM w", 0),
			A("DESCRIBE missing", noTable),
			A("DROP TABLE w", notLocked),
			A("DROP TABLE t", readLocked),
			A("DROP TABLE IF EXISTS missing", notLocked),
			A("DROP TABLE missing", notLocked),
			A("CREATE VIEW vv AS SELECT * FROM t", lockedOrActive),
			A("DROP VIEW IF EXISTS vv", lockedOrActive),
			A("DROP DATABASE %s", lockedOrActive),
			A("UNLOCK TABLES", 0),
			A("ALTER TABLE w ADD COLUMN c INT", 0),
			A("DROP TRIGGER tr", 0),
		}},
		{"DROP TABLE of a WRITE-locked table drops its lock", []lockStep{
			A("LOCK TABLES u WRITE, u AS b READ, t READ", 0),
			B("SELECT * FROM u", timeout),
			A("DROP TABLE u", 0),
			A("SELECT * FROM u", notLocked),
			A("SELECT * FROM u AS b", notLocked),
			A("CREATE TABLE u (a INT)", notLocked),
			A("SELECT * FROM t", 0),
			B("CREATE TABLE u (a INT)", 0),
			B("INSERT INTO t VALUES (1, 1)", timeout),
			A("UNLOCK TABLES", 0),
			B("INSERT INTO t VALUES (1, 1)", 0),
		}},
		{"a renamed table stays locked under its new name", []lockStep{
			A("LOCK TABLES u WRITE, t READ", 0),
			A("ALTER TABLE u RENAME TO u2", 0),
			differs(A("SELECT * FROM u2", 0), notLocked),
			differs(A("INSERT INTO u2 VALUES (1, 1)", 0), notLocked),
			A("SELECT * FROM u", notLocked),
			differs(B("SELECT * FROM u2", timeout), 0),
			B("SELECT * FROM u", noTable),
			differs(A("RENAME TABLE u2 TO u3", 0), lockedOrActive),
			differs(A("RENAME TABLE t TO t2", readLocked), lockedOrActive),
			differs(A("RENAME TABLE w TO w2", notLocked), lockedOrActive),
			differs(A("RENAME TABLE u3 TO u4, u4 TO u5", 0), lockedOrActive),
			differs(A("SELECT * FROM u5", 0), notLocked),
			differs(B("INSERT INTO u5 VALUES (2, 2)", timeout), noTable),
			A("UNLOCK TABLES", 0),
			differs(B("SELECT COUNT(*) FROM u5", 0), noTable),
			differs(B("SELECT COUNT(*) FROM u2", noTable), 0),
		}},
	}
	runLockScenarios(t, sides, "ltddl", setup, scenarios)
}
