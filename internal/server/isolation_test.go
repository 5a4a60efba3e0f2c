package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
)

// TestTwoServersInOneProcess runs two servers in this process and checks
// that nothing lockstep owns is shared between them: data, status
// counters, identity, GTIDs, global variables; and that stopping one
// leaves the other working.
func TestTwoServersInOneProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers")
	}
	a := startInProcess(t, nil)
	b := startInProcess(t, nil)

	// Data: the same names, different rows.
	for _, s := range []*procServer{a, b} {
		s.exec(t, "CREATE DATABASE d")
		s.exec(t, "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(10))")
	}
	a.exec(t, "INSERT INTO d.t VALUES (1, 'a')")
	b.exec(t, "INSERT INTO d.t VALUES (1, 'b'), (2, 'b')")
	if got := a.str(t, "SELECT GROUP_CONCAT(CONCAT(id, v) ORDER BY id) FROM d.t"); got != "1a" {
		t.Errorf("server A rows: %s, want 1a", got)
	}
	if got := b.str(t, "SELECT GROUP_CONCAT(CONCAT(id, v) ORDER BY id) FROM d.t"); got != "1b,2b" {
		t.Errorf("server B rows: %s, want 1b,2b", got)
	}

	// Status counters: each server counts its own work, in both scopes.
	for _, scope := range []string{"GLOBAL", "SESSION"} {
		if n := a.status(t, scope, "Innodb_rows_inserted"); n != 1 {
			t.Errorf("A: SHOW %s STATUS Innodb_rows_inserted = %d, want 1", scope, n)
		}
		if n := b.status(t, scope, "Innodb_rows_inserted"); n != 2 {
			t.Errorf("B: SHOW %s STATUS Innodb_rows_inserted = %d, want 2", scope, n)
		}
	}
	commitsA, commitsB := a.status(t, "GLOBAL", "Binlog_commits"), b.status(t, "GLOBAL", "Binlog_commits")
	for i := 3; i <= 5; i++ {
		b.exec(t, "INSERT INTO d.t VALUES (?, 'b')", i)
	}
	if n := a.status(t, "GLOBAL", "Binlog_commits"); n != commitsA {
		t.Errorf("A: Binlog_commits %d -> %d after commits on B only", commitsA, n)
	}
	if n := b.status(t, "GLOBAL", "Binlog_commits"); n != commitsB+3 {
		t.Errorf("B: Binlog_commits %d -> %d after 3 commits, want +3", commitsB, n)
	}
	if n := a.status(t, "GLOBAL", "Innodb_rows_inserted"); n != 1 {
		t.Errorf("A: Innodb_rows_inserted = %d after inserts on B, want 1", n)
	}
	// Connections per server (go-mysql-server's own counters are shared
	// by the process and reset by every new engine).
	if n := a.status(t, "GLOBAL", "Threads_connected"); n < 1 || n > 5 {
		t.Errorf("A: Threads_connected = %d", n)
	}

	// Identity and GTIDs.
	uuidA, uuidB := a.str(t, "SELECT @@server_uuid"), b.str(t, "SELECT @@global.server_uuid")
	if uuidA == uuidB || len(uuidA) != 36 || len(uuidB) != 36 {
		t.Fatalf("server_uuid: A %q, B %q", uuidA, uuidB)
	}
	if got := a.str(t, "SELECT @@global.server_uuid"); got != uuidA {
		t.Errorf("A: @@global.server_uuid %q, @@server_uuid %q", got, uuidA)
	}
	if got := a.variable(t, "GLOBAL", "server_uuid"); got != uuidA {
		t.Errorf("A: SHOW GLOBAL VARIABLES server_uuid = %q, want %q", got, uuidA)
	}
	if got := b.variable(t, "", "server_uuid"); got != uuidB {
		t.Errorf("B: SHOW VARIABLES server_uuid = %q, want %q", got, uuidB)
	}
	for _, c := range []struct {
		s    *procServer
		uuid string
	}{{a, uuidA}, {b, uuidB}} {
		want := fmt.Sprintf("%s:1-%d", c.uuid, c.s.status(t, "GLOBAL", "Binlog_commits"))
		for _, q := range []string{"SELECT @@gtid_executed", "SELECT @@global.gtid_executed"} {
			if got := c.s.str(t, q); got != want {
				t.Errorf("%s on %s: %q, want %q", q, c.s.addr, got, want)
			}
		}
	}
	if got := a.str(t, "SELECT @@port"); !strings.HasSuffix(a.addr, ":"+got) {
		t.Errorf("A: @@port %s, listening on %s", got, a.addr)
	}

	// Global variables set with SET GLOBAL belong to their server.
	a.exec(t, "SET GLOBAL innodb_lock_wait_timeout = 7")
	a.exec(t, "SET GLOBAL innodb_lock_schedule_algorithm = 'cats'")
	a.exec(t, "SET GLOBAL autocommit = 0")
	for _, c := range []struct {
		s                    *procServer
		wait, sched, autocom string
		cats                 int64
	}{{a, "7", "cats", "0", 1}, {b, "50", "fcfs", "1", 0}} {
		if got := c.s.str(t, "SELECT @@global.innodb_lock_wait_timeout"); got != c.wait {
			t.Errorf("%s: @@global.innodb_lock_wait_timeout = %s, want %s", c.s.addr, got, c.wait)
		}
		if got := c.s.variable(t, "GLOBAL", "innodb_lock_wait_timeout"); got != c.wait {
			t.Errorf("%s: SHOW GLOBAL VARIABLES innodb_lock_wait_timeout = %s, want %s", c.s.addr, got, c.wait)
		}
		if got := c.s.str(t, "SELECT @@innodb_lock_schedule_algorithm"); got != c.sched {
			t.Errorf("%s: @@innodb_lock_schedule_algorithm = %s, want %s", c.s.addr, got, c.sched)
		}
		if n := c.s.status(t, "GLOBAL", "Lockstep_lock_schedule_cats"); n != c.cats {
			t.Errorf("%s: Lockstep_lock_schedule_cats = %d, want %d", c.s.addr, n, c.cats)
		}
		// A new session starts from its server's global values.
		conn := c.s.newSession(t)
		if got := queryString(t, conn, "SELECT @@session.innodb_lock_wait_timeout"); got != c.wait {
			t.Errorf("%s: new session's innodb_lock_wait_timeout = %s, want %s", c.s.addr, got, c.wait)
		}
		if got := queryString(t, conn, "SELECT @@autocommit"); got != c.autocom {
			t.Errorf("%s: new session's autocommit = %s, want %s", c.s.addr, got, c.autocom)
		}
	}
	a.exec(t, "SET GLOBAL autocommit = 1")
	// The process-wide registry keeps the defaults.
	if _, v, _ := sql.SystemVariables.GetGlobal("innodb_lock_wait_timeout"); fmt.Sprint(v) != "50" {
		t.Errorf("process-wide innodb_lock_wait_timeout = %v, want the default 50", v)
	}

	// Stopping A leaves B working.
	if err := a.stop(); err != nil {
		t.Fatalf("stopping A: %v", err)
	}
	b.exec(t, "INSERT INTO d.t VALUES (6, 'b')")
	if got := b.str(t, "SELECT COUNT(*) FROM d.t"); got != "6" {
		t.Errorf("B after A stopped: %s rows, want 6", got)
	}
	if n := b.status(t, "GLOBAL", "Innodb_rows_inserted"); n != 6 {
		t.Errorf("B after A stopped: Innodb_rows_inserted = %d, want 6", n)
	}
	if got := b.str(t, "SELECT @@server_uuid"); got != uuidB {
		t.Errorf("B after A stopped: server_uuid %q, want %q", got, uuidB)
	}
	auto, err := os.ReadFile(filepath.Join(a.datadir, "auto.cnf"))
	if err != nil || !strings.Contains(string(auto), uuidA) {
		t.Errorf("A's auto.cnf %q (%v) does not hold its server_uuid %s", auto, err, uuidA)
	}
}

// TestSharedGMSState asserts what go-mysql-server keeps for the whole
// process, so that a change (a fix upstream, or a regression here) is
// seen: the global values of its own system variables and its own status
// counters. docs/isolation.md lists them.
func TestSharedGMSState(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers")
	}
	a := startInProcess(t, nil)
	b := startInProcess(t, nil)

	// A go-mysql-server variable set on A is B's global value too.
	orig := b.str(t, "SELECT @@global.max_sp_recursion_depth")
	a.exec(t, "SET GLOBAL max_sp_recursion_depth = 17")
	t.Cleanup(func() { b.db.Exec("SET GLOBAL max_sp_recursion_depth = " + orig) })
	if got := b.str(t, "SELECT @@global.max_sp_recursion_depth"); got != "17" {
		t.Errorf("B: @@global.max_sp_recursion_depth = %s after SET GLOBAL on A; "+
			"go-mysql-server no longer shares it: update docs/isolation.md", got)
	}

	// go-mysql-server's Questions counter counts both servers' statements.
	before := b.status(t, "GLOBAL", "Questions")
	for i := 0; i < 5; i++ {
		a.str(t, "SELECT "+strconv.Itoa(i))
	}
	if after := b.status(t, "GLOBAL", "Questions"); after-before < 5 {
		t.Errorf("B: Questions %d -> %d while A ran 5 statements; "+
			"go-mysql-server no longer shares it: update docs/isolation.md", before, after)
	}
}
