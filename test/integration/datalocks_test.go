package integration

import (
	"fmt"
	"strings"
	"testing"
)

// locksOf lists the env's schema's rows of performance_schema.data_locks
// as "who TYPE INDEX MODE STATUS DATA" lines in a fixed order, who being
// the session whose THREAD_ID and transaction it is (sessions by
// CONNECTION_ID).
func locksOf(obs *session, schema string, who map[int64]string) string {
	obs.t.Helper()
	rows, err := obs.c.QueryContext(obs.ctx, `SELECT THREAD_ID, LOCK_TYPE, COALESCE(INDEX_NAME, '-'), LOCK_MODE, LOCK_STATUS, COALESCE(LOCK_DATA, 'NULL'), OBJECT_NAME, ENGINE
		FROM performance_schema.data_locks WHERE OBJECT_SCHEMA = ?`, schema)
	if err != nil {
		obs.t.Fatalf("data_locks: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var th int64
		var typ, idx, mode, status, data, obj, engine string
		if err := rows.Scan(&th, &typ, &idx, &mode, &status, &data, &obj, &engine); err != nil {
			obs.t.Fatal(err)
		}
		if obj != "t" || engine != "INNODB" {
			obs.t.Fatalf("OBJECT_NAME %q ENGINE %q", obj, engine)
		}
		out = append(out, fmt.Sprintf("%s %s %s %s %s %s", who[th], typ, idx, mode, status, data))
	}
	if err := rows.Err(); err != nil {
		obs.t.Fatal(err)
	}
	sortStrings(out)
	return strings.Join(out, "\n")
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// waitsOf lists data_lock_waits joined to data_locks on both lock ids:
// "requester MODE DATA <- blocker MODE DATA", checking that the wait's
// transaction ids, thread ids and instances are those of the rows it names.
func waitsOf(obs *session, who map[int64]string) string {
	obs.t.Helper()
	rows, err := obs.c.QueryContext(obs.ctx, `SELECT w.REQUESTING_THREAD_ID, r.LOCK_MODE, r.LOCK_DATA, w.BLOCKING_THREAD_ID, b.LOCK_MODE, b.LOCK_DATA,
		w.ENGINE = 'INNODB' AND w.REQUESTING_ENGINE_TRANSACTION_ID = r.ENGINE_TRANSACTION_ID AND w.BLOCKING_ENGINE_TRANSACTION_ID = b.ENGINE_TRANSACTION_ID
		AND w.REQUESTING_OBJECT_INSTANCE_BEGIN = r.OBJECT_INSTANCE_BEGIN AND w.BLOCKING_OBJECT_INSTANCE_BEGIN = b.OBJECT_INSTANCE_BEGIN
		AND w.REQUESTING_THREAD_ID = r.THREAD_ID AND w.BLOCKING_THREAD_ID = b.THREAD_ID AND r.LOCK_STATUS = 'WAITING'
		AND r.ENGINE_TRANSACTION_ID <> b.ENGINE_TRANSACTION_ID
		FROM performance_schema.data_lock_waits w
		JOIN performance_schema.data_locks r ON r.ENGINE_LOCK_ID = w.REQUESTING_ENGINE_LOCK_ID
		JOIN performance_schema.data_locks b ON b.ENGINE_LOCK_ID = w.BLOCKING_ENGINE_LOCK_ID`)
	if err != nil {
		obs.t.Fatalf("data_lock_waits: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var rt, bt int64
		var rm, rd, bm, bd string
		var ok bool
		if err := rows.Scan(&rt, &rm, &rd, &bt, &bm, &bd, &ok); err != nil {
			obs.t.Fatal(err)
		}
		if !ok {
			obs.t.Fatalf("a wait's ids or instances do not match the locks it names (%s %s <- %s %s)", who[rt], rm, who[bt], bm)
		}
		out = append(out, fmt.Sprintf("%s %s %s <- %s %s %s", who[rt], rm, rd, who[bt], bm, bd))
	}
	if err := rows.Err(); err != nil {
		obs.t.Fatal(err)
	}
	sortStrings(out)
	return strings.Join(out, "\n")
}

// TestDataLocks: performance_schema.data_locks shows InnoDB's lock modes
// and data for what a transaction locks, granted and waiting, and
// data_lock_waits who waits for whom (MySQL 8.0's names: 'X' a next-key
// lock, 'X,GAP', 'X,REC_NOT_GAP', 'X,GAP,INSERT_INTENTION',
// 'supremum pseudo-record', and an IX TABLE row per transaction and table).
func TestDataLocks(t *testing.T) {
	srv := startServer(t)
	setup := func(t *testing.T) (e *env, h, w, obs *session, who map[int64]string) {
		e = newDatabase(t, srv)
		h, w, obs = e.session("holder"), e.session("waiter"), e.session("observer")
		h.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, v INT, UNIQUE KEY uk (k))")
		h.exec("INSERT INTO t VALUES (10, 100, 0), (20, 200, 0), (30, 300, 0), (40, 400, 0)")
		who = map[int64]string{h.int("SELECT CONNECTION_ID()"): "holder", w.int("SELECT CONNECTION_ID()"): "waiter"}
		w.exec("SET SESSION innodb_lock_wait_timeout = 10")
		return
	}
	want := func(t *testing.T, what, got string, lines ...string) {
		t.Helper()
		if w := strings.Join(lines, "\n"); got != w {
			t.Fatalf("%s:\n%s\nwant:\n%s", what, got, w)
		}
	}

	t.Run("RangeGapInsertWaits", func(t *testing.T) {
		e, h, w, obs, who := setup(t)
		h.exec("BEGIN")
		h.exec("SELECT * FROM t WHERE id BETWEEN 15 AND 25 FOR UPDATE")
		want(t, "holder's range", locksOf(obs, e.name, who),
			"holder RECORD PRIMARY X GRANTED 20", // next-key: 20 and the gap (10, 20)
			"holder RECORD PRIMARY X,GAP GRANTED 30",
			"holder TABLE - IX GRANTED NULL")
		w.exec("BEGIN")
		p := w.goExec("INSERT INTO t VALUES (17, 170, 0)") // into the gap (10, 20)
		p.mustBlock(t)
		got := locksOf(obs, e.name, who)
		if !strings.Contains(got, "waiter RECORD PRIMARY X,GAP,INSERT_INTENTION WAITING 20") ||
			!strings.Contains(got, "holder RECORD PRIMARY X GRANTED 20") || !strings.Contains(got, "waiter TABLE - IX GRANTED NULL") {
			t.Fatalf("while the insert waits:\n%s", got)
		}
		want(t, "waits", waitsOf(obs, who), "waiter X,GAP,INSERT_INTENTION 20 <- holder X 20")
		h.exec("COMMIT")
		p.mustSucceed(t)
		if got := locksOf(obs, e.name, who); strings.Contains(got, "holder") || strings.Contains(got, "WAITING") {
			t.Fatalf("after the holder's COMMIT:\n%s", got)
		}
		want(t, "waits after COMMIT", waitsOf(obs, who))
		w.exec("COMMIT")
		want(t, "after both COMMITs", locksOf(obs, e.name, who))
	})

	t.Run("Supremum", func(t *testing.T) {
		e, h, w, obs, who := setup(t)
		h.exec("BEGIN")
		h.exec("SELECT * FROM t WHERE id > 35 FOR UPDATE")
		w.exec("BEGIN")
		p := w.goExec("INSERT INTO t VALUES (50, 500, 0)") // after the last key
		p.mustBlock(t)
		got := locksOf(obs, e.name, who)
		for _, l := range []string{
			"holder RECORD PRIMARY X GRANTED 40",
			"holder RECORD PRIMARY X GRANTED supremum pseudo-record",
			"holder TABLE - IX GRANTED NULL",
			// InnoDB keeps no GAP bit on a supremum lock.
			"waiter RECORD PRIMARY X,INSERT_INTENTION WAITING supremum pseudo-record",
		} {
			if !strings.Contains(got, l+"\n") && !strings.HasSuffix(got, l) {
				t.Fatalf("missing %q in:\n%s", l, got)
			}
		}
		want(t, "waits", waitsOf(obs, who),
			"waiter X,INSERT_INTENTION supremum pseudo-record <- holder X supremum pseudo-record")
		h.exec("ROLLBACK")
		p.mustSucceed(t)
		w.exec("ROLLBACK")
		want(t, "after ROLLBACK", locksOf(obs, e.name, who))
	})

	t.Run("UniqueEqualityAndRecordWait", func(t *testing.T) {
		e, h, w, obs, who := setup(t)
		h.exec("BEGIN")
		h.exec("SELECT * FROM t WHERE id = 20 FOR UPDATE")
		want(t, "unique equality", locksOf(obs, e.name, who),
			"holder RECORD PRIMARY X,REC_NOT_GAP GRANTED 20",
			"holder TABLE - IX GRANTED NULL")
		w.exec("BEGIN")
		p := w.goExec("SELECT * FROM t WHERE id = 20 FOR SHARE")
		p.mustBlock(t)
		want(t, "record wait", locksOf(obs, e.name, who),
			"holder RECORD PRIMARY X,REC_NOT_GAP GRANTED 20",
			"holder TABLE - IX GRANTED NULL",
			"waiter RECORD PRIMARY S,REC_NOT_GAP WAITING 20",
			"waiter TABLE - IS GRANTED NULL")
		want(t, "waits", waitsOf(obs, who), "waiter S,REC_NOT_GAP 20 <- holder X,REC_NOT_GAP 20")
		h.exec("COMMIT")
		p.mustSucceed(t)
		want(t, "granted after COMMIT", locksOf(obs, e.name, who),
			"waiter RECORD PRIMARY S,REC_NOT_GAP GRANTED 20",
			"waiter TABLE - IS GRANTED NULL")
		w.exec("COMMIT")
		want(t, "after COMMIT", locksOf(obs, e.name, who))
	})

	t.Run("SecondaryIndexData", func(t *testing.T) {
		// Secondary entries show the index value, then the primary key.
		e, h, _, obs, who := setup(t)
		h.exec("BEGIN")
		h.exec("SELECT * FROM t WHERE k BETWEEN 150 AND 250 FOR UPDATE")
		want(t, "secondary range", locksOf(obs, e.name, who),
			"holder RECORD PRIMARY X,REC_NOT_GAP GRANTED 20",
			"holder RECORD uk X,GAP GRANTED 200, 20",
			"holder RECORD uk X,GAP GRANTED 300, 30",
			"holder TABLE - IX GRANTED NULL")
		h.exec("COMMIT")
	})

	t.Run("ReadCommittedNoGaps", func(t *testing.T) {
		e, h, w, obs, who := setup(t)
		h.exec("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
		h.exec("BEGIN")
		h.exec("SELECT * FROM t WHERE id BETWEEN 15 AND 35 FOR UPDATE")
		want(t, "read committed range", locksOf(obs, e.name, who),
			"holder RECORD PRIMARY X,REC_NOT_GAP GRANTED 20",
			"holder RECORD PRIMARY X,REC_NOT_GAP GRANTED 30",
			"holder TABLE - IX GRANTED NULL")
		w.exec("BEGIN")
		w.exec("INSERT INTO t VALUES (17, 170, 0)") // no gap lock: no wait
		w.exec("ROLLBACK")
		h.exec("COMMIT")
		want(t, "after COMMIT", locksOf(obs, e.name, who))
	})
}

// TestMetadataLocks: performance_schema.metadata_locks shows a
// transaction's SHARED_READ and SHARED_WRITE table locks and a DDL
// statement's pending exclusive one, with their owners, and nothing once
// both ended.
func TestMetadataLocks(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	h, d, obs := e.session("reader"), e.session("ddl"), e.session("observer")
	h.exec("CREATE TABLE T1 (id INT PRIMARY KEY)")
	rid, did := h.int("SELECT CONNECTION_ID()"), d.int("SELECT CONNECTION_ID()")
	q := fmt.Sprintf(`SELECT OBJECT_TYPE, OBJECT_NAME, LOCK_TYPE, LOCK_DURATION, LOCK_STATUS,
		CASE OWNER_THREAD_ID WHEN %d THEN 'reader' WHEN %d THEN 'ddl' ELSE OWNER_THREAD_ID END
		FROM performance_schema.metadata_locks WHERE OBJECT_SCHEMA = '%s' ORDER BY LOCK_STATUS, OWNER_THREAD_ID, LOCK_TYPE`, rid, did, e.name)
	h.exec("BEGIN")
	h.exec("SELECT * FROM T1")
	obs.wantRows("TABLE:T1:SHARED_READ:TRANSACTION:GRANTED:reader", q)
	// A write takes SHARED_WRITE; MySQL shows both locks of the
	// transaction, as here.
	h.exec("INSERT INTO T1 VALUES (1)")
	obs.wantRows("TABLE:T1:SHARED_READ:TRANSACTION:GRANTED:reader TABLE:T1:SHARED_WRITE:TRANSACTION:GRANTED:reader", q)
	p := d.goExec("ALTER TABLE T1 ADD COLUMN c INT")
	p.mustBlock(t)
	obs.wantRows("TABLE:T1:SHARED_READ:TRANSACTION:GRANTED:reader TABLE:T1:SHARED_WRITE:TRANSACTION:GRANTED:reader TABLE:T1:EXCLUSIVE:STATEMENT:PENDING:ddl", q)
	h.exec("COMMIT")
	p.mustSucceed(t)
	obs.wantRows("", q)
}
