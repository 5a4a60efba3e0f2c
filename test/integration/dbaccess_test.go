package integration

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestPrivilegeDatabaseAccess: which databases an account may USE and
// sees in SHOW DATABASES, as in MySQL 8 (issue 29). USE d needs a
// database privilege: a global one of the data kind (SELECT, INSERT, ...,
// not FILE, PROCESS, SUPER or SHOW DATABASES), one on d, or one on a
// table or routine inside d; else 1044 naming the account's host.
// SHOW DATABASES and information_schema.SCHEMATA list the databases the
// account has such a privilege in (GRANT OPTION on *.* counts here), all
// of them with the global SHOW DATABASES privilege. The same check holds
// for a connection's initial database (the handshake) and COM_INIT_DB.
// go-mysql-server let any account with some global privilege use and list
// every database, and any account use and list mysql.
func TestPrivilegeDatabaseAccess(t *testing.T) {
	p := newPrivEnv(t)
	ctx := p.ctx
	for _, q := range []string{
		"CREATE DATABASE other",
		"CREATE TABLE other.o (a INT PRIMARY KEY)",
		"CREATE USER pfile IDENTIFIED BY 'pw'", "GRANT FILE, RELOAD, SHUTDOWN, REPLICATION CLIENT ON *.* TO pfile",
		"CREATE USER pt IDENTIFIED BY 'pw'", "GRANT SELECT ON pdb.t TO pt",
		"CREATE PROCEDURE pdb.p() SELECT 1",
		"CREATE USER pr IDENTIFIED BY 'pw'", "GRANT EXECUTE ON PROCEDURE pdb.p TO pr",
		"CREATE USER pg IDENTIFIED BY 'pw'", "GRANT SELECT ON *.* TO pg",
		"CREATE USER psd IDENTIFIED BY 'pw'", "GRANT SHOW DATABASES ON *.* TO psd",
	} {
		if _, err := p.root.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	denied := func(user, db string) string {
		return fmt.Sprintf("Access denied for user '%s'@'%%' to database '%s'", user, db)
	}
	// open is a pool of one connection for user, without a database.
	open := func(user string) *sql.DB {
		db, err := sql.Open("mysql", fmt.Sprintf("%s:pw@tcp(%s)/", user, p.srv.Addr))
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}
	all := "information_schema,mysql,other,pdb"
	for _, c := range []struct {
		user string
		use  map[string]uint16 // database: the USE's error (0: allowed)
		list string            // SHOW DATABASES
	}{
		{"pp", map[string]uint16{"pdb": 1044, "other": 1044, "mysql": 1044, "nosuch": 1044, "information_schema": 0}, "information_schema"},
		{"pfile", map[string]uint16{"pdb": 1044, "mysql": 1044}, "information_schema"},
		{"pf", map[string]uint16{"pdb": 0, "other": 1044}, "information_schema,pdb"}, // FILE, and SELECT on pdb
		{"ps", map[string]uint16{"pdb": 0, "other": 1044}, "information_schema,pdb"}, // SUPER, and SELECT on pdb
		{"pt", map[string]uint16{"pdb": 0, "other": 1044}, "information_schema,pdb"},
		{"pr", map[string]uint16{"pdb": 0, "other": 1044}, "information_schema,pdb"},
		{"pg", map[string]uint16{"pdb": 0, "other": 0, "mysql": 0, "nosuch": 1049}, all},
		{"psd", map[string]uint16{"pdb": 1044, "other": 1044}, all},
	} {
		db := open(c.user)
		for name, code := range c.use {
			_, err := db.ExecContext(ctx, "USE "+name)
			msg := ""
			if code == 1044 {
				msg = denied(c.user, name)
			}
			wantErr(t, c.user+": USE "+name, err, code, msg)
		}
		for _, q := range []string{"SHOW DATABASES", "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 1"} {
			if got := strings.Join(stringColumn(t, ctx, db, q), ","); got != c.list {
				t.Errorf("%s: %s = %s, want %s", c.user, q, got, c.list)
			}
		}
	}

	// The initial database of the handshake (CLIENT_CONNECT_WITH_DB).
	for _, c := range []struct {
		user, db string
		code     uint16
	}{
		{"pp", "pdb", 1044}, {"pfile", "other", 1044}, {"pt", "pdb", 0}, {"pg", "other", 0}, {"pp", "mysql", 1044},
	} {
		db, err := sql.Open("mysql", fmt.Sprintf("%s:pw@tcp(%s)/%s", c.user, p.srv.Addr, c.db))
		if err != nil {
			t.Fatal(err)
		}
		msg := ""
		if c.code != 0 {
			msg = denied(c.user, c.db)
		}
		wantErr(t, fmt.Sprintf("%s connects to %s", c.user, c.db), db.PingContext(ctx), c.code, msg)
		db.Close()
	}

	// COM_INIT_DB on an open connection: the mysql client's use command.
	cli, err := exec.LookPath("mysql")
	if err != nil {
		t.Fatalf("the mysql client is needed: %v", err)
	}
	host, port, _ := net.SplitHostPort(p.srv.Addr)
	for _, c := range []struct {
		user, db, want string
	}{
		{"pp", "pdb", "ERROR 1044 (42000) at line 1: " + denied("pp", "pdb")},
		{"pp", "mysql", "ERROR 1044 (42000) at line 1: " + denied("pp", "mysql")},
		{"pt", "pdb", "pdb"},
	} {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		out, _ := exec.CommandContext(cctx, cli, "-h"+host, "-P"+port, "-u"+c.user, "-ppw", "-N", "-B",
			"-e", "use "+c.db+"\nSELECT DATABASE()").CombinedOutput()
		cancel()
		if got := strings.TrimSpace(string(out)); got != c.want {
			t.Errorf("%s: mysql -e 'use %s': %q, want %q", c.user, c.db, got, c.want)
		}
	}
}

// stringColumn is the first column of query's rows.
func stringColumn(t *testing.T, ctx context.Context, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		t.Errorf("%s: %v", query, err)
		return nil
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Errorf("%s: %v", query, err)
	}
	return out
}
