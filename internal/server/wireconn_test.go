package server

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// chunkConn is a net.Conn whose reads return the input chunk by chunk and
// whose writes are recorded.
type chunkConn struct {
	net.Conn
	chunks  [][]byte
	written bytes.Buffer
}

func (c *chunkConn) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

func (c *chunkConn) Write(p []byte) (int, error) { return c.written.Write(p) }

func packet(seq byte, payload ...byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// hookFuncs is a commandHook made of functions (nil: pass the packet).
type hookFuncs struct {
	exec func([]byte) (bool, error)
	prep func([]byte) []byte
}

func (h hookFuncs) execute(p []byte) (bool, error) {
	if h.exec == nil {
		return false, nil
	}
	return h.exec(p)
}

func (h hookFuncs) rewrite(p []byte) []byte {
	if h.prep == nil {
		return nil
	}
	return h.prep(p)
}

// chunked splits in into reads of split bytes (0: one read).
func chunked(in []byte, split int) [][]byte {
	if split == 0 {
		return [][]byte{append([]byte(nil), in...)}
	}
	var chunks [][]byte
	for b := in; len(b) > 0; {
		k := min(split, len(b))
		chunks = append(chunks, append([]byte(nil), b[:k]...))
		b = b[k:]
	}
	return chunks
}

// TestWireConn: whatever way the client's bytes are split into reads, the
// protocol layer gets every byte except the COM_STATISTICS packets, each of
// which is answered once with a sequence-1 packet holding the statistics
// line; a COM_STATISTICS queued behind an unread command is answered only
// once that command's bytes were read; when the server offers no TLS, a
// first packet of an SSLRequest's size is a packet like any other (TLS
// itself: TestWireConnTLS).
func TestWireConn(t *testing.T) {
	handshake := packet(1, bytes.Repeat([]byte{'h'}, 60)...)
	query := packet(0, append([]byte{0x03}, "SELECT 1"...)...)
	stats := packet(0, comStatistics)
	ping := packet(0, 0x0e)
	big := packet(0, append([]byte{0x03}, bytes.Repeat([]byte{'x'}, 9000)...)...)
	sslRequest := packet(1, bytes.Repeat([]byte{0}, 32)...)
	cases := []struct {
		name     string
		in, want []byte
		answers  int
	}{
		{name: "alone", in: cat(handshake, stats), want: handshake, answers: 1},
		{name: "between", in: cat(handshake, query, stats, ping), want: cat(handshake, query, ping), answers: 1},
		{name: "twice", in: cat(handshake, stats, stats, query), want: cat(handshake, query), answers: 2},
		{name: "large packets around", in: cat(handshake, big, stats, big), want: cat(handshake, big, big), answers: 1},
		{name: "a payload byte 0x09 is not a command", in: cat(handshake, packet(0, 0x03, 0x09), packet(0, 0x09, 0x00)), want: cat(handshake, packet(0, 0x03, 0x09), packet(0, 0x09, 0x00))},
		{name: "a 32-byte first packet when TLS is not offered", in: cat(sslRequest, stats, query), want: cat(sslRequest, query), answers: 1},
	}
	for _, tc := range cases {
		for _, split := range []int{0, 1, 2, 3, 4, 5, 7, 4096} {
			chunks := chunked(tc.in, split)
			raw := &chunkConn{chunks: chunks}
			c := &wireConn{Conn: raw, answer: func() string { return "STATS" }}
			got, err := io.ReadAll(readerFunc(c.Read))
			if err != nil {
				t.Fatalf("%s, reads of %d: %v", tc.name, split, err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("%s, reads of %d: protocol layer got %d bytes %q..., want %d bytes", tc.name, split, len(got), head(got), len(tc.want))
			}
			answer := packet(1, []byte("STATS")...)
			if want := bytes.Repeat(answer, tc.answers); !bytes.Equal(raw.written.Bytes(), want) {
				t.Fatalf("%s, reads of %d: wrote %q, want %q", tc.name, split, raw.written.Bytes(), want)
			}
		}
	}
}

// TestWireConnOrder: a COM_STATISTICS pipelined behind a command is not
// answered before the protocol layer has read that command.
func TestWireConnOrder(t *testing.T) {
	query := packet(0, append([]byte{0x03}, "SELECT 1"...)...)
	stats := packet(0, comStatistics)
	raw := &chunkConn{chunks: [][]byte{cat(query, stats)}}
	c := &wireConn{Conn: raw, answer: func() string { return "S" }}
	p := make([]byte, 4)
	if _, err := io.ReadFull(readerFunc(c.Read), p); err != nil {
		t.Fatal(err)
	}
	if raw.written.Len() != 0 {
		t.Fatalf("answered COM_STATISTICS while the query before it was still unread")
	}
	rest, err := io.ReadAll(readerFunc(c.Read))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(p, rest...), query) || raw.written.Len() == 0 {
		t.Fatalf("read %q, wrote %q", append(p, rest...), raw.written.Bytes())
	}
}

func TestStatisticsLine(t *testing.T) {
	line := statisticsLine(time.Now().Add(-10*time.Second), 3, 50)
	for _, want := range []string{"Uptime: 10  ", "Threads: 3  ", "Questions: 50  ", "Queries per second avg: 5.000"} {
		if !strings.Contains(line, want) {
			t.Fatalf("%q lacks %q", line, want)
		}
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func head(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

// TestWireConnExecute: a COM_STMT_EXECUTE the hook answers is taken out of
// the stream whole (whatever the reads' sizes), one it declines passes
// through untouched, one pipelined behind another command is offered to
// the hook only once that command has been read.
func TestWireConnExecute(t *testing.T) {
	handshake := packet(1, bytes.Repeat([]byte{'h'}, 60)...)
	query := packet(0, append([]byte{0x03}, "SELECT 1"...)...)
	mine := packet(0, append([]byte{comStmtExecute, 1, 0, 0, 0, 0, 1, 0, 0, 0}, bytes.Repeat([]byte{'p'}, 300)...)...)
	theirs := packet(0, comStmtExecute, 2, 0, 0, 0, 0, 1, 0, 0, 0)
	sslRequest := packet(1, bytes.Repeat([]byte{0}, 32)...)
	cases := []struct {
		name      string
		in, want  []byte
		answered  int
		unreadYet bool // the hook is called with a command before it unread
	}{
		{name: "answered", in: cat(handshake, mine, query), want: cat(handshake, query), answered: 1},
		{name: "declined", in: cat(handshake, theirs, query), want: cat(handshake, theirs, query)},
		{name: "behind a query", in: cat(handshake, query, mine, mine), want: cat(handshake, query), answered: 2},
		{name: "a 32-byte first packet when TLS is not offered", in: cat(sslRequest, mine), want: sslRequest, answered: 1},
	}
	for _, tc := range cases {
		for _, split := range []int{0, 1, 3, 5, 11, 4096} {
			chunks := chunked(tc.in, split)
			raw := &chunkConn{chunks: chunks}
			c := &wireConn{Conn: raw, answer: func() string { return "S" }}
			handed := 0 // bytes handed to the protocol layer so far
			answered := 0
			c.hook = hookFuncs{exec: func(payload []byte) (bool, error) {
				if payload[1] != 1 {
					return false, nil
				}
				if !bytes.Equal(payload, mine[4:]) {
					t.Fatalf("%s, reads of %d: hook got %d bytes, want the whole packet", tc.name, split, len(payload))
				}
				if want := len(tc.want); tc.name == "behind a query" && handed < len(handshake)+len(query) {
					t.Fatalf("%s, reads of %d: hook called with %d of %d bytes before it handed out", tc.name, split, handed, want)
				}
				answered++
				return true, nil
			}}
			var got []byte
			p := make([]byte, 7)
			for {
				n, err := c.Read(p)
				got = append(got, p[:n]...)
				handed += n
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, tc.want) || answered != tc.answered {
				t.Fatalf("%s, reads of %d: protocol layer got %q, hook answered %d (want %d)", tc.name, split, head(got), answered, tc.answered)
			}
		}
	}
}

// TestWireConnPrepareRewrite: a COM_STMT_PREPARE whose text prep rewrites
// reaches the protocol layer as one packet with the new text and length,
// whatever the reads' sizes; one it leaves alone passes unchanged.
func TestWireConnPrepareRewrite(t *testing.T) {
	handshake := packet(1, bytes.Repeat([]byte{'h'}, 60)...)
	query := packet(0, append([]byte{0x03}, "SELECT 1"...)...)
	prepare := func(q string) []byte { return packet(0, append([]byte{comStmtPrepare}, q...)...) }
	in := cat(handshake, prepare("SELECT v FROM t WHERE id = ? FOR SHARE"), query, prepare("SELECT 2"))
	want := cat(handshake, prepare("SELECT v FROM t WHERE id = ? LOCK IN SHARE MODE"), query, prepare("SELECT 2"))
	for _, split := range []int{0, 1, 3, 5, 11, 4096} {
		chunks := chunked(in, split)
		c := &wireConn{Conn: &chunkConn{chunks: chunks}, answer: func() string { return "S" }}
		c.hook = hookFuncs{prep: func(payload []byte) []byte {
			if q := string(payload[1:]); strings.HasSuffix(q, "FOR SHARE") {
				return append([]byte{comStmtPrepare}, strings.TrimSuffix(q, "FOR SHARE")+"LOCK IN SHARE MODE"...)
			}
			return nil
		}}
		got, err := io.ReadAll(readerFunc(c.Read))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("reads of %d: protocol layer got %q, want %q", split, got, want)
		}
	}
}
