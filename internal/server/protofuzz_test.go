package server

import (
	"bytes"
	"context"
	gosql "database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"lockstep/internal/config"
)

// Fuzzing the protocol layer (vitess, and lockstep's wireConn below it)
// from the outside, over TCP against a server in this process: random
// mutations of a valid handshake (below it) and of valid command packets
// after a login. A panic the protocol layer catches (vitess recovers
// panics in its connection handler and logs them) counts in
// protocolPanics (protolog.go), and go-mysql-server's handler turns a
// panic into an error message "... caught panic ...": either fails the
// test. So does a server that stops answering.
//
// TestProtocolFuzz runs a seeded random-mutation loop for a fixed budget
// (LOCKSTEP_FUZZ_TIME, default 3s; LOCKSTEP_FUZZ_SEED to replay a run);
// FuzzProtocolHandshake and FuzzProtocolCommands are the same targets for
// go test -fuzz.

// fuzzTarget is a server the fuzz inputs are sent to.
type fuzzTarget struct {
	addr string
	bad  atomic.Int64 // answers mentioning a caught panic
	mu   sync.Mutex
	seen []string // the first few of them
}

// greeting dials the target and reads its greeting.
func (ft *fuzzTarget) dial() (*rawConn, error) {
	c, err := dialRaw(ft.addr)
	if err != nil {
		return nil, err
	}
	if _, err := c.read(10 * time.Second); err != nil {
		c.Close()
		return nil, fmt.Errorf("greeting: %w", err)
	}
	return c, nil
}

// drain half-closes c, reads everything the server sends until it closes
// the connection (or 5 s pass), and notes an answer about a caught panic.
func (ft *fuzzTarget) drain(c *rawConn, input []byte) {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var out bytes.Buffer
	_, _ = io.Copy(&out, io.LimitReader(c, 4<<20))
	c.Close()
	if bytes.Contains(out.Bytes(), []byte("caught panic")) {
		ft.bad.Add(1)
		ft.note(fmt.Sprintf("input % x\nanswer %q", input[:min(len(input), 256)], out.Bytes()[:min(out.Len(), 512)]))
	}
}

// note keeps one of the first few reports of a bad input.
func (ft *fuzzTarget) note(s string) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if len(ft.seen) < 5 {
		ft.seen = append(ft.seen, s)
	}
}

// handshakeInput sends input in place of the client's part of the
// handshake (after the greeting).
func (ft *fuzzTarget) handshakeInput(input []byte) error {
	c, err := ft.dial()
	if err != nil {
		return err
	}
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Write(input)
	ft.drain(c, input)
	return nil
}

// commandInput logs in and sends input as the client's bytes after it.
func (ft *fuzzTarget) commandInput(input []byte) error {
	c, err := ft.dial()
	if err != nil {
		return err
	}
	if err := c.write(handshakeResponse("root", rawClientCaps|capDeprecateEOF)); err != nil {
		c.Close()
		return err
	}
	if err := c.result(); err != nil {
		c.Close()
		return fmt.Errorf("login: %w", err)
	}
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Write(input)
	ft.drain(c, input)
	return nil
}

// handshakeSeeds are valid client handshakes, as packets.
func handshakeSeeds() [][]byte {
	withDB := handshakeResponse("root", rawClientCaps|capConnectWithDB)
	withDB = append(withDB[:len(withDB)-len("mysql_native_password\x00")], "mysql\x00mysql_native_password\x00"...)
	attrs := append(handshakeResponse("root", rawClientCaps|capConnectAttrs), 12, 3, 'k', 'e', 'y', 7, 'v', 'a', 'l', 'u', 'e', 'x', 'y')
	ssl := binary.LittleEndian.AppendUint32(nil, rawClientCaps|1<<11) // CLIENT_SSL
	ssl = append(binary.LittleEndian.AppendUint32(ssl, 1<<24), 255)
	ssl = append(ssl, make([]byte, 23)...)
	return [][]byte{
		rawPacket(1, handshakeResponse("root", rawClientCaps)),
		rawPacket(1, handshakeResponse("nobody", rawClientCaps)),
		rawPacket(1, withDB),
		rawPacket(1, attrs),
		rawPacket(1, handshakeResponse("root", capProtocol41|capSecureConnection)),
		cat(rawPacket(1, handshakeResponse("root", rawClientCaps&^capPluginAuth)), rawPacket(3, nil)),
		cat(rawPacket(1, ssl), []byte{0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00}),
	}
}

// commandSeeds are valid commands after a login, each a few packets: a
// prepared statement's whole life, the other commands.
func commandSeeds() [][]byte {
	cmd := func(payload ...[]byte) []byte { return rawPacket(0, bytes.Join(payload, nil)) }
	b := func(s string) []byte { return []byte(s) }
	u32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	u64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	prepare := cmd([]byte{0x16}, b("SELECT ?, CONCAT(?, 'x')"))
	exec := cmd([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0, 1, 8, 0, 253, 0}, []byte{42, 0, 0, 0, 0, 0, 0, 0}, []byte{3}, b("abc"))
	execCursor := cmd([]byte{0x17}, u32(1), []byte{1}, u32(1), []byte{0, 1, 8, 0, 253, 0}, []byte{1, 0, 0, 0, 0, 0, 0, 0}, []byte{1}, b("a"))
	longData := cmd([]byte{0x18}, u32(1), []byte{1, 0}, b("chunk"))
	return [][]byte{
		cmd([]byte{0x03}, b("SELECT 1")),
		cmd([]byte{0x03}, b("SELECT 1; SELECT 2")),
		cmd([]byte{0x0e}),
		cmd([]byte{0x02}, b("mysql")),
		cmd([]byte{0x04}, b("user\x00")),
		cmd([]byte{0x09}), // COM_STATISTICS
		cmd([]byte{0x07, 0x00}),
		cmd([]byte{0x1b, 0x00, 0x00}),
		cmd([]byte{0x1f}),
		cat(prepare, exec),
		cat(prepare, exec, cmd([]byte{0x1a}, u32(1)), exec, cmd([]byte{0x19}, u32(1))),
		cat(prepare, longData, exec),
		cat(prepare, execCursor, cmd([]byte{0x1c}, u32(1), u32(10)), exec),
		cat(cmd([]byte{0x16}, b("SELECT 1")), cmd([]byte{0x17}, u32(1), []byte{0}, u32(1))),
		cat(cmd([]byte{0x16}, b("SELECT ? FOR SHARE")), cmd([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0, 1, 8, 0}, u32(1), u32(0))),
		cmd([]byte{0x1a}, u32(1)),
		cmd([]byte{0x01}),
		// every parameter type vitess decodes, NULL among them
		cat(cmd([]byte{0x16}, b("SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?")),
			cmd([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0x02, 0x00}, []byte{1},
				[]byte{1, 0, 2, 0, 3, 0, 8, 0, 4, 0, 5, 0, 246, 0, 10, 0, 12, 0, 11, 0},
				[]byte{7, 0}, u32(9), u32(0), []byte{0, 0, 0x80, 0x3f}, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f},
				[]byte{4}, b("1.50"), []byte{4, 0xe8, 0x07, 1, 2}, []byte{7, 0xe8, 0x07, 1, 2, 3, 4, 5}, []byte{8, 0, 1, 0, 0, 0, 2, 3, 4})),
		cmd([]byte{0x11}, b("root\x00\x00\x00")), // COM_CHANGE_USER
		cmd([]byte{0x12}, u32(4), []byte{0, 0}, u32(1), b("binlog.000001")),
		cmd([]byte{0x15}, u32(2), []byte{0}, []byte{0}, []byte{0}, []byte{0xea, 0x0c}, u32(0), u32(1)),
		cmd([]byte{0x1e}, []byte{0, 0}, u32(1), u32(0), u64(4), u32(0)),
		cat(cmd([]byte{0x03}, b("LOAD DATA LOCAL INFILE 'f' INTO TABLE d.t")), rawPacket(2, b("1\n2\n")), rawPacket(3, nil), cmd([]byte{0x0e})),
	}
}

// mutate changes a copy of in at random: bytes flipped, set, inserted,
// deleted or repeated, packet lengths and sequence numbers changed, the
// input cut short, or two inputs spliced.
func mutate(r *rand.Rand, in []byte, other []byte) []byte {
	out := append([]byte(nil), in...)
	for n := 1 + r.IntN(4); n > 0; n-- {
		if len(out) == 0 {
			out = append(out, byte(r.IntN(256)))
			continue
		}
		i := r.IntN(len(out))
		switch r.IntN(10) {
		case 0:
			out[i] ^= 1 << r.IntN(8)
		case 1:
			out[i] = byte(r.IntN(256))
		case 2:
			out[i] = []byte{0, 1, 0x7f, 0x80, 0xfb, 0xfc, 0xfd, 0xfe, 0xff}[r.IntN(9)]
		case 3:
			ins := make([]byte, 1+r.IntN(8))
			for k := range ins {
				ins[k] = byte(r.IntN(256))
			}
			out = append(out[:i], append(ins, out[i:]...)...)
		case 4:
			j := min(len(out), i+1+r.IntN(8))
			out = append(out[:i], out[j:]...)
		case 5:
			out = out[:i]
		case 6:
			j := min(len(out), i+1+r.IntN(16))
			out = append(out[:j], append(append([]byte(nil), out[i:j]...), out[j:]...)...)
		case 7: // a packet header: its length or sequence number
			at := headerAt(r, out)
			if at+4 <= len(out) {
				if r.IntN(2) == 0 {
					out[at+3] = byte(r.IntN(5))
				} else {
					n := []int{0, 1, 2, 5, 0xffffff, r.IntN(64), int(out[at]) + 1, max(0, int(out[at])-1)}[r.IntN(8)]
					out[at], out[at+1], out[at+2] = byte(n), byte(n>>8), byte(n>>16)
				}
			}
		case 8:
			if len(other) > 0 {
				j := r.IntN(len(other))
				out = append(out[:i], other[j:]...)
			}
		case 9: // an empty or one-byte packet
			p := rawPacket(byte(r.IntN(3)), nil)
			if r.IntN(2) == 0 {
				p = rawPacket(0, []byte{byte(r.IntN(0x22))})
			}
			at := headerAt(r, out)
			out = append(out[:at], append(p, out[at:]...)...)
		}
	}
	return out
}

// headerAt is the offset of a packet header in a stream of whole packets
// (the stream's start if it is not one).
func headerAt(r *rand.Rand, b []byte) int {
	var at []int
	for i := 0; i+4 <= len(b); {
		at = append(at, i)
		i += 4 + (int(b[i]) | int(b[i+1])<<8 | int(b[i+2])<<16)
	}
	if len(at) == 0 {
		return 0
	}
	return at[r.IntN(len(at))]
}

// startFuzzTarget starts a server for tb's fuzzing, stopped when tb ends
// (a native fuzz target shares one across its inputs).
func startFuzzTarget(tb testing.TB) *fuzzTarget {
	tb.Helper()
	cfg := config.Default()
	cfg.Datadir = tb.TempDir()
	cfg.Port = 0
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, func(addr string) { ready <- addr }) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			tb.Errorf("server did not stop within 30s")
		}
	})
	select {
	case addr := <-ready:
		db, err := gosql.Open("mysql", "root@tcp("+addr+")/")
		if err != nil {
			tb.Fatal(err)
		}
		defer db.Close()
		for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (a INT)", "SET GLOBAL local_infile = ON"} {
			if _, err := db.Exec(q); err != nil {
				tb.Fatalf("%s: %v", q, err)
			}
		}
		return &fuzzTarget{addr: addr}
	case err := <-done:
		tb.Fatalf("server did not start: %v", err)
	case <-time.After(60 * time.Second):
		tb.Fatal("server did not start within 60s")
	}
	return nil
}

// panicSites collects where the panics vitess logs were raised (the
// first frame outside the runtime), for the test's report.
type panicSites struct {
	mu    sync.Mutex
	sites map[string]int
}

func (h *panicSites) Levels() []logrus.Level { return []logrus.Level{logrus.ErrorLevel} }

func (h *panicSites) Fire(e *logrus.Entry) error {
	if !strings.HasPrefix(e.Message, panicPrefix) {
		return nil
	}
	// The panic's value and the first frames in go-mysql-server, vitess
	// or lockstep (tb.Stack: "file:line (pc)" then "\tfunction: source").
	lines := strings.Split(e.Message, "\n")
	site := lines[min(1, len(lines)-1)]
	frames := 0
	for i := 2; i+1 < len(lines) && frames < 6; i++ {
		if strings.HasPrefix(lines[i], "\t") || strings.Contains(lines[i], "/runtime/") || strings.Contains(lines[i], "/usr/local/go/") {
			continue
		}
		if strings.Contains(lines[i], "dolthub") || strings.Contains(lines[i], "lockstep") {
			f := lines[i]
			if k := strings.LastIndex(f, "/"); k >= 0 {
				f = f[k+1:]
			}
			site += "\n      " + f + strings.TrimPrefix(lines[i+1], "\t")
			frames++
		}
	}
	h.mu.Lock()
	h.sites[site]++
	h.mu.Unlock()
	return nil
}

var fuzzPanics = func() *panicSites {
	h := &panicSites{sites: map[string]int{}}
	logrus.AddHook(h)
	return h
}()

func (h *panicSites) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for s, n := range h.sites {
		fmt.Fprintf(&b, "\n  %d× %s", n, s)
	}
	return b.String()
}

// checkFuzz fails t if the protocol layer caught a panic since before
// (protocolPanics) or an answer reported one, and checks that the server
// still answers.
func (ft *fuzzTarget) check(t *testing.T, before int64) {
	t.Helper()
	if n := protocolPanics.Load() - before; n > 0 {
		t.Errorf("the protocol layer caught %d panics:%s", n, fuzzPanics)
	}
	if n := ft.bad.Load(); n > 0 {
		t.Errorf("%d answers reported a caught panic", n)
	}
	ft.mu.Lock()
	for _, s := range ft.seen {
		t.Log(s)
	}
	ft.mu.Unlock()
	c, err := dialRaw(ft.addr)
	if err != nil {
		t.Fatalf("server gone: %v", err)
	}
	defer c.Close()
	if err := c.login("root"); err != nil {
		t.Fatalf("login after fuzzing: %v", err)
	}
}

func fuzzBudget(t *testing.T) (time.Duration, uint64) {
	budget := 3 * time.Second
	if v := os.Getenv("LOCKSTEP_FUZZ_TIME"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("LOCKSTEP_FUZZ_TIME: %v", err)
		}
		budget = d
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("LOCKSTEP_FUZZ_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("LOCKSTEP_FUZZ_SEED: %v", err)
		}
		seed = s
	}
	return budget, seed
}

// TestProtocolFuzz sends randomly mutated handshakes and commands for a
// fixed time; no panic may be caught and the server must keep answering.
func TestProtocolFuzz(t *testing.T) {
	budget, seed := fuzzBudget(t)
	t.Logf("seed %d (LOCKSTEP_FUZZ_SEED=%d replays it), budget %v", seed, seed, budget)
	ft := startFuzzTarget(t)
	before := protocolPanics.Load()
	hs, cmds := handshakeSeeds(), commandSeeds()
	deadline := time.Now().Add(budget)
	const workers = 4
	var wg sync.WaitGroup
	var runs, fails atomic.Int64
	for w := 0; w < workers; w++ {
		r := rand.New(rand.NewPCG(seed, uint64(w)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				var err error
				var in []byte
				panics := protocolPanics.Load()
				kind := "handshake"
				if r.IntN(3) == 0 {
					in = mutate(r, hs[r.IntN(len(hs))], hs[r.IntN(len(hs))])
					err = ft.handshakeInput(noShutdown(in))
				} else {
					kind = "commands"
					seq := cmds[r.IntN(len(cmds))]
					if r.IntN(3) == 0 {
						seq = cat(seq, cmds[r.IntN(len(cmds))])
					}
					in = seq
					if r.IntN(8) != 0 {
						in = mutate(r, seq, cmds[r.IntN(len(cmds))])
					}
					if raceEnabled {
						in = noCursors(in) // see TestProtocolGuardCursor
					}
					err = ft.commandInput(noShutdown(in))
				}
				if protocolPanics.Load() != panics {
					// (or another worker's input, running at the same time)
					ft.note(fmt.Sprintf("a panic during %s input % x", kind, in[:min(len(in), 512)]))
				}
				runs.Add(1)
				if err != nil {
					fails.Add(1)
					t.Logf("fuzz run: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d inputs", runs.Load())
	if f := fails.Load(); f > 0 {
		t.Errorf("%d of %d runs could not connect or log in", f, runs.Load())
	}
	ft.check(t, before)
}

// FuzzProtocolHandshake: the client's side of the handshake.
func FuzzProtocolHandshake(f *testing.F) {
	for _, s := range handshakeSeeds() {
		f.Add(s)
	}
	ft := startFuzzTarget(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		before := protocolPanics.Load()
		if err := ft.handshakeInput(noShutdown(in)); err != nil {
			t.Fatal(err)
		}
		ft.check(t, before)
	})
}

// FuzzProtocolCommands: the client's bytes after a login.
func FuzzProtocolCommands(f *testing.F) {
	for _, s := range commandSeeds() {
		f.Add(s)
	}
	ft := startFuzzTarget(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		before := protocolPanics.Load()
		if raceEnabled {
			in = noCursors(in)
		}
		if err := ft.commandInput(noShutdown(in)); err != nil {
			t.Fatal(err)
		}
		ft.check(t, before)
	})
}

// noCursors clears the cursor flags of the COM_STMT_EXECUTE packets of a
// raw stream.
func noCursors(in []byte) []byte {
	out := append([]byte(nil), in...)
	for i := 0; i+4 < len(out); {
		size := int(out[i]) | int(out[i+1])<<8 | int(out[i+2])<<16
		if out[i+3] == 0 && out[i+4] == 0x17 && size >= 6 && i+4+6 <= len(out) {
			out[i+4+5] = 0
		}
		i += 4 + size
	}
	return out
}

// noShutdown turns every COM_SHUTDOWN (0x08) command packet of a raw
// stream into COM_PING: root may stop the server (shutdown.go), which
// would end the fuzzing.
func noShutdown(in []byte) []byte {
	out := append([]byte(nil), in...)
	for i := 0; i+4 < len(out); {
		size := int(out[i]) | int(out[i+1])<<8 | int(out[i+2])<<16
		if out[i+3] == 0 && out[i+4] == 0x08 {
			out[i+4] = 0x0e
		}
		i += 4 + size
	}
	return out
}
