package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"lockstep/internal/testutil"
)

// The privilege matrix (issue 29): for each privilege-gated statement and
// function, an account without the privilege gets MySQL's error and one
// with it succeeds. Accounts, all with a password:
//
//	pu  USAGE, plus SELECT/INSERT on the test database (an ordinary app)
//	pf  FILE, plus SELECT/INSERT on the test database
//	ps  SUPER
//	pp  PROCESS
//
// Each runs against its own server (read_only and users stay there).

type privEnv struct {
	t      *testing.T
	ctx    context.Context
	srv    *testutil.Server
	root   *sql.DB
	secure string // @@secure_file_priv, with its trailing slash
}

func newPrivEnv(t *testing.T, extra ...string) *privEnv {
	t.Helper()
	srv := testutil.StartServer(t, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	t.Cleanup(cancel)
	p := &privEnv{t: t, ctx: ctx, srv: srv, root: srv.DB(t, "")}
	var sec sql.NullString
	if err := p.root.QueryRowContext(ctx, "SELECT @@secure_file_priv").Scan(&sec); err != nil {
		t.Fatal(err)
	}
	p.secure = sec.String
	for _, q := range []string{
		"CREATE DATABASE pdb",
		"CREATE TABLE pdb.t (a INT PRIMARY KEY, b VARCHAR(40))",
		"INSERT INTO pdb.t VALUES (1, 'one'), (2, 'tab\there'), (3, NULL)",
		"CREATE USER pu IDENTIFIED BY 'pw'", "GRANT SELECT, INSERT ON pdb.* TO pu",
		"CREATE USER pf IDENTIFIED BY 'pw'", "GRANT FILE ON *.* TO pf", "GRANT SELECT, INSERT ON pdb.* TO pf",
		"CREATE USER ps IDENTIFIED BY 'pw'", "GRANT SUPER ON *.* TO ps", "GRANT SELECT, INSERT ON pdb.* TO ps",
		"CREATE USER pp IDENTIFIED BY 'pw'", "GRANT PROCESS ON *.* TO pp",
	} {
		if _, err := p.root.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return p
}

// as opens a pool for user (password pw) on database pdb; pp, which has
// no privilege there (MySQL refuses it the database: 1044), on none.
func (p *privEnv) as(user string) *sql.DB {
	p.t.Helper()
	dbName := "pdb"
	if user == "pp" {
		dbName = ""
	}
	dsn := fmt.Sprintf("%s:pw@tcp(%s)/%s?parseTime=true&allowAllFiles=true", user, p.srv.Addr, dbName)
	if user == "root" {
		dsn = fmt.Sprintf("root@tcp(%s)/pdb?parseTime=true&allowAllFiles=true", p.srv.Addr)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { db.Close() })
	if err := db.PingContext(p.ctx); err != nil {
		p.t.Fatalf("%s logs in: %v", user, err)
	}
	return db
}

// wantErr fails unless err is MySQL error code (0: no error); msg, when
// not empty, must be in the message.
func wantErr(t *testing.T, what string, err error, code uint16, msg string) {
	t.Helper()
	if code == 0 {
		if err != nil {
			t.Errorf("%s: %v, want success", what, err)
		}
		return
	}
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code {
		t.Errorf("%s: %v, want error %d", what, err, code)
		return
	}
	if msg != "" && !strings.Contains(me.Message, msg) {
		t.Errorf("%s: message %q, want it to contain %q", what, me.Message, msg)
	}
}

func queryNullString(ctx context.Context, db *sql.DB, q string) (sql.NullString, error) {
	var s sql.NullString
	err := db.QueryRowContext(ctx, q).Scan(&s)
	return s, err
}

// TestPrivilegeFiles: LOAD_FILE, SELECT ... INTO OUTFILE / DUMPFILE and
// LOAD DATA [LOCAL] INFILE need FILE and stay inside secure_file_priv
// (by default DATADIR-files) on the path as resolved: no "..", no symlink
// out of it, never the data directory; an existing file is not
// overwritten; LOCAL needs @@local_infile.
func TestPrivilegeFiles(t *testing.T) {
	p := newPrivEnv(t)
	ctx := p.ctx
	wantSecure := filepath.Clean(p.srv.Datadir) + "-files" + string(filepath.Separator)
	if p.secure != wantSecure {
		t.Fatalf("@@secure_file_priv = %q, want %q", p.secure, wantSecure)
	}
	pu, pf, root := p.as("pu"), p.as("pf"), p.as("root")
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("top secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(p.secure, "inside.txt")
	if err := os.WriteFile(inside, []byte("readable"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A symlink in the secure directory to the data directory, and one to
	// a file outside.
	if err := os.Symlink(p.srv.Datadir, filepath.Join(p.secure, "dd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(p.secure, "secret-link")); err != nil {
		t.Fatal(err)
	}

	t.Run("LOAD_FILE", func(t *testing.T) {
		cases := []struct {
			who  string
			db   *sql.DB
			path string
			want string // "" = NULL
		}{
			{"pu", pu, inside, ""},             // no FILE
			{"pu", pu, "/etc/passwd", ""},      // no FILE
			{"pf", pf, inside, "readable"},     // FILE, inside
			{"pf", pf, secret, ""},             // outside secure_file_priv
			{"root", root, "/etc/passwd", ""},  // outside, even for root
			{"root", root, inside, "readable"}, // inside
			{"root", root, p.secure + "../" + filepath.Base(p.srv.Datadir) + "/auto.cnf", ""}, // ".." out
			{"root", root, p.secure + "dd/auto.cnf", ""},                                      // a symlink to the data directory
			{"root", root, p.secure + "secret-link", ""},                                      // a symlink to a file outside
			{"root", root, filepath.Join(p.srv.Datadir, "auto.cnf"), ""},                      // the data directory
			{"root", root, "auto.cnf", ""},                                                    // relative: the data directory
		}
		for _, c := range cases {
			got, err := queryNullString(ctx, c.db, "SELECT LOAD_FILE('"+c.path+"')")
			if err != nil {
				t.Errorf("%s LOAD_FILE(%s): %v", c.who, c.path, err)
				continue
			}
			if got.Valid != (c.want != "") || got.String != c.want {
				t.Errorf("%s LOAD_FILE(%s) = %v, want %q (empty: NULL)", c.who, c.path, got, c.want)
			}
		}
		// Larger than max_allowed_packet: NULL with warning 1301, and no
		// panic once the variable has been SET (it did: uint64 vs int64).
		// A session takes the global value when it connects.
		if _, err := root.ExecContext(ctx, "SET GLOBAL max_allowed_packet = 4194304"); err != nil {
			t.Fatal(err)
		}
		defer root.ExecContext(ctx, "SET GLOBAL max_allowed_packet = DEFAULT")
		root.SetMaxIdleConns(0)
		c, err := root.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		big := filepath.Join(p.secure, "big.bin")
		if err := os.WriteFile(big, make([]byte, 5<<20), 0o644); err != nil {
			t.Fatal(err)
		}
		var got sql.NullString
		if err := c.QueryRowContext(ctx, "SELECT LOAD_FILE('"+big+"')").Scan(&got); err != nil || got.Valid {
			t.Errorf("LOAD_FILE of 5 MB with max_allowed_packet 4 MB: %d bytes (valid %v), %v; want NULL", len(got.String), got.Valid, err)
		}
		var level, msg string
		var code int
		if err := c.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&level, &code, &msg); err != nil || code != 1301 {
			t.Errorf("warning after the oversized LOAD_FILE: %d %q (%v), want 1301", code, msg, err)
		}
	})

	t.Run("INTO OUTFILE and DUMPFILE", func(t *testing.T) {
		out := filepath.Join(p.secure, "out.txt")
		_, err := pu.ExecContext(ctx, "SELECT * FROM t INTO OUTFILE '"+out+"'")
		wantErr(t, "pu INTO OUTFILE", err, 1045, "Access denied for user 'pu'@'localhost' (using password: YES)")
		if _, err := os.Stat(out); err == nil {
			t.Errorf("pu's refused OUTFILE created %s", out)
		}
		_, err = pf.ExecContext(ctx, "SELECT * FROM t ORDER BY a INTO OUTFILE '"+out+"'")
		wantErr(t, "pf INTO OUTFILE", err, 0, "")
		data, _ := os.ReadFile(out)
		if want := "1\tone\n2\ttab\\\there\n3\t\\N\n"; string(data) != want {
			t.Errorf("OUTFILE holds %q, want %q", data, want)
		}
		_, err = pf.ExecContext(ctx, "SELECT * FROM t INTO OUTFILE '"+out+"'")
		wantErr(t, "OUTFILE over an existing file", err, 1086, "already exists")
		csv := filepath.Join(p.secure, "out.csv")
		_, err = pf.ExecContext(ctx, "SELECT a, b FROM t ORDER BY a INTO OUTFILE '"+csv+"' FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\r\\n'")
		wantErr(t, "OUTFILE as CSV", err, 0, "")
		data, _ = os.ReadFile(csv)
		if want := "1,\"one\"\r\n2,\"tab\there\"\r\n3,\\N\r\n"; string(data) != want {
			t.Errorf("CSV OUTFILE holds %q, want %q", data, want)
		}
		for _, bad := range []string{
			filepath.Join(t.TempDir(), "x.txt"),                        // outside
			p.secure + "../" + filepath.Base(p.srv.Datadir) + "/log/x", // ".." into the log
			p.secure + "dd/log/planted",                                // a symlink into the log
			filepath.Join(p.srv.Datadir, "x.txt"),                      // the data directory
			"relative.txt",                                             // the data directory
		} {
			_, err := root.ExecContext(ctx, "SELECT 1 INTO OUTFILE '"+bad+"'")
			wantErr(t, "root INTO OUTFILE "+bad, err, 1290, "--secure-file-priv")
		}
		if ents, _ := os.ReadDir(filepath.Join(p.srv.Datadir, "log")); len(ents) > 0 {
			for _, e := range ents {
				if strings.Contains(e.Name(), "planted") || e.Name() == "x" {
					t.Errorf("a refused OUTFILE wrote %s into the log directory", e.Name())
				}
			}
		}
		dump := filepath.Join(p.secure, "dump.bin")
		_, err = pu.ExecContext(ctx, "SELECT b FROM t WHERE a = 1 INTO DUMPFILE '"+dump+"'")
		wantErr(t, "pu INTO DUMPFILE", err, 1045, "")
		_, err = pf.ExecContext(ctx, "SELECT b FROM t WHERE a = 2 INTO DUMPFILE '"+dump+"'")
		wantErr(t, "pf INTO DUMPFILE", err, 0, "")
		if data, _ := os.ReadFile(dump); string(data) != "tab\there" {
			t.Errorf("DUMPFILE holds %q, want the raw value", data)
		}
		_, err = pf.ExecContext(ctx, "SELECT b FROM t INTO DUMPFILE '"+filepath.Join(p.secure, "dump2.bin")+"'")
		wantErr(t, "DUMPFILE of three rows", err, 1172, "more than one row")
	})

	t.Run("LOAD DATA", func(t *testing.T) {
		src := filepath.Join(p.secure, "load.txt")
		if err := os.WriteFile(src, []byte("10\tten\n11\televen\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := pu.ExecContext(ctx, "LOAD DATA INFILE '"+src+"' INTO TABLE t")
		wantErr(t, "pu LOAD DATA INFILE", err, 1045, "Access denied for user 'pu'")
		_, err = pf.ExecContext(ctx, "LOAD DATA INFILE '"+secret+"' INTO TABLE t")
		wantErr(t, "pf LOAD DATA INFILE outside", err, 1290, "")
		_, err = pf.ExecContext(ctx, "LOAD DATA INFILE '"+p.secure+"dd/auto.cnf' INTO TABLE t")
		wantErr(t, "pf LOAD DATA INFILE through a symlink to the data directory", err, 1290, "")
		_, err = pf.ExecContext(ctx, "LOAD DATA INFILE '"+src+"' INTO TABLE t")
		wantErr(t, "pf LOAD DATA INFILE", err, 0, "")
		var n int
		if err := root.QueryRowContext(ctx, "SELECT COUNT(*) FROM t WHERE a IN (10, 11)").Scan(&n); err != nil || n != 2 {
			t.Errorf("rows loaded: %d (%v), want 2", n, err)
		}
		// FILE is not enough: LOAD DATA needs INSERT on the table.
		if _, err := root.ExecContext(ctx, "CREATE TABLE pdb.ro (a INT PRIMARY KEY, b TEXT)"); err != nil {
			t.Fatal(err)
		}
		if _, err := root.ExecContext(ctx, "CREATE USER pfo IDENTIFIED BY 'pw'"); err != nil {
			t.Fatal(err)
		}
		if _, err := root.ExecContext(ctx, "GRANT FILE ON *.* TO pfo"); err != nil {
			t.Fatal(err)
		}
		if _, err := root.ExecContext(ctx, "GRANT SELECT ON pdb.* TO pfo"); err != nil {
			t.Fatal(err)
		}
		_, err = p.as("pfo").ExecContext(ctx, "LOAD DATA INFILE '"+src+"' INTO TABLE ro")
		wantErr(t, "FILE without INSERT: LOAD DATA", err, 1142, "")
		// LOCAL: off by default (MySQL 8), 3948 whoever asks.
		mysql.RegisterLocalFile(src)
		_, err = root.ExecContext(ctx, "LOAD DATA LOCAL INFILE '"+src+"' INTO TABLE t")
		wantErr(t, "LOAD DATA LOCAL with local_infile OFF", err, 3948, "Loading local data is disabled")
	})
}

// TestPrivilegeFilesDisabled: --secure-file-priv=NULL turns every file
// statement off, for root too; a secure_file_priv overlapping the data
// directory is refused at start.
func TestPrivilegeFilesDisabled(t *testing.T) {
	p := newPrivEnv(t, "--secure-file-priv", "NULL")
	if p.secure != "" {
		t.Fatalf("@@secure_file_priv = %q, want NULL", p.secure)
	}
	var v sql.NullString
	if err := p.root.QueryRowContext(p.ctx, "SELECT @@secure_file_priv").Scan(&v); err != nil || v.Valid {
		t.Errorf("@@secure_file_priv = %v (%v), want NULL", v, err)
	}
	got, err := queryNullString(p.ctx, p.root, "SELECT LOAD_FILE('/etc/hostname')")
	if err != nil || got.Valid {
		t.Errorf("root LOAD_FILE with secure_file_priv NULL = %v, %v; want NULL", got, err)
	}
	_, err = p.root.ExecContext(p.ctx, "SELECT 1 INTO OUTFILE '"+filepath.Join(t.TempDir(), "x")+"'")
	wantErr(t, "root INTO OUTFILE with secure_file_priv NULL", err, 1290, "")

	// The data directory itself, or a directory holding it, is refused.
	dd := filepath.Join(t.TempDir(), "data")
	bin := testutil.BuildBinary(t)
	for _, sec := range []string{dd, filepath.Dir(dd), filepath.Join(dd, "sub")} {
		_ = os.MkdirAll(sec, 0o750)
		out, err := runLockstep(t, bin, "serve", "--datadir", dd, "--port", "0", "--secure-file-priv", sec)
		if err == nil || !strings.Contains(out, "secure-file-priv") {
			t.Errorf("serve --secure-file-priv %s beside --datadir %s: %v\n%s; want a refusal naming secure-file-priv", sec, dd, err, out)
		}
	}
}

// TestPrivilegeSetGlobal: a global value needs SUPER (or
// SYSTEM_VARIABLES_ADMIN); a few session values need it too; the refused
// SET changes nothing. One variable of each kind: lockstep's per-server
// ones, go-mysql-server's process-wide ones, SET PERSIST.
func TestPrivilegeSetGlobal(t *testing.T) {
	p := newPrivEnv(t)
	pu, ps := p.as("pu"), p.as("ps")
	need := "SUPER or SYSTEM_VARIABLES_ADMIN"
	for _, c := range []struct {
		set, check, before string
	}{
		{"SET GLOBAL max_connections = 1", "@@global.max_connections", "151"},
		{"SET @@global.max_allowed_packet = 1024", "@@global.max_allowed_packet", "67108864"},
		{"SET GLOBAL binlog_group_commit_sync_delay = 100000", "@@global.binlog_group_commit_sync_delay", "0"},
		{"SET GLOBAL read_only = ON", "@@global.read_only", "0"},
		{"SET GLOBAL super_read_only = ON", "@@global.super_read_only", "0"},
		{"SET GLOBAL offline_mode = ON", "@@global.offline_mode", "0"},
		{"SET GLOBAL innodb_lock_wait_timeout = 1", "@@global.innodb_lock_wait_timeout", "50"},
		{"SET PERSIST max_connections = 2", "@@global.max_connections", "151"},
		{"SET @x = 1, GLOBAL max_connections = 1", "@@global.max_connections", "151"},
	} {
		_, err := pu.ExecContext(p.ctx, c.set)
		wantErr(t, "pu: "+c.set, err, 1227, need)
		got, err := queryNullString(p.ctx, p.root, "SELECT "+c.check)
		if err != nil || got.String != c.before {
			t.Errorf("after pu's refused %s: %s = %v (%v), want %s", c.set, c.check, got, err, c.before)
		}
	}
	// Restricted session variables.
	for _, q := range []string{"SET sql_log_bin = 0", "SET SESSION pseudo_thread_id = 5"} {
		_, err := pu.ExecContext(p.ctx, q)
		wantErr(t, "pu: "+q, err, 1227, "SESSION_VARIABLES_ADMIN")
	}
	// Ordinary session variables stay open to everyone.
	for _, q := range []string{"SET SESSION sql_mode = ''", "SET autocommit = 0", "SET @a = 1", "SET SESSION innodb_lock_wait_timeout = 3"} {
		_, err := pu.ExecContext(p.ctx, q)
		wantErr(t, "pu: "+q, err, 0, "")
	}
	// SUPER may.
	_, err := ps.ExecContext(p.ctx, "SET GLOBAL max_connections = 200")
	wantErr(t, "ps: SET GLOBAL max_connections", err, 0, "")
	if got, _ := queryNullString(p.ctx, p.root, "SELECT @@global.max_connections"); got.String != "200" {
		t.Errorf("after ps's SET GLOBAL: max_connections = %v, want 200", got)
	}
	_, err = ps.ExecContext(p.ctx, "SET GLOBAL max_connections = 151")
	wantErr(t, "ps: SET GLOBAL max_connections back", err, 0, "")
	// go-mysql-server has no SYSTEM_VARIABLES_ADMIN to grant (only two
	// dynamic privileges): asserted as it is today, so a change is seen.
	_, err = p.root.ExecContext(p.ctx, "GRANT SYSTEM_VARIABLES_ADMIN ON *.* TO pu")
	wantErr(t, "GRANT SYSTEM_VARIABLES_ADMIN (not supported yet)", err, 1105, "dynamic privilege")
}

// TestPrivilegeReadOnly: read_only stops writes by accounts without SUPER
// (or CONNECTION_ADMIN); super_read_only stops everyone's, root's too,
// on both the fast path and go-mysql-server's, DDL and account statements
// included; temporary tables stay writable; the two variables move
// together as in MySQL.
func TestPrivilegeReadOnly(t *testing.T) {
	p := newPrivEnv(t)
	ctx := p.ctx
	if _, err := p.root.ExecContext(ctx, "GRANT CREATE TEMPORARY TABLES, UPDATE ON pdb.* TO pu"); err != nil {
		t.Fatal(err)
	}
	pu, ps, root := p.as("pu"), p.as("ps"), p.as("root")
	if _, err := root.ExecContext(ctx, "SET GLOBAL read_only = ON"); err != nil {
		t.Fatal(err)
	}
	const ro, sro = "--read-only option", "--super-read-only option"
	for _, q := range []string{
		"INSERT INTO t VALUES (20, 'x')",         // fast path
		"INSERT INTO t SELECT 21, 'y' FROM dual", // go-mysql-server
		"UPDATE t SET b = 'z' WHERE a = 1",
	} {
		_, err := pu.ExecContext(ctx, q)
		wantErr(t, "read_only, pu: "+q, err, 1290, ro)
	}
	c, err := pu.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE TEMPORARY TABLE tt (a INT)", "INSERT INTO tt VALUES (1)", "UPDATE tt SET a = 2"} {
		_, err := c.ExecContext(ctx, q)
		wantErr(t, "read_only, pu's temporary table: "+q, err, 0, "")
	}
	// MySQL checks no privilege on a session's own temporary table;
	// go-mysql-server asks DROP for DROP TEMPORARY TABLE (1142), read-only
	// or not. Asserted as it is today, so a change is seen.
	_, err = c.ExecContext(ctx, "DROP TEMPORARY TABLE tt")
	wantErr(t, "pu drops its temporary table (go-mysql-server asks DROP)", err, 1142, "")
	c.Close()
	_, err = ps.ExecContext(ctx, "INSERT INTO t VALUES (22, 'super')")
	wantErr(t, "read_only, SUPER inserts", err, 0, "")
	_, err = root.ExecContext(ctx, "CREATE TABLE pdb.made_ro (a INT)")
	wantErr(t, "read_only, root creates a table", err, 0, "")

	if _, err := root.ExecContext(ctx, "SET GLOBAL super_read_only = ON"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO t VALUES (23, 'root')",
		"INSERT INTO t SELECT 24, 'r' FROM dual",
		"UPDATE t SET b = 'r' WHERE a = 1",
		"DELETE FROM t WHERE a = 1",
		"DELETE FROM t", // no WHERE: planned as a truncate, deleted row by row
		"CREATE TABLE pdb.made_sro (a INT)",
		"DROP TABLE pdb.made_ro",
		"CREATE USER nobody",
		"GRANT SELECT ON pdb.* TO pp",
	} {
		_, err := root.ExecContext(ctx, q)
		wantErr(t, "super_read_only, root: "+q, err, 1290, sro)
	}
	_, err = ps.ExecContext(ctx, "INSERT INTO t VALUES (25, 'super')")
	wantErr(t, "super_read_only, SUPER inserts", err, 1290, sro)
	if got, _ := queryNullString(ctx, root, "SELECT CONCAT(@@global.read_only, @@global.super_read_only)"); got.String != "11" {
		t.Errorf("read_only, super_read_only = %v, want 1 1", got)
	}
	// read_only OFF takes super_read_only with it.
	if _, err := root.ExecContext(ctx, "SET GLOBAL read_only = OFF"); err != nil {
		t.Fatal(err)
	}
	if got, _ := queryNullString(ctx, root, "SELECT CONCAT(@@global.read_only, @@global.super_read_only)"); got.String != "00" {
		t.Errorf("after read_only OFF: read_only, super_read_only = %v, want 0 0", got)
	}
	_, err = pu.ExecContext(ctx, "INSERT INTO t VALUES (26, 'again')")
	wantErr(t, "writable again, pu inserts", err, 0, "")
	var n int
	if err := root.QueryRowContext(ctx, "SELECT COUNT(*) FROM t WHERE a IN (20, 21, 23, 24, 25)").Scan(&n); err != nil || n != 0 {
		t.Errorf("rows written while read-only: %d (%v), want 0", n, err)
	}
}

// TestPrivilegeProcesses: without PROCESS an account sees only its own
// threads, in SHOW PROCESSLIST (allowed, as in MySQL) and in
// information_schema.PROCESSLIST; it may KILL its own threads but not
// another user's (1095); SUPER may.
func TestPrivilegeProcesses(t *testing.T) {
	p := newPrivEnv(t)
	ctx := p.ctx
	pu, pp, ps := p.as("pu"), p.as("pp"), p.as("ps")
	rootConn, err := p.root.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rootConn.Close()
	var rootID int64
	if err := rootConn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&rootID); err != nil {
		t.Fatal(err)
	}
	users := func(db *sql.DB, q string) map[string]bool {
		t.Helper()
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			return nil
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		out := map[string]bool{}
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out[vals[1].String] = true
		}
		return out
	}
	for _, q := range []string{"SHOW PROCESSLIST", "SHOW FULL PROCESSLIST", "SELECT * FROM information_schema.PROCESSLIST"} {
		if u := users(pu, q); !u["pu"] || len(u) != 1 {
			t.Errorf("pu (no PROCESS) %s sees users %v, want only pu", q, u)
		}
		if u := users(pp, q); !u["root"] || !u["pp"] {
			t.Errorf("pp (PROCESS) %s sees users %v, want root's threads too", q, u)
		}
	}
	_, err = pu.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", rootID))
	wantErr(t, "pu kills root's query", err, 1095, fmt.Sprintf("You are not owner of thread %d", rootID))
	_, err = pu.ExecContext(ctx, fmt.Sprintf("KILL %d", rootID))
	wantErr(t, "pu kills root's connection", err, 1095, "")
	if err := rootConn.PingContext(ctx); err != nil {
		t.Errorf("root's connection after pu's refused KILL: %v", err)
	}
	// Its own other connection: allowed.
	mine, err := pu.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var mineID int64
	if err := mine.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&mineID); err != nil {
		t.Fatal(err)
	}
	killer, err := pu.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = killer.ExecContext(ctx, fmt.Sprintf("KILL %d", mineID))
	wantErr(t, "pu kills its own other connection", err, 0, "")
	killer.Close()
	deadline := time.Now().Add(5 * time.Second)
	for mine.PingContext(ctx) == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := mine.PingContext(ctx); err == nil {
		t.Errorf("pu's killed connection still answers")
	}
	mine.Close()
	_, err = ps.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", rootID))
	wantErr(t, "SUPER kills root's query", err, 0, "")
}

// runLockstep runs the lockstep binary to its end (at most 20 s) and
// returns its combined output.
func runLockstep(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	return string(out), err
}

// TestPrivilegeErrors: a refused statement gets MySQL's number and words
// (go-mysql-server's were 1105 "Access denied for user 'u'@'%' to
// database 'x'" and 1142 "command denied to user 'u'@'%'", naming neither
// command nor table).
func TestPrivilegeErrors(t *testing.T) {
	p := newPrivEnv(t)
	for _, q := range []string{"CREATE DATABASE other", "CREATE TABLE other.o (a INT PRIMARY KEY)"} {
		if _, err := p.root.ExecContext(p.ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	pu := p.as("pu")
	for _, c := range []struct {
		q    string
		code uint16
		msg  string
	}{
		{"SELECT * FROM other.o", 1142, "SELECT command denied to user 'pu'@'localhost' for table 'o'"},
		{"SELECT a FROM t, other.o", 1142, "SELECT command denied to user 'pu'@'localhost' for table 'o'"},
		{"INSERT INTO other.o VALUES (1)", 1142, "INSERT command denied to user 'pu'@'localhost' for table 'o'"},
		{"DELETE FROM other.o", 1142, "DELETE command denied to user 'pu'@'localhost' for table 'o'"},
		{"UPDATE t SET b = 'x'", 1142, "UPDATE command denied to user 'pu'@'localhost' for table 't'"},
		{"DROP TABLE other.o", 1142, "DROP command denied to user 'pu'@'localhost' for table 'o'"},
		{"CREATE TABLE other.n (a INT)", 1142, "CREATE command denied to user 'pu'@'localhost' for table 'n'"},
		{"SHOW CREATE TABLE other.o", 1142, "SHOW command denied to user 'pu'@'localhost' for table 'o'"},
		{"USE other", 1044, "Access denied for user 'pu'@'%' to database 'other'"},
		{"GRANT SELECT ON other.* TO pu", 1044, "Access denied for user 'pu'@'%' to database 'other'"},
		{"CREATE USER x1", 1227, "you need (at least one of) the CREATE USER privilege(s)"},
		{"DROP USER pf", 1227, "CREATE USER privilege(s)"},
		{"SHUTDOWN", 1227, "SHUTDOWN privilege(s)"},
	} {
		_, err := pu.ExecContext(p.ctx, c.q)
		wantErr(t, "pu: "+c.q, err, c.code, c.msg)
	}
}

// TestReadOnlySpendsNoAutoIncrement: an INSERT refused by super_read_only
// takes no AUTO_INCREMENT value (MySQL refuses the statement before it
// runs); the next insert after read-only ends gets the next id.
func TestReadOnlySpendsNoAutoIncrement(t *testing.T) {
	p := newPrivEnv(t)
	ctx := p.ctx
	root := p.as("root")
	for _, q := range []string{
		"CREATE TABLE pdb.ai (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
		"INSERT INTO pdb.ai (v) VALUES (1)",
		"SET GLOBAL super_read_only = ON",
	} {
		if _, err := root.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range []string{"INSERT INTO pdb.ai (v) VALUES (2)", "INSERT INTO pdb.ai (v) SELECT 3 FROM dual", "INSERT INTO pdb.ai (v) VALUES (4), (5)"} {
		_, err := root.ExecContext(ctx, q)
		wantErr(t, "super_read_only: "+q, err, 1290, "--super-read-only option")
	}
	if _, err := root.ExecContext(ctx, "SET GLOBAL read_only = OFF"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.ExecContext(ctx, "INSERT INTO pdb.ai (v) VALUES (6)"); err != nil {
		t.Fatal(err)
	}
	var id int
	if err := root.QueryRowContext(ctx, "SELECT id FROM pdb.ai WHERE v = 6").Scan(&id); err != nil || id != 2 {
		t.Fatalf("the insert after read-only got id %d (%v), want 2: refused inserts spent values", id, err)
	}
}
