package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// A MySQL client written out byte by byte, for the tests that must send
// what no driver sends: idle and slow handshakes, malformed packets.

// Client capability flags (the protocol's CLIENT_*).
const (
	capLongPassword     = 1
	capConnectWithDB    = 1 << 3
	capProtocol41       = 1 << 9
	capTransactions     = 1 << 13
	capSecureConnection = 1 << 15
	capMultiStatements  = 1 << 16
	capMultiResults     = 1 << 17
	capPluginAuth       = 1 << 19
	capConnectAttrs     = 1 << 20
	capPluginAuthLenenc = 1 << 21
	capDeprecateEOF     = 1 << 24

	rawClientCaps = capLongPassword | capProtocol41 | capTransactions | capSecureConnection |
		capMultiStatements | capMultiResults | capPluginAuth | capPluginAuthLenenc
)

// rawConn is a client connection read and written as packets.
type rawConn struct {
	net.Conn
	seq byte // the next sequence number to send
}

func dialRaw(addr string) (*rawConn, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &rawConn{Conn: c}, nil
}

// read reads one packet's payload, with a deadline of d from now.
func (c *rawConn) read(d time.Duration) ([]byte, error) {
	_ = c.SetReadDeadline(time.Now().Add(d))
	seq, p, err := readPacket(c)
	if err == nil {
		c.seq = seq + 1
	}
	return p, err
}

// write sends payload as one packet with the next sequence number.
func (c *rawConn) write(payload []byte) error {
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.Write(rawPacket(c.seq, payload))
	c.seq++
	return err
}

// command sends payload as a new command (sequence 0).
func (c *rawConn) command(payload []byte) error {
	c.seq = 0
	return c.write(payload)
}

func rawPacket(seq byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

// handshakeResponse is a protocol-41 handshake response for user with an
// empty password (mysql_native_password).
func handshakeResponse(user string, caps uint32) []byte {
	p := binary.LittleEndian.AppendUint32(nil, caps)
	p = binary.LittleEndian.AppendUint32(p, 1<<24) // max packet
	p = append(p, 255)                             // utf8mb4_0900_ai_ci
	p = append(p, make([]byte, 23)...)
	p = append(p, user...)
	p = append(p, 0)
	p = append(p, 0) // auth response: none (lenenc / 1-byte length)
	p = append(p, "mysql_native_password\x00"...)
	return p
}

// login reads the greeting and logs in as user without a password; the
// error is the server's ERR packet (as rawError) or an I/O error.
func (c *rawConn) login(user string) error {
	g, err := c.read(10 * time.Second)
	if err != nil {
		return fmt.Errorf("greeting: %w", err)
	}
	if len(g) > 0 && g[0] == 0xff {
		return parseRawError(g)
	}
	if err := c.write(handshakeResponse(user, rawClientCaps)); err != nil {
		return err
	}
	return c.result()
}

// result reads the answer to the handshake or a command: nil for OK, a
// rawError for ERR; an auth switch is answered with an empty response.
func (c *rawConn) result() error {
	for {
		p, err := c.read(10 * time.Second)
		if err != nil {
			return err
		}
		switch {
		case len(p) > 0 && p[0] == 0x00:
			return nil
		case len(p) > 0 && p[0] == 0xff:
			return parseRawError(p)
		case len(p) > 0 && p[0] == 0xfe: // auth switch: an empty password
			if err := c.write(nil); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unexpected packet % x", p[:min(len(p), 16)])
		}
	}
}

// rawError is an ERR packet.
type rawError struct {
	num   uint16
	state string
	msg   string
}

func (e *rawError) Error() string { return fmt.Sprintf("ERROR %d (%s): %s", e.num, e.state, e.msg) }

func parseRawError(p []byte) error {
	if len(p) < 3 || p[0] != 0xff {
		return fmt.Errorf("not an ERR packet: % x", p)
	}
	e := &rawError{num: binary.LittleEndian.Uint16(p[1:])}
	rest := p[3:]
	if len(rest) >= 6 && rest[0] == '#' {
		e.state, rest = string(rest[1:6]), rest[6:]
	}
	e.msg = string(rest)
	return e
}

// closedWithin reports whether the server closes c within d, reading and
// discarding what it sends until then.
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	if err == nil {
		return true // EOF
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true // reset
}
