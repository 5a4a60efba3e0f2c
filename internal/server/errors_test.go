package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
)

func TestMySQLError(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		in          error
		num         int
		state       string
		msg         string
	}{
		{"syntax", "SELEC 1", mysql.NewSQLError(1105, "HY000", "syntax error at position 6 near 'SELEC'"), 1064, "42000", ""},
		{"too long", "", mysql.NewSQLError(1105, "HY000", "string 'abcdef' is too large for column 'c'"), 1406, "22001", "Data too long for column 'c' at row 1"},
		{"not null", "", mysql.NewSQLError(1048, "HY000", "column name 'v' is non-nullable but attempted to set a value of null"), 1048, "23000", "Column 'v' cannot be null"},
		{"unknown database", "USE nope", mysql.NewSQLError(1049, "HY000", "database not found: nope"), 1049, "42000", "Unknown database 'nope'"},
		{"unknown qualified table", "", mysql.NewSQLError(1146, "HY000", "table not found: d.nope"), 1146, "42S02", "Table 'd.nope' doesn't exist"},
		{"bad datetime", "", mysql.NewSQLError(1105, "HY000", "Incorrect datetime value: 'x'"), 1292, "22007", "Incorrect datetime value: 'x'"},
		{"bad json", "", mysql.NewSQLError(1105, "HY000", "Invalid JSON text: bad"), 3140, "22032", "Invalid JSON text: bad"},
		{"huge value cut at a character", "", mysql.NewSQLError(1366, "HY000", "%s", "error: '"+strings.Repeat("é", 300)+"' is not a valid value for 'int'"),
			1366, "HY000", "error: '" + strings.Repeat("é", 96) + "...' is not a valid value for 'int'"},
		{"unknown column", "", mysql.NewSQLError(1105, "HY000", `column "x" could not be found in any table in scope`), 1054, "42S22", ""},
		{"drop missing db", "DROP DATABASE nope", mysql.NewSQLError(1049, "HY000", "database not found: nope"), 1008, "HY000", ""},
		{"drop missing table", "drop table nope", mysql.NewSQLError(1146, "HY000", "table not found: nope"), 1051, "42S02", ""},
		{"select missing table", "SELECT * FROM nope", mysql.NewSQLError(1146, "HY000", "table not found: nope"), 1146, "42S02", ""},
		{"duplicate wording", "", mysql.NewSQLError(1062, "HY000", "duplicate primary key given: Duplicate entry '1' for key 't.PRIMARY'"),
			1062, "23000", "Duplicate entry '1' for key 't.PRIMARY'"},
		{"plain error from a prepare", "", errors.New("Code: INVALID_ARGUMENT\nsyntax error at position 3"), 1064, "42000", ""},
		{"session SET of a global", "", mysql.NewSQLError(1105, "HY000", "Variable 'port' is a GLOBAL variable and should be set with SET GLOBAL"), 1229, "HY000", ""},
		{"global SET of a session variable", "", mysql.NewSQLError(1105, "HY000", "Variable 'warning_count' is a SESSION variable and can't be used with SET GLOBAL"), 1228, "HY000", ""},
		{"bad variable value", "", mysql.NewSQLError(1105, "HY000", "Variable 'sql_mode' can't be set to the value of 'NOPE'"), 1231, "42000", ""},
		{"read-only variable", "", mysql.NewSQLError(1105, "HY000", "Variable 'port' is a read only variable"), 1238, "HY000", ""},
		{"table exists", "CREATE TABLE t (a INT)", mysql.NewSQLError(1105, "HY000", "table with name t already exists"), 1050, "42S01", "Table 't' already exists"},
		{"no database selected", "SELECT * FROM t", mysql.NewSQLError(1105, "HY000", "no database selected"), 1046, "3D000", "No database selected"},
		{"deadlock untouched", "", mysql.NewSQLError(1213, "40001", "Deadlock found"), 1213, "40001", "Deadlock found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var se *mysql.SQLError
			if !errors.As(mysqlError(tc.query, tc.in), &se) {
				t.Fatalf("not a MySQL error: %v", tc.in)
			}
			if se.Num != tc.num || se.State != tc.state || (tc.msg != "" && se.Message != tc.msg) {
				t.Fatalf("got %d (%s) %q, want %d (%s) %q", se.Num, se.State, se.Message, tc.num, tc.state, tc.msg)
			}
		})
	}
	// The session's side: the current database and the failing row.
	var se *mysql.SQLError
	if !errors.As(mysqlErrorIn("", errContext{db: "shop", row: 3}, mysql.NewSQLError(1105, "HY000", "string 'x' is too large for column 'c'")), &se) ||
		se.Message != "Data too long for column 'c' at row 3" {
		t.Fatalf("row number: %v", se)
	}
	if !errors.As(mysqlErrorIn("", errContext{db: "shop", row: 1}, mysql.NewSQLError(1146, "HY000", "table not found: t")), &se) ||
		se.Message != "Table 'shop.t' doesn't exist" {
		t.Fatalf("database name: %v", se)
	}
	// A database named in the statement wins over the current one
	// (go-mysql-server names the table alone).
	for _, tc := range []struct{ query, db, want string }{
		{"SELECT * FROM shop.nope", "", "Table 'shop.nope' doesn't exist"},
		{"SELECT * FROM shop.nope", "other", "Table 'shop.nope' doesn't exist"},
		{"SELECT * FROM `my db` . `nope` WHERE 1", "other", "Table 'my db.nope' doesn't exist"},
		{"SELECT * FROM nope JOIN shop.nopes", "cur", "Table 'cur.nope' doesn't exist"},
		{"SELECT * FROM nope", "", "Table 'nope' doesn't exist"},
		{"SELECT * FROM information_schema.nope", "shop", "Unknown table 'nope' in information_schema"},
		{"SELECT * FROM nope", "INFORMATION_SCHEMA", "Unknown table 'nope' in information_schema"},
	} {
		if !errors.As(mysqlErrorIn(tc.query, errContext{db: tc.db, row: 1}, mysql.NewSQLError(1146, "HY000", "table not found: nope")), &se) ||
			se.Message != tc.want {
			t.Errorf("%s (database %q): %v, want %s", tc.query, tc.db, se, tc.want)
		}
	}
	// A function that does not exist, named with its database as MySQL does.
	for _, tc := range []struct{ query, db, want string }{
		{"SELECT nosuch()", "", "FUNCTION nosuch does not exist"},
		{"SELECT nosuch(1)", "fz", "FUNCTION fz.nosuch does not exist"},
		{"SELECT other.nosuch(1)", "fz", "FUNCTION other.nosuch does not exist"},
	} {
		if !errors.As(mysqlErrorIn(tc.query, errContext{db: tc.db, row: 1}, mysql.NewSQLError(1105, "HY000", "function: 'nosuch' not found")), &se) ||
			se.Num != 1305 || se.State != "42000" || se.Message != tc.want {
			t.Errorf("%s (database %q): %v, want 1305 %s", tc.query, tc.db, se, tc.want)
		}
	}
	// The column of a conversion error, when the session noted it.
	for _, tc := range []struct {
		in      *mysql.SQLError
		col     string
		want    string
		colType string
	}{
		{mysql.NewSQLError(1366, "HY000", "error: 'abc' is not a valid value for 'int'"), "n", "Incorrect integer value: 'abc' for column 'n' at row 2", ""},
		{mysql.NewSQLError(1366, "HY000", "error: 'x' is not a valid value for 'double'"), "f", "Incorrect double value: 'x' for column 'f' at row 2", ""},
		{mysql.NewSQLError(1366, "HY000", "error: 'abc' is not a valid value for 'int'"), "", "error: 'abc' is not a valid value for 'int'", ""},
		{mysql.NewSQLError(1105, "HY000", "300 out of range for tinyint"), "ti", "Out of range value for column 'ti' at row 2", ""},
		{mysql.NewSQLError(1105, "HY000", "Incorrect datetime value: 'nope'"), "dt", "Incorrect datetime value: 'nope' for column 'dt' at row 2", "datetime(6)"},
		// MySQL names the column's type: a DATE column's value is a date
		// value, a TIMESTAMP's a datetime value, a TIME's a time value.
		{mysql.NewSQLError(1105, "HY000", "Incorrect datetime value: 'nope'"), "d", "Incorrect date value: 'nope' for column 'd' at row 2", "date"},
		{mysql.NewSQLError(1105, "HY000", "Incorrect timestamp value: 'nope'"), "ts", "Incorrect datetime value: 'nope' for column 'ts' at row 2", "timestamp"},
		{mysql.NewSQLError(1105, "HY000", "value nope is not a valid Time"), "tm", "Incorrect time value: 'nope' for column 'tm' at row 2", "time(6)"},
		{mysql.NewSQLError(1105, "HY000", "value nope is not a valid Time"), "", "Incorrect time value: 'nope'", ""},
		{mysql.NewSQLError(1105, "HY000", "number has no digits"), "dc", "Incorrect decimal value: 'zz' for column 'dc' at row 2", ""},
	} {
		if !errors.As(mysqlErrorIn("", errContext{row: 2, col: tc.col, val: "zz", colType: tc.colType}, tc.in), &se) || se.Message != tc.want {
			t.Errorf("%q with column %q: %v, want %q", tc.in.Message, tc.col, se, tc.want)
		}
	}
	if mysqlError("", nil) != nil {
		t.Fatal("nil error changed")
	}
	plain := errors.New("something else")
	if mysqlError("", plain) != plain {
		t.Fatal("an unrecognised plain error must pass through unchanged")
	}
}
