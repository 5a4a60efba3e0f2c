package integration

import (
	"database/sql"
	"os/exec"
	"strings"
	"testing"

	"lockstep/internal/testutil"
)

// TestClientErrorsLogNoErrors (issue 30, item 5): a server process whose
// clients make mistakes — bad SQL, USE of a database that does not exist
// (the mysql client's USE is COM_INIT_DB), a missing table, a duplicate
// key, a prepared statement on a missing table, a connection to a missing
// database — writes no error-level line to its stderr (USE nosuchdb alone
// wrote two). The in-process TestClientErrorsNotLoggedAsErrors
// (internal/server) also shows a server problem still logged at error
// level.
func TestClientErrorsLogNoErrors(t *testing.T) {
	srv := testutil.StartServer(t, "--ssl=OFF")
	e := &env{t: t, srv: srv, ctx: t.Context(), name: "", db: srv.DB(t, "")}
	s := e.session("a")
	s.exec("CREATE DATABASE clientlog")
	s.exec("USE clientlog")
	s.exec("CREATE TABLE t (id INT PRIMARY KEY)")
	s.exec("INSERT INTO t VALUES (1)")
	s.mustFail(1064, "SELEC 1")
	s.mustFail(1049, "USE nosuchdb")
	s.mustFail(1146, "SELECT * FROM missing")
	s.mustFail(1062, "INSERT INTO t VALUES (1)")
	s.mustFail(1062, "INSERT INTO t VALUES (?)", 1)
	s.mustFail(1050, "CREATE TABLE t (id INT)")
	if _, err := srv.DB(t, "clientlog").Prepare("SELECT * FROM missing WHERE id = ?"); errno(err) != 1146 {
		t.Errorf("prepare on a missing table: %v, want 1146", err)
	}
	nodb, err := sql.Open("mysql", srv.DSN("nosuchdb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := nodb.Ping(); errno(err) != 1049 {
		t.Errorf("connecting to nosuchdb: %v, want 1049", err)
	}
	nodb.Close()
	if cli, err := exec.LookPath("mysql"); err == nil {
		host, port, _ := strings.Cut(srv.Addr, ":")
		out, err := exec.CommandContext(t.Context(), cli, "-h"+host, "-P"+port, "-uroot", "--skip-ssl", "-e", "use nosuchdb").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "1049") {
			t.Errorf("mysql -e 'use nosuchdb': %v\n%s", err, out)
		}
	} else {
		t.Log("no mysql client: COM_INIT_DB only through TestClientErrorsNotLoggedAsErrors")
	}
	s.exec("SELECT 1") // the server is still up
	for _, line := range strings.Split(srv.Stderr(), "\n") {
		if strings.Contains(line, "level=error") || strings.Contains(line, "level=warning") {
			t.Errorf("the server logged a client's mistake as its error: %s", line)
		}
	}
}
