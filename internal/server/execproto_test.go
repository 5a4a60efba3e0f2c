package server

import (
	"bytes"
	"context"
	gosql "database/sql"
	"fmt"
	"net"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// recConn records the bytes a client reads from the server.
type recConn struct {
	net.Conn
	mu  sync.Mutex
	got bytes.Buffer
}

func (c *recConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.got.Write(p[:n])
	c.mu.Unlock()
	return n, err
}

func (c *recConn) take() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := append([]byte(nil), c.got.Bytes()...)
	c.got.Reset()
	return b
}

var recDialers sync.Map // network name -> **recConn

// recordingDB opens a one-connection pool to addr whose reads are recorded.
func recordingDB(t *testing.T, addr string) (*gosql.DB, func() []byte) {
	t.Helper()
	name := fmt.Sprintf("rec%p", t)
	var rc *recConn
	recDialers.Store(name, &rc)
	mysql.RegisterDialContext(name, func(ctx context.Context, a string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", a)
		if err != nil {
			return nil, err
		}
		rc = &recConn{Conn: c}
		return rc, nil
	})
	db, err := gosql.Open("mysql", "root@"+name+"("+addr+")/xp")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	return db, func() []byte { return rc.take() }
}

// TestExecHookMatchesProtocolLayer runs the same prepared statements with
// the server answering executes itself (lockstep_fast_protocol ON) and with
// vitess answering them (OFF), and compares the bytes the client reads for
// each execute: column definitions, binary rows of every type the fast path
// returns, NULLs, OK packets with affected rows and insert ids, errors, and
// the status flags inside and outside a transaction. It also counts that
// the ON pass went through the hook and the OFF pass did not.
func TestExecHookMatchesProtocolLayer(t *testing.T) {
	s := startInProcess(t, nil)
	s.exec(t, "CREATE DATABASE xp")
	s.exec(t, `CREATE TABLE xp.t (id INT PRIMARY KEY, ti TINYINT, si SMALLINT UNSIGNED, bi BIGINT, u BIGINT UNSIGNED,
		f FLOAT, d DOUBLE, dec2 DECIMAL(10,2), c CHAR(5), v VARCHAR(20), b VARBINARY(8), dt DATETIME, dt6 DATETIME(6),
		da DATE, ts TIMESTAMP NULL, y YEAR, e ENUM('x','y'), j INT, KEY (j))`)
	s.exec(t, `CREATE TABLE xp.a (id INT AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL, UNIQUE KEY (k))`)
	s.exec(t, `INSERT INTO xp.t VALUES
		(1, -5, 65535, -9007199254740993, 18446744073709551615, 1.5, -2.25, 12.34, 'ab', 'héllo', x'00ff', '2024-02-29 13:14:15', '2024-02-29 13:14:15.123456', '2024-02-29', '2024-01-01 00:00:00', 2024, 'y', 7),
		(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 7),
		(3, 0, 0, 0, 0, 0, 0, 0, '', '', '', '2000-01-01 00:00:00', '2000-01-01 00:00:00.000001', '2000-01-01', NULL, 1901, 'x', 8)`)

	type step struct {
		query string
		args  []any
		exec  bool
	}
	steps := []step{
		{query: "SELECT * FROM t WHERE id = ?", args: []any{1}},
		{query: "SELECT * FROM t WHERE id = ?", args: []any{2}},
		{query: "SELECT * FROM t WHERE id = ?", args: []any{3}},
		{query: "SELECT * FROM t WHERE id = ?", args: []any{99}},
		{query: "SELECT id, v FROM t WHERE id IN (?, ?, ?)", args: []any{3, 1, 2}},
		{query: "SELECT id, c FROM t WHERE j = ? ORDER BY id", args: []any{7}},
		{query: "SELECT v FROM t WHERE id = ?", args: []any{"1"}},
		{query: "SELECT v FROM t WHERE id = ?", args: []any{3}}, // same statement, other parameter type
		{query: "SELECT SUM(dec2), COUNT(*), MAX(bi) FROM t WHERE id BETWEEN ? AND ?", args: []any{1, 3}},
		{query: "UPDATE t SET j = j + ? WHERE id = ?", args: []any{1, 3}, exec: true},
		{query: "UPDATE t SET v = ? WHERE id = ?", args: []any{"same", 99}, exec: true},
		{query: "INSERT INTO a (id, k) VALUES (?, ?), (?, ?)", args: []any{10, 1, 11, 2}, exec: true},
		{query: "INSERT INTO a (id, k) VALUES (?, ?)", args: []any{10, 3}, exec: true}, // 1062
		{query: "BEGIN", exec: true},
		{query: "SELECT k FROM a WHERE id = ? FOR UPDATE", args: []any{10}},
		{query: "DELETE FROM a WHERE id = ?", args: []any{11}, exec: true},
		{query: "COMMIT", exec: true},
		{query: "SELECT v FROM t WHERE id = ?", args: []any{nil}},
	}
	run := func(on string) [][]byte {
		s.exec(t, "SET GLOBAL lockstep_fast_protocol = "+on)
		s.exec(t, "DELETE FROM xp.a")
		s.exec(t, "UPDATE xp.t SET j = 8 WHERE id = 3")
		db, take := recordingDB(t, s.addr)
		var out [][]byte
		prepared := map[string]*gosql.Stmt{} // a statement run again reuses its prepared statement
		for _, st := range steps {
			ps := prepared[st.query]
			if ps == nil {
				var err error
				if ps, err = db.Prepare(st.query); err != nil {
					t.Fatalf("%s: prepare: %v", st.query, err)
				}
				prepared[st.query] = ps
			}
			take()
			var err error
			if st.exec {
				_, err = ps.Exec(st.args...)
			} else {
				var rows *gosql.Rows
				if rows, err = ps.Query(st.args...); err == nil {
					for rows.Next() {
					}
					err = rows.Close()
				}
			}
			out = append(out, append(take(), []byte(fmt.Sprint(err))...))
		}
		for _, ps := range prepared {
			ps.Close()
		}
		return out
	}
	before := s.status(t, "GLOBAL", "Lockstep_fast_protocol_executes")
	on := run("ON")
	hooked := s.status(t, "GLOBAL", "Lockstep_fast_protocol_executes") - before
	off := run("OFF")
	if s.status(t, "GLOBAL", "Lockstep_fast_protocol_executes")-before != hooked {
		t.Errorf("executes went through the hook with lockstep_fast_protocol OFF")
	}
	if hooked < int64(len(steps))-5 {
		t.Errorf("only %d of %d executes went through the hook", hooked, len(steps))
	}
	for i, st := range steps {
		if !bytes.Equal(on[i], off[i]) {
			t.Errorf("%s %v: the hook's response differs from vitess's\nhook:   %q\nvitess: %q", st.query, st.args, on[i], off[i])
		}
	}
}
