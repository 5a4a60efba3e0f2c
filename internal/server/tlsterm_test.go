package server

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// readPacket reads one protocol packet: its sequence number and payload.
func readPacket(r io.Reader) (byte, []byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	p := make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)
	_, err := io.ReadFull(r, p)
	return h[3], p, err
}

// greetingPayload is a protocol-10 greeting with the given capability
// flags (lower two bytes).
func greetingPayload(caps uint16) []byte {
	p := append([]byte{10}, "8.0.31\x00"...)
	p = append(p, 1, 0, 0, 0)                      // connection id
	p = append(p, bytes.Repeat([]byte{'s'}, 8)...) // auth data
	p = append(p, 0)                               // filler
	p = binary.LittleEndian.AppendUint16(p, caps)
	return append(p, bytes.Repeat([]byte{'r'}, 20)...)
}

// TestWireConnTLS plays both ends of a handshake through wireConn with
// TLS offered: the protocol layer's side (greeting written as a header and
// a payload, sequence numbers as it counts them without an SSLRequest)
// and a client's (SSLRequest, TLS, the rest of the handshake, then
// commands). The greeting reaches the client with CLIENT_SSL; inside TLS
// the protocol layer reads and writes the handshake's packets one sequence
// number lower than the client, and from the first command on both count
// alike; COM_STATISTICS is answered over TLS.
func TestWireConnTLS(t *testing.T) {
	cfg, err := serverTLS(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srvRaw, cliRaw := net.Pipe()
	defer srvRaw.Close()
	defer cliRaw.Close()
	sc := &wireConn{Conn: srvRaw, answer: func() string { return "STATS" }, hs: &tlsHandshake{config: cfg}}

	// The protocol layer.
	type seen struct {
		seq     byte
		payload string
	}
	server := make(chan []seen, 1)
	go func() {
		var got []seen
		defer func() { server <- got }()
		write := func(seq byte, payload []byte) bool {
			n := len(payload)
			if _, err := sc.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}); err != nil {
				return false
			}
			_, err := sc.Write(payload)
			return err == nil
		}
		read := func() bool {
			seq, p, err := readPacket(sc)
			if err != nil {
				got = append(got, seen{payload: "error: " + err.Error()})
				return false
			}
			got = append(got, seen{seq, string(p)})
			return true
		}
		_ = write(0, greetingPayload(0xf7ff)) && // all but CLIENT_SSL
			read() && // the handshake response
			write(2, []byte{0x01, 0x04}) && // more data: the password, please
			read() &&
			write(4, []byte{0x00, 0, 0, 2, 0, 0, 0}) && // OK
			read() && // COM_QUERY
			write(1, []byte{0x00, 0, 0, 2, 0, 0, 0})
	}()

	// The client.
	seq, greeting, err := readPacket(cliRaw)
	if err != nil || seq != 0 {
		t.Fatalf("greeting: seq %d, %v", seq, err)
	}
	caps := binary.LittleEndian.Uint16(greeting[len(greeting)-22:])
	if caps != 0xf7ff|uint16(clientSSL) {
		t.Fatalf("greeting's capability flags %#x: want CLIENT_SSL added and nothing else changed", caps)
	}
	sslReq := make([]byte, 32)
	binary.LittleEndian.PutUint32(sslReq, uint32(clientSSL)|1<<9) // CLIENT_SSL | CLIENT_PROTOCOL_41
	if _, err := cliRaw.Write(packet(1, sslReq...)); err != nil {
		t.Fatal(err)
	}
	cli := tls.Client(cliRaw, &tls.Config{InsecureSkipVerify: true})
	_ = cli.SetDeadline(time.Now().Add(10 * time.Second))
	if err := cli.Handshake(); err != nil {
		t.Fatalf("TLS handshake: %v", err)
	}
	expect := func(wantSeq byte, what string) {
		t.Helper()
		seq, p, err := readPacket(cli)
		if err != nil || seq != wantSeq {
			t.Fatalf("%s: seq %d (want %d), %q, %v", what, seq, wantSeq, p, err)
		}
	}
	mustWrite := func(b []byte) {
		t.Helper()
		if _, err := cli.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(packet(2, []byte("handshake response")...))
	expect(3, "auth more data")
	mustWrite(packet(4, []byte("password\x00")...))
	expect(5, "OK after authentication")
	mustWrite(packet(0, comStatistics))
	if seq, p, err := readPacket(cli); err != nil || seq != 1 || string(p) != "STATS" {
		t.Fatalf("COM_STATISTICS over TLS: seq %d, %q, %v", seq, p, err)
	}
	mustWrite(packet(0, append([]byte{0x03}, "SELECT 1"...)...))
	expect(1, "a query's response")

	got := <-server
	want := []seen{{1, "handshake response"}, {3, "password\x00"}, {0, "\x03SELECT 1"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("protocol layer read %v, want %v", got, want)
	}
	if sc.hs != nil || sc.tls == nil {
		t.Fatalf("after the handshake: hs %v, tls %v", sc.hs, sc.tls)
	}
}

// TestWireConnTLSPlain: with TLS offered, a client that does not ask for
// it goes on in the clear, with sequence numbers untouched.
func TestWireConnTLSPlain(t *testing.T) {
	cfg, err := serverTLS(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	response := packet(1, bytes.Repeat([]byte{'h'}, 60)...)
	query := packet(0, append([]byte{0x03}, "SELECT 1"...)...)
	raw := &chunkConn{chunks: [][]byte{cat(response, packet(0, comStatistics), query)}}
	sc := &wireConn{Conn: raw, answer: func() string { return "S" }, hs: &tlsHandshake{config: cfg}}
	if _, err := sc.Write(packet(0, greetingPayload(0xf7ff)...)); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(readerFunc(sc.Read))
	if err != nil || !bytes.Equal(got, cat(response, query)) {
		t.Fatalf("read %q, %v", got, err)
	}
	if _, err := sc.Write(packet(2, 0x00, 0, 0, 2, 0)); err != nil {
		t.Fatal(err)
	}
	w := raw.written.Bytes()
	if !bytes.Contains(w, packet(1, 'S')) || !bytes.HasSuffix(w, packet(2, 0x00, 0, 0, 2, 0)) || sc.hs != nil || sc.tls != nil {
		t.Fatalf("wrote %q; hs %v tls %v", w, sc.hs, sc.tls)
	}
}

// TestWireConnTLSBadHandshake: a client that asks for TLS and then sends
// something else gets its connection ended with an error naming TLS.
func TestWireConnTLSBadHandshake(t *testing.T) {
	cfg, err := serverTLS(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	sslReq := make([]byte, 32)
	binary.LittleEndian.PutUint32(sslReq, uint32(clientSSL)|1<<9)
	raw := &chunkConn{chunks: [][]byte{cat(packet(1, sslReq...), []byte("not a TLS hello at all"))}}
	sc := &wireConn{Conn: raw, answer: func() string { return "S" }, hs: &tlsHandshake{config: cfg, step: stepRequest}}
	_, err = sc.Read(make([]byte, 16))
	if err == nil || !strings.Contains(err.Error(), "TLS handshake") {
		t.Fatalf("read after a bad TLS hello: %v", err)
	}
}

func (c *chunkConn) SetDeadline(time.Time) error { return nil }
func (c *chunkConn) RemoteAddr() net.Addr        { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
