package server

import (
	"context"
	gosql "database/sql"
	"strings"
	"testing"
)

// TestMaxAllowedPacket: a statement larger than max_allowed_packet (64 MiB
// by default, MySQL 8's; go-mysql-server said 1 GiB and read anything)
// is refused, the connection closed and nothing written; one below it
// goes through; SET GLOBAL max_allowed_packet applies to connections made
// after it.
func TestMaxAllowedPacket(t *testing.T) {
	s := startInProcess(t, nil)
	ctx := context.Background()
	if got := s.str(t, "SELECT @@global.max_allowed_packet"); got != "67108864" {
		t.Fatalf("@@global.max_allowed_packet = %s, want 67108864", got)
	}
	s.exec(t, "CREATE DATABASE mp")
	s.exec(t, "CREATE TABLE mp.t (id INT PRIMARY KEY, b LONGBLOB)")
	// The driver's own limit is set above the server's, so that it sends.
	open := func() *gosql.DB {
		db, err := gosql.Open("mysql", "root@tcp("+s.addr+")/mp?maxAllowedPacket=1073741824")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		db.SetMaxIdleConns(0)
		return db
	}
	insert := func(db *gosql.DB, id, n int) error {
		_, err := db.ExecContext(ctx, "INSERT INTO t VALUES (?, '"+strings.Repeat("x", n)+"')", id)
		return err
	}
	db := open()
	// Text protocol (no arguments: the driver interpolates nothing).
	big := "INSERT INTO t VALUES (1, '" + strings.Repeat("x", 70<<20) + "')"
	if _, err := db.ExecContext(ctx, big); err == nil {
		t.Fatal("a 70 MiB statement was accepted")
	}
	if err := insert(db, 2, 8<<20); err != nil {
		t.Fatalf("an 8 MiB statement (prepared): %v", err)
	}
	if got := s.str(t, "SELECT GROUP_CONCAT(id ORDER BY id) FROM mp.t"); got != "2" {
		t.Fatalf("rows %s, want only 2", got)
	}

	s.exec(t, "SET GLOBAL max_allowed_packet = 1048576")
	small := open()
	if err := insert(small, 3, 2<<20); err == nil {
		t.Fatal("a 2 MiB statement was accepted after SET GLOBAL max_allowed_packet = 1M")
	}
	if err := insert(small, 4, 512<<10); err != nil {
		t.Fatalf("a 512 KiB statement: %v", err)
	}
	if got := s.str(t, "SELECT GROUP_CONCAT(id ORDER BY id) FROM mp.t"); got != "2,4" {
		t.Fatalf("rows %s, want 2,4", got)
	}
}

// TestCountPacket: a command's packets add up while each is of the
// largest size; a header read twice counts once.
func TestCountPacket(t *testing.T) {
	c := &wireConn{maxPacket: 40 << 20}
	for i, step := range []struct {
		size int
		seq  byte
		over bool
	}{
		{100, 0, false}, {100, 0, false}, // the same header twice
		{maxPacketPayload, 0, false}, {maxPacketPayload, 1, false}, {maxPacketPayload, 2, true},
		{5, 0, false}, // the next command
		{maxPacketPayload, 0, false}, {0, 1, false}, {maxPacketPayload, 0, false}, {7, 1, false},
	} {
		if got := c.countPacket(step.size, step.seq); got != step.over {
			t.Fatalf("step %d (size %d, seq %d): over %v, want %v (%d bytes counted)", i, step.size, step.seq, got, step.over, c.cmdBytes)
		}
	}
}
