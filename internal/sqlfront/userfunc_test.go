package sqlfront

import "testing"

func TestClientHostOf(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:5000": "localhost", "127.0.0.2:1": "localhost", "[::1]:33": "localhost",
		"10.1.2.3:4000": "10.1.2.3", "[2001:db8::1]:9": "2001:db8::1", "weird": "weird",
	} {
		if got := clientHostOf(addr); got != want {
			t.Errorf("clientHostOf(%q) = %q, want %q", addr, got, want)
		}
	}
}
