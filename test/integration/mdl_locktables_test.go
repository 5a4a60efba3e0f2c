package integration

import (
	"fmt"
	"testing"
	"time"
)

// Metadata locks of LOCK TABLES, DROP DATABASE and RENAME with qualified
// names (docs/mdl.md), over TCP. Blocking is observed: the waiting
// statement has not returned, and the process list shows its connection
// "Waiting for table metadata lock".

// mdlWaitState polls the process list until connection id's State is
// MySQL's metadata lock wait.
func mdlWaitState(t *testing.T, obs *session, id int64) {
	t.Helper()
	deadline := time.Now().Add(returnWait)
	q := fmt.Sprintf("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %d AND STATE = 'Waiting for table metadata lock'", id)
	for obs.int(q) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("connection %d is not waiting for a metadata lock: %s", id, obs.rowsOf("SHOW PROCESSLIST"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// mdlOf lists the metadata locks on the env's tables as
// name:type:duration:status:who, who being the session's name.
func mdlOf(obs *session, db string, who map[int64]string) string {
	q := "SELECT OBJECT_NAME, LOCK_TYPE, LOCK_DURATION, LOCK_STATUS, CASE OWNER_THREAD_ID"
	for id, name := range who {
		q += fmt.Sprintf(" WHEN %d THEN '%s'", id, name)
	}
	q += " ELSE 'other' END AS who FROM performance_schema.metadata_locks WHERE OBJECT_SCHEMA = '" + db + "' ORDER BY OBJECT_NAME, LOCK_STATUS, who, LOCK_TYPE"
	return obs.rowsOf(q)
}

// LOCK TABLES t WRITE holds SHARED_NO_READ_WRITE: the session's own reads
// and writes run; others' reads, writes and DDL wait (1205 after
// lock_wait_timeout) until UNLOCK TABLES. LOCK TABLES t READ holds
// SHARED_READ_ONLY: others read; their writes and DDL wait until the
// locking session ends. LOCK TABLES commits the open transaction.
func TestLockTablesMDL(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	lockerPool := e.openDB("") // its own pool: closing it ends the session
	l := newSession(t, e.ctx, lockerPool, "locker")
	r, w, d, obs := e.session("reader"), e.session("writer"), e.session("ddl"), e.session("observer")
	l.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	l.exec("INSERT INTO t VALUES (1, 10)")
	who := map[int64]string{l.int("SELECT CONNECTION_ID()"): "locker", r.int("SELECT CONNECTION_ID()"): "reader",
		w.int("SELECT CONNECTION_ID()"): "writer", d.int("SELECT CONNECTION_ID()"): "ddl"}
	rid, wid, did := r.int("SELECT CONNECTION_ID()"), w.int("SELECT CONNECTION_ID()"), d.int("SELECT CONNECTION_ID()")

	t.Run("Write", func(t *testing.T) {
		l.exec("LOCK TABLES t WRITE")
		if n := len(l.warnings()); n != 0 {
			t.Fatalf("LOCK TABLES gave %d warnings", n)
		}
		l.exec("INSERT INTO t VALUES (2, 20)")
		l.wantInt(2, "SELECT COUNT(*) FROM t")
		obs.wantRows("t:SHARED_NO_READ_WRITE:EXPLICIT:GRANTED:locker", "SELECT OBJECT_NAME, LOCK_TYPE, LOCK_DURATION, LOCK_STATUS, 'locker' FROM performance_schema.metadata_locks WHERE OBJECT_SCHEMA = '"+e.name+"'")
		r.exec("SET SESSION lock_wait_timeout = 1")
		expectErrno(t, r.execErr("SELECT * FROM t"), 1205, "a read under LOCK TABLES ... WRITE")
		r.exec("SET SESSION lock_wait_timeout = DEFAULT")
		read := r.goQueryInt("SELECT COUNT(*) FROM t")
		read.mustBlock(t)
		mdlWaitState(t, obs, rid)
		write := w.goExec("UPDATE t SET v = v + 1 WHERE id = 1")
		write.mustBlock(t)
		mdlWaitState(t, obs, wid)
		alter := d.goExec("ALTER TABLE t ADD COLUMN c INT")
		alter.mustBlock(t)
		mdlWaitState(t, obs, did)
		if got, want := mdlOf(obs, e.name, who), "t:SHARED_NO_READ_WRITE:EXPLICIT:GRANTED:locker t:EXCLUSIVE:STATEMENT:PENDING:ddl t:SHARED_READ:TRANSACTION:PENDING:reader t:SHARED_WRITE:TRANSACTION:PENDING:writer"; got != want {
			t.Fatalf("metadata_locks:\n got %s\nwant %s", got, want)
		}
		l.exec("UNLOCK TABLES")
		read.mustSucceed(t)
		write.mustSucceed(t)
		alter.mustSucceed(t)
		if read.val.Int64 != 2 {
			t.Fatalf("the queued read counted %d rows, want 2", read.val.Int64)
		}
		obs.wantRows("", "SELECT * FROM performance_schema.metadata_locks WHERE OBJECT_SCHEMA = '"+e.name+"'")
	})

	t.Run("Read", func(t *testing.T) {
		// LOCK TABLES commits the locker's open transaction.
		l.exec("BEGIN")
		l.exec("INSERT INTO t (id, v) VALUES (3, 30)")
		l.exec("LOCK TABLES t READ")
		r.wantInt(3, "SELECT COUNT(*) FROM t") // committed; reads go through
		l.wantInt(3, "SELECT COUNT(*) FROM t")
		w.exec("SET SESSION lock_wait_timeout = 1")
		expectErrno(t, w.execErr("INSERT INTO t (id, v) VALUES (4, 40)"), 1205, "a write under LOCK TABLES ... READ")
		w.exec("SET SESSION lock_wait_timeout = DEFAULT")
		write := w.goExec("INSERT INTO t (id, v) VALUES (4, 40)")
		write.mustBlock(t)
		mdlWaitState(t, obs, wid)
		alter := d.goExec("ALTER TABLE t DROP COLUMN c")
		alter.mustBlock(t)
		mdlWaitState(t, obs, did)
		if got, want := mdlOf(obs, e.name, who), "t:SHARED_READ_ONLY:EXPLICIT:GRANTED:locker t:EXCLUSIVE:STATEMENT:PENDING:ddl t:SHARED_WRITE:TRANSACTION:PENDING:writer"; got != want {
			t.Fatalf("metadata_locks:\n got %s\nwant %s", got, want)
		}
		// The locks end with the session.
		if err := l.c.Close(); err != nil { // back to its pool, idle
			t.Fatal(err)
		}
		if err := lockerPool.Close(); err != nil { // the connection closes
			t.Fatal(err)
		}
		write.mustSucceed(t)
		alter.mustSucceed(t)
		r.wantInt(4, "SELECT COUNT(*) FROM t")
	})
}

// DROP DATABASE takes the exclusive lock on every table of the database:
// it waits for a transaction that used one (1205 after lock_wait_timeout),
// and a statement arriving meanwhile queues behind it and then finds the
// table gone.
func TestDropDatabaseMDL(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	a, b, c, obs := e.session("txn"), e.session("dropper"), e.session("late"), e.session("observer")
	db := e.name + "_x"
	a.exec("CREATE DATABASE " + db)
	a.exec("CREATE TABLE " + db + ".t (id INT PRIMARY KEY)")
	a.exec("CREATE TABLE " + db + ".u (id INT PRIMARY KEY)")
	a.exec("INSERT INTO " + db + ".u VALUES (1)")
	a.exec("BEGIN")
	a.wantInt(1, "SELECT COUNT(*) FROM "+db+".u")
	bid := b.int("SELECT CONNECTION_ID()")
	b.exec("SET SESSION lock_wait_timeout = 1")
	expectErrno(t, b.execErr("DROP DATABASE "+db), 1205, "DROP DATABASE while a transaction uses a table")
	b.exec("SET SESSION lock_wait_timeout = DEFAULT")
	drop := b.goExec("DROP DATABASE " + db)
	drop.mustBlock(t)
	mdlWaitState(t, obs, bid)
	late := c.goQueryInt("SELECT COUNT(*) FROM " + db + ".t")
	late.mustBlock(t)                             // queued behind the waiting DROP
	a.wantInt(1, "SELECT COUNT(*) FROM "+db+".u") // the transaction still reads its table
	a.exec("COMMIT")
	drop.mustSucceed(t)
	if err := late.wait(t); err == nil {
		t.Fatal("a read queued behind DROP DATABASE found the dropped table")
	}
	obs.wantInt(0, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '"+db+"'")
}

// RENAME TABLE with qualified names needs no current database, from
// another database renames the named one's table, and moves a table
// between databases.
func TestRenameQualifiedMDL(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	s := e.session("s")
	s.exec("CREATE TABLE a (id INT PRIMARY KEY)")
	s.exec("INSERT INTO a VALUES (7)")
	other := e.name + "_o"
	s.exec("CREATE DATABASE " + other)
	s.exec("CREATE TABLE " + other + ".a (id INT PRIMARY KEY)")
	nodb := newSession(t, e.ctx, srv.DB(t, ""), "nodb")
	nodb.exec(fmt.Sprintf("RENAME TABLE %s.a TO %s.b", e.name, e.name))
	s.wantInt(7, "SELECT id FROM b")
	o := newSession(t, e.ctx, srv.DB(t, other), "other")
	o.exec(fmt.Sprintf("RENAME TABLE %s.b TO %s.c", e.name, e.name))
	o.exec(fmt.Sprintf("ALTER TABLE %s.c RENAME TO %s.d", e.name, e.name))
	s.wantInt(7, "SELECT id FROM d")
	o.wantInt(1, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '"+other+"' AND TABLE_NAME = 'a'")
	// Between databases: the table moves (and back, by ALTER TABLE).
	o.exec(fmt.Sprintf("RENAME TABLE %s.d TO %s.d", e.name, other))
	o.wantInt(7, "SELECT id FROM d")
	nodb.exec(fmt.Sprintf("ALTER TABLE %s.d RENAME TO %s.d", other, e.name))
	s.wantInt(7, "SELECT id FROM d")
	// ALTER TABLE moving a table with other changes: the changes, then the
	// move; from a session without a current database too.
	o.exec(fmt.Sprintf("ALTER TABLE %s.d ADD COLUMN x INT DEFAULT 3, RENAME TO %s.d", e.name, other))
	o.wantInt(10, "SELECT id + x FROM d")
	nodb.exec(fmt.Sprintf("ALTER TABLE %s.d RENAME TO %s.d, DROP COLUMN x", other, e.name))
	s.wantInt(7, "SELECT id FROM d")
	s.wantInt(1, "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '"+e.name+"' AND TABLE_NAME = 'd'")
}
