package testutil

import (
	"os"
	"strings"
	"testing"
)

func TestBuildBinary(t *testing.T) {
	bin := BuildBinary(t)
	if again := BuildBinary(t); again != bin {
		t.Fatalf("second BuildBinary = %s, want the first build %s", again, bin)
	}
	fi, err := os.Stat(bin)
	if err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("%s is not an executable: %v", bin, err)
	}
}

func TestLastFlag(t *testing.T) {
	tests := []struct {
		args  []string
		want  string
		found bool
	}{
		{args: nil},
		{args: []string{"--datadir", "/a"}, want: "/a", found: true},
		{args: []string{"--datadir=/b"}, want: "/b", found: true},
		{args: []string{"--datadir", "/a", "--port", "1", "--datadir=/c"}, want: "/c", found: true},
		{args: []string{"--datadir"}},
		{args: []string{"--datadirx=/a"}},
	}
	for _, tt := range tests {
		got, found := lastFlag(tt.args, "datadir")
		if got != tt.want || found != tt.found {
			t.Errorf("lastFlag(%q) = %q, %v; want %q, %v", tt.args, got, found, tt.want, tt.found)
		}
	}
}

// TestStartServer runs the whole cycle against the real binary. It skips
// while internal/server reports "not implemented".
func TestStartServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	s, err := start(t, "", nil)
	if err != nil {
		if strings.Contains(err.Error(), "not implemented") {
			t.Skip("server not implemented yet")
		}
		t.Fatal(err)
	}
	db := s.DB(t, "")
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
	if !strings.Contains(s.Stderr(), "ready for connections on") {
		t.Fatalf("no ready line in output:\n%s", s.Stderr())
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v\n%s", err, s.Stderr())
	}

	// Restart on the same data directory, then crash it.
	s2 := StartServer(t, "--datadir", s.Datadir)
	if s2.Datadir != s.Datadir {
		t.Fatalf("Datadir = %s, want %s", s2.Datadir, s.Datadir)
	}
	s2.Kill()
}
