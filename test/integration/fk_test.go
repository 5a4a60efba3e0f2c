package integration

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// Foreign keys as InnoDB has them (MySQL 8). Where MariaDB 10.11, checked
// by hand, differs from MySQL 8 the test expects MySQL 8:
//   - DDL errors: MariaDB gives 1005 "Can't create table ... (errno: 150
//     "Foreign key constraint is incorrectly formed")" for a missing parent
//     table (MySQL 1824), incompatible columns (3780), a missing parent
//     column (3734) or SET NULL on a NOT NULL column (1830); 1005 with
//     errno 121 for a duplicate constraint name (MySQL 1826).
//   - DROP TABLE of a referenced parent: MariaDB 1451 without the key,
//     MySQL 3730 "Cannot drop table 'p' referenced by a foreign key
//     constraint 'c_ibfk_1' on table 'c'.".
//   - ALTER TABLE DROP COLUMN of a child column: MariaDB 1553 (the index),
//     MySQL 1828; DROP FOREIGN KEY of a missing key: MariaDB "Can't DROP
//     FOREIGN KEY `x`; check that it exists", MySQL "Can't DROP 'x'; check
//     that column/key exists" (both 1091).
//   - information_schema.REFERENTIAL_CONSTRAINTS: an unspecified rule is
//     RESTRICT in MariaDB, NO ACTION in MySQL 8.
// The 1451/1452 messages (the key as InnoDB prints it: columns separated
// by ", ", RESTRICT not printed, NO ACTION printed), 1553 and 1701 read the
// same in both.

const (
	erRowIsReferenced2 = 1451
	erNoReferencedRow2 = 1452
)

// fkStep is one statement of a foreign key scenario: it must succeed (err
// 0) or fail with error err whose message contains msg ({db} stands for
// the test's database); a statement with want is a query whose rows,
// rendered by fkRows, must be want.
type fkStep struct {
	sql  string
	err  uint16
	msg  string
	want string
}

// fkRows renders a query's rows as "a,b;c,d" (NULL as NULL).
func (s *session) fkRows(query string, args ...any) string {
	s.t.Helper()
	rows, err := s.c.QueryContext(s.ctx, query, args...)
	if err != nil {
		s.t.Fatalf("%s: %s: %v", s.name, query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			s.t.Fatalf("%s: %s: %v", s.name, query, err)
		}
		parts := make([]string, len(cols))
		for i, v := range vals {
			parts[i] = "NULL"
			if v.Valid {
				parts[i] = v.String
			}
		}
		out = append(out, strings.Join(parts, ","))
	}
	if err := rows.Err(); err != nil {
		s.t.Fatalf("%s: %s: %v", s.name, query, err)
	}
	return strings.Join(out, ";")
}

// runFKSteps runs the steps in the env's database.
func (e *env) runFKSteps(s *session, steps []fkStep) {
	e.t.Helper()
	for _, st := range steps {
		q := strings.ReplaceAll(st.sql, "{db}", e.name)
		switch {
		case st.want != "" || strings.HasPrefix(strings.ToUpper(q), "SELECT") || strings.HasPrefix(strings.ToUpper(q), "SHOW"):
			if got := s.fkRows(q); got != st.want {
				e.t.Fatalf("%s\n got: %q\nwant: %q", q, got, st.want)
			}
		case st.err != 0:
			err := s.execErr(q)
			expectErrno(e.t, err, st.err, q)
			if msg := strings.ReplaceAll(st.msg, "{db}", e.name); msg != "" && !strings.Contains(err.Error(), msg) {
				e.t.Fatalf("%s: error %q, want it to contain %q", q, err, msg)
			}
		default:
			s.exec(q)
		}
	}
}

// showCreate returns SHOW CREATE TABLE's statement.
func (s *session) showCreate(table string) string {
	s.t.Helper()
	var name, create string
	if err := s.c.QueryRowContext(s.ctx, "SHOW CREATE TABLE "+table).Scan(&name, &create); err != nil {
		s.t.Fatalf("%s: SHOW CREATE TABLE %s: %v", s.name, table, err)
	}
	return create
}

const fkParent = "CREATE TABLE p (id INT PRIMARY KEY, a INT, b INT, v VARCHAR(10), UNIQUE KEY ab (a, b))"

func TestForeignKeys(t *testing.T) {
	srv := startServer(t)
	cases := []struct {
		name  string
		steps []fkStep
	}{
		{"Restrict", []fkStep{
			{sql: fkParent},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))"},
			{sql: "INSERT INTO p VALUES (1, 1, 1, 'one'), (2, 2, 2, 'two'), (3, 3, 3, 'three')"},
			{sql: "INSERT INTO c VALUES (10, 1), (11, 1), (12, NULL)"},
			{sql: "INSERT INTO c VALUES (13, 9)", err: erNoReferencedRow2,
				msg: "Cannot add or update a child row: a foreign key constraint fails (`{db}`.`c`, CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))"},
			{sql: "INSERT INTO c VALUES (13, 2), (14, 9)", err: erNoReferencedRow2},
			{sql: "SELECT id FROM c ORDER BY id", want: "10;11;12"}, // the statement left nothing
			{sql: "UPDATE c SET pid = 9 WHERE id = 10", err: erNoReferencedRow2},
			{sql: "UPDATE c SET pid = 2 WHERE id = 10"},
			{sql: "DELETE FROM p WHERE id = 1", err: erRowIsReferenced2,
				msg: "Cannot delete or update a parent row: a foreign key constraint fails (`{db}`.`c`, CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))"},
			{sql: "UPDATE p SET id = 5 WHERE id = 2", err: erRowIsReferenced2},
			{sql: "UPDATE p SET v = 'uno' WHERE id = 1"}, // not a key column
			{sql: "DELETE FROM p WHERE id = 3"},
			{sql: "DELETE FROM p", err: erRowIsReferenced2},
			{sql: "SELECT id FROM p ORDER BY id", want: "1;2"},
			{sql: "DELETE FROM c WHERE pid = 1"},
			{sql: "DELETE FROM p WHERE id = 1"},
			{sql: "REPLACE INTO p VALUES (2, 2, 2, 'deux')", err: erRowIsReferenced2}, // REPLACE deletes the old row
			{sql: "INSERT INTO c VALUES (20, 2) ON DUPLICATE KEY UPDATE pid = 9"},
			{sql: "INSERT INTO c VALUES (20, 2) ON DUPLICATE KEY UPDATE pid = 9", err: erNoReferencedRow2},
		}},
		{"RestrictAndNoActionSpelledOut", []fkStep{
			{sql: fkParent},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk_r FOREIGN KEY (pid) REFERENCES p (id) ON DELETE RESTRICT ON UPDATE NO ACTION)"},
			{sql: "INSERT INTO p (id) VALUES (1)"},
			{sql: "INSERT INTO c VALUES (1, 1)"},
			{sql: "DELETE FROM p", err: erRowIsReferenced2,
				msg: "(`{db}`.`c`, CONSTRAINT `fk_r` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON UPDATE NO ACTION)"},
			{sql: "UPDATE p SET id = 2", err: erRowIsReferenced2},
		}},
		{"Cascade", []fkStep{
			{sql: fkParent},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk_c FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE ON UPDATE CASCADE)"},
			{sql: "CREATE TABLE g (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES c (id) ON DELETE CASCADE)"},
			{sql: "INSERT INTO p (id) VALUES (1), (2)"},
			{sql: "INSERT INTO c VALUES (10, 1), (11, 1), (20, 2)"},
			{sql: "INSERT INTO g VALUES (100, 10), (101, 11), (200, 20)"},
			{sql: "UPDATE p SET id = 7 WHERE id = 1"},
			{sql: "SELECT id, pid FROM c ORDER BY id", want: "10,7;11,7;20,2"},
			{sql: "DELETE FROM p WHERE id = 7"},
			{sql: "SELECT id FROM c ORDER BY id", want: "20"},
			{sql: "SELECT id FROM g ORDER BY id", want: "200"}, // two levels down
			{sql: "UPDATE c SET id = 21 WHERE id = 20", err: erRowIsReferenced2},
			{sql: "DELETE FROM p"},
			{sql: "SELECT (SELECT COUNT(*) FROM c) + (SELECT COUNT(*) FROM g)", want: "0"},
		}},
		{"SetNull", []fkStep{
			{sql: fkParent},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET NULL ON UPDATE SET NULL)"},
			{sql: "INSERT INTO p (id) VALUES (1), (2)"},
			{sql: "INSERT INTO c VALUES (10, 1), (20, 2)"},
			{sql: "DELETE FROM p WHERE id = 1"},
			{sql: "UPDATE p SET id = 3 WHERE id = 2"},
			{sql: "SELECT id, pid FROM c ORDER BY id", want: "10,NULL;20,NULL"},
		}},
		{"CompositeKey", []fkStep{
			{sql: fkParent},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, x INT, y INT, CONSTRAINT fk2 FOREIGN KEY (x, y) REFERENCES p (a, b) ON DELETE CASCADE ON UPDATE SET NULL)"},
			{sql: "INSERT INTO p VALUES (1, 1, 1, 'a')"},
			{sql: "INSERT INTO c VALUES (1, 1, 1), (2, 1, NULL), (3, NULL, 5)"}, // a NULL part is never checked
			{sql: "INSERT INTO c VALUES (4, 1, 2)", err: erNoReferencedRow2,
				msg: "(`{db}`.`c`, CONSTRAINT `fk2` FOREIGN KEY (`x`, `y`) REFERENCES `p` (`a`, `b`) ON DELETE CASCADE ON UPDATE SET NULL)"},
			{sql: "UPDATE p SET b = 2"},
			{sql: "SELECT id, x, y FROM c ORDER BY id", want: "1,NULL,NULL;2,1,NULL;3,NULL,5"},
		}},
		{"SelfReferencing", []fkStep{
			{sql: "CREATE TABLE t (id INT PRIMARY KEY, parent INT, FOREIGN KEY (parent) REFERENCES t (id) ON DELETE CASCADE)"},
			{sql: "INSERT INTO t VALUES (1, NULL), (2, 1), (3, 2), (4, 3), (5, NULL), (6, 6)"}, // a row may reference itself
			{sql: "INSERT INTO t VALUES (7, 8)", err: erNoReferencedRow2},
			{sql: "DELETE FROM t WHERE id = 2"},
			{sql: "SELECT id FROM t ORDER BY id", want: "1;5;6"},
			{sql: "DELETE FROM t WHERE id = 6"},
		}},
		{"IndexCreatedOrReused", []fkStep{
			{sql: fkParent},
			{sql: "CREATE TABLE c1 (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))"},
			{sql: "CREATE TABLE c2 (id INT PRIMARY KEY, pid INT, CONSTRAINT fk_named FOREIGN KEY (pid) REFERENCES p (id))"},
			{sql: "CREATE TABLE c3 (id INT PRIMARY KEY, pid INT, KEY mine (pid, id), FOREIGN KEY (pid) REFERENCES p (id))"},
			{sql: "CREATE TABLE c4 (id INT PRIMARY KEY, x INT, y INT, FOREIGN KEY (x) REFERENCES p (a))"}, // a prefix of UNIQUE (a, b)
			{sql: "SELECT DISTINCT TABLE_NAME, INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME LIKE 'c%' AND INDEX_NAME <> 'PRIMARY' ORDER BY 1, 2",
				want: "c1,pid;c2,fk_named;c3,mine;c4,x"},
		}},
		{"FailedDDLChangesNothing", []fkStep{
			{sql: "CREATE TABLE p (id INT PRIMARY KEY, v VARCHAR(10), n INT NOT NULL)"},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid VARCHAR(10), FOREIGN KEY (pid) REFERENCES p (id))", err: 3780,
				msg: "Referencing column 'pid' and referenced column 'id' in foreign key constraint 'c_ibfk_1' are incompatible."},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES nope (id))", err: 1824,
				msg: "Failed to open the referenced table 'nope'"},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p (zz))", err: 3734,
				msg: "Missing column 'zz' for constraint 'fk' in the referenced table 'p'"},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid INT NOT NULL, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET NULL)", err: 1830,
				msg: "Column 'pid' cannot be NOT NULL: needed in a foreign key constraint 'c_ibfk_1' SET NULL"},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (n))", err: 1822,
				msg: "Missing index for constraint 'c_ibfk_1' in the referenced table 'p'"},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid INT, x VARCHAR(10), FOREIGN KEY (pid) REFERENCES p (id), FOREIGN KEY (x) REFERENCES p (id))", err: 3780},
			{sql: "SHOW TABLES", want: "p"},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p (id))"},
			{sql: "CREATE TABLE d (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p (id))", err: 1826,
				msg: "Duplicate foreign key constraint name 'fk'"},
			{sql: "SHOW TABLES", want: "c;p"},
			{sql: "INSERT INTO c VALUES (1, 1)", err: erNoReferencedRow2},
			// A key refused after its index was made takes the index along.
			{sql: "CREATE TABLE e (id INT PRIMARY KEY, pid INT)"},
			{sql: "ALTER TABLE e ADD CONSTRAINT fk_d FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET DEFAULT", err: 1215},
			{sql: "SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'e' AND INDEX_NAME = 'fk_d'", want: "0"},
		}},
		{"ForeignKeyChecksOff", []fkStep{
			{sql: "SET foreign_key_checks = 0"},
			// A dump: the child comes first, with rows no parent has.
			{sql: "CREATE TABLE a_child (id INT PRIMARY KEY, pid INT, CONSTRAINT fk_a FOREIGN KEY (pid) REFERENCES z_parent (id) ON DELETE CASCADE)"},
			{sql: "INSERT INTO a_child VALUES (1, 10), (2, 20), (3, 99)"},
			{sql: "CREATE TABLE z_parent (id INT PRIMARY KEY)"},
			{sql: "INSERT INTO z_parent VALUES (10), (20)"},
			{sql: "DELETE FROM z_parent WHERE id = 20"}, // no check and no cascade
			{sql: "SELECT COUNT(*) FROM a_child", want: "3"},
			{sql: "SET foreign_key_checks = 1"},
			{sql: "INSERT INTO a_child VALUES (4, 98)", err: erNoReferencedRow2},
			{sql: "UPDATE a_child SET id = 30 WHERE id = 3"}, // the key's columns do not change: not checked
			{sql: "DELETE FROM z_parent WHERE id = 10"},
			{sql: "SELECT id, pid FROM a_child ORDER BY id", want: "2,20;30,99"},
			{sql: "DROP TABLE z_parent", err: 3730,
				msg: "Cannot drop table 'z_parent' referenced by a foreign key constraint 'fk_a' on table 'a_child'."},
			{sql: "SET foreign_key_checks = 0"},
			{sql: "DROP TABLE z_parent"},
			{sql: "SET foreign_key_checks = 1"},
			{sql: "INSERT INTO a_child VALUES (5, 1)", err: erNoReferencedRow2}, // the parent table is gone
			{sql: "CREATE TABLE z_parent (id INT PRIMARY KEY)"},
			{sql: "INSERT INTO z_parent VALUES (1)"},
			{sql: "INSERT INTO a_child VALUES (5, 1)"},
		}},
		{"AlterTable", []fkStep{
			{sql: fkParent},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid INT)"},
			{sql: "INSERT INTO p (id) VALUES (1)"},
			{sql: "INSERT INTO c VALUES (1, 1), (2, 5)"},
			{sql: "ALTER TABLE c ADD CONSTRAINT fk_p FOREIGN KEY (pid) REFERENCES p (id)", err: erNoReferencedRow2,
				msg: "(`{db}`.`c`, CONSTRAINT `fk_p` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))"},
			{sql: "SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = '{db}'", want: "0"},
			{sql: "DELETE FROM c WHERE id = 2"},
			{sql: "ALTER TABLE c ADD CONSTRAINT fk_p FOREIGN KEY (pid) REFERENCES p (id)"},
			{sql: "INSERT INTO c VALUES (2, 5)", err: erNoReferencedRow2},
			{sql: "ALTER TABLE c DROP INDEX fk_p", err: 1553, msg: "Cannot drop index 'fk_p': needed in a foreign key constraint"},
			{sql: "ALTER TABLE c DROP COLUMN pid", err: 1828, msg: "Cannot drop column 'pid': needed in a foreign key constraint 'fk_p'"},
			{sql: "ALTER TABLE c DROP FOREIGN KEY nope", err: 1091, msg: "Can't DROP 'nope'; check that column/key exists"},
			{sql: "ALTER TABLE c DROP FOREIGN KEY fk_p"},
			{sql: "INSERT INTO c VALUES (2, 5)"}, // no longer checked; the index stays
			{sql: "SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'c' AND INDEX_NAME <> 'PRIMARY'", want: "fk_p"},
			{sql: "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p (id)", err: erNoReferencedRow2},
			{sql: "DELETE FROM c WHERE id = 2"},
			{sql: "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p (id)"},
			{sql: "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p (id)"}, // a second key on the same column
			{sql: "SELECT CONSTRAINT_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = '{db}' ORDER BY 1", want: "c_ibfk_1;c_ibfk_2"},
		}},
		{"TruncateAndDeleteAll", []fkStep{
			{sql: fkParent},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)"},
			{sql: "INSERT INTO p (id) VALUES (1), (2)"},
			{sql: "INSERT INTO c VALUES (1, 1), (2, 2)"},
			{sql: "TRUNCATE TABLE p", err: 1701, msg: "Cannot truncate a table referenced in a foreign key constraint (`{db}`.`c`, CONSTRAINT `c_ibfk_1`)"},
			{sql: "DELETE FROM p"}, // an ordinary DELETE: it cascades
			{sql: "SELECT COUNT(*) FROM c", want: "0"},
			{sql: "TRUNCATE TABLE c"},
		}},
		{"RollbackUndoesCascade", []fkStep{
			{sql: fkParent},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)"},
			{sql: "CREATE TABLE n (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET NULL)"},
			{sql: "INSERT INTO p (id) VALUES (1)"},
			{sql: "INSERT INTO c VALUES (1, 1), (2, 1)"},
			{sql: "INSERT INTO n VALUES (1, 1)"},
			{sql: "BEGIN"},
			{sql: "DELETE FROM p"},
			{sql: "SELECT (SELECT COUNT(*) FROM c), (SELECT pid FROM n)", want: "0,NULL"},
			{sql: "ROLLBACK"},
			{sql: "SELECT (SELECT COUNT(*) FROM c), (SELECT pid FROM n)", want: "2,1"},
			// A cascade that fails further down undoes the whole statement.
			{sql: "CREATE TABLE r (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES c (id))"},
			{sql: "INSERT INTO r VALUES (1, 2)"},
			{sql: "DELETE FROM p", err: erRowIsReferenced2},
			{sql: "SELECT (SELECT COUNT(*) FROM p), (SELECT COUNT(*) FROM c), (SELECT pid FROM n)", want: "1,2,1"},
		}},
		{"Rename", []fkStep{
			{sql: fkParent},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))"},
			{sql: "INSERT INTO p (id) VALUES (1)"},
			{sql: "RENAME TABLE p TO p2"},
			{sql: "RENAME TABLE c TO c2"},
			{sql: "INSERT INTO c2 VALUES (1, 1)"},
			{sql: "INSERT INTO c2 VALUES (2, 2)", err: erNoReferencedRow2,
				msg: "(`{db}`.`c2`, CONSTRAINT `c2_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p2` (`id`))"},
			{sql: "ALTER TABLE c2 RENAME COLUMN pid TO parent_id"},
			{sql: "DELETE FROM p2", err: erRowIsReferenced2, msg: "FOREIGN KEY (`parent_id`) REFERENCES `p2` (`id`)"},
		}},
		{"InformationSchema", []fkStep{
			{sql: fkParent},
			{sql: "CREATE TABLE c (id INT PRIMARY KEY, x INT, y INT, pid INT, CONSTRAINT fk2 FOREIGN KEY (x, y) REFERENCES p (a, b) ON DELETE CASCADE, FOREIGN KEY (pid) REFERENCES p (id))"},
			{sql: "SELECT CONSTRAINT_NAME, UNIQUE_CONSTRAINT_NAME, UPDATE_RULE, DELETE_RULE, TABLE_NAME, REFERENCED_TABLE_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = '{db}' ORDER BY 1",
				want: "c_ibfk_1,PRIMARY,NO ACTION,NO ACTION,c,p;fk2,ab,NO ACTION,CASCADE,c,p"},
			{sql: "SELECT CONSTRAINT_NAME, COLUMN_NAME, ORDINAL_POSITION, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = '{db}' AND REFERENCED_TABLE_NAME IS NOT NULL ORDER BY 1, 3",
				want: "c_ibfk_1,pid,1,p,id;fk2,x,1,p,a;fk2,y,2,p,b"},
			{sql: "SELECT CONSTRAINT_NAME FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = '{db}' AND CONSTRAINT_TYPE = 'FOREIGN KEY' ORDER BY 1",
				want: "c_ibfk_1;fk2"},
		}},
	}
	for _, c := range cases {
		// Text statements of a shape seen before run on the fast path when
		// it is on (fast_write.go): it must leave writes to tables with
		// foreign keys to go-mysql-server.
		for _, fast := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/fast=%v", c.name, fast), func(t *testing.T) {
				e := newDatabase(t, srv)
				s := e.session("s")
				setFastPath(t, s, fast)
				e.runFKSteps(s, c.steps)
			})
		}
	}

	t.Run("ShowCreateTable", func(t *testing.T) {
		e := newDatabase(t, srv)
		s := e.session("s")
		other := e.name + "_other"
		s.exec("CREATE DATABASE " + other)
		t.Cleanup(func() { s.c.ExecContext(context.Background(), "DROP DATABASE "+other) })
		s.exec(fkParent)
		s.exec("CREATE TABLE c (id INT PRIMARY KEY, pid INT, x INT, y INT, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE, " +
			"CONSTRAINT fk_xy FOREIGN KEY (x, y) REFERENCES p (a, b) ON UPDATE SET NULL)")
		s.exec("CREATE TABLE " + other + ".oc (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES " + e.name + ".p (id))")
		got := s.showCreate("c")
		for _, want := range []string{
			"  KEY `pid` (`pid`),\n",
			"  KEY `fk_xy` (`x`,`y`),\n",
			"  CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE,\n",
			"  CONSTRAINT `fk_xy` FOREIGN KEY (`x`, `y`) REFERENCES `p` (`a`, `b`) ON UPDATE SET NULL\n",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("SHOW CREATE TABLE c lacks %q:\n%s", want, got)
			}
		}
		// A parent in another database is named with its database.
		if got, want := s.showCreate(other+".oc"), "CONSTRAINT `oc_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `"+e.name+"`.`p` (`id`)"; !strings.Contains(got, want) {
			t.Errorf("SHOW CREATE TABLE oc lacks %q:\n%s", want, got)
		}
		// The output recreates the table with its keys.
		s.exec("CREATE TABLE p2 LIKE p")
		create := strings.Replace(s.showCreate("c"), "CREATE TABLE `c`", "CREATE TABLE `c_copy`", 1)
		create = strings.ReplaceAll(create, "CONSTRAINT `fk_xy`", "CONSTRAINT `fk_xy2`")
		create = strings.ReplaceAll(create, "CONSTRAINT `c_ibfk_1`", "CONSTRAINT `c_copy_ibfk_1`")
		s.exec(create)
		s.mustFail(erNoReferencedRow2, "INSERT INTO c_copy (id, pid) VALUES (1, 1)")
	})
}

// TestForeignKeyLocking checks that a key check locks the parent row as
// InnoDB does: a child insert share-locks its parent, so a concurrent
// DELETE of the parent waits and then finds the child; a parent deleted by
// an open transaction makes a child insert wait, then fail.
func TestForeignKeyLocking(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	a, b := e.session("a"), e.session("b")
	setFastPath(t, a, false)
	a.exec(fkParent)
	a.exec("CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))")
	a.exec("INSERT INTO p (id) VALUES (1), (2)")

	a.exec("BEGIN")
	a.exec("INSERT INTO c VALUES (1, 1)")
	del := b.goExec("DELETE FROM p WHERE id = 1")
	del.mustBlock(t)
	a.exec("COMMIT")
	expectErrno(t, del.wait(t), erRowIsReferenced2, "b: DELETE of a parent whose child committed meanwhile")

	a.exec("BEGIN")
	a.exec("DELETE FROM p WHERE id = 2")
	ins := b.goExec("INSERT INTO c VALUES (2, 2)")
	ins.mustBlock(t)
	a.exec("COMMIT")
	expectErrno(t, ins.wait(t), erNoReferencedRow2, "b: INSERT of a child whose parent was deleted meanwhile")

	// An UPDATE of a parent through the foreign key machinery still locks
	// the rows it reads (no lost update).
	a.exec("INSERT INTO p (id, v) VALUES (3, '0')")
	a.exec("BEGIN")
	a.exec("UPDATE p SET v = v + 1 WHERE id = 3")
	upd := b.goExec("UPDATE p SET v = v + 1 WHERE id = 3")
	upd.mustBlock(t)
	a.exec("COMMIT")
	upd.mustSucceed(t)
	a.wantInt(2, "SELECT v FROM p WHERE id = 3")
}

// TestForeignKeyFastPath checks that prepared single-row writes, which the
// fast path runs straight against storage (fast_write.go), are checked and
// cascade: the fast path leaves writes to tables that take part in a
// foreign key to go-mysql-server.
func TestForeignKeyFastPath(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	s := e.session("s")
	setFastPath(t, s, true)
	s.exec(fkParent)
	s.exec("CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)")
	s.exec("CREATE TABLE r (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))")
	for i := 1; i <= 3; i++ {
		s.exec("INSERT INTO p (id, v) VALUES (?, ?)", i, "v")
	}
	s.mustFail(erNoReferencedRow2, "INSERT INTO c VALUES (?, ?)", 1, 999)
	s.exec("INSERT INTO c VALUES (?, ?)", 1, 1)
	s.exec("INSERT INTO r VALUES (?, ?)", 1, 2)
	s.mustFail(erNoReferencedRow2, "UPDATE c SET pid = ? WHERE id = ?", 999, 1)
	s.mustFail(erRowIsReferenced2, "DELETE FROM p WHERE id = ?", 2)
	s.mustFail(erRowIsReferenced2, "UPDATE p SET id = ? WHERE id = ?", 20, 2)
	s.exec("DELETE FROM p WHERE id = ?", 1)
	s.wantInt(0, "SELECT COUNT(*) FROM c")
	s.exec("UPDATE p SET v = ? WHERE id = ?", "w", 3)
}

// TestForeignKeyRestart checks that keys, and what cascades did, survive a
// kill -9: recovery from the log alone, then from a checkpoint. The keys
// were created in a dump's order (child first, foreign_key_checks=0), and
// a statement that failed is logged and must fail again at recovery.
func TestForeignKeyRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s1 := testutil.StartServer(t, "--checkpoint-log-size", "64K")
	db := s1.DB(t, "")
	exec := func(db *sql.DB, qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SET GLOBAL lockstep_fast_path = OFF",
		"CREATE DATABASE fk",
		"USE fk",
		"SET foreign_key_checks = 0",
		"CREATE TABLE child (id INT PRIMARY KEY, pid INT, CONSTRAINT fk_c FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE ON UPDATE CASCADE)",
		"CREATE TABLE parent (id INT PRIMARY KEY, name VARCHAR(20))",
		"SET foreign_key_checks = 1",
		"CREATE TABLE nulls (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE SET NULL)",
		"CREATE TABLE keep (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id))",
		"INSERT INTO parent VALUES (1, 'one'), (2, 'two'), (3, 'three')",
		"INSERT INTO child VALUES (10, 1), (11, 1), (20, 2), (30, 3)",
		"INSERT INTO nulls VALUES (1, 1), (2, 2)",
		"INSERT INTO keep VALUES (1, 2)",
		"BEGIN",
		"DELETE FROM parent WHERE id = 1",
		"UPDATE parent SET id = 4 WHERE id = 3",
		"COMMIT",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := conn.ExecContext(ctx, "CREATE TABLE fk.bad (id INT PRIMARY KEY, pid VARCHAR(5), FOREIGN KEY (pid) REFERENCES fk.parent (id))"); errno(err) != 3780 {
		t.Fatalf("CREATE TABLE with incompatible key columns: %v, want error 3780", err)
	}
	conn.Close()
	want := map[string]string{
		"SELECT id, pid FROM fk.child ORDER BY id": "20,2;30,4",
		"SELECT id, pid FROM fk.nulls ORDER BY id": "1,NULL;2,2",
		"SHOW TABLES FROM fk":                      "child;keep;nulls;parent",
	}
	check := func(s *testutil.Server, when string) {
		t.Helper()
		db := s.DB(t, "")
		for q, w := range want {
			if got := rowsString(t, ctx, db, q); got != w {
				t.Errorf("%s: %s = %q, want %q", when, q, got, w)
			}
		}
		var errs []error
		for _, q := range []string{"INSERT INTO fk.child VALUES (99, 99)", "DELETE FROM fk.parent WHERE id = 2"} {
			_, err := db.ExecContext(ctx, q)
			errs = append(errs, err)
		}
		if errno(errs[0]) != erNoReferencedRow2 || errno(errs[1]) != erRowIsReferenced2 {
			t.Errorf("%s: keys not enforced: orphan insert %v, parent delete %v", when, errs[0], errs[1])
		}
	}
	check(s1, "before the kill")

	s1.Kill()
	s2 := testutil.StartServer(t, "--datadir", s1.Datadir, "--checkpoint-log-size", "64K")
	exec(s2.DB(t, ""), "SET GLOBAL lockstep_fast_path = OFF")
	check(s2, "after kill -9 and recovery from the log")

	// Enough log for a checkpoint, then a cascade after it.
	db2 := s2.DB(t, "fk")
	fillToCheckpoint(t, ctx, db2, "filler", s1.Datadir)
	exec(db2, "DELETE FROM parent WHERE id = 4")
	want["SELECT id, pid FROM fk.child ORDER BY id"] = "20,2"
	want["SHOW TABLES FROM fk"] = "child;filler;keep;nulls;parent"
	s2.Kill()
	s3 := testutil.StartServer(t, "--datadir", s1.Datadir)
	exec(s3.DB(t, ""), "SET GLOBAL lockstep_fast_path = OFF")
	wantCheckpointLoaded(t, s3)
	check(s3, "after kill -9 and recovery from a checkpoint")
}

// rowsString renders a query's rows as fkRows does.
func rowsString(t *testing.T, ctx context.Context, db *sql.DB, query string) string {
	t.Helper()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s := &session{t: t, ctx: ctx, name: "check", c: conn}
	return s.fkRows(query)
}
