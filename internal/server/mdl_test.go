package server

import (
	"bytes"
	"context"
	gosql "database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"lockstep/internal/config"
	"lockstep/internal/sqlfront"
)

// Metadata locks (sqlfront/mdl.go) over the wire: DDL waits for the
// transactions that used its table, statements queue behind waiting DDL and
// find the table by name again, lock_wait_timeout, deadlocks, KILL.

// mdlConn is one client connection of the metadata lock tests.
type mdlConn struct {
	t *testing.T
	c *gosql.Conn
}

func mdlConnect(t *testing.T, s *procServer) *mdlConn {
	t.Helper()
	c, err := s.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	m := &mdlConn{t: t, c: c}
	// RENAME TABLE of qualified names fails with 1046 without a current
	// database (go-mysql-server; MySQL needs none).
	m.exec("USE d")
	return m
}

func (m *mdlConn) exec(q string) {
	m.t.Helper()
	if _, err := m.c.ExecContext(context.Background(), q); err != nil {
		m.t.Fatalf("%s: %v", q, err)
	}
}

func (m *mdlConn) id() int64 {
	m.t.Helper()
	var id int64
	if err := m.c.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		m.t.Fatal(err)
	}
	return id
}

// async runs q on the connection's own goroutine.
func (m *mdlConn) async(q string) <-chan error {
	ch := make(chan error, 1)
	go func() {
		_, err := m.c.ExecContext(context.Background(), q)
		ch <- err
	}()
	return ch
}

func mdlBlocked(t *testing.T, what string, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s ended (%v); want it to wait for the metadata lock", what, err)
	case <-time.After(300 * time.Millisecond):
	}
}

func mdlDone(t *testing.T, what string, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s still waiting", what)
	}
	return nil
}

func mysqlCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// waitState polls the process list until connection id shows state.
func waitState(t *testing.T, s *procServer, id int64, state string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got gosql.NullString
		err := s.db.QueryRow("SELECT STATE FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&got)
		if err == nil && got.String == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("connection %d: state %q (%v), want %q", id, got.String, err, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mdlServer(t *testing.T) *procServer {
	s := startInProcess(t, nil)
	// A connection given back closes: a failed test must not leave a
	// transaction holding a lock in the pool; and no wait outlives a test.
	s.db.SetMaxIdleConns(0)
	s.exec(t, "SET GLOBAL lock_wait_timeout = 60")
	s.exec(t, "CREATE DATABASE d")
	s.exec(t, "CREATE TABLE d.t (a INT PRIMARY KEY, b INT)")
	s.exec(t, "INSERT INTO d.t VALUES (1, 1), (2, 2)")
	return s
}

// Each DDL statement waits for a transaction that read its table, shows
// "Waiting for table metadata lock", and runs once the transaction ends.
func TestMDLDDLWaitsForTransaction(t *testing.T) {
	s := mdlServer(t)
	s.exec(t, "CREATE TABLE d.t_new (a INT PRIMARY KEY, b INT, c INT)")
	// check is 0 before the DDL and 1 after; it reads information_schema,
	// which takes no metadata lock (a read of the table would queue behind
	// the waiting DDL), except TRUNCATE's, checked only after.
	cases := []struct{ ddl, check string }{
		{"ALTER TABLE d.t ADD COLUMN c INT", "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA='d' AND TABLE_NAME='t' AND COLUMN_NAME='c'"},
		{"CREATE INDEX ib ON d.t (b)", "SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA='d' AND TABLE_NAME='t' AND INDEX_NAME='ib'"},
		{"CREATE TRIGGER d.tr BEFORE INSERT ON d.t FOR EACH ROW SET NEW.b = NEW.b + 100", "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_NAME='tr'"},
		{"DROP TRIGGER d.tr", "SELECT 1 - COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_NAME='tr'"},
		{"TRUNCATE TABLE d.t", "SELECT COUNT(*) = 0 FROM d.t"},
		{"RENAME TABLE d.t TO d.t_old, d.t_new TO d.t", "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='d' AND TABLE_NAME='t_old'"},
		{"DROP TABLE d.t_old", "SELECT 1 - COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='d' AND TABLE_NAME='t_old'"},
	}
	for _, c := range cases {
		t.Run(strings.Fields(c.ddl)[0]+"_"+strings.Fields(c.ddl)[1], func(t *testing.T) {
			a, b := mdlConnect(t, s), mdlConnect(t, s)
			table := "d.t"
			if strings.HasPrefix(c.ddl, "DROP TABLE") {
				table = "d.t_old"
			}
			bid := b.id()
			a.exec("BEGIN")
			a.exec("SELECT * FROM " + table)
			ddl := b.async(c.ddl)
			mdlBlocked(t, c.ddl, ddl)
			waitState(t, s, bid, "Waiting for table metadata lock")
			if !strings.HasPrefix(c.ddl, "TRUNCATE") {
				if got := s.str(t, c.check); got != "0" {
					t.Fatalf("%s changed the table while waiting: %s = %s", c.ddl, c.check, got)
				}
			}
			a.exec("COMMIT")
			if err := mdlDone(t, c.ddl, ddl); err != nil {
				t.Fatalf("%s: %v", c.ddl, err)
			}
			if got := s.str(t, c.check); got != "1" {
				t.Fatalf("after %s: %s = %s", c.ddl, c.check, got)
			}
		})
	}
	if n := s.status(t, "GLOBAL", "Lockstep_mdl_waits"); n < int64(len(cases)) {
		t.Fatalf("Lockstep_mdl_waits = %d, want at least %d", n, len(cases))
	}
}

// A statement that arrives while DDL waits queues behind it and then finds
// the table by name again (it sees the new column); a write queued behind
// a RENAME that swaps tables goes into the new table.
func TestMDLQueueAndReopen(t *testing.T) {
	s := mdlServer(t)
	a, b, c := mdlConnect(t, s), mdlConnect(t, s), mdlConnect(t, s)
	a.exec("BEGIN")
	a.exec("SELECT * FROM d.t")
	alter := b.async("ALTER TABLE d.t ADD COLUMN c INT DEFAULT 7")
	mdlBlocked(t, "ALTER", alter)
	var sel = make(chan error, 1)
	var cols []string
	go func() {
		rows, err := c.c.QueryContext(context.Background(), "SELECT * FROM d.t ORDER BY a")
		if err == nil {
			cols, err = rows.Columns()
			rows.Close()
		}
		sel <- err
	}()
	mdlBlocked(t, "SELECT behind the waiting ALTER", sel)
	a.exec("COMMIT")
	if err := mdlDone(t, "ALTER", alter); err != nil {
		t.Fatal(err)
	}
	if err := mdlDone(t, "SELECT", sel); err != nil {
		t.Fatal(err)
	}
	if strings.Join(cols, ",") != "a,b,c" {
		t.Fatalf("the queued SELECT saw columns %v, want a,b,c (the table after the ALTER)", cols)
	}

	// pt-online-schema-change's swap: a write queued behind the RENAME
	// goes into the table that has the name afterwards.
	s.exec(t, "CREATE TABLE d.t_new (a INT PRIMARY KEY, b INT, c INT, e INT)")
	a.exec("BEGIN")
	a.exec("INSERT INTO d.t (a, b) VALUES (10, 10)")
	swap := b.async("RENAME TABLE d.t TO d.t_old, d.t_new TO d.t")
	mdlBlocked(t, "RENAME", swap)
	ins := c.async("INSERT INTO d.t (a, b) VALUES (11, 11)")
	mdlBlocked(t, "INSERT behind the RENAME", ins)
	a.exec("COMMIT")
	if err := mdlDone(t, "RENAME", swap); err != nil {
		t.Fatal(err)
	}
	if err := mdlDone(t, "INSERT", ins); err != nil {
		t.Fatal(err)
	}
	if got := s.str(t, "SELECT GROUP_CONCAT(a ORDER BY a) FROM d.t_old"); got != "1,2,10" {
		t.Fatalf("old table holds %s, want 1,2,10", got)
	}
	if got := s.str(t, "SELECT GROUP_CONCAT(a ORDER BY a) FROM d.t"); got != "11" {
		t.Fatalf("new table holds %s, want 11", got)
	}
}

// lock_wait_timeout ends a DDL's wait with 1205 and nothing changed; KILL
// QUERY ends it with 1317.
func TestMDLTimeoutAndKill(t *testing.T) {
	s := mdlServer(t)
	a, b := mdlConnect(t, s), mdlConnect(t, s)
	a.exec("BEGIN")
	a.exec("SELECT * FROM d.t")
	b.exec("SET SESSION lock_wait_timeout = 1")
	start := time.Now()
	err := mdlDone(t, "DROP TABLE", b.async("DROP TABLE d.t"))
	if mysqlCode(err) != 1205 || !strings.Contains(err.Error(), "Lock wait timeout exceeded") {
		t.Fatalf("DROP TABLE: %v, want 1205", err)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("DROP TABLE gave up after %v, before lock_wait_timeout", d)
	}
	if got := s.str(t, "SELECT COUNT(*) FROM d.t"); got != "2" {
		t.Fatalf("the table after the timed-out DROP: %s rows", got)
	}
	if n := s.status(t, "GLOBAL", "Lockstep_mdl_wait_timeouts"); n != 1 {
		t.Fatalf("Lockstep_mdl_wait_timeouts = %d", n)
	}

	b.exec("SET SESSION lock_wait_timeout = 100")
	bid := b.id()
	alter := b.async("ALTER TABLE d.t ADD COLUMN k INT")
	waitState(t, s, bid, "Waiting for table metadata lock")
	s.exec(t, "KILL QUERY "+strconv.FormatInt(bid, 10))
	if err := mdlDone(t, "ALTER", alter); mysqlCode(err) != 1317 {
		t.Fatalf("killed ALTER: %v, want 1317", err)
	}
	a.exec("COMMIT")
	b.exec("SELECT 1") // the connection goes on
}

// A transaction that waits behind DDL which waits for that transaction is
// a deadlock: 1213 to the transaction (rolled back), and the DDL runs.
func TestMDLDeadlock(t *testing.T) {
	s := mdlServer(t)
	s.exec(t, "CREATE TABLE d.u (a INT PRIMARY KEY)")
	a, b := mdlConnect(t, s), mdlConnect(t, s)
	a.exec("BEGIN")
	a.exec("INSERT INTO d.t VALUES (3, 3)")
	swap := b.async("RENAME TABLE d.t TO d.t2, d.u TO d.u2")
	mdlBlocked(t, "RENAME", swap)
	_, err := a.c.ExecContext(context.Background(), "SELECT * FROM d.u")
	if mysqlCode(err) != 1213 {
		t.Fatalf("a's read behind the RENAME: %v, want 1213", err)
	}
	if err := mdlDone(t, "RENAME", swap); err != nil {
		t.Fatal(err)
	}
	if got := s.str(t, "SELECT COUNT(*) FROM d.t2 WHERE a = 3"); got != "0" {
		t.Fatal("the deadlock victim's insert was kept")
	}
	if n := s.status(t, "GLOBAL", "Lockstep_mdl_deadlocks"); n != 1 {
		t.Fatalf("Lockstep_mdl_deadlocks = %d", n)
	}
}

// The fast path (a prepared primary-key read inside BEGIN) holds the
// table's metadata lock too.
func TestMDLFastPath(t *testing.T) {
	s := mdlServer(t)
	a, b := mdlConnect(t, s), mdlConnect(t, s)
	before := s.status(t, "GLOBAL", "Lockstep_fast_path_hits")
	a.exec("BEGIN")
	var v int
	for i := 0; i < 3; i++ { // learn, then run on the fast path
		if err := a.c.QueryRowContext(context.Background(), "SELECT b FROM d.t WHERE a = ?", 1).Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	if after := s.status(t, "GLOBAL", "Lockstep_fast_path_hits"); after == before {
		t.Fatal("the read did not run on the fast path")
	}
	alter := b.async("ALTER TABLE d.t ADD COLUMN c INT")
	mdlBlocked(t, "ALTER after a fast-path read", alter)
	a.exec("COMMIT")
	if err := mdlDone(t, "ALTER", alter); err != nil {
		t.Fatal(err)
	}
}

// Recovery loads a checkpoint's catalog through SQL and then replays the
// DDL logged after it; both take metadata locks (replayed DDL waits for
// local readers on a group secondary), so both must give them back: a
// checkpoint's CREATE TABLE kept its lock and the replay of a later ALTER of
// that table waited 50 s for it, then failed the restart.
func TestMDLRecoveryReleases(t *testing.T) {
	cfg := config.Default()
	cfg.Datadir = t.TempDir()
	cfg.CheckpointLogSize = 0
	var out bytes.Buffer
	s := openLocalTo(t, cfg, &out)
	s.exec("CREATE DATABASE d", "USE d", "CREATE TABLE t (id INT PRIMARY KEY, v INT)",
		"INSERT INTO t VALUES (1, 1), (2, 2)", "CREATE INDEX iv ON t (v)")
	if _, err := s.d.checkpoint(s.fe); err != nil {
		t.Fatal(err)
	}
	s.exec("ALTER TABLE d.t ADD COLUMN w INT DEFAULT 5", "CREATE INDEX iw ON d.t (w)", "RENAME TABLE d.t TO d.t2")
	s.close()

	out.Reset()
	start := time.Now()
	s = openLocalTo(t, cfg, &out)
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("recovery took %v:\n%s", d, out.String())
	}
	if strings.Contains(out.String(), "metadata lock") {
		t.Fatalf("recovery report:\n%s", out.String())
	}
	if got := s.rowsString("SELECT id, w FROM d.t2 ORDER BY id"); got != "[[1 5] [2 5]]" {
		t.Fatalf("rows after recovery: %s", got)
	}
}

// A write plans the triggers of its own tables only, as MySQL opens them:
// go-mysql-server parsed every trigger of the database for every write,
// so a trigger of another table that could not be planned (here one that
// calls a missing procedure; under pt-online-schema-change, the tool's
// triggers on a table its DROP TABLE was removing: 1146) failed writes to
// every table.
func TestMDLWritePlansOwnTriggersOnly(t *testing.T) {
	s := mdlServer(t)
	a := mdlConnect(t, s)
	a.exec("CREATE TABLE d.x (a INT PRIMARY KEY)")
	a.exec("CREATE TRIGGER d.tx AFTER INSERT ON d.x FOR EACH ROW CALL d.nosuch()")
	a.exec("INSERT INTO d.t VALUES (3, 3)")
	a.exec("UPDATE d.t SET b = 4 WHERE a = 3")
	a.exec("DELETE FROM d.t WHERE a = 3")
	// (MySQL says 1305; go-mysql-server's message is 1105.)
	if _, err := a.c.ExecContext(context.Background(), "INSERT INTO d.x VALUES (1)"); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Fatalf("INSERT INTO d.x, whose trigger calls a missing procedure: %v, want its error", err)
	}
}

// A write planned before CREATE TRIGGER on its table, which then waits for
// the table's metadata lock behind that CREATE TRIGGER, is planned again
// and fires the trigger: the table's definition did not change, its
// triggers did. Without that, pt-online-schema-change lost a DELETE
// planned before the tool created its triggers: the row stayed in the
// tool's copy.
func TestMDLWriteQueuedBehindCreateTrigger(t *testing.T) {
	s := mdlServer(t)
	s.exec(t, "CREATE TABLE d.log (a INT)")
	a, b, c := mdlConnect(t, s), mdlConnect(t, s), mdlConnect(t, s)
	cid := c.id()
	before := s.status(t, "GLOBAL", "Lockstep_mdl_replans")
	a.exec("BEGIN")
	a.exec("SELECT * FROM d.t")
	create := b.async("CREATE TRIGGER d.tt AFTER INSERT ON d.t FOR EACH ROW INSERT INTO d.log VALUES (NEW.a)")
	mdlBlocked(t, "CREATE TRIGGER", create)
	ins := c.async("INSERT INTO d.t VALUES (9, 9)")
	waitState(t, s, cid, "Waiting for table metadata lock")
	a.exec("COMMIT")
	if err := mdlDone(t, "CREATE TRIGGER", create); err != nil {
		t.Fatal(err)
	}
	if err := mdlDone(t, "INSERT", ins); err != nil {
		t.Fatal(err)
	}
	if got := s.str(t, "SELECT COALESCE(GROUP_CONCAT(a), '') FROM d.log"); got != "9" {
		t.Fatalf("the trigger logged %q for the INSERT queued behind its CREATE TRIGGER, want 9", got)
	}
	if n := s.status(t, "GLOBAL", "Lockstep_mdl_replans"); n <= before {
		t.Fatalf("Lockstep_mdl_replans stayed %d", n)
	}
}

// RENAME TABLE renames its pairs one after the other: a write that looks
// its table up in between does not find it (1146, as pt-online-schema-
// change's writers saw at the tool's swap). It waits for the RENAME (the
// process list says so) and then finds the new table by the name.
func TestMDLWriteBetweenRenameSteps(t *testing.T) {
	s := mdlServer(t)
	s.exec(t, "CREATE TABLE d.t_new (a INT PRIMARY KEY, b INT, c INT)")
	paused, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	step := func(db, from, to string) {
		if db == "d" && from == "t" {
			once.Do(func() {
				close(paused)
				<-release
			})
		}
	}
	b, c := mdlConnect(t, s), mdlConnect(t, s)
	sqlfront.TestingRenameStep.Store(&step)
	var released sync.Once
	free := func() { released.Do(func() { close(release) }) }
	// Registered after the server's and the connections': runs first, so
	// that a failed test does not leave the RENAME (and the connection's
	// close, the server's shutdown) waiting.
	t.Cleanup(func() { free(); sqlfront.TestingRenameStep.Store(nil) })
	cid := c.id()
	swap := b.async("RENAME TABLE d.t TO d.t_old, d.t_new TO d.t")
	select {
	case <-paused:
	case err := <-swap:
		t.Fatalf("RENAME ended (%v) before its first step's hook", err)
	case <-time.After(20 * time.Second):
		t.Fatal("RENAME did not reach its first step")
	}
	ins := c.async("INSERT INTO d.t (a, b) VALUES (20, 20)")
	select {
	case err := <-ins:
		t.Fatalf("INSERT between the RENAME's steps ended: %v; want it to wait for the RENAME", err)
	default:
	}
	waitState(t, s, cid, "Waiting for table metadata lock")
	free()
	if err := mdlDone(t, "RENAME", swap); err != nil {
		t.Fatal(err)
	}
	if err := mdlDone(t, "INSERT", ins); err != nil {
		t.Fatalf("INSERT between the RENAME's steps: %v", err)
	}
	if got := s.str(t, "SELECT GROUP_CONCAT(a ORDER BY a) FROM d.t"); got != "20" {
		t.Fatalf("the new table holds %s, want 20", got)
	}
	if got := s.str(t, "SELECT GROUP_CONCAT(a ORDER BY a) FROM d.t_old"); got != "1,2" {
		t.Fatalf("the old table holds %s, want 1,2", got)
	}
}

// mdlWaitsFor runs ddl on b while a's transaction (begun with used) is
// open: the DDL waits for the metadata lock until a commits.
func mdlWaitsFor(t *testing.T, s *procServer, used []string, ddl string) {
	t.Helper()
	a, b := mdlConnect(t, s), mdlConnect(t, s)
	bid := b.id()
	a.exec("BEGIN")
	for _, q := range used {
		a.exec(q)
	}
	ch := b.async(ddl)
	mdlBlocked(t, ddl, ch)
	waitState(t, s, bid, "Waiting for table metadata lock")
	a.exec("COMMIT")
	if err := mdlDone(t, ddl, ch); err != nil {
		t.Fatalf("%s: %v", ddl, err)
	}
}

// A statement that reads a view locks the view and the tables under it,
// as MySQL does: DDL on a base table, and CREATE OR REPLACE / DROP of the
// view, wait for the transaction; a read queued behind the view's
// redefinition reads the new definition.
func TestMDLViews(t *testing.T) {
	s := mdlServer(t)
	s.exec(t, "CREATE TABLE d.u (a INT PRIMARY KEY)")
	s.exec(t, "INSERT INTO d.u VALUES (1)")
	s.exec(t, "CREATE VIEW d.v AS SELECT t.a, t.b FROM d.t JOIN d.u ON t.a = u.a")
	mdlWaitsFor(t, s, []string{"SELECT * FROM d.v"}, "ALTER TABLE d.t ADD COLUMN c INT")
	mdlWaitsFor(t, s, []string{"SELECT * FROM d.v"}, "ALTER TABLE d.u ADD COLUMN c INT")
	mdlWaitsFor(t, s, []string{"SELECT * FROM d.v"}, "CREATE OR REPLACE VIEW d.v AS SELECT a FROM d.t")

	a, b, c := mdlConnect(t, s), mdlConnect(t, s), mdlConnect(t, s)
	a.exec("BEGIN")
	a.exec("SELECT * FROM d.v")
	redefine := b.async("CREATE OR REPLACE VIEW d.v AS SELECT a, b, 7 AS k FROM d.t")
	mdlBlocked(t, "CREATE OR REPLACE VIEW", redefine)
	var cols []string
	sel := make(chan error, 1)
	go func() {
		rows, err := c.c.QueryContext(context.Background(), "SELECT * FROM d.v")
		if err == nil {
			cols, err = rows.Columns()
			rows.Close()
		}
		sel <- err
	}()
	mdlBlocked(t, "SELECT from the view behind its redefinition", sel)
	a.exec("COMMIT")
	if err := mdlDone(t, "CREATE OR REPLACE VIEW", redefine); err != nil {
		t.Fatal(err)
	}
	if err := mdlDone(t, "SELECT", sel); err != nil {
		t.Fatal(err)
	}
	if strings.Join(cols, ",") != "a,b,k" {
		t.Fatalf("the queued read saw columns %v, want a,b,k (the view's new definition)", cols)
	}

	mdlWaitsFor(t, s, []string{"SELECT * FROM d.v"}, "DROP VIEW d.v")
}

// A write locks the tables its foreign keys check and cascade to, as MySQL
// does: DDL on the parent waits for a transaction that wrote the child,
// and DDL on the child for one whose DELETE on the parent cascaded.
func TestMDLForeignKeys(t *testing.T) {
	s := mdlServer(t)
	s.exec(t, "CREATE TABLE d.p (id INT PRIMARY KEY)")
	s.exec(t, "INSERT INTO d.p VALUES (1), (2), (3)")
	s.exec(t, "CREATE TABLE d.c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES d.p (id) ON DELETE CASCADE)")
	s.exec(t, "INSERT INTO d.c VALUES (2, 2), (3, 3)")
	mdlWaitsFor(t, s, []string{"INSERT INTO d.c VALUES (1, 1)"}, "ALTER TABLE d.p ADD COLUMN x INT")
	mdlWaitsFor(t, s, []string{"UPDATE d.c SET pid = 1 WHERE id = 3"}, "ALTER TABLE d.p ADD COLUMN y INT")
	mdlWaitsFor(t, s, []string{"DELETE FROM d.p WHERE id = 2"}, "ALTER TABLE d.c ADD COLUMN x INT")
	if got := s.str(t, "SELECT GROUP_CONCAT(id ORDER BY id) FROM d.c"); got != "1,3" {
		t.Fatalf("child rows %s, want 1,3 (2 deleted by the cascade)", got)
	}
}

// Reading a view inside a transaction does not end it: binding the view's
// stored CREATE VIEW marked the statement as DDL, which commits — the
// ROLLBACK below kept the INSERT, and the reader lost its metadata locks.
func TestMDLViewReadKeepsTransaction(t *testing.T) {
	s := mdlServer(t)
	s.exec(t, "CREATE VIEW d.v AS SELECT a, b FROM d.t")
	a := mdlConnect(t, s)
	a.exec("BEGIN")
	a.exec("INSERT INTO d.t VALUES (5, 5)")
	a.exec("SELECT * FROM d.v")
	a.exec("ROLLBACK")
	if got := s.str(t, "SELECT GROUP_CONCAT(a ORDER BY a) FROM d.t"); got != "1,2" {
		t.Fatalf("rows after ROLLBACK: %s, want 1,2", got)
	}
}

// DDL replayed from the log (recovery here; a secondary's applier runs the
// same ReplayDDL) gives its metadata locks back: the replayed statements'
// locks were kept, and every statement on their tables waited after a
// restart.
func TestMDLReplayedDDLReleases(t *testing.T) {
	s := mdlServer(t)
	s.exec(t, "ALTER TABLE d.t ADD COLUMN c INT")
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s2 := startInProcess(t, func(c *config.Config) { c.Datadir = s.datadir })
	s2.db.SetMaxIdleConns(0)
	s2.exec(t, "SET GLOBAL lock_wait_timeout = 1")
	if got := s2.str(t, "SELECT GROUP_CONCAT(a ORDER BY a) FROM d.t"); got != "1,2" {
		t.Fatalf("after recovery: %s, want 1,2", got)
	}
	s2.exec(t, "ALTER TABLE d.t ADD COLUMN e INT")
	if n := s2.status(t, "GLOBAL", "Lockstep_mdl_locked_names"); n != 0 {
		t.Fatalf("Lockstep_mdl_locked_names = %d with no statement running", n)
	}
}

// A checkpoint's statements (its SHOW CREATEs when written, its CREATEs
// when loaded) give their metadata locks back: a table loaded from a
// checkpoint stayed locked, and every statement on it waited.
func TestMDLCheckpointReleases(t *testing.T) {
	var datadir string
	cfg := func(c *config.Config) {
		c.CheckpointLogSize = 1 // a checkpoint as soon as there is log
		if datadir != "" {
			c.Datadir = datadir
		}
	}
	s := startInProcess(t, cfg)
	datadir = s.datadir
	s.exec(t, "CREATE DATABASE d")
	s.exec(t, "CREATE TABLE d.t (a INT PRIMARY KEY)")
	s.exec(t, "INSERT INTO d.t VALUES (1)")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if ck, _ := filepath.Glob(filepath.Join(datadir, "checkpoint", "*")); len(ck) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint written")
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.exec(t, "SET GLOBAL lock_wait_timeout = 1")
	s.exec(t, "ALTER TABLE d.t ADD COLUMN b INT") // not held by the checkpoint writer's reads
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s2 := startInProcess(t, cfg)
	s2.db.SetMaxIdleConns(0)
	s2.exec(t, "SET GLOBAL lock_wait_timeout = 1")
	s2.exec(t, "ALTER TABLE d.t ADD COLUMN c INT")
	if got := s2.str(t, "SELECT COUNT(*) FROM d.t"); got != "1" {
		t.Fatalf("after recovery: %s rows", got)
	}
}
