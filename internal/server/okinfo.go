package server

import (
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// An OK packet's info string ("Rows matched: 1  Changed: 1  Warnings: 0",
// "Statement prepared") is a length-encoded string, as MySQL and MariaDB
// send it. go-mysql-server's protocol layer (vitess) writes a literal '#'
// (35) where the length belongs, whatever the length: the mysql CLI reads
// 35 bytes (past the end of a shorter string: "Received malformed packet";
// a longer one cut), PyMySQL, which takes the rest of the packet, shows
// "#Rows matched: ...". sendOK has the packet written on its own
// (flushing the protocol layer's buffer before and after), and wireConn's
// Write puts the length in place of the '#' as the packet passes.

// sendOK calls send, which hands r to the protocol layer, making the OK
// packet r becomes carry its info string's length.
func (h *handler) sendOK(c *mysql.Conn, r *sqltypes.Result, send func() error) error {
	if r.Info == "" || len(r.Fields) != 0 {
		return send()
	}
	sc := wireConnOf(c.Conn)
	if sc == nil || sc.through {
		return send()
	}
	if err := c.FlushBuffer(); err != nil {
		return err
	}
	sc.okInfo = r.Info
	err := send()
	if ferr := c.FlushBuffer(); err == nil {
		err = ferr
	}
	sc.okInfo = ""
	return err
}

// Write sends the server's bytes; an OK packet with the info string
// sendOK expects goes with the string's length in place of vitess's '#'.
func (c *wireConn) Write(p []byte) (int, error) {
	if err := c.endedErr(); err != nil {
		return 0, err // the stream was refused, its answer the last word
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if f := c.parseDone; f != nil {
		// The first packet after a prepare's parse: vitess writes a
		// packet's header and its payload apart.
		if c.held == nil && len(p) == 4 {
			c.held = append([]byte(nil), p...)
			return len(p), nil
		}
		whole := p
		if c.held != nil {
			whole = append(c.held, p...)
			c.held = nil
		}
		c.parseDone = nil
		if q := f(whole); q != nil {
			whole = q
		}
		if c.swallow.Load() {
			return len(p), nil // answered ahead of vitess (interject)
		}
		c.out.track(whole)
		if _, err := c.conn().Write(whole); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if c.swallow.Load() {
		return len(p), nil // answered ahead of vitess (interject)
	}
	c.out.track(p) // protoguard.go
	if c.hs != nil {
		return c.handshakeWrite(p) // tlsterm.go
	}
	if c.okInfo != "" {
		if q := withInfoLength(p, c.okInfo); q != nil {
			c.okInfo = ""
			if _, err := c.conn().Write(q); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return c.conn().Write(p)
}

// withInfoLength returns p, one whole OK packet ending in '#' and info,
// with the '#' replaced by info's length-encoded length (in place when that
// is one byte, as it is for every info string MySQL writes); nil when p is
// not such a packet.
func withInfoLength(p []byte, info string) []byte {
	if len(p) < 5+1+len(info) || p[4] != 0x00 {
		return nil
	}
	size := int(p[0]) | int(p[1])<<8 | int(p[2])<<16
	at := len(p) - len(info) - 1 // the '#'
	if size != len(p)-4 || p[at] != '#' || string(p[at+1:]) != info {
		return nil
	}
	if len(info) < 251 {
		p[at] = byte(len(info))
		return p
	}
	w := packetWriter{seq: p[3]}
	w.begin()
	w.b = append(w.b, p[4:at]...)
	w.lenEncString(info)
	w.end()
	return w.b
}
