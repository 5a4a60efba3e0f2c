package integration

import (
	"context"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// TestMysqldumpAllDatabases: `mysqldump --all-databases` (Debian's
// mariadb-dump) dumps the mysql schema too, and its reload into a new
// server restores the accounts — passwords, database, table and routine
// privileges, roles — beside the user databases; the reloaded accounts,
// and later writes to the account tables, survive kill -9. The dump used
// to stop at once (1146 on mysql.general_log); information_schema listed
// no table of mysql; the account tables' SHOW CREATE TABLE could not be
// run; their DROP and CREATE TABLE were refused; db and tables_priv rows
// for accounts not yet loaded were refused; writes to procs_priv broke the
// connection; UPDATE of mysql.user left a second entry behind (every later
// login of that account failed); and none of these writes was logged
// before FLUSH PRIVILEGES.
func TestMysqldumpAllDatabases(t *testing.T) {
	dump, err := exec.LookPath("mysqldump")
	testutil.RequireInstalled(t, "mysqldump", err == nil)
	mysqlCLI, err := exec.LookPath("mysql")
	testutil.RequireInstalled(t, "the mysql client", err == nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	src := testutil.StartServer(t)
	run := func(s *testutil.Server, user, pass, script string) string {
		t.Helper()
		args := []string{"-h127.0.0.1", "-P" + strconv.Itoa(s.Port), "-u" + user, "-N", "-B", "-e", script}
		if pass != "" {
			args = append(args, "-p"+pass)
		}
		out, err := exec.CommandContext(ctx, mysqlCLI, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("mysql -u%s -e %q: %v\n%s", user, script, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(src, "root", "", "CREATE DATABASE shop; CREATE TABLE shop.t (id INT PRIMARY KEY, v VARCHAR(10)); INSERT INTO shop.t VALUES (1, 'a');"+
		"CREATE PROCEDURE shop.p() SELECT 7;"+
		"CREATE USER app@'%' IDENTIFIED BY 'secret'; GRANT SELECT, INSERT ON shop.* TO app@'%'; GRANT UPDATE ON shop.t TO app@'%';"+
		"GRANT EXECUTE ON PROCEDURE shop.p TO app@'%'; CREATE ROLE r1; GRANT SELECT ON shop.* TO r1; GRANT r1 TO app@'%'")
	grants := func(s *testutil.Server) string {
		lines := strings.Split(run(s, "root", "", "SHOW GRANTS FOR app@'%'"), "\n")
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	want := grants(src)

	// What the dump reads of the mysql schema.
	if got := run(src, "root", "", "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'mysql' AND TABLE_NAME = 'tables_priv'"); got != "8" {
		t.Fatalf("information_schema.COLUMNS lists %s columns of mysql.tables_priv, want 8", got)
	}
	if got := run(src, "root", "", "SELECT COUNT(*) FROM mysql.general_log; SELECT COUNT(*), MIN(name) IS NULL FROM mysql.help_topic"); got != "0\n0\t1" {
		t.Fatalf("log and help tables: %q, want them empty", got)
	}
	if got := run(src, "root", "", "SHOW CREATE TABLE mysql.db"); strings.Contains(got, "DEFAULT '1'") || !strings.Contains(got, "DEFAULT 'N'") {
		t.Fatalf("SHOW CREATE TABLE mysql.db prints ENUM defaults by index:\n%s", got)
	}

	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, dump, "-h127.0.0.1", "-P"+strconv.Itoa(src.Port), "-uroot", "--all-databases", "--routines")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("mysqldump --all-databases: %v\n%s", err, stderr.String())
	}
	for _, w := range []string{"CREATE TABLE IF NOT EXISTS `general_log`", "INSERT INTO `user` VALUES", "INSERT INTO `procs_priv` VALUES", "INSERT INTO `t` VALUES"} {
		if !strings.Contains(string(out), w) {
			t.Fatalf("dump lacks %q", w)
		}
	}

	dst := testutil.StartServer(t)
	load := exec.CommandContext(ctx, mysqlCLI, "-h127.0.0.1", "-P"+strconv.Itoa(dst.Port), "-uroot")
	load.Stdin = strings.NewReader(string(out))
	if lout, err := load.CombinedOutput(); err != nil {
		t.Fatalf("reloading the dump: %v\n%s", err, lout)
	}
	check := func(s *testutil.Server, when string) {
		t.Helper()
		if got := grants(s); got != want {
			t.Fatalf("%s: grants of app@'%%'\n%s\nwant\n%s", when, got, want)
		}
		if got := run(s, "app", "secret", "SELECT v FROM shop.t; CALL shop.p()"); got != "a\n7" {
			t.Fatalf("%s: app reads %q", when, got)
		}
	}
	check(dst, "after the reload")
	dst.Kill()
	dst = testutil.StartServer(t, "--datadir", dst.Datadir)
	check(dst, "after kill -9")

	// Writes to the account tables are logged per statement: they
	// survive kill -9 without FLUSH PRIVILEGES.
	run(dst, "root", "", "UPDATE mysql.user SET account_locked = 'Y' WHERE user = 'r1';"+
		"UPDATE mysql.db SET Delete_priv = 'Y' WHERE user = 'app' AND db = 'shop';"+
		"DELETE FROM mysql.tables_priv WHERE user = 'app';"+
		"INSERT INTO mysql.procs_priv VALUES ('%', 'shop', 'app', 'q', 'FUNCTION', '', 'Execute', NOW())")
	dst.Kill()
	dst = testutil.StartServer(t, "--datadir", dst.Datadir)
	got := grants(dst)
	for _, w := range []string{
		"GRANT SELECT, INSERT, DELETE ON `shop`.* TO `app`@`%`",
		"GRANT EXECUTE ON PROCEDURE `shop`.`p` TO `app`@`%`", // the db row's update keeps it
		"GRANT EXECUTE ON FUNCTION `shop`.`q` TO `app`@`%`",
	} {
		if !strings.Contains(got, w) {
			t.Fatalf("after account-table writes and kill -9, grants lack %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "UPDATE ON `shop`.`t`") {
		t.Fatalf("the deleted tables_priv row came back:\n%s", got)
	}
	if got := run(dst, "root", "", "SELECT user, account_locked FROM mysql.user WHERE user IN ('app', 'r1') ORDER BY user"); got != "app\tN\nr1\tY" {
		t.Fatalf("mysql.user after UPDATE: %q (one row per account)", got)
	}
}
