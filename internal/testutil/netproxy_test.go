package testutil

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

type lineConn struct {
	net.Conn
	r *bufio.Reader
}

func dialLine(t *testing.T, addr string) *lineConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &lineConn{Conn: c, r: bufio.NewReader(c)}
}

// roundTrip sends line and reads the answer within d.
func (c *lineConn) roundTrip(line string, d time.Duration) (string, error) {
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	return c.read(d)
}

func (c *lineConn) read(d time.Duration) (string, error) {
	c.SetReadDeadline(time.Now().Add(d))
	s, err := c.r.ReadString('\n')
	if err != nil {
		return s, err
	}
	return s[:len(s)-1], nil
}

func TestProxy(t *testing.T) {
	p, err := NewProxy(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	a := dialLine(t, p.Addr)
	if got, err := a.roundTrip("one", 5*time.Second); err != nil || got != "one" {
		t.Fatalf("through the proxy: %q, %v", got, err)
	}

	// Blackhole: nothing comes back, nothing breaks, and what was sent
	// arrives, in order, after Heal.
	p.Blackhole()
	if got, err := a.roundTrip("two", 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("blackholed: got %q, %v; want a read timeout", got, err)
	}
	if _, err := a.Write([]byte("three\n")); err != nil {
		t.Fatalf("a write into the blackhole failed: %v", err)
	}
	b := dialLine(t, p.Addr) // a new connection goes nowhere either
	if got, err := b.roundTrip("new", 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("new connection, blackholed: got %q, %v; want a read timeout", got, err)
	}
	p.Heal()
	for _, want := range []string{"two", "three"} {
		if got, err := a.read(5 * time.Second); err != nil || got != want {
			t.Fatalf("after Heal: %q, %v; want %q", got, err, want)
		}
	}
	if got, err := b.read(5 * time.Second); err != nil || got != "new" {
		t.Fatalf("new connection after Heal: %q, %v", got, err)
	}

	// Cut: live connections end, new ones are closed at once.
	p.Cut()
	if _, err := a.read(5 * time.Second); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a live connection after Cut: %v, want it closed", err)
	}
	c := dialLine(t, p.Addr)
	if got, err := c.roundTrip("cut", 5*time.Second); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a new connection while cut: %q, %v; want it closed", got, err)
	}
	p.Heal()
	d := dialLine(t, p.Addr)
	if got, err := d.roundTrip("healed", 5*time.Second); err != nil || got != "healed" {
		t.Fatalf("after Heal: %q, %v", got, err)
	}
}
