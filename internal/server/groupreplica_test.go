package server

import (
	gosql "database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"

	logrec "lockstep/internal/record"
)

// statusRows returns q's rows as maps of column name to value ("NULL" for
// NULL).
func statusRows(db *gosql.DB, q string) ([]map[string]string, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	for rows.Next() {
		vals := make([]gosql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		m := map[string]string{}
		for i, c := range cols {
			m[c] = "NULL"
			if vals[i].Valid {
				m[c] = vals[i].String
			}
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func mustStatusRows(t *testing.T, db *gosql.DB, q string) []map[string]string {
	t.Helper()
	rs, err := statusRows(db, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return rs
}

// TestGroupReplicaStatus: SHOW REPLICA STATUS on a secondary is one row
// for the group's applier channel naming the primary's SQL address and
// uuid; after writes its executed and retrieved sets are the primary's
// @@gtid_executed and it is not behind; on the primary and a standalone
// server it is empty; an account without REPLICATION CLIENT or SUPER gets
// 1227. The members view and a secondary's 1290 name SQL addresses. An
// injected apply failure shows Replica_SQL_Running No with the error.
func TestGroupReplicaStatus(t *testing.T) {
	ms := startGroupInProcess(t, 3)
	p := ms[0]
	_, pPort, _ := net.SplitHostPort(p.addr)
	pUUID := p.str(t, "SELECT @@server_uuid")
	pID := p.status(t, "GLOBAL", "Lockstep_group_replication_member_id")

	if rs := mustStatusRows(t, p.db, "SHOW REPLICA STATUS"); len(rs) != 0 {
		t.Errorf("the primary: %v, want no rows", rs)
	}
	// The members learn each other's SQL address within a few ticks.
	for _, m := range ms[1:] {
		deadline := time.Now().Add(10 * time.Second)
		for {
			rs := mustStatusRows(t, m.db, "SHOW REPLICA STATUS")
			if len(rs) == 1 && rs[0]["Source_Port"] == pPort {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("member %s: SHOW REPLICA STATUS %v, want one row with Source_Port %s", m.addr, rs, pPort)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	p.exec(t, "CREATE DATABASE d")
	p.exec(t, "CREATE TABLE d.t (id INT PRIMARY KEY)")
	for i := 1; i <= 20; i++ {
		p.exec(t, fmt.Sprintf("INSERT INTO d.t VALUES (%d)", i))
	}
	p.exec(t, "CREATE USER 'plain'@'%' IDENTIFIED BY 'pw'")
	p.exec(t, "CREATE USER 'rc'@'%' IDENTIFIED BY 'pw'")
	p.exec(t, "GRANT REPLICATION CLIENT ON *.* TO 'rc'@'%'")
	set := p.str(t, "SELECT @@gtid_executed")
	for _, m := range ms[1:] {
		if got := m.str(t, fmt.Sprintf("SELECT WAIT_FOR_EXECUTED_GTID_SET('%s', 20)", set)); got != "0" {
			t.Fatalf("a secondary did not execute %s: %s", set, got)
		}
		rs := mustStatusRows(t, m.db, "SHOW REPLICA STATUS")
		if len(rs) != 1 {
			t.Fatalf("secondary %s: %d rows, want 1", m.addr, len(rs))
		}
		r := rs[0]
		want := map[string]string{"Channel_Name": "group_replication_applier", "Source_Host": "127.0.0.1", "Source_Port": pPort,
			"Source_UUID": pUUID, "Source_Server_Id": fmt.Sprint(pID), "Replica_IO_Running": "Yes", "Replica_SQL_Running": "Yes",
			"Executed_Gtid_Set": set, "Retrieved_Gtid_Set": set, "Seconds_Behind_Source": "0", "Last_SQL_Errno": "0",
			"Last_SQL_Error": "", "Auto_Position": "1", "Replica_IO_State": "Waiting for source to send event",
			"Replica_SQL_Running_State": "Replica has read all relay log; waiting for more updates"}
		for k, v := range want {
			if r[k] != v {
				t.Errorf("secondary %s: %s = %q, want %q", m.addr, k, r[k], v)
			}
		}
		if len(r) != 60 {
			t.Errorf("secondary %s: %d columns, want 60", m.addr, len(r))
		}
		old := mustStatusRows(t, m.db, "SHOW SLAVE STATUS")
		if len(old) != 1 || old[0]["Master_Port"] != pPort || old[0]["Slave_SQL_Running"] != "Yes" {
			t.Errorf("secondary %s: SHOW SLAVE STATUS %v", m.addr, old)
		}

		// Privileges: 1227 without REPLICATION CLIENT or SUPER.
		for user, ok := range map[string]bool{"plain": false, "rc": true} {
			db, err := gosql.Open("mysql", user+":pw@tcp("+m.addr+")/")
			if err != nil {
				t.Fatal(err)
			}
			rs, err := statusRows(db, "SHOW REPLICA STATUS")
			db.Close()
			var me *mysqldriver.MySQLError
			switch {
			case ok && (err != nil || len(rs) != 1):
				t.Errorf("%s (REPLICATION CLIENT): %v, %v; want one row", user, rs, err)
			case !ok && (!errors.As(err, &me) || me.Number != 1227):
				t.Errorf("%s (USAGE): %v, %v; want error 1227", user, rs, err)
			}
		}

		// The 1290 names the primary's SQL address.
		_, err := m.db.Exec("INSERT INTO d.t VALUES (100)")
		name := fmt.Sprintf("the primary is member %d at %s", pID, p.addr)
		var me *mysqldriver.MySQLError
		if !errors.As(err, &me) || me.Number != 1290 || !strings.Contains(me.Message, name) {
			t.Errorf("a write on secondary %s: %v, want 1290 naming %q", m.addr, err, name)
		}
	}

	// The members view: MEMBER_ID each member's uuid, MEMBER_HOST and
	// MEMBER_PORT its SQL address, on every member.
	byPort := map[string]string{}
	for _, m := range ms {
		_, port, _ := net.SplitHostPort(m.addr)
		byPort[port] = m.str(t, "SELECT @@server_uuid")
	}
	for _, m := range ms {
		rs := mustStatusRows(t, m.db, "SELECT MEMBER_ID, MEMBER_HOST, MEMBER_PORT FROM performance_schema.replication_group_members")
		if len(rs) != len(ms) {
			t.Fatalf("member %s: %v", m.addr, rs)
		}
		for _, r := range rs {
			if uuid, ok := byPort[r["MEMBER_PORT"]]; !ok || uuid != r["MEMBER_ID"] || r["MEMBER_HOST"] != "127.0.0.1" {
				t.Errorf("member %s: row %v, want a member's uuid, 127.0.0.1 and its SQL port (%v)", m.addr, r, byPort)
			}
		}
	}

	// An apply failure: the SQL thread stops with the error.
	fail := func(*logrec.Txn) error { return errors.New("injected failure") }
	testTxnApplyFail.Store(&fail)
	defer testTxnApplyFail.Store(nil)
	p.exec(t, "INSERT INTO d.t VALUES (21)")
	for _, m := range ms[1:] {
		deadline := time.Now().Add(10 * time.Second)
		var r map[string]string
		for {
			rs := mustStatusRows(t, m.db, "SHOW REPLICA STATUS")
			if len(rs) == 1 {
				r = rs[0]
				if r["Replica_SQL_Running"] == "No" {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("secondary %s: %v after an apply failure, want Replica_SQL_Running No", m.addr, rs)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if r["Last_SQL_Errno"] == "0" || !strings.Contains(r["Last_SQL_Error"], "injected failure") ||
			r["Last_SQL_Error_Timestamp"] == "" || r["Seconds_Behind_Source"] != "NULL" || r["Replica_IO_Running"] != "No" ||
			r["Executed_Gtid_Set"] != set {
			t.Errorf("secondary %s after an apply failure: %v", m.addr, r)
		}
	}
}

// TestReplicaStatusStandalone: a server outside a group has no channel:
// SHOW REPLICA STATUS is empty.
func TestReplicaStatusStandalone(t *testing.T) {
	s := startInProcess(t, nil)
	if rs := mustStatusRows(t, s.db, "SHOW REPLICA STATUS"); len(rs) != 0 {
		t.Fatalf("standalone: %v, want no rows", rs)
	}
}
