package server

import (
	"errors"
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
		{"too long", "", mysql.NewSQLError(1105, "HY000", "string 'abcdef' is too large for column 'c'"), 1406, "22001", ""},
		{"unknown column", "", mysql.NewSQLError(1105, "HY000", `column "x" could not be found in any table in scope`), 1054, "42S22", ""},
		{"drop missing db", "DROP DATABASE nope", mysql.NewSQLError(1049, "HY000", "database not found: nope"), 1008, "HY000", ""},
		{"drop missing table", "drop table nope", mysql.NewSQLError(1146, "HY000", "table not found: nope"), 1051, "42S02", ""},
		{"select missing table", "SELECT * FROM nope", mysql.NewSQLError(1146, "HY000", "table not found: nope"), 1146, "42S02", ""},
		{"duplicate wording", "", mysql.NewSQLError(1062, "HY000", "duplicate primary key given: Duplicate entry '1' for key 't.PRIMARY'"),
			1062, "23000", "Duplicate entry '1' for key 't.PRIMARY'"},
		{"plain error from a prepare", "", errors.New("Code: INVALID_ARGUMENT\nsyntax error at position 3"), 1064, "42000", ""},
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
	if mysqlError("", nil) != nil {
		t.Fatal("nil error changed")
	}
	plain := errors.New("something else")
	if mysqlError("", plain) != plain {
		t.Fatal("an unrecognised plain error must pass through unchanged")
	}
}
