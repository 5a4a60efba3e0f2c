package crash

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// TestDamagedLog: a corrupt record in the middle of the log stops start-up
// with an error that names the segment file and the offset (exit code 1);
// --recover-truncate starts the server anyway, keeping the records before
// the damage and saying how many it dropped. A torn tail (an unfinished
// last write) is cut silently except for a line on stderr.
func TestDamagedLog(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a lockstep server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*stepTimeout)
	defer cancel()
	s := testutil.StartServer(t)
	db := openDB(t, s, "")
	mustExec(t, ctx, db, "CREATE DATABASE dmg", "CREATE TABLE dmg.t (id INT PRIMARY KEY, v VARCHAR(40))")
	for i := 1; i <= 40; i++ {
		mustExec(t, ctx, db, "INSERT INTO dmg.t VALUES ("+strconv.Itoa(i)+", 'row "+strconv.Itoa(i)+" of the damaged log test')")
	}
	db.Close()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(s.Datadir, "log", "*.seg"))
	if len(segs) != 1 {
		t.Fatalf("log segments: %v", segs)
	}
	seg := segs[0]
	good, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("torn tail", func(t *testing.T) {
		must(t, os.WriteFile(seg, good[:len(good)-7], 0o644))
		s := testutil.StartServer(t, "--datadir", s.Datadir)
		if !strings.Contains(s.Stderr(), "torn tail") {
			t.Errorf("no torn-tail line on stderr:\n%s", s.Stderr())
		}
		db := openDB(t, s, "")
		defer db.Close()
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM dmg.t").Scan(&n); err != nil || n != 39 {
			t.Fatalf("after a torn tail: %d rows, %v (want 39: the last insert was cut)", n, err)
		}
		must(t, s.Stop())
		// The tail was truncated: the file now ends at the last whole record.
		good, err = os.ReadFile(seg)
		must(t, err)
	})

	t.Run("corrupt middle", func(t *testing.T) {
		bad := append([]byte(nil), good...)
		bad[len(bad)/2] ^= 0x55
		must(t, os.WriteFile(seg, bad, 0o644))
		bin := testutil.BuildBinary(t)
		cmd := exec.CommandContext(ctx, bin, "serve", "--datadir", s.Datadir, "--port", "0")
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 {
			t.Fatalf("start on a corrupt log: %v (want exit 1)\n%s", err, out)
		}
		msg := string(out)
		if !strings.Contains(msg, filepath.Base(seg)) || !strings.Contains(msg, "offset") || !strings.Contains(msg, "--recover-truncate") {
			t.Fatalf("error does not name the file, the offset and the way out:\n%s", msg)
		}
		start := time.Now()
		s2 := testutil.StartServer(t, "--datadir", s.Datadir, "--recover-truncate")
		if !strings.Contains(s2.Stderr(), "dropped") {
			t.Errorf("--recover-truncate did not report what it dropped:\n%s", s2.Stderr())
		}
		db := openDB(t, s2, "")
		defer db.Close()
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM dmg.t").Scan(&n); err != nil || n <= 0 || n >= 39 {
			t.Fatalf("after --recover-truncate: %d rows, %v (want the rows before the damage)", n, err)
		}
		// Writes go on after the cut, and survive another restart.
		mustExec(t, ctx, db, "INSERT INTO dmg.t VALUES (1000, 'after the cut')")
		db.Close()
		must(t, s2.Stop())
		s3 := testutil.StartServer(t, "--datadir", s.Datadir)
		db3 := openDB(t, s3, "")
		defer db3.Close()
		var m int
		if err := db3.QueryRowContext(ctx, "SELECT COUNT(*) FROM dmg.t").Scan(&m); err != nil || m != n+1 {
			t.Fatalf("after restart: %d rows, %v; want %d", m, err, n+1)
		}
		t.Logf("corrupt record: %d rows kept, recovered in %v", n, time.Since(start).Round(time.Millisecond))
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
