package integration

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// columns returns the table's column names in order.
func (s *session) columns(table string) []string {
	s.t.Helper()
	rows, err := s.c.QueryContext(s.ctx, "SELECT * FROM "+table+" LIMIT 0")
	if err != nil {
		s.t.Fatalf("%s: columns of %s: %v", s.name, table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		s.t.Fatalf("%s: columns of %s: %v", s.name, table, err)
	}
	return cols
}

// indexes returns the names of the table's indexes (SHOW INDEX), deduplicated
// and in order of appearance.
func (s *session) indexes(table string) []string {
	s.t.Helper()
	rows, err := s.c.QueryContext(s.ctx, "SHOW INDEX FROM "+table)
	if err != nil {
		s.t.Fatalf("%s: SHOW INDEX FROM %s: %v", s.name, table, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	keyName := -1
	for i, c := range cols {
		if strings.EqualFold(c, "Key_name") {
			keyName = i
		}
	}
	if keyName < 0 {
		s.t.Fatalf("SHOW INDEX has no Key_name column: %v", cols)
	}
	var out []string
	seen := map[string]bool{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			s.t.Fatalf("SHOW INDEX scan: %v", err)
		}
		name := fmt.Sprintf("%s", vals[keyName])
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

func has(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func TestDDL(t *testing.T) {
	srv := startServer(t)

	t.Run("CreateDropDatabase", func(t *testing.T) {
		e := newDatabase(t, srv)
		s := e.session("s")
		cd := e.name + "_cd"
		q := func(stmt string) string { return strings.ReplaceAll(stmt, "ddl_cd", cd) }
		s.exec(q("CREATE DATABASE ddl_cd"))
		s.exec(q("CREATE TABLE ddl_cd.t (id INT PRIMARY KEY)"))
		s.exec(q("INSERT INTO ddl_cd.t VALUES (1)"))
		s.wantInt(1, q("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'ddl_cd'"))
		s.mustErr(q("CREATE DATABASE ddl_cd")) // ER_DB_CREATE_EXISTS (1007): exact code checked in TestErrors
		s.exec(q("CREATE DATABASE IF NOT EXISTS ddl_cd"))
		s.exec(q("DROP DATABASE ddl_cd"))
		s.wantInt(0, q("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'ddl_cd'"))
		s.mustFail(erBadDB, q("USE ddl_cd"))
		s.mustErr(q("DROP DATABASE ddl_cd")) // ER_DB_DROP_EXISTS (1008): exact code checked in TestErrors
		s.exec(q("DROP DATABASE IF EXISTS ddl_cd"))
		// Re-created, it is empty.
		s.exec(q("CREATE DATABASE ddl_cd"))
		s.mustFail(erNoSuchTable, q("SELECT * FROM ddl_cd.t"))
		s.exec(q("DROP DATABASE ddl_cd"))
	})

	t.Run("CreateDropTruncateTable", func(t *testing.T) {
		e := newDatabase(t, srv)
		s := e.session("s")
		s.exec("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
		s.mustErr("CREATE TABLE t (id INT PRIMARY KEY)") // ER_TABLE_EXISTS_ERROR (1050): exact code checked in TestErrors
		s.exec("CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY)")
		s.exec("INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c')")
		s.wantInt(3, "SELECT COUNT(*) FROM t")
		s.exec("TRUNCATE TABLE t")
		s.wantInt(0, "SELECT COUNT(*) FROM t")
		s.exec("INSERT INTO t VALUES (1,'again')")
		s.wantInt(1, "SELECT COUNT(*) FROM t")
		s.exec("DROP TABLE t")
		s.mustFail(erNoSuchTable, "SELECT * FROM t")
		s.mustErr("DROP TABLE t") // ER_BAD_TABLE_ERROR (1051): exact code checked in TestErrors
		s.exec("DROP TABLE IF EXISTS t")
		// Re-created under the same name, the table is empty.
		s.exec("CREATE TABLE t (id INT PRIMARY KEY)")
		s.wantInt(0, "SELECT COUNT(*) FROM t")
	})

	t.Run("TruncateResetsAutoIncrement", func(t *testing.T) {
		e := newDatabase(t, srv)
		s := e.session("s")
		s.exec("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
		s.exec("INSERT INTO t (v) VALUES (1),(2),(3)")
		s.exec("TRUNCATE TABLE t")
		res := s.exec("INSERT INTO t (v) VALUES (9)")
		if id, err := res.LastInsertId(); err != nil || id != 1 {
			t.Fatalf("first id after TRUNCATE = %d, %v; want 1", id, err)
		}
	})

	t.Run("CreateDropIndex", func(t *testing.T) {
		e := newDatabase(t, srv)
		s := e.session("s")
		s.exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
		s.exec("INSERT INTO t VALUES (1,10,100),(2,20,200),(3,30,300)")
		s.exec("CREATE INDEX ia ON t (a)")
		s.exec("CREATE UNIQUE INDEX ub ON t (b)")
		ix := s.indexes("t")
		if !has(ix, "ia") || !has(ix, "ub") || !has(ix, "PRIMARY") {
			t.Fatalf("indexes = %v, want PRIMARY, ia, ub", ix)
		}
		// The new indexes hold the rows that were there before.
		s.wantInts([]int64{2, 3}, "SELECT id FROM t WHERE a >= 20 ORDER BY a")
		s.wantInt(2, "SELECT id FROM t WHERE b = 200")
		s.mustFail(erDupEntry, "INSERT INTO t VALUES (4,40,300)")
		s.mustErr("CREATE INDEX ia ON t (b)") // ER_DUP_KEYNAME (1061): exact code checked in TestErrors
		s.exec("DROP INDEX ub ON t")
		s.exec("DROP INDEX ia ON t")
		ix = s.indexes("t")
		if has(ix, "ia") || has(ix, "ub") {
			t.Fatalf("indexes after DROP INDEX = %v", ix)
		}
		s.mustErr("DROP INDEX ia ON t") // ER_CANT_DROP_FIELD_OR_KEY (1091): exact code checked in TestErrors
		// With the unique index gone, a duplicate b is fine.
		s.exec("INSERT INTO t VALUES (4,40,300)")
		s.wantInt(2, "SELECT COUNT(*) FROM t WHERE b = 300")
	})

	t.Run("AlterAddColumn", func(t *testing.T) {
		e := newDatabase(t, srv)
		s := e.session("s")
		s.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
		s.exec("INSERT INTO t VALUES (1,10),(2,20)")
		s.exec("ALTER TABLE t ADD COLUMN c VARCHAR(10) NOT NULL DEFAULT 'dflt'")
		s.exec("ALTER TABLE t ADD COLUMN f INT FIRST")
		s.exec("ALTER TABLE t ADD COLUMN m INT DEFAULT 7 AFTER id")
		if got, want := strings.Join(s.columns("t"), ","), "f,id,m,v,c"; got != want {
			t.Fatalf("columns = %s, want %s", got, want)
		}
		// Existing rows get the defaults (NULL when there is none).
		rows, err := s.c.QueryContext(s.ctx, "SELECT f, id, m, v, c FROM t ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var f, m sql.NullInt64
			var id, v int
			var c string
			if err := rows.Scan(&f, &id, &m, &v, &c); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%v/%d/%d/%d/%s", f.Valid, id, m.Int64, v, c))
		}
		rows.Close()
		if want := "false/1/7/10/dflt false/2/7/20/dflt"; strings.Join(got, " ") != want {
			t.Fatalf("rows = %v, want %s", got, want)
		}
		// New rows without the columns get the defaults too, and the
		// columns are writable.
		s.exec("INSERT INTO t (id, v) VALUES (3, 30)")
		s.wantInt(7, "SELECT m FROM t WHERE id = 3")
		if c := s.str("SELECT c FROM t WHERE id = 3"); c != "dflt" {
			t.Fatalf("c = %q, want dflt", c)
		}
		s.exec("UPDATE t SET f = id * 100, c = 'x' WHERE id <= 2")
		s.wantInt(300, "SELECT SUM(f) FROM t")
		s.mustErr("ALTER TABLE t ADD COLUMN v INT") // ER_DUP_FIELDNAME (1060): exact code checked in TestErrors
	})

	// ADD COLUMN fills existing rows as MySQL does: a STORED or VIRTUAL
	// generated column with its expression, an expression DEFAULT per row
	// — wherever the column goes (FIRST, AFTER) —, a NOT NULL column
	// without a default with the type's zero. Before 2026-11-23 a new
	// generated column was NULL in existing rows and a DEFAULT (expr)
	// added FIRST or AFTER read a neighbouring column.
	t.Run("AlterAddColumnFillsRows", func(t *testing.T) {
		e := newDatabase(t, srv)
		s := e.session("s")
		s.exec("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
		s.exec("INSERT INTO t VALUES (1,10),(2,20),(3,NULL)")
		s.exec("ALTER TABLE t ADD COLUMN c INT AS (a + 1) STORED")
		s.exec("ALTER TABLE t ADD COLUMN v INT AS (a * 3) VIRTUAL")
		s.exec("ALTER TABLE t ADD COLUMN f INT AS (id * 100) STORED FIRST")
		s.exec("ALTER TABLE t ADD COLUMN g INT DEFAULT (a * 2) AFTER id")
		s.exec("ALTER TABLE t ADD COLUMN h VARCHAR(10) DEFAULT (CONCAT('h', id)) FIRST")
		s.exec("ALTER TABLE t ADD COLUMN n INT NOT NULL")
		s.exec("ALTER TABLE t ADD COLUMN k INT NOT NULL DEFAULT 7 AFTER a")
		const want = "h1:100:1:20:10:7:11:30:0 h2:200:2:40:20:7:21:60:0 h3:300:3:NULL:NULL:7:NULL:NULL:0"
		s.wantRows(want, "SELECT h, f, id, g, a, k, c, v, n FROM t ORDER BY id")
		s.exec("CREATE INDEX ic ON t (c)")
		s.wantRows("2", "SELECT id FROM t WHERE c = 21")
		s.exec("INSERT INTO t (id, a, n) VALUES (4, 5, 1)")
		s.wantRows("h4:400:4:10:5:7:6:15:1", "SELECT h, f, id, g, a, k, c, v, n FROM t WHERE id = 4")
	})

	t.Run("AlterDropColumn", func(t *testing.T) {
		e := newDatabase(t, srv)
		s := e.session("s")
		s.exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), c INT)")
		s.exec("INSERT INTO t VALUES (1,10,'x',100),(2,20,'y',200)")
		s.exec("ALTER TABLE t DROP COLUMN b")
		if got, want := strings.Join(s.columns("t"), ","), "id,a,c"; got != want {
			t.Fatalf("columns = %s, want %s", got, want)
		}
		s.wantInts([]int64{100, 200}, "SELECT c FROM t ORDER BY id")
		s.mustErr("SELECT b FROM t") // ER_BAD_FIELD_ERROR (1054): exact code checked in TestErrors
		s.exec("INSERT INTO t VALUES (3,30,300)")
		s.wantInt(600, "SELECT SUM(c) FROM t")
	})

	t.Run("AlterAddDropIndex", func(t *testing.T) {
		e := newDatabase(t, srv)
		s := e.session("s")
		s.exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
		s.exec("INSERT INTO t VALUES (1,3,1),(2,2,2),(3,1,3)")
		s.exec("ALTER TABLE t ADD INDEX ia (a)")
		if ix := s.indexes("t"); !has(ix, "ia") {
			t.Fatalf("indexes = %v, want ia", ix)
		}
		s.wantInts([]int64{3, 2}, "SELECT id FROM t WHERE a < 3 ORDER BY a")
		s.exec("ALTER TABLE t ADD UNIQUE INDEX ub (b)")
		s.mustFail(erDupEntry, "UPDATE t SET b = 1 WHERE id = 2")
		s.exec("ALTER TABLE t DROP INDEX ia")
		s.exec("ALTER TABLE t DROP INDEX ub")
		if ix := s.indexes("t"); has(ix, "ia") || has(ix, "ub") {
			t.Fatalf("indexes after DROP = %v", ix)
		}
		s.exec("UPDATE t SET b = 1 WHERE id = 2")
	})

	t.Run("AddUniqueIndexWithDuplicates", func(t *testing.T) {
		e := newDatabase(t, srv)
		s := e.session("s")
		s.exec("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
		s.exec("INSERT INTO t VALUES (1,5),(2,6),(3,5)")
		for _, stmt := range []string{
			"ALTER TABLE t ADD UNIQUE INDEX ua (a)",
			"CREATE UNIQUE INDEX ua ON t (a)",
		} {
			s.mustFail(erDupEntry, stmt)
			if ix := s.indexes("t"); has(ix, "ua") {
				t.Fatalf("after failed %q: indexes = %v, want no ua", stmt, ix)
			}
		}
		// The failed DDL changed nothing: a further duplicate is accepted.
		s.exec("INSERT INTO t VALUES (4,6)")
		s.wantInt(4, "SELECT COUNT(*) FROM t")
	})

	t.Run("NoPrimaryKey", func(t *testing.T) {
		e := newDatabase(t, srv)
		s := e.session("s")
		s.exec("CREATE TABLE t (a INT, b VARCHAR(10))")
		s.exec("INSERT INTO t VALUES (1,'x'),(1,'x'),(1,'x'),(2,'y')")
		s.wantInt(4, "SELECT COUNT(*) FROM t")
		s.wantInt(3, "SELECT COUNT(*) FROM t WHERE a = 1 AND b = 'x'")
		// Change exactly one of three identical rows.
		res := s.exec("UPDATE t SET b = 'z' WHERE a = 1 LIMIT 1")
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("UPDATE ... LIMIT 1 affected %d rows, want 1", n)
		}
		s.wantInt(2, "SELECT COUNT(*) FROM t WHERE a = 1 AND b = 'x'")
		s.wantInt(1, "SELECT COUNT(*) FROM t WHERE a = 1 AND b = 'z'")
		// Delete exactly one of the two identical rows left.
		res = s.exec("DELETE FROM t WHERE a = 1 AND b = 'x' LIMIT 1")
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("DELETE ... LIMIT 1 affected %d rows, want 1", n)
		}
		s.wantInt(1, "SELECT COUNT(*) FROM t WHERE a = 1 AND b = 'x'")
		s.wantInt(3, "SELECT COUNT(*) FROM t")
		// Without LIMIT, all matching duplicates go.
		s.exec("INSERT INTO t VALUES (2,'y')")
		res = s.exec("DELETE FROM t WHERE a = 2")
		if n, _ := res.RowsAffected(); n != 2 {
			t.Fatalf("DELETE WHERE a = 2 affected %d rows, want 2", n)
		}
		s.wantInt(2, "SELECT COUNT(*) FROM t")
	})

	t.Run("AutoIncrement", func(t *testing.T) {
		e := newDatabase(t, srv)
		s := e.session("s")
		s.exec("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))")
		for want := int64(1); want <= 3; want++ {
			res := s.exec("INSERT INTO t (v) VALUES (?)", fmt.Sprint("r", want))
			id, err := res.LastInsertId()
			if err != nil || id != want {
				t.Fatalf("LastInsertId = %d, %v; want %d", id, err, want)
			}
			s.wantInt(want, "SELECT LAST_INSERT_ID()")
		}
		s.wantInts([]int64{1, 2, 3}, "SELECT id FROM t ORDER BY id")
		// An explicit id above the counter moves it.
		s.exec("INSERT INTO t (id, v) VALUES (10, 'ten')")
		res := s.exec("INSERT INTO t (v) VALUES ('next')")
		if id, err := res.LastInsertId(); err != nil || id != 11 {
			t.Fatalf("id after explicit 10 = %d, %v; want 11", id, err)
		}
		// An explicit id below the counter does not move it back.
		s.exec("INSERT INTO t (id, v) VALUES (5, 'five')")
		res = s.exec("INSERT INTO t (v) VALUES ('next2')")
		if id, err := res.LastInsertId(); err != nil || id != 12 {
			t.Fatalf("id after explicit 5 = %d, %v; want 12", id, err)
		}
		// Inserting NULL or 0 into the column generates a value.
		res = s.exec("INSERT INTO t (id, v) VALUES (NULL, 'null')")
		if id, err := res.LastInsertId(); err != nil || id != 13 {
			t.Fatalf("id for NULL = %d, %v; want 13", id, err)
		}
		// A multi-row insert reports the first generated id.
		res = s.exec("INSERT INTO t (v) VALUES ('a'),('b'),('c')")
		if id, err := res.LastInsertId(); err != nil || id != 14 {
			t.Fatalf("multi-row LastInsertId = %d, %v; want 14", id, err)
		}
		s.wantInt(16, "SELECT MAX(id) FROM t")
		s.wantInt(11, "SELECT COUNT(*) FROM t")
	})
}
