package integration

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestOtherClients: the mysql command-line client (Debian's mariadb-client)
// and PyMySQL talk to lockstep too. A missing client skips its subtest,
// except under CI (see requireClient); scripts/test.sh installs both.
func TestOtherClients(t *testing.T) {
	srv := startServer(t)
	port := strconv.Itoa(srv.Port)

	t.Run("mysql-cli", func(t *testing.T) {
		bin, err := exec.LookPath("mysql")
		requireClient(t, "the mysql client", err == nil)
		e := newDatabase(t, srv)
		script := "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10));" +
			"INSERT INTO t VALUES (1,'a'),(2,'b');" +
			"BEGIN; UPDATE t SET c='z' WHERE id=1; ROLLBACK;" +
			"SELECT id, c FROM t ORDER BY id;"
		out, err := exec.Command(bin, "-h127.0.0.1", "-P"+port, "-uroot", "-N", "-B", e.name, "-e", script).CombinedOutput()
		if err != nil {
			t.Fatalf("mysql: %v\n%s", err, out)
		}
		if got := strings.TrimSpace(string(out)); got != "1\ta\n2\tb" {
			t.Fatalf("mysql output %q", got)
		}
		out, _ = exec.Command(bin, "-h127.0.0.1", "-P"+port, "-uroot", e.name, "-e", "INSERT INTO t VALUES (1,'x')").CombinedOutput()
		if !strings.Contains(string(out), "ERROR 1062 (23000)") {
			t.Fatalf("duplicate through mysql CLI: %s", out)
		}
	})

	// COM_STATISTICS: mysqladmin status and the CLI's status command
	// (they got "command handling not implemented yet: 9"); the
	// connection goes on working after it.
	t.Run("mysqladmin-status", func(t *testing.T) {
		admin, err := exec.LookPath("mysqladmin")
		requireClient(t, "mysqladmin", err == nil)
		out, err := exec.Command(admin, "-h127.0.0.1", "-P"+port, "-uroot", "status", "ping").CombinedOutput()
		if err != nil {
			t.Fatalf("mysqladmin status: %v\n%s", err, out)
		}
		for _, want := range []string{"Uptime: ", "Threads: ", "Questions: ", "Queries per second avg: ", "mysqld is alive"} {
			if !strings.Contains(string(out), want) {
				t.Fatalf("mysqladmin status ping: %q lacks %q", out, want)
			}
		}
		bin, err := exec.LookPath("mysql")
		requireClient(t, "the mysql client", err == nil)
		out, err = exec.Command(bin, "-h127.0.0.1", "-P"+port, "-uroot", "-e", "status; SELECT 41 + 1").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Uptime:") || !strings.Contains(string(out), "Threads: ") || !strings.Contains(string(out), "42") {
			t.Fatalf("mysql status: %v\n%s", err, out)
		}
	})

	t.Run("pymysql", func(t *testing.T) {
		requireClient(t, "PyMySQL", exec.Command("python3", "-c", "import pymysql").Run() == nil)
		e := newDatabase(t, srv)
		prog := `
import sys, pymysql
c = pymysql.connect(host="127.0.0.1", port=int(sys.argv[1]), user="root", password="", database=sys.argv[2], autocommit=True)
cur = c.cursor()
cur.execute("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10), d DECIMAL(10,2))")
cur.executemany("INSERT INTO t VALUES (%s, %s, %s)", [(1, "a", "1.50"), (2, "b'q", "2.25")])
c.begin()
cur.execute("UPDATE t SET c = %s WHERE id = %s", ("z", 1))
c.rollback()
cur.execute("SELECT id, c, d FROM t ORDER BY id")
rows = cur.fetchall()
assert [(r[0], r[1], str(r[2])) for r in rows] == [(1, "a", "1.50"), (2, "b'q", "2.25")], rows
try:
    cur.execute("INSERT INTO t VALUES (1, 'x', 0)")
    raise SystemExit("duplicate accepted")
except pymysql.err.IntegrityError as e:
    assert e.args[0] == 1062, e.args
print("ok")
`
		out, err := exec.Command("python3", "-c", prog, port, e.name).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "ok" {
			t.Fatalf("pymysql: %v\n%s", err, out)
		}
	})
}
