package integration

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// TestGeneratedColumnDumps: a database with STORED and VIRTUAL generated
// columns goes through both kinds of dump and comes back the same.
// mariadb-dump (Debian's mysqldump) writes every column's value, generated
// ones too, with no column list, under a non-strict sql_mode: lockstep
// ignores those values there, as MariaDB does (warning 1906), and computes
// its own. MySQL 8's mysqldump writes a column list without the generated
// columns. Under a strict sql_mode a value for a generated column is
// 3105, as in MySQL 8 (it was 1105 in every mode, and the first kind of
// dump did not reload).
func TestGeneratedColumnDumps(t *testing.T) {
	dump, err := exec.LookPath("mysqldump")
	testutil.RequireInstalled(t, "mysqldump (Debian's mariadb-dump)", err == nil)
	mysqlCLI, err := exec.LookPath("mysql")
	testutil.RequireInstalled(t, "the mysql client", err == nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := testutil.StartServer(t)
	port := "-P" + strconv.Itoa(srv.Port)
	run := func(script string, stdin []byte) (string, error) {
		t.Helper()
		cmd := exec.CommandContext(ctx, mysqlCLI, "-h127.0.0.1", port, "-uroot", "-N", "-B", "-e", script)
		if stdin != nil {
			cmd = exec.CommandContext(ctx, mysqlCLI, "-h127.0.0.1", port, "-uroot", "-N", "-B")
			cmd.Stdin = bytes.NewReader(stdin)
		}
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	must := func(script string, stdin []byte) string {
		t.Helper()
		out, err := run(script, stdin)
		if err != nil {
			t.Fatalf("mysql: %v\n%s", err, out)
		}
		return out
	}
	must("CREATE DATABASE gd; CREATE TABLE gd.t (a INT PRIMARY KEY, b INT, "+
		"s INT AS (a + b) STORED, v INT AS (a * b) VIRTUAL, w VARCHAR(20) AS (CONCAT('n', a)) STORED, e VARCHAR(10), KEY (s));"+
		"INSERT INTO gd.t (a, b, e) VALUES (1, 2, 'x'), (2, 3, 'y'), (3, NULL, NULL)", nil)
	const check = "SELECT a, b, IFNULL(s, 'N'), IFNULL(v, 'N'), w, IFNULL(e, 'N') FROM gd.t ORDER BY a"
	const viaIndex = "SELECT a FROM gd.t WHERE s = 5"
	want, wantIdx := must(check, nil), must(viaIndex, nil)

	mariadbDump, err := exec.CommandContext(ctx, dump, "-h127.0.0.1", port, "-uroot", "--databases", "gd").Output()
	if err != nil {
		t.Fatalf("mysqldump: %v", err)
	}
	if !bytes.Contains(mariadbDump, []byte("INSERT INTO `t` VALUES")) {
		t.Fatalf("mariadb-dump wrote no full-row INSERT:\n%s", mariadbDump)
	}
	// MySQL 8's mysqldump: a column list without the generated columns.
	mysqlDump := []byte("/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;\n" +
		"CREATE DATABASE gd; USE gd;\n" +
		"CREATE TABLE `t` (`a` int NOT NULL, `b` int DEFAULT NULL, `s` int GENERATED ALWAYS AS ((`a` + `b`)) STORED, " +
		"`v` int GENERATED ALWAYS AS ((`a` * `b`)) VIRTUAL, `w` varchar(20) GENERATED ALWAYS AS (concat('n',`a`)) STORED, " +
		"`e` varchar(10) DEFAULT NULL, PRIMARY KEY (`a`), KEY `s` (`s`)) ENGINE=InnoDB;\n" +
		"INSERT INTO `t` (`a`, `b`, `e`) VALUES (1,2,'x'),(2,3,'y'),(3,NULL,NULL);\n" +
		"/*!40101 SET SQL_MODE=@OLD_SQL_MODE */;\n")
	for _, d := range []struct {
		name string
		text []byte
	}{{"mariadb-dump", mariadbDump}, {"mysqldump 8 style", mysqlDump}} {
		must("DROP DATABASE gd", nil)
		if out, err := run("", d.text); err != nil {
			t.Errorf("reloading the %s dump: %v\n%s", d.name, err, out)
			continue
		}
		if got := must(check, nil); got != want {
			t.Errorf("after the %s dump:\n%s\nwant\n%s", d.name, got, want)
		}
		if got := must(viaIndex, nil); got != wantIdx {
			t.Errorf("after the %s dump, the index on s finds %q, want %q", d.name, got, wantIdx)
		}
	}
	// Strict (MySQL 8's default): 3105; non-strict: ignored with 1906.
	out, err := run("INSERT INTO gd.t VALUES (9, 1, 0, 0, 'z', 'q')", nil)
	if err == nil || !strings.Contains(out, "ERROR 3105") || !strings.Contains(out, "The value specified for generated column 's' in table 't' is not allowed.") {
		t.Errorf("strict INSERT of a generated column's value: %v\n%s; want 3105", err, out)
	}
	out = must("SET sql_mode = ''; INSERT INTO gd.t VALUES (9, 1, 0, 0, 'z', 'q'); SHOW WARNINGS; SELECT s, v, w FROM gd.t WHERE a = 9", nil)
	wantOut := "Warning\t1906\tThe value specified for generated column 's' in table 't' has been ignored\n" +
		"Warning\t1906\tThe value specified for generated column 'v' in table 't' has been ignored\n" +
		"Warning\t1906\tThe value specified for generated column 'w' in table 't' has been ignored\n" +
		"10\t9\tn9"
	if out != wantOut {
		t.Errorf("non-strict INSERT of generated columns' values:\n%s\nwant\n%s", out, wantOut)
	}
	// DEFAULT is a value every mode accepts.
	must("INSERT INTO gd.t VALUES (10, 1, DEFAULT, DEFAULT, DEFAULT, 'd')", nil)
}
