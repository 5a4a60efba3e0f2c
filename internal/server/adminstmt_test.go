package server

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
)

// TestTableMaintenance: CHECK, OPTIMIZE and REPAIR TABLE (1064 before)
// answer as MySQL with InnoDB does, a missing table included; ANALYZE
// TABLE of an empty table succeeds (it panicked: integer divide by zero)
// and names the table db.table; DO evaluates and sends no result set;
// mysqlcheck's check, analyze and optimize runs pass.
func TestTableMaintenance(t *testing.T) {
	s := startInProcess(t, nil)
	s.exec(t, "CREATE DATABASE m")
	s.exec(t, "CREATE TABLE m.t (id INT PRIMARY KEY, v VARCHAR(10), KEY (v))")
	s.exec(t, "CREATE TABLE m.e0 (id INT PRIMARY KEY, v VARCHAR(10), KEY (v))")
	s.exec(t, "INSERT INTO m.t VALUES (1, 'a'), (2, 'b')")
	rows := func(q string) string {
		t.Helper()
		conn, err := s.db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(context.Background(), "USE m"); err != nil {
			t.Fatal(err)
		}
		rs, err := conn.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rs.Close()
		var out []string
		for rs.Next() {
			var a, b, c, d string
			if err := rs.Scan(&a, &b, &c, &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, strings.Join([]string{a, b, c, d}, "|"))
		}
		return strings.Join(out, "\n")
	}
	for _, tc := range []struct{ q, want string }{
		{"CHECK TABLE t", "m.t|check|status|OK"},
		{"check table m.t, `m`.`e0` EXTENDED", "m.t|check|status|OK\nm.e0|check|status|OK"},
		{"CHECK TABLE nope", "m.nope|check|Error|Table 'm.nope' doesn't exist\nm.nope|check|status|Operation failed"},
		{"OPTIMIZE TABLE t", "m.t|optimize|note|Table does not support optimize, doing recreate + analyze instead\nm.t|optimize|status|OK"},
		{"OPTIMIZE NO_WRITE_TO_BINLOG TABLE e0", "m.e0|optimize|note|Table does not support optimize, doing recreate + analyze instead\nm.e0|optimize|status|OK"},
		{"REPAIR TABLE t", "m.t|repair|note|The storage engine for the table doesn't support repair"},
		{"ANALYZE TABLE e0", "m.e0|analyze|status|OK"},
		{"ANALYZE TABLE t, e0", "m.t|analyze|status|OK\nm.e0|analyze|status|OK"},
	} {
		if got := rows(tc.q); got != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.q, got, tc.want)
		}
	}
	if _, err := s.db.Exec("DO 1 + 1, SLEEP(0)"); err != nil {
		t.Errorf("DO: %v", err)
	}
	if _, err := s.db.Exec("DO nosuchfunction()"); err == nil {
		t.Error("DO of a function that does not exist: no error")
	}
	if bin, err := exec.LookPath("mysqlcheck"); err == nil {
		host, port, _ := net.SplitHostPort(s.addr)
		for _, mode := range []string{"--check", "--analyze", "--optimize"} {
			out, err := exec.Command(bin, "-h"+host, "-P"+port, "-uroot", mode, "m").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "m.e0") || strings.Contains(string(out), "rror") {
				t.Errorf("mysqlcheck %s: %v\n%s", mode, err, out)
			}
		}
	}
}

func TestSplitTableList(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"t", "[{ t}]"},
		{"db.t, `d b`.`t``x` ,u", "[{db t} {d b t`x} { u}]"},
		{"t1,t2", "[{ t1} { t2}]"},
		{"db . t", "[{db t}]"},
		{"a.b.c", "[]"},
		{"t WHERE 1", "[]"},
		{"`unterminated", "[]"},
		{"", "[]"},
	} {
		if got := fmt.Sprint(splitTableList(tc.in)); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestParseAccount(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"'app'@'%'", "app|%|true"},
		{"`a``b`@`h`", "a`b|h|true"},
		{`"x"@"10.0.0.%"`, "x|10.0.0.%|true"},
		{"bare@localhost", "bare|localhost|true"},
		{"'it''s'", "it's|%|true"},
		{"app @ '%'", "app|%|true"},
		{"app; DROP", "||false"},
	} {
		u, h, ok := parseAccount(tc.in)
		if got := fmt.Sprintf("%s|%s|%v", u, h, ok); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.in, got, tc.want)
		}
	}
}
