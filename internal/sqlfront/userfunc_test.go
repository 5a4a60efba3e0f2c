package sqlfront

import (
	"net"
	"testing"
)

func TestClientHost(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}, "localhost"},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 1}, "localhost"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 33}, "localhost"},
		{&net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 4000}, "10.1.2.3"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8::1"), Port: 9}, "2001:db8::1"},
		{&net.UnixAddr{Name: "/tmp/s.sock", Net: "unix"}, "localhost"},
	} {
		if got := ClientHost(tc.addr); got != tc.want {
			t.Errorf("ClientHost(%v) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
