package sqlfront

import "testing"

func TestStripModifiers(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"DELETE LOW_PRIORITY QUICK IGNORE FROM t WHERE id = 1", "DELETE    FROM t WHERE id = 1"},
		{"delete ignore i from t i", "delete  i from t i"},
		{"INSERT DELAYED INTO t VALUES (1)", "INSERT  INTO t VALUES (1)"},
		{"insert high_priority ignore into t values (1)", "insert  ignore into t values (1)"},
		{"REPLACE LOW_PRIORITY INTO t VALUES (1)", "REPLACE  INTO t VALUES (1)"},
		{"UPDATE LOW_PRIORITY IGNORE t SET v = 1", "UPDATE  IGNORE t SET v = 1"},
		{"SELECT DISTINCT HIGH_PRIORITY SQL_NO_CACHE SQL_BUFFER_RESULT a FROM t", "SELECT DISTINCT  SQL_NO_CACHE  a FROM t"},
		{"CREATE TRIGGER d AFTER DELETE ON t FOR EACH ROW DELETE IGNORE FROM u WHERE u.id <=> OLD.id",
			"CREATE TRIGGER d AFTER DELETE ON t FOR EACH ROW DELETE  FROM u WHERE u.id <=> OLD.id"},
		// Left alone: quoted, commented, not after the verb, other verbs' words.
		{"SELECT 'delete quick from' AS x", "SELECT 'delete quick from' AS x"},
		{"SELECT `quick` FROM t /* delete ignore */", "SELECT `quick` FROM t /* delete ignore */"},
		{"INSERT INTO t (quick) VALUES (1) ON DUPLICATE KEY UPDATE quick = 2", "INSERT INTO t (quick) VALUES (1) ON DUPLICATE KEY UPDATE quick = 2"},
		{"UPDATE t SET v = 1 WHERE quick = 2", "UPDATE t SET v = 1 WHERE quick = 2"},
		{"INSERT IGNORE INTO t VALUES (1)", "INSERT IGNORE INTO t VALUES (1)"},
		{"UPDATE IGNORE t SET v = 1", "UPDATE IGNORE t SET v = 1"},
		{"SELECT INSERT('abc', 1, 1, 'x')", "SELECT INSERT('abc', 1, 1, 'x')"},
		{"DELETE -- quick\nFROM t", "DELETE -- quick\nFROM t"},
	} {
		if got := stripModifiers(tc.in); got != tc.want {
			t.Errorf("stripModifiers(%q)\n= %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestSchemaSynonym(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"CREATE SCHEMA `mysqlslap`", "CREATE DATABASE `mysqlslap`"},
		{"create schema if not exists s character set latin1", "create DATABASE if not exists s character set latin1"},
		{"ALTER SCHEMA s DEFAULT CHARACTER SET utf8mb4", "ALTER DATABASE s DEFAULT CHARACTER SET utf8mb4"},
		{"DROP SCHEMA IF EXISTS s", "DROP DATABASE IF EXISTS s"},
		{"SHOW SCHEMAS LIKE 'd%'", "SHOW DATABASES LIKE 'd%'"},
		{"show create schema d", "show create DATABASE d"},
		// Left alone.
		{"SELECT schema_name FROM information_schema.schemata", "SELECT schema_name FROM information_schema.schemata"},
		{"SHOW SCHEMA", "SHOW SCHEMA"},
		{"CREATE TABLE schema_t (schema INT)", "CREATE TABLE schema_t (schema INT)"},
	} {
		if got := schemaSynonym(tc.in); got != tc.want {
			t.Errorf("schemaSynonym(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
