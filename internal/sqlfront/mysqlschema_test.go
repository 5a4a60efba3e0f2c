package sqlfront

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
)

// TestMySQLSchema: the mysql schema as a dump meets it (mysqlschema.go,
// granttables.go). Each step runs in one session, in order; want is a
// substring of the rows printed one per line (or of the error).
func TestMySQLSchema(t *testing.T) {
	f := newTestFE(t)
	ctx := f.session()
	steps := []struct {
		q       string
		want    string
		wantErr string
		noRows  bool
	}{
		{q: "SHOW CREATE TABLE mysql.general_log", want: "CREATE TABLE `general_log` (\n  `event_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)"},
		{q: "SELECT COUNT(*) FROM mysql.slow_log", want: "0"},
		{q: "CREATE TABLE IF NOT EXISTS mysql.general_log (a INT)"},
		{q: "CREATE TABLE mysql.slow_log (a INT)", wantErr: "already exists"},
		{q: "USE mysql"},
		{q: "DESCRIBE general_log", want: "argument mediumblob NO"},
		// A table named like a log table elsewhere is that table.
		{q: "CREATE DATABASE logs_elsewhere"},
		{q: "CREATE TABLE logs_elsewhere.general_log (x INT PRIMARY KEY)"},
		{q: "INSERT INTO logs_elsewhere.general_log VALUES (42)"},
		{q: "SELECT x FROM logs_elsewhere.general_log", want: "42"},
		// The help tables are empty (were: one row of no columns).
		{q: "SELECT COUNT(*) FROM mysql.help_topic", want: "0"},
		{q: "SELECT name FROM mysql.help_keyword", noRows: true},
		// information_schema lists the schema, every column of tables_priv.
		{q: "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'mysql'", want: "12"},
		{q: "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'mysql' AND TABLE_NAME = 'tables_priv'", want: "8"},
		// Defaults printed as values CREATE TABLE takes.
		{q: "SHOW CREATE TABLE mysql.procs_priv", want: "`Routine_type` enum('FUNCTION','PROCEDURE') NOT NULL DEFAULT 'PROCEDURE'"},
		{q: "SHOW CREATE TABLE mysql.tables_priv", want: "`Timestamp` timestamp NOT NULL DEFAULT '1970-01-01 00:00:01'"},
		// A dump's reload sequence.
		{q: "CREATE TABLE mysql.db (a INT)", wantErr: "already exists"},
		{q: "DROP TABLE IF EXISTS mysql.db"},
		{q: "CREATE TABLE mysql.db (a INT)"},
		{q: "CREATE TABLE mysql.db (a INT)", wantErr: "already exists"},
		{q: "ALTER TABLE mysql.db DISABLE KEYS"},
		{q: "INSERT INTO mysql.db (Host, Db, User, Select_priv) VALUES ('%', 'shop', 'nobody_yet', 'Y')"},
		{q: "SELECT User, Select_priv FROM mysql.db WHERE User = 'nobody_yet'", want: "nobody_yet 2"}, // ENUM index 2: 'Y'
		{q: "SELECT account_locked FROM mysql.user WHERE User = 'nobody_yet'", want: "2"},             // locked
		{q: "DROP TABLE mysql.user"},
		{q: "SELECT COUNT(*) FROM mysql.user WHERE User = 'nobody_yet'", want: "1"}, // DROP only arms the replace
	}
	for _, st := range steps {
		if strings.HasPrefix(st.q, "USE ") {
			ctx.SetCurrentDatabase(strings.TrimPrefix(st.q, "USE "))
			continue
		}
		rows, err := f.query(ctx, st.q)
		if st.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), st.wantErr) {
				t.Fatalf("%s: error %v, want %q", st.q, err, st.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", st.q, err)
		}
		got := rowsText(rows)
		if !strings.Contains(got, st.want) || (st.noRows && len(rows) != 0) {
			t.Fatalf("%s:\n%s\nwant %q", st.q, got, st.want)
		}
	}
}

func rowsText(rows []sql.Row) string {
	var lines []string
	for _, r := range rows {
		var vals []string
		for _, v := range r {
			vals = append(vals, strings.TrimSpace(strings.ReplaceAll(sqlText(v), "\t", " ")))
		}
		lines = append(lines, strings.Join(vals, " "))
	}
	return strings.Join(lines, "\n")
}

func sqlText(v any) string {
	if v == nil {
		return "NULL"
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}
