package differential

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"lockstep/internal/testutil"
)

// TestPrivilegesAgainstMariaDB: the privilege matrix of issue 29 run on
// lockstep and on MariaDB 10.11 with the same accounts (no passwords):
// each privilege-gated statement by an account without the privilege, and
// by one with it. The error number and SQLSTATE must agree; the message
// too (user@host normalised: lockstep names a loopback client 'localhost',
// MariaDB with --skip-name-resolve '127.0.0.1') except where MariaDB is
// not MySQL 8, which the case says, with MySQL 8's message lockstep must
// give.
func TestPrivilegesAgainstMariaDB(t *testing.T) {
	// The same secure_file_priv on both, with one file in it.
	secureDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(secureDir, "readable.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	mdb := startMariaDB(t, "--secure-file-priv="+secureDir)
	ls := testutil.StartServer(t, "--secure-file-priv", secureDir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	setup := []string{
		"CREATE DATABASE pdb",
		"CREATE TABLE pdb.t (a INT PRIMARY KEY)",
		"INSERT INTO pdb.t VALUES (1)",
		"CREATE DATABASE other",
		"CREATE TABLE other.o (a INT PRIMARY KEY)",
	}
	users := map[string]string{
		"pu": "GRANT SELECT, INSERT ON pdb.* TO %s",
		"ps": "GRANT SUPER, SELECT, INSERT ON *.* TO %s",
		"pf": "GRANT FILE, SELECT ON *.* TO %s",
	}
	lsRoot, err := sql.Open("mysql", "root@tcp("+ls.Addr+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer lsRoot.Close()
	for _, q := range setup {
		mdb.root(t, q)
		if _, err := lsRoot.ExecContext(ctx, q); err != nil {
			t.Fatalf("lockstep: %s: %v", q, err)
		}
	}
	for u, grant := range users {
		mdb.root(t, fmt.Sprintf("CREATE USER '%s'@'127.0.0.1'; "+grant, u, fmt.Sprintf("'%s'@'127.0.0.1'", u)))
		for _, q := range []string{"CREATE USER " + u, fmt.Sprintf(grant, u)} {
			if _, err := lsRoot.ExecContext(ctx, q); err != nil {
				t.Fatalf("lockstep: %s: %v", q, err)
			}
		}
	}
	open := func(addr, user string) *sql.DB {
		db, err := sql.Open("mysql", user+"@tcp("+addr+")/pdb?allowAllFiles=true")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		db.SetMaxOpenConns(1) // one session: KILL of its own thread needs its id
		return db
	}

	cases := []struct {
		user, q string
		mysql8  string // non-empty: MariaDB differs, MySQL 8's message
	}{
		{user: "pu", q: "SELECT * FROM other.o",
			mysql8: "SELECT command denied to user 'pu'@'H' for table 'o'"}, // MariaDB: `other`.`o`
		{user: "pu", q: "INSERT INTO other.o VALUES (1)",
			mysql8: "INSERT command denied to user 'pu'@'H' for table 'o'"},
		{user: "pu", q: "UPDATE t SET a = 2",
			mysql8: "UPDATE command denied to user 'pu'@'H' for table 't'"},
		{user: "pu", q: "DROP TABLE other.o",
			mysql8: "DROP command denied to user 'pu'@'H' for table 'o'"},
		{user: "pu", q: "USE other"},
		{user: "pu", q: "CREATE USER x1"},
		{user: "pu", q: "SET GLOBAL max_connections = 1", // MariaDB: SUPER, CONNECTION ADMIN
			mysql8: "Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation"},
		{user: "pu", q: "SET GLOBAL read_only = 1", // MariaDB: READ_ONLY ADMIN
			mysql8: "Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation"},
		{user: "ps", q: "SET GLOBAL max_connections = 200"},
		{user: "pu", q: "SELECT LOAD_FILE('/etc/passwd')"},
		// MySQL 8 answers a missing FILE with 1045 (a long-standing
		// quirk), MariaDB with 1227 naming FILE.
		{user: "pu", q: "SELECT 1 INTO OUTFILE '/tmp/lockstep-diff-never'",
			mysql8: "1045 (28000): Access denied for user 'pu'@'H' (using password: NO)"},
		{user: "pu", q: "LOAD DATA INFILE '/etc/hostname' INTO TABLE t"},
		{user: "pf", q: "SELECT LOAD_FILE('" + secureDir + "/readable.txt')"}, // FILE, inside secure_file_priv
		{user: "pf", q: "SELECT LOAD_FILE('/etc/passwd')"},                    // FILE, outside it
		{user: "pu", q: "SHUTDOWN"},
		{user: "pu", q: "KILL QUERY %ROOT%"},
		{user: "pu", q: "SELECT COUNT(DISTINCT USER) FROM information_schema.PROCESSLIST"},
	}
	sides := []struct {
		name, addr string
		root       *sql.DB
	}{
		{"lockstep", ls.Addr, lsRoot},
		{"mariadb", mdb.addr, nil},
	}
	hosts := regexp.MustCompile(`'@'(localhost|127\.0\.0\.1|%)'`)
	// The product's name in 1290's message.
	product := strings.NewReplacer("The MariaDB server", "The MySQL server")
	render := func(side string, db *sql.DB, q string) string {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			var me *mysql.MySQLError
			if errors.As(err, &me) {
				return fmt.Sprintf("error %d (%s): %s", me.Number, string(me.SQLState[:]), product.Replace(hosts.ReplaceAllString(me.Message, "'@'H'")))
			}
			return "error: " + err.Error()
		}
		defer rows.Close()
		var out []string
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return "scan: " + err.Error()
			}
			var r []string
			for _, v := range vals {
				if !v.Valid {
					r = append(r, "NULL")
				} else {
					r = append(r, v.String)
				}
			}
			out = append(out, strings.Join(r, ","))
		}
		return "ok: " + strings.Join(out, ";")
	}
	// A root session each side, whose query pu's KILL aims at.
	lsRootConn, err := lsRoot.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lsRootConn.Close()
	var lsRootID int64
	if err := lsRootConn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&lsRootID); err != nil {
		t.Fatal(err)
	}
	mdbRoot := open(mdb.addr, "ps") // ps has SUPER there: its thread is another user's
	var mdbRootID int64
	if err := mdbRoot.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&mdbRootID); err != nil {
		t.Fatal(err)
	}
	conns := map[string]map[string]*sql.DB{}
	for _, s := range sides {
		conns[s.name] = map[string]*sql.DB{}
		for u := range users {
			conns[s.name][u] = open(s.addr, u)
		}
	}
	for _, c := range cases {
		var got [2]string
		for i, s := range sides {
			q := c.q
			id := lsRootID
			if s.name == "mariadb" {
				id = mdbRootID
			}
			q = strings.ReplaceAll(q, "%ROOT%", fmt.Sprint(id))
			got[i] = strings.ReplaceAll(render(s.name, conns[s.name][c.user], q), fmt.Sprintf("thread %d", id), "thread N")
		}
		if c.mysql8 == "" {
			if got[0] != got[1] {
				t.Errorf("%s: %s\n  lockstep: %s\n  MariaDB:  %s", c.user, c.q, got[0], got[1])
			}
			continue
		}
		// MariaDB's number and SQLSTATE, MySQL 8's message.
		num := regexp.MustCompile(`^error \d+ \([0-9A-Z]+\)`)
		want := num.FindString(got[1]) + ": " + c.mysql8
		if regexp.MustCompile(`^\d+ \(`).MatchString(c.mysql8) {
			want = "error " + c.mysql8 // MySQL 8's number differs too
		} else if num.FindString(got[0]) != num.FindString(got[1]) || num.FindString(got[0]) == "" {
			t.Errorf("%s: %s: error numbers differ\n  lockstep: %s\n  MariaDB:  %s", c.user, c.q, got[0], got[1])
		}
		if got[0] != want {
			t.Errorf("%s: %s\n  lockstep: %s\n  want (MySQL 8): %s\n  MariaDB:  %s", c.user, c.q, got[0], want, got[1])
		}
		if got[0] == got[1] {
			t.Errorf("%s: %s: MariaDB now agrees with MySQL 8 (%s): drop the mysql8 note", c.user, c.q, got[1])
		}
	}
	// read_only: pu's write refused on both, with the same error.
	mdb.root(t, "SET GLOBAL read_only = 1")
	if _, err := lsRoot.ExecContext(ctx, "SET GLOBAL read_only = 1"); err != nil {
		t.Fatal(err)
	}
	var got [2]string
	for i, s := range sides {
		got[i] = render(s.name, conns[s.name]["pu"], "INSERT INTO t VALUES (9)")
	}
	if got[0] != got[1] || !strings.HasPrefix(got[0], "error 1290") {
		t.Errorf("read_only, pu INSERT:\n  lockstep: %s\n  MariaDB:  %s", got[0], got[1])
	}
	_, _ = lsRoot.ExecContext(ctx, "SET GLOBAL read_only = 0")
	mdb.root(t, "SET GLOBAL read_only = 0")

	// Database access: an account with a global privilege that opens no
	// database (PROCESS) and one with a table's privilege, connected
	// without a database: USE, SHOW DATABASES, SCHEMATA, and a
	// connection's initial database.
	dbUsers := map[string]string{
		"pproc": "GRANT PROCESS ON *.* TO %s",
		"ptab":  "GRANT SELECT ON pdb.t TO %s",
	}
	for u, grant := range dbUsers {
		mdb.root(t, fmt.Sprintf("CREATE USER '%s'@'127.0.0.1'; "+grant, u, fmt.Sprintf("'%s'@'127.0.0.1'", u)))
		for _, q := range []string{"CREATE USER " + u, fmt.Sprintf(grant, u)} {
			if _, err := lsRoot.ExecContext(ctx, q); err != nil {
				t.Fatalf("lockstep: %s: %v", q, err)
			}
		}
	}
	for _, c := range []struct{ user, db, q string }{
		{"pproc", "", "USE pdb"},
		{"pproc", "", "USE mysql"},
		{"pproc", "", "USE nosuch"},
		{"pproc", "", "SHOW DATABASES"},
		{"pproc", "", "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 1"},
		{"pproc", "pdb", "SELECT 1"}, // refused at connect
		{"ptab", "", "USE pdb"},
		{"ptab", "", "USE other"},
		{"ptab", "", "SHOW DATABASES"},
		{"ptab", "pdb", "SELECT DATABASE()"},
	} {
		for i, s := range sides {
			db, err := sql.Open("mysql", c.user+"@tcp("+s.addr+")/"+c.db)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = render(s.name, db, c.q)
			db.Close()
		}
		if got[0] != got[1] {
			t.Errorf("%s (database %q): %s\n  lockstep: %s\n  MariaDB:  %s", c.user, c.db, c.q, got[0], got[1])
		}
	}
}
