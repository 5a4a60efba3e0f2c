package integration

import (
	"encoding/binary"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// Status flags in the server's packets (MySQL's SERVER_STATUS_*).
const (
	statusInTrans    = 0x0001
	statusAutocommit = 0x0002
)

// TestHandshakeStatusFlags reads the initial handshake packet over a raw TCP
// connection: it must carry SERVER_STATUS_AUTOCOMMIT (autocommit is on by
// default) and not SERVER_STATUS_IN_TRANS, as MySQL's does. PyMySQL
// decides from this flag whether it must send SET autocommit=0; with the
// flag missing its ROLLBACK silently did nothing.
func TestHandshakeStatusFlags(t *testing.T) {
	srv := startServer(t)
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.Port)), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	var hdr [4]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		t.Fatal(err)
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	pkt := make([]byte, n)
	if _, err := io.ReadFull(conn, pkt); err != nil {
		t.Fatal(err)
	}
	// protocol version, server version NUL, thread id (4), salt (8), filler,
	// capabilities low (2), charset (1), status flags (2).
	if pkt[0] != 10 {
		t.Fatalf("protocol version %d", pkt[0])
	}
	i := 1
	for pkt[i] != 0 {
		i++
	}
	handshakeVersion := string(pkt[1:i])
	i += 1 + 4 + 8 + 1 + 2 + 1
	flags := binary.LittleEndian.Uint16(pkt[i:])
	if flags&statusAutocommit == 0 || flags&statusInTrans != 0 {
		t.Fatalf("handshake status flags %#x: want AUTOCOMMIT set and IN_TRANS clear", flags)
	}

	// One server: @@version and VERSION() say what the handshake says
	// (they said 8.0.31 against the handshake's 8.0.33), and
	// @@version_comment names lockstep (it said "Dolt").
	s := newDatabase(t, srv).session("s")
	var version, fn, comment string
	if err := s.c.QueryRowContext(s.ctx, "SELECT @@version, VERSION(), @@version_comment").Scan(&version, &fn, &comment); err != nil {
		t.Fatal(err)
	}
	if version != handshakeVersion || fn != handshakeVersion || comment != "lockstep" {
		t.Fatalf("@@version %q, VERSION() %q, @@version_comment %q; handshake says %q, want comment lockstep", version, fn, comment, handshakeVersion)
	}
}

// TestPyMySQLTransactions is the scenario that lost data: PyMySQL's default
// connection (autocommit off on the client's side), an insert, ROLLBACK —
// the row must be gone. It also follows the status flags through
// autocommit changes, BEGIN and COMMIT, and does the same through a
// SQLAlchemy ORM session (add, flush, rollback).
func TestPyMySQLTransactions(t *testing.T) {
	srv := startServer(t)
	testutil.RequireInstalled(t, "PyMySQL", exec.Command("python3", "-c", "import pymysql").Run() == nil)
	e := newDatabase(t, srv)
	prog := `
import sys, pymysql
port, db = int(sys.argv[1]), sys.argv[2]
c = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", database=db)
assert c.get_autocommit() is False
# PyMySQL sent SET autocommit=0 because the handshake said it was on; no
# transaction is open yet.
assert c.server_status & 3 == 0, hex(c.server_status)
cur = c.cursor()
cur.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
cur.execute("INSERT INTO t VALUES (1, 'a')")
assert c.server_status & 1, "IN_TRANS after a write with autocommit off: %#x" % c.server_status
c.rollback()
assert c.server_status & 3 == 0, hex(c.server_status)
cur.execute("SELECT COUNT(*) FROM t")
assert cur.fetchone()[0] == 0, "ROLLBACK kept the row"
cur.execute("INSERT INTO t VALUES (2, 'b')")
c.commit()
c.rollback()
other = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", database=db, autocommit=True)
assert other.server_status & 3 == 2, hex(other.server_status)
oc = other.cursor()
oc.execute("SELECT id FROM t")
assert oc.fetchall() == ((2,),)
oc.execute("BEGIN")
assert other.server_status & 3 == 3, hex(other.server_status)
oc.execute("SELECT id FROM t")
oc.fetchall()
assert other.server_status & 3 == 3, hex(other.server_status)
oc.execute("COMMIT")
assert other.server_status & 3 == 2, hex(other.server_status)
# Tabular EXPLAIN: the values must match the declared column types (the
# placeholder row sent 'NULL' text in integer columns and PyMySQL lost the
# connection), and the connection must stay usable.
oc.execute("EXPLAIN SELECT * FROM t WHERE id = 2")
row = oc.fetchone()
assert row[4] == "const" and row[9] == 1 and row[10] == 100.0, row
oc.execute("SELECT 1")
assert oc.fetchone() == (1,)
print("ok")
`
	out, err := exec.Command("python3", "-c", prog, strconv.Itoa(srv.Port), e.name).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("pymysql: %v\n%s", err, out)
	}

	t.Run("sqlalchemy", func(t *testing.T) {
		testutil.RequireInstalled(t, "SQLAlchemy", exec.Command("python3", "-c", "import sqlalchemy").Run() == nil)
		e := newDatabase(t, srv)
		prog := `
import sys
from sqlalchemy import create_engine, Integer, String, select, func
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, Session
class Base(DeclarativeBase): pass
class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(50))
eng = create_engine("mysql+pymysql://root:@127.0.0.1:%s/%s" % (sys.argv[1], sys.argv[2]))
Base.metadata.create_all(eng)
with Session(eng) as s:
    s.add(User(id=1, name="kept"))
    s.commit()
    s.add(User(id=2, name="rolled back"))
    s.flush()
    s.rollback()
with Session(eng) as s:
    names = s.scalars(select(User.name).order_by(User.id)).all()
    assert names == ["kept"], names
print("ok")
`
		out, err := exec.Command("python3", "-c", prog, strconv.Itoa(srv.Port), e.name).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "ok" {
			t.Fatalf("sqlalchemy: %v\n%s", err, out)
		}
	})
}
