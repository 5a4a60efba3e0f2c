package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	vtlog "github.com/dolthub/vitess/go/vt/log"
	"github.com/sirupsen/logrus"
)

// loginRaw opens a raw connection to addr logged in as root (EOF packets
// on: no CLIENT_DEPRECATE_EOF).
func loginRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := dialRaw(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.login("root"); err != nil {
		t.Fatalf("login: %v", err)
	}
	return c
}

// expect reads one packet and checks it: "OK", "EOF", "ANY" (not an
// error), or an error number.
func (c *rawConn) expect(t *testing.T, what string, want any) []byte {
	t.Helper()
	p, err := c.read(10 * time.Second)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	switch want {
	case "OK":
		if len(p) == 0 || p[0] != 0x00 {
			t.Fatalf("%s: % x, want OK (%v)", what, p[:min(len(p), 64)], parseRawError(p))
		}
	case "ANY": // anything but an error
		if len(p) > 0 && p[0] == 0xff {
			t.Fatalf("%s: %v", what, parseRawError(p))
		}
	case "EOF":
		if len(p) == 0 || p[0] != 0xfe || len(p) >= 9 {
			t.Fatalf("%s: % x, want EOF", what, p[:min(len(p), 64)])
		}
	default:
		var re *rawError
		if err := parseRawError(p); !errors.As(err, &re) || int(re.num) != want.(int) {
			t.Fatalf("%s: % x (%v), want error %v", what, p[:min(len(p), 64)], err, want)
		}
	}
	return p
}

// TestProtocolGuards: the packets that made the protocol layer panic
// (or hang, or drop the connection without a word) found by
// TestProtocolFuzz, each answered now as MySQL answers it, on a
// connection that stays usable, with no panic caught.
func TestProtocolGuards(t *testing.T) {
	ft := startFuzzTarget(t)
	panics := protocolPanics.Load()
	u32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	ping := func(c *rawConn, what string) {
		t.Helper()
		if err := c.command([]byte{0x0e}); err != nil {
			t.Fatal(err)
		}
		c.expect(t, what+", then COM_PING", "OK")
	}

	c := loginRaw(t, ft.addr)
	// COM_RESET_CONNECTION as the first command (go-mysql-server had no
	// session yet to reset).
	_ = c.command([]byte{0x1f})
	c.expect(t, "COM_RESET_CONNECTION first", "OK")
	_ = c.command(nil)
	c.expect(t, "an empty command", mysql.ERUnknownComError)
	ping(c, "an empty command")
	_ = c.command(append([]byte{0x1a}, u32(99)...))
	c.expect(t, "COM_STMT_RESET of no statement", 1243)
	_ = c.command([]byte{0x1a, 1})
	c.expect(t, "a short COM_STMT_RESET", 1835)
	_ = c.command(append([]byte{0x15}, u32(2)...))
	c.expect(t, "COM_REGISTER_SLAVE", mysql.ERUnknownComError)
	_ = c.command(append([]byte{0x1e, 0, 0}, u32(1)...))
	c.expect(t, "COM_BINLOG_DUMP_GTID", mysql.ERUnknownComError)
	ping(c, "the replication commands")

	// A string parameter whose length is 2^63 or more: vitess allocated
	// a slice of negative length. Any parameter longer than the packet
	// is refused the same way.
	_ = c.command(append([]byte{0x16}, "SELECT ?, CONCAT(?, 'x')"...))
	prep := c.expect(t, "COM_STMT_PREPARE", "OK")
	id := binary.LittleEndian.Uint32(prep[1:])
	for _, what := range []string{"a parameter", "a parameter", "EOF", "a column", "a column", "EOF"} {
		c.expect(t, what, map[bool]any{true: "EOF", false: "ANY"}[what == "EOF"])
	}
	exec := func(args ...byte) []byte {
		p := append(append([]byte{0x17}, u32(id)...), 0)
		p = append(append(p, u32(1)...), 0, 1, 0xfd, 0, 0xfd, 0) // no NULLs, types: two VAR_STRING
		return append(p, args...)
	}
	for _, tc := range []struct {
		what string
		args []byte
		want any
	}{
		{"a length of 2^63", cat([]byte{1, 'a', 0xfe}, u32(0), u32(0x80000000), []byte("abc")), 1835},
		{"a length of 2^64-1", cat([]byte{1, 'a', 0xfe}, u32(0xffffffff), u32(0xffffffff), []byte("abc")), 1835},
		{"a length past the packet", []byte{1, 'a', 4, 'a', 'b', 'c'}, 1835},
		{"a cut length", []byte{1, 'a', 0xfc, 1}, 1835},
		{"a missing parameter", []byte{1, 'a'}, 1835},
		{"both parameters", []byte{1, 'a', 3, 'a', 'b', 'c'}, "ANY"},
	} {
		_ = c.command(exec(tc.args...))
		c.expect(t, "COM_STMT_EXECUTE with "+tc.what, tc.want)
		if tc.want == "ANY" {
			c.expect(t, "a column", "ANY")
			c.expect(t, "a column", "ANY")
			c.expect(t, "the columns' end", "EOF")
			c.expect(t, "the row", "ANY")
			c.expect(t, "the rows' end", "EOF")
		}
		ping(c, tc.what)
	}

	// A command sent before the login's OK waits for it.
	c2, err := dialRaw(ft.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.read(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	_, _ = c2.Write(cat(rawPacket(1, handshakeResponse("root", rawClientCaps)), rawPacket(0, nil), rawPacket(0, []byte{0x0e})))
	c2.expect(t, "the login, with commands after it", "OK")
	c2.expect(t, "an empty command sent with the login", mysql.ERUnknownComError)
	c2.expect(t, "COM_PING sent with the login", "OK")

	if n := protocolPanics.Load() - panics; n != 0 {
		t.Errorf("%d panics caught in the protocol layer:%s", n, fuzzPanics)
	}
}

// TestProtocolGuardCursor: with a cursor open, a second execute is
// refused (vitess keeps one per connection; its own refusal panicked),
// and the cursor still fetches.
func TestProtocolGuardCursor(t *testing.T) {
	if raceEnabled {
		// vitess runs a cursor's statement on a goroutine of its own,
		// and handler.syncInTrans sets the connection's status flags from
		// it while vitess reads them: a race that is older than the guard.
		t.Skip("a known data race in the cursor path (handler.syncInTrans)")
	}
	ft := startFuzzTarget(t)
	panics := protocolPanics.Load()
	u32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	c := loginRaw(t, ft.addr)
	_ = c.command(append([]byte{0x16}, "SELECT a FROM d.t"...))
	prep := c.expect(t, "COM_STMT_PREPARE", "OK")
	id := binary.LittleEndian.Uint32(prep[1:])
	c.expect(t, "the column", "ANY")
	c.expect(t, "after the columns", "EOF")
	exec := append(append([]byte{0x17}, u32(id)...), 1) // CURSOR_TYPE_READ_ONLY
	exec = append(exec, u32(1)...)
	_ = c.command(exec)
	c.expect(t, "the cursor's column count", "ANY")
	c.expect(t, "the cursor's column", "ANY")
	c.expect(t, "the cursor opened", "EOF")
	_ = c.command(exec)
	c.expect(t, "COM_STMT_EXECUTE with a cursor open", mysql.ERUnknownComError)
	_ = c.command(append(append([]byte{0x1c}, u32(id)...), u32(100)...))
	c.expect(t, "COM_STMT_FETCH", "EOF") // d.t is empty
	_ = c.command(append([]byte{0x1a}, u32(id)...))
	c.expect(t, "COM_STMT_RESET", "OK")

	_ = c.command([]byte{0x0e})
	c.expect(t, "COM_PING after the cursor", "OK")
	if n := protocolPanics.Load() - panics; n != 0 {
		t.Errorf("%d panics caught in the protocol layer:%s", n, fuzzPanics)
	}
}

// TestLocalInfileSequence: the packets of a LOAD DATA LOCAL file are the
// file's whatever their sequence numbers (254 of them put the empty one
// that ends the file at sequence number 0, where a command starts) and
// are taken as the file's only once the server has asked for it.
func TestLocalInfileSequence(t *testing.T) {
	ft := startFuzzTarget(t)
	c := loginRaw(t, ft.addr)
	_ = c.command(append([]byte{0x03}, "LOAD DATA LOCAL INFILE 'f' INTO TABLE d.t"...))
	if p := c.expect(t, "LOAD DATA LOCAL", "ANY"); p[0] != 0xfb {
		t.Fatalf("LOAD DATA LOCAL: % x, want a file request", p)
	}
	for i := 0; i < 254; i++ {
		_ = c.write([]byte(fmt.Sprintf("%d\n", i)))
	}
	if c.seq != 0 {
		t.Fatalf("the file's end goes with sequence number %d, want 0", c.seq)
	}
	_ = c.write(nil)
	ok := c.expect(t, "the file's end", "OK")
	if n, _, _ := readLenEncInt(ok, 1); n != 254 {
		t.Errorf("LOAD DATA LOCAL: % x, want 254 rows", ok)
	}

	// The file sent with the statement, before the server asks for it,
	// and cut short by the end of the stream: the protocol layer read
	// the cut packet's header as a command's and its body as the file's,
	// and panicked writing the error.
	panics := protocolPanics.Load()
	in := cat(rawPacket(0, append([]byte{0x03}, "LOAD DATA LOCAL INFILE 'f' INTO TABLE d.t"...)),
		rawPacket(2, []byte("1\n2\n")), []byte{8, 0, 0, 3, 1, 0})
	if err := ft.commandInput(in); err != nil {
		t.Fatal(err)
	}

	// A file packet out of order: vitess failed the statement and read
	// the packet's payload as the next command's header (an empty
	// command: it panicked). MySQL answers 1156 and ends the connection.
	c = loginRaw(t, ft.addr)
	_ = c.command(append([]byte{0x03}, "LOAD DATA LOCAL INFILE 'f' INTO TABLE d.t"...))
	if p := c.expect(t, "LOAD DATA LOCAL", "ANY"); p[0] != 0xfb {
		t.Fatalf("LOAD DATA LOCAL: % x, want a file request", p)
	}
	_, _ = c.Write(rawPacket(c.seq-1, []byte{0, 0, 0, 0})) // numbered as the request
	p, err := c.read(10 * time.Second)
	var re *rawError
	if err != nil || !errors.As(parseRawError(p), &re) || re.num != 1156 {
		t.Fatalf("a file packet out of order: % x, %v; want error 1156", p, err)
	}
	if p, err := c.read(10 * time.Second); err == nil {
		t.Fatalf("after 1156 the connection stays open: read % x", p)
	}
	if n := protocolPanics.Load() - panics; n != 0 {
		t.Errorf("%d panics caught in the protocol layer:%s", n, fuzzPanics)
	}
}

// TestMessageEnd: a command sent in several packets (each full one
// followed by another) is found whole, or known to be short or over the
// connection's max_allowed_packet.
func TestMessageEnd(t *testing.T) {
	full := make([]byte, maxPacketPayload)
	two := cat(rawPacket(0, full), rawPacket(1, []byte{7}))
	exact := cat(rawPacket(0, full), rawPacket(1, nil))
	for _, tc := range []struct {
		what  string
		in    []byte
		limit int64
		end   int
		last  byte
		st    int
	}{
		{"one packet", rawPacket(0, []byte{3, 'x'}), 0, 6, 0, messageWhole},
		{"a header cut", []byte{2, 0}, 0, 0, 0, messageShort},
		{"a payload cut", []byte{2, 0, 0, 0, 3}, 0, 0, 0, messageShort},
		{"two packets", two, 0, len(two), 1, messageWhole},
		{"a full packet and an empty one", exact, 0, len(exact), 1, messageWhole},
		{"the second packet to come", two[:4+maxPacketPayload+2], 0, 0, 0, messageShort},
		{"over the limit", two, maxPacketPayload, 0, 0, messageOver},
	} {
		c := &wireConn{maxPacket: tc.limit}
		end, last, st := c.messageEnd(tc.in)
		if end != tc.end || last != tc.last || st != tc.st {
			t.Errorf("%s: messageEnd = %d, %d, %d; want %d, %d, %d", tc.what, end, last, st, tc.end, tc.last, tc.st)
		}
	}
	c := &wireConn{}
	if p, st := c.message(two); st != messageWhole || len(p) != maxPacketPayload+1 || p[len(p)-1] != 7 {
		t.Errorf("message of two packets: %d bytes, state %d", len(p), st)
	}
}

// TestHandshakeFault: handshake responses vitess cannot read are found
// before it reads them.
func TestHandshakeFault(t *testing.T) {
	good := handshakeResponse("root", rawClientCaps)
	cases := map[string][]byte{
		"empty":                                nil,
		"flags only":                           good[:4],
		"short fixed part":                     good[:20],
		"not 4.1":                              append([]byte{0, 0, 0, 0}, good[4:]...),
		"no NUL after the user name":           good[:len(good)-len("\x00\x00mysql_native_password\x00")],
		"auth response longer than the packet": bytes.Replace(good, []byte("root\x00\x00"), []byte("ro\x00ot\x00\x00"), 1),
		"lenenc auth response of 2^64-1":       bytes.Replace(good, []byte("root\x00\x00"), append([]byte("root\x00\xfe"), bytes.Repeat([]byte{0xff}, 8)...), 1),
		"no plugin name NUL":                   good[:len(good)-1],
	}
	for name, p := range cases {
		if handshakeFault(p) == "" {
			t.Errorf("%s: no fault found", name)
		}
	}
	attrs := append(handshakeResponse("root", rawClientCaps|capConnectAttrs), 3, 1, 'k', 0)
	for name, p := range map[string][]byte{
		"plain":              good,
		"with attributes":    attrs,
		"without plugin":     handshakeResponse("root", rawClientCaps&^capPluginAuth),
		"1-byte auth length": handshakeResponse("root", rawClientCaps&^capPluginAuthLenenc),
	} {
		if f := handshakeFault(p); f != "" {
			t.Errorf("%s: fault %q", name, f)
		}
	}
}

// TestVitessCursorField: the vitess this is built with keeps its cursor
// where vitessCursorOpen looks (an upgrade that moves it fails here).
func TestVitessCursorField(t *testing.T) {
	if vitessCursorField < 0 {
		t.Fatal("mysql.Conn has no cursor field cs: the COM_STMT_EXECUTE guard (protoguard.go) is blind")
	}
	if vitessCursorOpen(&mysql.Conn{}) {
		t.Fatal("a new connection has a cursor open")
	}
	if replicaHandler {
		t.Log("the handler takes the replication commands now: the guard passes them on")
	}
}

// TestCutUserName: user names in 1045 are cut to MySQL's 96 bytes, at a
// character boundary.
func TestCutUserName(t *testing.T) {
	for in, want := range map[string]string{
		"root":                        "root",
		strings.Repeat("a", 200):      strings.Repeat("a", 96),
		strings.Repeat("é", 100):      strings.Repeat("é", 48),
		"a" + strings.Repeat("é", 60): "a" + strings.Repeat("é", 47),
	} {
		if got := cutUserName(in); got != want {
			t.Errorf("cutUserName(%d bytes) = %d bytes, want %d", len(in), len(got), len(want))
		}
	}
}

// TestLogLimit: logrus's output lets logBurst lines through at once and
// logRate a second after, cuts long lines, and reports what it dropped.
func TestLogLimit(t *testing.T) {
	now := time.Unix(0, 0)
	var out bytes.Buffer
	l := &limitedLog{w: &out, now: func() time.Time { return now }}
	for i := 0; i < 1000; i++ {
		_, _ = fmt.Fprintf(l, "line %d\n", i)
	}
	if n := strings.Count(out.String(), "\n"); n != logBurst {
		t.Fatalf("%d lines written of 1000 at once, want %d", n, logBurst)
	}
	now = now.Add(10 * time.Second)
	out.Reset()
	for i := 0; i < 1000; i++ {
		_, _ = fmt.Fprintf(l, "line %d\n", i)
	}
	if !strings.HasPrefix(out.String(), fmt.Sprintf("lockstep: %d log lines dropped", 1000-logBurst)) {
		t.Errorf("after a pause: %.100q, want the count of lines dropped first", out.String())
	}
	if n := strings.Count(out.String(), "line "); n != 10*logRate {
		t.Errorf("%d lines written 10 s later, want %d", n, 10*logRate)
	}
	now = now.Add(time.Hour)
	out.Reset()
	_, _ = l.Write(append(bytes.Repeat([]byte{'u'}, 1<<20), '\n'))
	if out.Len() > maxLogLine+200 || !strings.HasSuffix(out.String(), "... (1048577 bytes)\n") {
		t.Errorf("a 1 MiB line: %d bytes written, ending %q", out.Len(), out.String()[max(0, out.Len()-40):])
	}
}

// TestProtocolPanicsCounted: a panic vitess catches is counted, logged or
// not (the tests above rely on the count).
func TestProtocolPanicsCounted(t *testing.T) {
	before := protocolPanics.Load()
	level := logrus.GetLevel()
	logrus.SetLevel(logrus.PanicLevel) // not logged
	defer logrus.SetLevel(level)
	vtlog.Errorf("mysql_server caught panic:\n%v\n%s", "test", []byte("stack"))
	if protocolPanics.Load() != before+1 {
		t.Fatal("a caught panic was not counted")
	}
}
