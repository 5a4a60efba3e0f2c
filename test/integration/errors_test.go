package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// errorCases are statements that fail in MySQL 8 (default sql_mode, so
// strict) with the given error number and SQLSTATE. Table e holds one row,
// id 1, before every case; no case may change it.
var errorCases = []struct {
	name     string
	stmt     string
	args     []any
	code     uint16
	sqlState string
	noPrep   bool // not preparable in MySQL, or a session command: text only
	// msg is MySQL's message, checked when set ({db}: the test's
	// database); maxMsg bounds the message's length when set.
	msg    string
	maxMsg int
}{
	{name: "Syntax", stmt: "SELEC 1", code: erParse, sqlState: "42000"},
	{name: "SyntaxTruncated", stmt: "SELECT * FROM", code: erParse, sqlState: "42000"},
	{name: "SyntaxBadKeyword", stmt: "INSERT INTO e VALUES (1,,2)", code: erParse, sqlState: "42000"},
	{name: "UnknownTableSelect", stmt: "SELECT * FROM nosuch", code: erNoSuchTable, sqlState: "42S02", msg: "Table '{db}.nosuch' doesn't exist"},
	{name: "UnknownTableInsert", stmt: "INSERT INTO nosuch VALUES (1)", code: erNoSuchTable, sqlState: "42S02", msg: "Table '{db}.nosuch' doesn't exist"},
	{name: "UnknownTableUpdate", stmt: "UPDATE nosuch SET a = 1", code: erNoSuchTable, sqlState: "42S02", msg: "Table '{db}.nosuch' doesn't exist"},
	{name: "UnknownDatabaseUse", stmt: "USE nosuchdb", code: erBadDB, sqlState: "42000", noPrep: true, msg: "Unknown database 'nosuchdb'"},
	{name: "StringIntoInt", stmt: "INSERT INTO e (id, n, nn) VALUES (2, 'abc', 0)", code: erTruncatedWrongVal, sqlState: "HY000",
		msg: "Incorrect integer value: 'abc' for column 'n' at row 1"},
	{name: "StringIntoIntParam", stmt: "INSERT INTO e (id, n, nn) VALUES (?, ?, ?)", args: []any{2, "abc", 0}, code: erTruncatedWrongVal, sqlState: "HY000",
		msg: "Incorrect integer value: 'abc' for column 'n' at row 1"},
	{name: "StringIntoIntSecondRow", stmt: "INSERT INTO e (id, nn) VALUES (2, 0), (3, 'x')", code: erTruncatedWrongVal, sqlState: "HY000",
		msg: "Incorrect integer value: 'x' for column 'nn' at row 2"},
	{name: "StringIntoIntUpdate", stmt: "UPDATE e SET n = 'abc' WHERE id = 1", code: erTruncatedWrongVal, sqlState: "HY000",
		msg: "Incorrect integer value: 'abc' for column 'n' at row 1"},
	{name: "NullIntoNotNull", stmt: "INSERT INTO e (id, nn) VALUES (2, NULL)", code: erBadNull, sqlState: "23000", msg: "Column 'nn' cannot be null"},
	{name: "NullIntoNotNullParam", stmt: "INSERT INTO e (id, nn) VALUES (?, ?)", args: []any{2, nil}, code: erBadNull, sqlState: "23000", msg: "Column 'nn' cannot be null"},
	{name: "NullIntoNotNullUpdate", stmt: "UPDATE e SET nn = NULL WHERE id = 1", code: erBadNull, sqlState: "23000", msg: "Column 'nn' cannot be null"},
	{name: "NullIntoPrimaryKey", stmt: "INSERT INTO e (id, nn) VALUES (NULL, 0)", code: erBadNull, sqlState: "23000", msg: "Column 'id' cannot be null"},
	{name: "NoDefaultForNotNull", stmt: "INSERT INTO e (id) VALUES (2)", code: 1364, sqlState: "HY000"},
	{name: "VarcharTooLong", stmt: "INSERT INTO e (id, nn, s) VALUES (2, 0, 'toolong')", code: erDataTooLong, sqlState: "22001", msg: "Data too long for column 's' at row 1"},
	{name: "VarcharTooLongParam", stmt: "INSERT INTO e (id, nn, s) VALUES (?, ?, ?)", args: []any{2, 0, "toolong"}, code: erDataTooLong, sqlState: "22001", msg: "Data too long for column 's' at row 1"},
	{name: "VarcharTooLongUpdate", stmt: "UPDATE e SET s = 'toolong' WHERE id = 1", code: erDataTooLong, sqlState: "22001", msg: "Data too long for column 's' at row 1"},
	{name: "VarcharTooLongSecondRow", stmt: "INSERT INTO e (id, nn, s) VALUES (2, 0, 'ok'), (3, 0, 'toolong')", code: erDataTooLong, sqlState: "22001",
		msg: "Data too long for column 's' at row 2"},
	// go-mysql-server said 1105 "number has no digits".
	{name: "StringIntoDecimal", stmt: "INSERT INTO e (id, nn, dc) VALUES (2, 0, 'zz')", code: erTruncatedWrongVal, sqlState: "HY000",
		msg: "Incorrect decimal value: 'zz' for column 'dc' at row 1"},
	{name: "StringIntoDecimalUpdate", stmt: "UPDATE e SET dc = 'abc' WHERE id = 1", code: erTruncatedWrongVal, sqlState: "HY000",
		msg: "Incorrect decimal value: 'abc' for column 'dc' at row 1"},
	{name: "BadDatetime", stmt: "INSERT INTO e (id, nn, dt) VALUES (2, 0, 'notadate')", code: 1292, sqlState: "22007",
		msg: "Incorrect datetime value: 'notadate' for column 'dt' at row 1"},
	{name: "BadDatetimeUpdate", stmt: "UPDATE e SET dt = 'notadate' WHERE id = 1", code: 1292, sqlState: "22007",
		msg: "Incorrect datetime value: 'notadate' for column 'dt' at row 1"},
	{name: "BadJSON", stmt: "INSERT INTO e (id, nn, j) VALUES (2, 0, '{bad')", code: 3140, sqlState: "22032"},
	// A huge offending value is not echoed whole (a 1 MB value came back
	// in the message).
	{name: "HugeValueNotEchoed", stmt: "UPDATE e SET nn = ? WHERE id = 1", args: []any{strings.Repeat("x", 1<<20)}, code: erTruncatedWrongVal, sqlState: "HY000", maxMsg: 400},
	{name: "TinyintOutOfRange", stmt: "INSERT INTO e (id, nn, ti) VALUES (2, 0, 300)", code: 1264, sqlState: "22003",
		msg: "Out of range value for column 'ti' at row 1"},
	// go-mysql-server stored the clamped value (127) without a word.
	{name: "TinyintOutOfRangeUpdate", stmt: "UPDATE e SET ti = 300 WHERE id = 1", code: 1264, sqlState: "22003",
		msg: "Out of range value for column 'ti' at row 1"},
	{name: "TinyintOutOfRangeUpdateParam", stmt: "UPDATE e SET ti = ? WHERE id = ?", args: []any{300, 1}, code: 1264, sqlState: "22003",
		msg: "Out of range value for column 'ti' at row 1"},
	{name: "TinyintOverflowUpdate", stmt: "UPDATE e SET ti = ti + 200 WHERE id = 1", code: 1264, sqlState: "22003",
		msg: "Out of range value for column 'ti' at row 1"},
	{name: "TinyintOverflowUpdateParam", stmt: "UPDATE e SET ti = ti + ? WHERE id = ?", args: []any{200, 1}, code: 1264, sqlState: "22003",
		msg: "Out of range value for column 'ti' at row 1"},
	{name: "DuplicatePK", stmt: "INSERT INTO e (id, nn) VALUES (1, 0)", code: erDupEntry, sqlState: "23000"},
	{name: "UnknownColumnSelect", stmt: "SELECT nosuch FROM e", code: 1054, sqlState: "42S22"},
	{name: "UnknownColumnInsert", stmt: "INSERT INTO e (id, nosuch) VALUES (2, 0)", code: 1054, sqlState: "42S22"},
	{name: "UnknownColumnWhere", stmt: "UPDATE e SET n = 1 WHERE nosuch = 1", code: 1054, sqlState: "42S22"},
	{name: "ColumnCountMismatch", stmt: "INSERT INTO e VALUES (2)", code: 1136, sqlState: "21S01", msg: "Column count doesn't match value count at row 1"},
	{name: "UnknownSystemVariable", stmt: "SELECT @@nosuch_variable", code: 1193, sqlState: "HY000"},
	{name: "CreateDatabaseExists", stmt: "CREATE DATABASE errs_exists", code: 1007, sqlState: "HY000"},
	{name: "DropDatabaseMissing", stmt: "DROP DATABASE errs_missing", code: 1008, sqlState: "HY000"},
	{name: "CreateTableExists", stmt: "CREATE TABLE e (id INT PRIMARY KEY)", code: 1050, sqlState: "42S01"},
	{name: "DropTableMissing", stmt: "DROP TABLE nosuch", code: 1051, sqlState: "42S02"},
	{name: "DuplicateIndexName", stmt: "CREATE INDEX ix ON e (s)", code: 1061, sqlState: "42000"},
	{name: "DropIndexMissing", stmt: "DROP INDEX nosuch ON e", code: 1091, sqlState: "42000"},
	{name: "AddColumnExists", stmt: "ALTER TABLE e ADD COLUMN n INT", code: 1060, sqlState: "42S21"},
	// Features lockstep lacks answer MySQL's ER_NOT_SUPPORTED_YET (1235),
	// not 1105.
	{name: "SecondPrimaryKey", stmt: "ALTER TABLE e ADD PRIMARY KEY (nn)", code: 1068, sqlState: "42000", noPrep: true,
		msg: "Multiple primary key defined"},
	{name: "DropAutoIncrementKey", stmt: "ALTER TABLE ea DROP PRIMARY KEY", code: 1075, sqlState: "42000", noPrep: true,
		msg: "Incorrect table definition; there can be only one auto column and it must be defined as a key"},
	{name: "DropTemporaryUnknown", stmt: "DROP TEMPORARY TABLE e", code: 1051, sqlState: "42S02", noPrep: true,
		msg: "Unknown table '{db}.e'"},
	{name: "FulltextUnsupported", stmt: "CREATE FULLTEXT INDEX ft ON e (s)", code: 1235, sqlState: "42000", noPrep: true},
	{name: "UnknownSavepoint", stmt: "ROLLBACK TO SAVEPOINT nosuch", code: 1305, sqlState: "42000", noPrep: true},
}

// errorGaps lists the cases (name/mode) in which lockstep is known to
// answer with another error number or SQLSTATE than MySQL (issue 9, item
// 6). They pass while that is so and fail once it changes (knownGap), so a
// fix is seen and the entry removed; a mismatch in any other case fails.
// (Until 2026-11-23 this list skipped 29 cases; 26 of them had been fixed
// unnoticed.)
// (Empty since 2026-11-27: a statement that does not parse at PREPARE,
// inside the protocol layer, got 1105 there; it gets 1064 now,
// server/longstmt.go prepareParseError.)
var errorGaps = map[string]bool{}

func TestErrors(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	setup := e.session("setup")
	setup.exec("CREATE TABLE e (id INT PRIMARY KEY, n INT, nn INT NOT NULL, s VARCHAR(5), ti TINYINT, dt DATETIME, j JSON, dc DECIMAL(5,2), KEY ix (n))")
	setup.exec("INSERT INTO e (id, n, nn, s, ti) VALUES (1, 1, 1, 'a', 1)")
	setup.exec("CREATE TABLE ea (id INT AUTO_INCREMENT PRIMARY KEY)")
	setup.exec("CREATE DATABASE IF NOT EXISTS errs_exists")
	t.Cleanup(func() { e.db.ExecContext(context.Background(), "DROP DATABASE IF EXISTS errs_exists") })
	if mode := setup.str("SELECT @@sql_mode"); !strings.Contains(mode, "STRICT_TRANS_TABLES") {
		t.Errorf("@@sql_mode = %q, want STRICT_TRANS_TABLES in it (MySQL 8's default)", mode)
	}
	// One session sends every statement: with interpolateParams=true,
	// Exec uses the text protocol (parameters are interpolated by the
	// driver) and Prepare a server-side prepared statement.
	conn := newSession(t, e.ctx, e.openDB("interpolateParams=true"), "client").c

	modes := []struct {
		name string
		run  func(ctx context.Context, stmt string, args []any) error
	}{
		{"text", func(ctx context.Context, stmt string, args []any) error {
			_, err := conn.ExecContext(ctx, stmt, args...)
			return err
		}},
		{"prepared", func(ctx context.Context, stmt string, args []any) error {
			ps, err := conn.PrepareContext(ctx, stmt)
			if err != nil {
				return err
			}
			defer ps.Close()
			_, err = ps.ExecContext(ctx, args...)
			return err
		}},
	}
	for _, c := range errorCases {
		for _, m := range modes {
			if m.name == "prepared" && c.noPrep {
				continue
			}
			t.Run(c.name+"/"+m.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(e.ctx, returnWait)
				defer cancel()
				err := m.run(ctx, c.stmt, c.args)
				var me *mysql.MySQLError
				switch {
				case err == nil:
					t.Fatalf("%s succeeded, want error %d", c.stmt, c.code)
				case !errors.As(err, &me):
					t.Fatalf("%s: %v (not a MySQL error), want error %d", c.stmt, err, c.code)
				}
				// Nothing changed, and the server is still fine.
				setup.wantRows("1:1:1:1", "SELECT id, n, nn, ti FROM e ORDER BY id")
				if c.name == "VarcharTooLongUpdate" {
					setup.wantInt(1, "SELECT s = 'a' FROM e WHERE id = 1")
				}
				got := me.Number
				state := string(me.SQLState[:])
				msg := "%s (%s): error %d (SQLSTATE %s) %q, MySQL: %d (%s); repro: %s"
				if errorGaps[c.name+"/"+m.name] {
					knownGap(t, got != c.code || state != c.sqlState, msg, c.name, m.name, got, state, me.Message, c.code, c.sqlState, reproOf(c.stmt, c.args))
					return
				}
				if want := strings.ReplaceAll(c.msg, "{db}", e.name); c.msg != "" && me.Message != want {
					t.Errorf("%s (%s): message %q, MySQL's: %q", c.name, m.name, me.Message, want)
				}
				if c.maxMsg > 0 && len(me.Message) > c.maxMsg {
					t.Errorf("%s (%s): a %d-byte message (%.80q...), want at most %d", c.name, m.name, len(me.Message), me.Message, c.maxMsg)
				}
				if got == c.code && state == c.sqlState {
					return
				}
				t.Fatalf(msg, c.name, m.name, got, state, me.Message, c.code, c.sqlState, reproOf(c.stmt, c.args))
			})
		}
	}

	t.Run("OutOfRangeUpdateNonStrictWarns", func(t *testing.T) {
		// Without a strict sql_mode MySQL stores the clamped value and
		// warns (1264) instead of failing.
		s := e.session("nonstrict")
		s.exec("SET SESSION sql_mode = ''")
		s.exec("INSERT INTO e (id, nn, ti) VALUES (50, 0, 1)")
		s.exec("UPDATE e SET ti = 300 WHERE id = 50")
		s.wantRows("Warning:1264:Out of range value for column 'ti' at row 1", "SHOW WARNINGS")
		s.wantRows("127", "SELECT ti FROM e WHERE id = 50")
		// UPDATE IGNORE clamps too, in strict mode (a first version of
		// the range check made go-mysql-server store 0).
		s.exec("SET SESSION sql_mode = DEFAULT")
		s.exec("UPDATE IGNORE e SET ti = -300 WHERE id = 50")
		s.wantRows("Warning:1264:Out of range value for column 'ti' at row 1", "SHOW WARNINGS")
		s.wantRows("-128", "SELECT ti FROM e WHERE id = 50")
		// The warning names the row the statement was at.
		s.exec("INSERT INTO e (id, nn, ti) VALUES (51, 0, 100)")
		s.exec("UPDATE IGNORE e SET ti = ti + 100 WHERE id IN (50, 51) ORDER BY id")
		s.wantRows("Warning:1264:Out of range value for column 'ti' at row 2", "SHOW WARNINGS")
		s.wantRows("-28 127", "SELECT ti FROM e WHERE id IN (50, 51) ORDER BY id")
		s.exec("DELETE FROM e WHERE id IN (50, 51)")
	})

	t.Run("InsertIgnoreWarnsAsMySQL", func(t *testing.T) {
		// INSERT IGNORE stores the clamped or zero value and warns in
		// MySQL's words, per column and row (go-mysql-server: Note 1105
		// "500 out of range for tinyint"). SHOW WARNINGS lists them in the
		// order they were raised, as MySQL does (go-mysql-server: newest
		// first; sqlfront's warningOrderRule).
		s := e.session("ignore")
		s.exec("INSERT IGNORE INTO e (id, nn, ti, n) VALUES (60, 0, 500, 'x'), (61, 0, -500, 7)")
		// (Within a row, columns are converted in table order: n, then ti.)
		s.wantRows("Warning:1366:Incorrect integer value: 'x' for column 'n' at row 1 "+
			"Warning:1264:Out of range value for column 'ti' at row 1 "+
			"Warning:1264:Out of range value for column 'ti' at row 2", "SHOW WARNINGS")
		s.wantRows("Warning:1264:Out of range value for column 'ti' at row 1", "SHOW WARNINGS LIMIT 1, 1")
		s.wantRows("60:127:0 61:-128:7", "SELECT id, ti, n FROM e WHERE id IN (60, 61) ORDER BY id")
		s.exec("DELETE FROM e WHERE id IN (60, 61)")
	})

	t.Run("UnknownDatabaseInDSN", func(t *testing.T) {
		h, err := sql.Open("mysql", srv.DSN("nosuchdb"))
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		err = h.PingContext(e.ctx)
		expectErrno(t, err, erBadDB, "connecting with database nosuchdb")
	})

	t.Run("SessionUsableAfterErrors", func(t *testing.T) {
		// Errors inside a transaction roll back the statement only.
		s := e.session("s")
		s.exec("BEGIN")
		s.exec("INSERT INTO e (id, nn) VALUES (10, 0)")
		for _, c := range errorCases {
			if c.noPrep || strings.Contains(c.name, "Database") || strings.HasPrefix(c.name, "Create") ||
				strings.HasPrefix(c.name, "Drop") || strings.HasPrefix(c.name, "Add") || c.name == "DuplicateIndexName" {
				continue // DDL would commit the transaction
			}
			if err := s.execErr(c.stmt, c.args...); err == nil {
				t.Fatalf("%s succeeded", c.stmt)
			}
		}
		s.wantInts([]int64{1, 10}, "SELECT id FROM e ORDER BY id")
		s.exec("ROLLBACK")
		s.wantInts([]int64{1}, "SELECT id FROM e ORDER BY id")
	})
}

func reproOf(stmt string, args []any) string {
	if len(args) == 0 {
		return stmt
	}
	parts := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case nil:
			parts[i] = "NULL"
		case string:
			parts[i] = "'" + v + "'"
		default:
			parts[i] = fmt.Sprint(v)
		}
	}
	return stmt + " -- parameters: " + strings.Join(parts, ", ")
}
