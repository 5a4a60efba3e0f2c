package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// TLS is ended in wireConn, below the protocol layer, not by the protocol
// layer itself: wireConn answers COM_STATISTICS and prepared executes
// and fixes OK packets by reading and writing the plain packet stream, and
// when the protocol layer (vitess) switched to TLS it did so above
// wireConn, which then saw only ciphertext (`mysqladmin --ssl status`
// answered "command handling not implemented yet: 9").
//
// The protocol layer is given no TLS configuration; wireConn offers TLS
// and takes it up:
//
//  1. The greeting (sequence 0) goes out with CLIENT_SSL added to its
//     capability flags.
//  2. A client that wants TLS sends an SSLRequest (sequence 1, 32 bytes,
//     CLIENT_SSL set) and starts the TLS handshake. wireConn keeps that
//     packet from the protocol layer and does the handshake; from then on
//     it reads and writes through the TLS connection.
//  3. The client's handshake response follows with sequence 2, where the
//     protocol layer, which never saw the SSLRequest, expects 1. Until the
//     handshake ends (the server's OK or ERR packet), every packet from the
//     client is handed on with its sequence number one lower and every
//     packet to it goes out one higher.
//  4. The protocol layer decides that an account needs a secure connection
//     (caching_sha2_password's full authentication, clear-text passwords)
//     from the CLIENT_SSL bit of the connection's capabilities, which it
//     would set itself on its own TLS switch: the auth methods set it
//     (markTLS, called before the protocol layer looks at it, auth.go).
//
// What the protocol layer's own TLS had and this has not: client
// certificates are not passed up (mysql.Conn.GetTLSClientCerts is empty;
// go-mysql-server's account checks ignore them anyway).

// tlsHandshakeTimeout bounds the TLS handshake (MySQL's connect_timeout
// default).
const tlsHandshakeTimeout = 10 * time.Second

// handshakeStep is where the connection is in the protocol's handshake,
// as far as TLS is concerned.
type handshakeStep int

const (
	stepGreeting handshakeStep = iota // the server's greeting not yet written
	stepRequest                       // the client's first packet not yet read
	stepShifted                       // TLS on: sequence numbers shifted until OK/ERR
)

// tlsHandshake is wireConn's state until the handshake is over.
type tlsHandshake struct {
	config *tls.Config
	step   handshakeStep
	out    []byte // the server's bytes of a packet not yet whole
}

// clientSSL is CLIENT_SSL in the lower two bytes of the capability flags.
const clientSSL = mysql.CapabilityClientSSL

// handshakeWrite writes p, the server's bytes during the handshake, packet
// by packet: the greeting offers TLS, and once TLS is on each packet's
// sequence number is one higher. A packet not yet whole waits for the
// rest (the protocol layer writes a header, then its payload).
func (c *wireConn) handshakeWrite(p []byte) (int, error) {
	hs := c.hs
	hs.out = append(hs.out, p...)
	for c.hs != nil && len(hs.out) >= 4 {
		size := int(hs.out[0]) | int(hs.out[1])<<8 | int(hs.out[2])<<16
		if len(hs.out) < 4+size {
			break
		}
		pkt := hs.out[:4+size]
		switch hs.step {
		case stepGreeting:
			offerTLS(pkt[4:])
			hs.step = stepRequest
		case stepShifted:
			pkt[3]++
			if size > 0 && (pkt[4] == mysql.OKPacket || pkt[4] == mysql.ErrPacket) {
				c.hs = nil // the handshake is over
			}
		}
		if _, err := c.conn().Write(pkt); err != nil {
			return 0, err
		}
		hs.out = hs.out[4+size:]
	}
	if c.hs == nil && len(hs.out) > 0 {
		// Bytes after the last handshake packet, in the same write.
		if _, err := c.conn().Write(hs.out); err != nil {
			return 0, err
		}
	}
	if len(hs.out) == 0 {
		hs.out = nil
	}
	return len(p), nil
}

// offerTLS sets CLIENT_SSL in a protocol-10 greeting's capability flags:
// they follow the protocol version, the NUL-terminated server version,
// the 4-byte connection id, 8 bytes of auth data and a filler byte.
func offerTLS(greeting []byte) {
	if len(greeting) == 0 || greeting[0] != 10 {
		return // not a greeting (an error packet)
	}
	for i := 1; i < len(greeting); i++ {
		if greeting[i] == 0 {
			if at := i + 1 + 4 + 8 + 1; at+1 < len(greeting) {
				greeting[at+1] |= byte(clientSSL >> 8)
			}
			return
		}
	}
}

// isSSLRequest reports whether the client's first packet (header
// included) asks for TLS.
func isSSLRequest(pkt []byte) bool {
	if len(pkt) != 4+32 || pkt[3] != 1 {
		return false
	}
	flags := uint32(pkt[4]) | uint32(pkt[5])<<8 | uint32(pkt[6])<<16 | uint32(pkt[7])<<24
	return flags&clientSSL != 0
}

// startTLS does the TLS handshake on the raw connection; early holds the
// client's bytes already read past the SSLRequest (the start of its TLS
// hello).
func (c *wireConn) startTLS(early []byte) error {
	raw := &prefixConn{Conn: c.Conn, early: append([]byte(nil), early...)}
	t := tls.Server(raw, c.hs.config)
	_ = c.Conn.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	if err := t.Handshake(); err != nil {
		return fmt.Errorf("TLS handshake with %s: %w", c.Conn.RemoteAddr(), err)
	}
	_ = c.Conn.SetDeadline(time.Time{})
	c.tls = t
	c.hs.step = stepShifted
	return nil
}

// conn is what wireConn reads the client's bytes from and writes the
// server's to: the TLS connection once there is one.
func (c *wireConn) conn() io.ReadWriter {
	if c.tls != nil {
		return c.tls
	}
	return c.Conn
}

// markTLS tells the protocol layer that c's connection is encrypted, as
// its own TLS switch would (auth.go calls it before the protocol layer
// asks).
func markTLS(c *mysql.Conn) {
	if sc := wireConnOf(c.Conn); sc != nil && sc.tls != nil {
		c.Capabilities |= clientSSL
	}
}

// prefixConn is a connection whose first reads return early.
type prefixConn struct {
	net.Conn
	early []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.early) > 0 {
		n := copy(b, p.early)
		p.early = p.early[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// withTLSStatus wraps a session builder so that a session on a TLS
// connection reports it as MySQL does: SHOW SESSION STATUS's Ssl_version
// ("TLSv1.3") and Ssl_cipher (the cipher suite, in Go's names: TLS 1.3's
// are OpenSSL's too).
func withTLSStatus(build func(context.Context, *mysql.Conn, string) (sql.Session, error)) func(context.Context, *mysql.Conn, string) (sql.Session, error) {
	return func(ctx context.Context, c *mysql.Conn, addr string) (sql.Session, error) {
		s, err := build(ctx, c, addr)
		if err != nil || c == nil {
			return s, err
		}
		if wc := wireConnOf(c.Conn); wc != nil && wc.tls != nil {
			st := wc.tls.ConnectionState()
			sctx := sql.NewEmptyContext()
			_ = s.SetStatusVariable(sctx, "Ssl_version", tlsVersionName(st.Version))
			_ = s.SetStatusVariable(sctx, "Ssl_cipher", tls.CipherSuiteName(st.CipherSuite))
		}
		return s, nil
	}
}

// tlsVersionName is a TLS version as MySQL names it.
func tlsVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "TLSv1.3"
	case tls.VersionTLS12:
		return "TLSv1.2"
	}
	return tls.VersionName(v)
}
