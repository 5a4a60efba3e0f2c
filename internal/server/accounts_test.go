package server

import (
	"context"
	gosql "database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"lockstep/internal/config"
)

// openAs opens a connection pool to s as user with password.
func (s *procServer) openAs(t *testing.T, user, password string) *gosql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, password, "tcp", s.addr
	cfg.AllowNativePasswords = true
	db, err := gosql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// mysqlErrNum is the MySQL error number of err, 0 if it is not a MySQL
// error.
func mysqlErrNum(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// wantErrNum checks that err is MySQL error num.
func wantErrNum(t *testing.T, what string, err error, num uint16) {
	t.Helper()
	if got := mysqlErrNum(err); got != num {
		t.Errorf("%s: %v, want error %d", what, err, num)
	}
}

// checkApp checks what account app may do on shop.t: log in with its
// password only, read (text and prepared, the fast path included), and
// update only if canUpdate.
func checkApp(t *testing.T, s *procServer, canUpdate bool) {
	t.Helper()
	wantErrNum(t, "app with a wrong password", s.openAs(t, "app", "wrong").Ping(), 1045)
	wantErrNum(t, "app without a password", s.openAs(t, "app", "").Ping(), 1045)
	app := s.openAs(t, "app", "s3cret")
	conn, err := app.Conn(context.Background())
	if err != nil {
		t.Fatalf("app logs in: %v", err)
	}
	defer conn.Close()
	ctx := context.Background()
	for i := 0; i < 3; i++ { // text: learnt on the first run, fast after
		var v int
		if err := conn.QueryRowContext(ctx, "SELECT v FROM shop.t WHERE id = 1").Scan(&v); err != nil || v < 10 {
			t.Fatalf("app reads: %d, %v", v, err)
		}
	}
	sel, err := conn.PrepareContext(ctx, "SELECT v FROM shop.t WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Close()
	var v int
	if err := sel.QueryRow(1).Scan(&v); err != nil {
		t.Fatalf("app reads (prepared): %v", err)
	}
	// MySQL refuses the PREPARE of a statement the account may not run.
	upd, err := conn.PrepareContext(ctx, "UPDATE shop.t SET v = v + 1 WHERE id = ?")
	if !canUpdate {
		wantErrNum(t, "app prepares an update", err, 1142)
		if err == nil {
			_, err = upd.Exec(1)
			wantErrNum(t, "app updates (prepared)", err, 1142)
			upd.Close()
		}
		_, err = conn.ExecContext(ctx, "UPDATE shop.t SET v = v + 1 WHERE id = 1")
		wantErrNum(t, "app updates (text)", err, 1142)
		return
	}
	if err != nil {
		t.Fatalf("app prepares an update: %v", err)
	}
	defer upd.Close()
	for i := 0; i < 2; i++ {
		if _, err := upd.Exec(1); err != nil {
			t.Errorf("app updates (prepared): %v", err)
		}
		if _, err := conn.ExecContext(ctx, "UPDATE shop.t SET v = v + 1 WHERE id = 1"); err != nil {
			t.Errorf("app updates (text): %v", err)
		}
	}
}

// checkRevoked: a prepared UPDATE that ran (on the fast path) while
// allowed is refused once the privilege is revoked.
func checkRevoked(t *testing.T, s *procServer) {
	t.Helper()
	app := s.openAs(t, "app", "s3cret")
	conn, err := app.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	upd, err := conn.PrepareContext(context.Background(), "UPDATE shop.t SET v = v + 1 WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer upd.Close()
	hits := s.status(t, "GLOBAL", "Lockstep_fast_path_hits")
	for i := 0; i < 2; i++ {
		if _, err := upd.Exec(1); err != nil {
			t.Fatalf("app updates (prepared): %v", err)
		}
	}
	if n := s.status(t, "GLOBAL", "Lockstep_fast_path_hits"); n < hits+2 {
		t.Errorf("Lockstep_fast_path_hits %d -> %d: app's updates did not run on the fast path", hits, n)
	}
	s.exec(t, "REVOKE UPDATE ON shop.t FROM 'app'@'%'")
	_, err = upd.Exec(1)
	wantErrNum(t, "app updates after REVOKE (statement prepared before)", err, 1142)
}

// TestAccounts: accounts are created, enforced on both paths (go-mysql-
// server's and the fast path), changed, and survive restarts, from the
// log and from a checkpoint.
func TestAccounts(t *testing.T) {
	dir := t.TempDir()
	start := func(ckpt int64) *procServer {
		return startInProcess(t, func(c *config.Config) {
			c.Datadir = dir
			c.CheckpointLogSize = ckpt
		})
	}
	s := start(0)
	s.exec(t, "CREATE DATABASE shop")
	s.exec(t, "CREATE TABLE shop.t (id INT PRIMARY KEY, v INT)")
	s.exec(t, "INSERT INTO shop.t VALUES (1, 10)")
	s.exec(t, "CREATE USER 'app'@'%' IDENTIFIED BY 's3cret'")
	s.exec(t, "GRANT SELECT ON shop.* TO 'app'@'%'")
	hits := s.status(t, "GLOBAL", "Lockstep_fast_path_hits")
	checkApp(t, s, false)
	if n := s.status(t, "GLOBAL", "Lockstep_fast_path_hits"); n < hits+2 { // the repeated text reads at least
		t.Errorf("Lockstep_fast_path_hits %d -> %d: the fast path did not serve app's reads", hits, n)
	}
	// A grant, then a revoke, reach sessions whose plans were checked
	// before.
	s.exec(t, "GRANT UPDATE ON shop.t TO 'app'@'%'")
	checkApp(t, s, true)
	checkRevoked(t, s)
	checkApp(t, s, false)
	// caching_sha2_password: MySQL authenticates such an account on a
	// plain connection through an RSA key exchange, which the protocol
	// layer lacks; over TLS it works (TestTLS). Today's behaviour on a
	// plain connection is asserted, so a change is seen.
	s.exec(t, "CREATE USER 'sha'@'%' IDENTIFIED WITH caching_sha2_password BY 'pw2'")
	if p := s.str(t, "SELECT plugin FROM mysql.user WHERE user = 'sha'"); p != "caching_sha2_password" {
		t.Errorf("sha's plugin: %s", p)
	}
	wantErrNum(t, "caching_sha2_password account over plain TCP", s.openAs(t, "sha", "pw2").Ping(), 1045)
	want := s.str(t, "SELECT v FROM shop.t WHERE id = 1")
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	// Restart: the accounts come back from the log.
	s = start(0)
	checkApp(t, s, false)
	if got := s.str(t, "SELECT v FROM shop.t WHERE id = 1"); got != want {
		t.Errorf("v after restart = %s, want %s", got, want)
	}
	s.exec(t, "CREATE USER 'gone'@'%' IDENTIFIED BY 'x'")
	s.exec(t, "DROP USER 'gone'@'%'")
	s.exec(t, "ALTER USER 'app'@'%' IDENTIFIED BY 'n3w'")
	s.exec(t, "ALTER USER 'app'@'%' IDENTIFIED BY 's3cret'")
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	// Restart with checkpoints on: one is written and the log before it
	// dropped; the next start loads the accounts from it.
	s = start(1)
	s.exec(t, "INSERT INTO shop.t VALUES (2, 20)")
	deadline := time.Now().Add(20 * time.Second)
	for s.status(t, "GLOBAL", "Lockstep_checkpoints") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint within 20s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = start(0)
	checkApp(t, s, false)
	wantErrNum(t, "dropped user", s.openAs(t, "gone", "x").Ping(), 1045)
	if n := s.str(t, "SELECT COUNT(*) FROM mysql.user WHERE user = 'app'"); n != "1" {
		t.Errorf("mysql.user rows for app: %s", n)
	}
}

// TestInitialAccount: --user and --password create the initial account;
// a password is required once set, and an existing account keeps the
// password it was given by ALTER USER across restarts.
func TestInitialAccount(t *testing.T) {
	dir := t.TempDir()
	s := startInProcess(t, func(c *config.Config) {
		c.Datadir, c.User, c.Password = dir, "admin", "adminpw"
	})
	wantErrNum(t, "admin without its password", s.openAs(t, "admin", "").Ping(), 1045)
	wantErrNum(t, "root, which does not exist", s.db.Ping(), 1045)
	admin := s.openAs(t, "admin", "adminpw")
	if _, err := admin.Exec("CREATE DATABASE d"); err != nil {
		t.Fatalf("admin: %v", err)
	}
	if _, err := admin.Exec("ALTER USER 'admin'@'%' IDENTIFIED BY 'changed'"); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = startInProcess(t, func(c *config.Config) {
		c.Datadir, c.User, c.Password = dir, "admin", "adminpw"
	})
	wantErrNum(t, "admin with the option's password after ALTER USER", s.openAs(t, "admin", "adminpw").Ping(), 1045)
	if err := s.openAs(t, "admin", "changed").Ping(); err != nil {
		t.Errorf("admin with the password ALTER USER set: %v", err)
	}
}

// TestAccountsDuringCheckpoints: account statements run while checkpoints
// are being written back to back, and neither waits for the other forever
// (an account statement holds go-mysql-server's accounts editor while its
// record is logged; a checkpoint reads the catalog through queries that
// read the accounts).
func TestAccountsDuringCheckpoints(t *testing.T) {
	s := startInProcess(t, func(c *config.Config) { c.CheckpointLogSize = 1 })
	s.exec(t, "CREATE DATABASE d")
	s.exec(t, "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 150; i++ {
			for _, q := range []string{
				fmt.Sprintf("CREATE USER 'u%d'@'%%' IDENTIFIED BY 'p'", i),
				fmt.Sprintf("GRANT SELECT ON d.* TO 'u%d'@'%%'", i),
				fmt.Sprintf("INSERT INTO d.t VALUES (%d, %d)", i, i),
				fmt.Sprintf("DROP USER 'u%d'@'%%'", i),
			} {
				if _, err := s.db.Exec(q); err != nil {
					done <- fmt.Errorf("%s: %w", q, err)
					return
				}
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		panic("account statements and checkpoints stuck for 60 s: a deadlock (the goroutine dump follows)")
	}
	// The statements can finish before the first checkpoint they set off
	// does (the counter counts finished checkpoints): wait for it.
	for deadline := time.Now().Add(20 * time.Second); s.status(t, "GLOBAL", "Lockstep_checkpoints") == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint finished within 20 s of the statements")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestJoinNeedsBothTables: a counting join runs on the fast path only
// while the account may read both of its tables: after REVOKE on the
// second table, a statement prepared (and run on the fast path) before
// gets go-mysql-server's refusal at every execution.
func TestJoinNeedsBothTables(t *testing.T) {
	s := startInProcess(t, nil)
	s.exec(t, "CREATE DATABASE shop")
	s.exec(t, "CREATE TABLE shop.o (w INT, i INT, PRIMARY KEY (w, i))")
	s.exec(t, "CREATE TABLE shop.s (w INT, i INT, q INT, PRIMARY KEY (w, i))")
	s.exec(t, "INSERT INTO shop.o VALUES (1, 1), (1, 2)")
	s.exec(t, "INSERT INTO shop.s VALUES (1, 1, 5), (1, 2, 50)")
	s.exec(t, "CREATE USER 'app'@'%' IDENTIFIED BY 'pw'")
	s.exec(t, "GRANT SELECT ON shop.o TO 'app'@'%'")
	s.exec(t, "GRANT SELECT ON shop.s TO 'app'@'%'")
	db := s.openAs(t, "app", "pw")
	defer db.Close()
	stmt, err := db.Prepare("SELECT COUNT(*) FROM shop.o, shop.s WHERE o.w = ? AND s.w = o.w AND s.i = o.i AND s.q < ?")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	hits := s.status(t, "GLOBAL", "Lockstep_fast_path_hits")
	var n int64
	if err := stmt.QueryRow(1, 10).Scan(&n); err != nil || n != 1 {
		t.Fatalf("count %d, %v; want 1", n, err)
	}
	if got := s.status(t, "GLOBAL", "Lockstep_fast_path_hits"); got != hits+1 {
		t.Fatalf("fast path hits %d -> %d: the join did not run on the fast path", hits, got)
	}
	s.exec(t, "REVOKE SELECT ON shop.s FROM 'app'@'%'")
	hits = s.status(t, "GLOBAL", "Lockstep_fast_path_hits")
	// MySQL: 1142 "SELECT command denied to user 'app'@'%' for table
	// 's'"; go-mysql-server refuses a join over an unreadable table with
	// 1105 "Access denied ..." (a single table gets 1142). Today's code is
	// asserted so that a change is seen.
	for i := 0; i < 2; i++ {
		wantErrNum(t, "join over a table no longer readable", stmt.QueryRow(1, 10).Scan(&n), 1105)
	}
	if got := s.status(t, "GLOBAL", "Lockstep_fast_path_hits"); got != hits {
		t.Errorf("fast path hits %d -> %d after REVOKE, want none", hits, got)
	}
}

// TestAccessDeniedWording: a refused login says what MySQL says: the
// account as the server saw it and whether a password was given.
func TestAccessDeniedWording(t *testing.T) {
	s := startInProcess(t, nil)
	s.exec(t, "CREATE USER 'app'@'%' IDENTIFIED BY 's3cret'")
	for _, tc := range []struct{ user, password, want string }{
		{"app", "wrong", "Access denied for user 'app'@'localhost' (using password: YES)"},
		{"app", "", "Access denied for user 'app'@'localhost' (using password: NO)"},
		{"nobody", "x", "Access denied for user 'nobody'@'localhost' (using password: YES)"},
	} {
		err := s.openAs(t, tc.user, tc.password).Ping()
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1045 || me.Message != tc.want || string(me.SQLState[:]) != "28000" {
			t.Errorf("%s/%q: %v, want 1045 (28000) %s", tc.user, tc.password, err, tc.want)
		}
	}
	remote := &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 5000}
	if got, want := accessDenied("u", remote, false), "Access denied for user 'u'@'10.1.2.3' (using password: NO)"; got != want {
		t.Errorf("remote client: %s, want %s", got, want)
	}
}

// TestSetPassword: the ways MySQL changes a password — SET PASSWORD FOR
// an account, SET PASSWORD for one's own, ALTER USER USER() and
// CURRENT_USER() — work (the parser knew none of them) and last across a
// restart; an account without the privilege cannot change another's.
func TestSetPassword(t *testing.T) {
	dir := t.TempDir()
	s := startInProcess(t, func(c *config.Config) { c.Datadir = dir })
	s.exec(t, "CREATE USER 'app'@'%' IDENTIFIED BY 'a'")
	s.exec(t, "SET PASSWORD FOR 'app'@'%' = 'b'")
	wantErrNum(t, "the old password", s.openAs(t, "app", "a").Ping(), 1045)
	for _, step := range []struct{ old, stmt, now string }{
		{"b", "SET PASSWORD = 'c'", "c"},
		{"c", "ALTER USER USER() IDENTIFIED BY 'd'", "d"},
		{"d", "ALTER USER CURRENT_USER() IDENTIFIED BY 'e'", "e"},
		{"e", "ALTER USER CURRENT_USER IDENTIFIED BY 'f'", "f"},
	} {
		if _, err := s.openAs(t, "app", step.old).Exec(step.stmt); err != nil {
			t.Fatalf("%s: %v", step.stmt, err)
		}
		wantErrNum(t, step.stmt+": the old password", s.openAs(t, "app", step.old).Ping(), 1045)
		if err := s.openAs(t, "app", step.now).Ping(); err != nil {
			t.Fatalf("%s: the new password: %v", step.stmt, err)
		}
	}
	_, err := s.openAs(t, "app", "f").Exec("SET PASSWORD FOR 'root'@'%' = 'x'")
	if err == nil {
		t.Error("app changed root's password")
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = startInProcess(t, func(c *config.Config) { c.Datadir = dir })
	if err := s.openAs(t, "app", "f").Ping(); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
	if err := s.db.Ping(); err != nil {
		t.Fatalf("root after a restart: %v", err)
	}
}

// TestShowCreateUser: SHOW CREATE USER (1064 before) gives MySQL's
// statement for an account, which recreates it (a copy logs in with the
// same password); 1396 for an account that does not exist; an account
// sees its own definition but not another's without the privilege (1227).
func TestShowCreateUser(t *testing.T) {
	s := startInProcess(t, nil)
	s.exec(t, "CREATE USER 'app'@'%' IDENTIFIED BY 'pw'")
	show := func(db *gosql.DB, account string) (name, stmt string, err error) {
		err = db.QueryRow("SHOW CREATE USER " + account).Scan(&stmt)
		if err == nil {
			rows, _ := db.Query("SHOW CREATE USER " + account)
			cols, _ := rows.Columns()
			rows.Close()
			name = cols[0]
		}
		return name, stmt, err
	}
	name, stmt, err := show(s.db, "'app'@'%'")
	want := "CREATE USER `app`@`%` IDENTIFIED WITH 'mysql_native_password' AS '*D821809F681A40A6E379B50D0463EFAE20BDD122' " +
		"REQUIRE NONE PASSWORD EXPIRE DEFAULT ACCOUNT UNLOCK PASSWORD HISTORY DEFAULT PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT"
	if err != nil || stmt != want || name != "CREATE USER for app@%" {
		t.Fatalf("SHOW CREATE USER app: %q %q, %v\nwant %q", name, stmt, err, want)
	}
	s.exec(t, strings.Replace(stmt, "`app`@", "`copy`@", 1))
	if err := s.openAs(t, "copy", "pw").Ping(); err != nil {
		t.Errorf("the recreated account with the same password: %v", err)
	}
	if _, stmt, err := show(s.db, "app"); err != nil || stmt != want {
		t.Errorf("SHOW CREATE USER app (host left out): %q, %v", stmt, err)
	}
	_, _, err = show(s.db, "'nope'@'%'")
	wantErrNum(t, "an account that does not exist", err, 1396)
	app := s.openAs(t, "app", "pw")
	if _, stmt, err := show(app, "CURRENT_USER()"); err != nil || stmt != want {
		t.Errorf("app's own, as CURRENT_USER(): %q, %v", stmt, err)
	}
	_, _, err = show(app, "root")
	wantErrNum(t, "another account without the privilege", err, 1227)
}
