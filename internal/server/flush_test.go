package server

import (
	"bytes"
	"io"
	"net"
	"os/exec"
	"testing"
)

// TestFlush: the FLUSH statements MySQL tools send succeed (go-mysql-server
// refused FLUSH LOGS, FLUSH STATUS, FLUSH LOCAL ... with 1105 "... not
// supported"), an account without RELOAD gets MySQL's 1227, and
// COM_REFRESH (mysqldump --flush-logs, mysqladmin refresh) is answered
// (it was "command handling not implemented yet: 7").
func TestFlush(t *testing.T) {
	s := startInProcess(t, nil)
	for _, q := range []string{
		"FLUSH LOGS", "FLUSH LOCAL LOGS", "FLUSH NO_WRITE_TO_BINLOG LOGS", "FLUSH BINARY LOGS",
		"FLUSH ERROR LOGS", "FLUSH GENERAL LOGS", "FLUSH SLOW LOGS", "FLUSH ENGINE LOGS", "FLUSH RELAY LOGS",
		"FLUSH STATUS", "FLUSH HOSTS", "FLUSH OPTIMIZER_COSTS", "FLUSH USER_RESOURCES",
		"FLUSH TABLES", "FLUSH LOCAL TABLES", "FLUSH PRIVILEGES", "FLUSH /*!40101 LOCAL */ LOGS",
	} {
		if _, err := s.db.Exec(q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	if _, err := s.db.Exec("FLUSH RELAY LOGS FOR CHANNEL 'nope'"); err == nil {
		t.Error("FLUSH RELAY LOGS FOR CHANNEL of a channel that does not exist: no error")
	}
	s.exec(t, "CREATE USER 'lo'@'%' IDENTIFIED BY 'pw'")
	_, err := s.openAs(t, "lo", "pw").Exec("FLUSH LOGS")
	wantErrNum(t, "FLUSH LOGS without RELOAD", err, 1227)

	if bin, err := exec.LookPath("mysqldump"); err == nil {
		host, port, _ := net.SplitHostPort(s.addr)
		s.exec(t, "CREATE DATABASE fl")
		s.exec(t, "CREATE TABLE fl.t (id INT PRIMARY KEY)")
		out, err := exec.Command(bin, "-h"+host, "-P"+port, "-uroot", "--flush-logs", "fl").CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("CREATE TABLE `t`")) {
			t.Errorf("mysqldump --flush-logs: %v\n%s", err, out)
		}
	}
	if bin, err := exec.LookPath("mysqladmin"); err == nil {
		host, port, _ := net.SplitHostPort(s.addr)
		if out, err := exec.Command(bin, "-h"+host, "-P"+port, "-uroot", "refresh").CombinedOutput(); err != nil {
			t.Errorf("mysqladmin refresh: %v\n%s", err, out)
		}
		out, err := exec.Command(bin, "-h"+host, "-P"+port, "-ulo", "-ppw", "refresh").CombinedOutput()
		if err == nil || !bytes.Contains(out, []byte("RELOAD privilege")) {
			t.Errorf("mysqladmin refresh without RELOAD: %v\n%s", err, out)
		}
	}
}

// TestWireConnRefresh: a COM_REFRESH reaches the protocol layer as the
// COM_QUERY of its FLUSH statement, whatever the reads' sizes; the bytes
// around it pass unchanged.
func TestWireConnRefresh(t *testing.T) {
	handshake := packet(1, bytes.Repeat([]byte{'h'}, 60)...)
	query := packet(0, append([]byte{0x03}, "SELECT 1"...)...)
	in := cat(handshake, packet(0, comRefresh, 0x02), query, packet(0, comRefresh, 0x01|0x04))
	want := cat(handshake, packet(0, append([]byte{0x03}, "FLUSH LOGS"...)...), query,
		packet(0, append([]byte{0x03}, "FLUSH PRIVILEGES"...)...))
	for _, split := range []int{0, 1, 3, 5, 6, 11, 4096} {
		c := &wireConn{Conn: &chunkConn{chunks: chunked(in, split)}, answer: func() string { return "S" }}
		got, err := io.ReadAll(readerFunc(c.Read))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("reads of %d: %q, %v", split, got, err)
		}
	}
}
