package differential

import (
	"testing"

	"lockstep/internal/testutil"
)

// TestLockTablesImplicitAgainstMariaDB: LOCK TABLES ... WRITE also locks
// the tables the locked table's writes reach (docs/mdl.md, "What LOCK
// TABLES locks implicitly"): the tables its triggers write (SHARED_WRITE)
// or read (SHARED_READ), its foreign key parents (SHARED_READ_ONLY) and
// children (SHARED_NO_READ_WRITE when a cascade changes them,
// SHARED_READ_ONLY otherwise), transitively, until UNLOCK TABLES; the
// session uses them by their own names. RENAME TABLE, ALTER TABLE ...
// RENAME and DROP TABLE lock a table's foreign key parents and children
// exclusively (MySQL 8). The second session has lock_wait_timeout=1, so
// a wait shows as 1205. The same steps on lockstep and MariaDB 10.11;
// where MariaDB is not MySQL 8 (it takes no lock on a locked child's
// parents, SHARED_WRITE/SHARED_READ rather than SNRW/SRO on a locked
// parent's children, and none on the relatives of a renamed or dropped
// table), the step records MariaDB's answer and lockstep gives MySQL 8's.
func TestLockTablesImplicitAgainstMariaDB(t *testing.T) {
	mdb := startMariaDB(t)
	ls := testutil.StartServer(t)
	sides := []server{
		{name: "lockstep", addr: ls.Addr, user: "root"},
		{name: "mariadb", addr: mdb.addr, user: "diff"},
	}
	const notLocked, readLocked, timeout, noTable, unknownTable = 1100, 1099, 1205, 1146, 1051
	A, B, differs := lockA, lockB, lockDiffers
	setup := []string{
		"CREATE TABLE lg (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
		"CREATE TABLE lg2 (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
		"CREATE TABLE rd (id INT PRIMARY KEY)",
		"CREATE TABLE other (id INT PRIMARY KEY)",
		"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW INSERT INTO lg (v) VALUES (NEW.id)",
		"CREATE TRIGGER tr2 BEFORE UPDATE ON t FOR EACH ROW SET NEW.k = (SELECT COUNT(*) FROM rd)",
		"CREATE TRIGGER tr3 AFTER INSERT ON lg FOR EACH ROW INSERT INTO lg2 (v) VALUES (NEW.v)",
		"CREATE TABLE p (id INT PRIMARY KEY, k INT)",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)",
		"CREATE TABLE r (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))",
		"CREATE TABLE c2 (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES c (id) ON DELETE CASCADE)",
		"INSERT INTO p VALUES (1, 1), (2, 2), (3, 3)",
		"INSERT INTO c VALUES (1, 1), (2, 2)",
		"INSERT INTO r VALUES (1, 1)",
		"INSERT INTO c2 VALUES (1, 2)",
	}
	scenarios := []lockScenario{
		{"the tables of a WRITE-locked table's triggers", []lockStep{
			A("LOCK TABLES t WRITE", 0),
			B("SELECT * FROM lg", 0),
			B("INSERT INTO lg (v) VALUES (1)", 0),
			B("ALTER TABLE lg ADD COLUMN z INT", timeout),
			B("SELECT * FROM rd", 0),
			B("INSERT INTO rd VALUES (5)", 0),
			B("ALTER TABLE rd ADD COLUMN z INT", timeout),
			B("ALTER TABLE lg2 ADD COLUMN z INT", timeout), // lg's trigger's table
			B("ALTER TABLE other ADD COLUMN z INT", 0),
			A("INSERT INTO t VALUES (50, 50)", 0),
			A("UPDATE t SET k = 0 WHERE id = 50", 0),
			A("INSERT INTO lg (v) VALUES (2)", 0),
			A("SELECT * FROM lg", 0),
			A("INSERT INTO lg2 (v) VALUES (2)", 0),
			A("SELECT * FROM rd", 0),
			A("INSERT INTO rd VALUES (6)", readLocked),
			A("SELECT * FROM lg AS x", notLocked),
			A("SELECT * FROM other", notLocked),
			A("UNLOCK TABLES", 0),
			B("ALTER TABLE lg ADD COLUMN z INT", 0),
			B("ALTER TABLE rd ADD COLUMN z INT", 0),
			B("ALTER TABLE lg2 ADD COLUMN z INT", 0),
		}},
		{"a READ-locked table locks nothing more", []lockStep{
			A("LOCK TABLES t READ, lg READ, lg2 READ", 0),
			B("ALTER TABLE rd ADD COLUMN z INT", 0),
			A("SELECT * FROM rd", notLocked),
			A("INSERT INTO lg (v) VALUES (1)", readLocked),
			A("INSERT INTO t VALUES (51, 51)", readLocked),
			A("UNLOCK TABLES", 0),
		}},
		{"a READ lock of a table a trigger writes becomes a write lock", []lockStep{
			A("LOCK TABLES t WRITE, lg READ", 0),
			A("INSERT INTO lg (v) VALUES (1)", 0),
			A("INSERT INTO t VALUES (52, 52)", 0),
			A("SELECT * FROM lg", 0),
			B("SELECT * FROM lg", 0),
			B("INSERT INTO lg (v) VALUES (1)", timeout),
			B("ALTER TABLE lg2 ADD COLUMN z INT", timeout),
			B("SELECT * FROM lg2", 0),
			A("UNLOCK TABLES", 0),
			B("INSERT INTO lg (v) VALUES (1)", 0),
			B("ALTER TABLE lg2 ADD COLUMN z INT", 0),
			// Under an alias, the READ entry stays READ.
			A("LOCK TABLES t WRITE, lg AS x READ", 0),
			A("UPDATE lg AS x SET v = 0", readLocked),
			A("SELECT * FROM lg AS x", 0),
			A("UPDATE lg SET v = 0", 0),
			A("UPDATE lg AS y SET v = 0", notLocked),
			A("UNLOCK TABLES", 0),
		}},
		{"a WRITE-locked view's tables' triggers", []lockStep{
			A("CREATE VIEW vt AS SELECT * FROM t", 0),
			A("LOCK TABLES vt WRITE", 0),
			B("ALTER TABLE lg ADD COLUMN z INT", timeout),
			B("SELECT * FROM lg", 0),
			A("SELECT * FROM lg", 0),
			A("UNLOCK TABLES", 0),
			B("ALTER TABLE lg ADD COLUMN z INT", 0),
		}},
		{"a WRITE-locked parent's children", []lockStep{
			A("LOCK TABLES p WRITE", 0),
			differs(B("SELECT * FROM c", timeout), 0),
			differs(B("INSERT INTO c VALUES (9, 1)", timeout), 0),
			B("ALTER TABLE c ADD COLUMN z INT", timeout),
			B("SELECT * FROM r", 0),
			differs(B("INSERT INTO r VALUES (9, 1)", timeout), 0),
			B("ALTER TABLE r ADD COLUMN z INT", timeout),
			B("ALTER TABLE c2 ADD COLUMN z INT", timeout), // the cascade's child's child
			A("DELETE FROM p WHERE id = 2", 0),
			A("SELECT * FROM c", 0),
			A("INSERT INTO c VALUES (5, 3)", 0),
			A("SELECT * FROM c2", 0),
			A("INSERT INTO c2 VALUES (5, 5)", 0),
			A("SELECT * FROM r", 0),
			A("INSERT INTO r VALUES (5, 3)", readLocked),
			A("SELECT * FROM c AS x", notLocked),
			A("UNLOCK TABLES", 0),
			B("ALTER TABLE c ADD COLUMN z INT", 0),
			B("INSERT INTO r VALUES (10, 1)", 0),
		}},
		{"a WRITE-locked child's parent (MySQL 8)", []lockStep{
			A("LOCK TABLES c WRITE", 0),
			B("INSERT INTO p VALUES (9, 9)", timeout),
			differs(B("ALTER TABLE p ADD COLUMN z INT", timeout), 0),
			B("SELECT * FROM p", 0),
			B("ALTER TABLE c2 ADD COLUMN z INT", timeout),
			A("INSERT INTO c VALUES (7, 1)", 0),
			differs(A("SELECT * FROM p", 0), notLocked),
			A("UNLOCK TABLES", 0),
			B("ALTER TABLE p ADD COLUMN z2 INT", 0),
		}},
		{"RENAME of a parent waits for a transaction that read the child", []lockStep{
			A("BEGIN", 0),
			A("SELECT * FROM c", 0),
			differs(B("RENAME TABLE p TO p2, p2 TO p", timeout), 0),
			differs(B("ALTER TABLE p RENAME TO p3", timeout), 0),
			B("SELECT * FROM c", 0),
			A("COMMIT", 0),
			differs(B("ALTER TABLE p RENAME TO p3", 0), noTable),
		}},
		{"RENAME of a child waits for a transaction that read the parent", []lockStep{
			A("BEGIN", 0),
			A("SELECT * FROM p", 0),
			differs(B("RENAME TABLE c TO cx, cx TO c", timeout), 0),
			differs(B("RENAME TABLE r TO r2", timeout), 0),
			B("DROP TABLE c2", 0), // c's child: not p's relative
			A("COMMIT", 0),
			differs(B("RENAME TABLE r TO r2", 0), noTable),
		}},
		{"DROP TABLE of a parent with foreign_key_checks=0 waits for a transaction that read the child", []lockStep{
			A("BEGIN", 0),
			A("SELECT * FROM r", 0),
			B("SET foreign_key_checks = 0", 0),
			differs(B("DROP TABLE p", timeout), 0),
			differs(B("SELECT * FROM p", 0), noTable),
			A("COMMIT", 0),
			differs(B("DROP TABLE p", 0), unknownTable),
		}},
		{"DROP TABLE of a child waits for a transaction that read the parent", []lockStep{
			A("BEGIN", 0),
			A("SELECT * FROM p", 0),
			differs(B("DROP TABLE r", timeout), 0),
			A("COMMIT", 0),
			differs(B("DROP TABLE r", 0), unknownTable),
		}},
	}
	runLockScenarios(t, sides, "ltimpl", setup, scenarios)
}
