package crash

import (
	"context"
	"database/sql"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// TestDamagedLog: a corrupt record in the middle of the log stops start-up
// with an error that names the segment file and the offset (exit code 1);
// --recover-truncate starts the server anyway, keeping the records before
// the damage and saying how many it dropped. A torn tail (an unfinished
// last write at a crash) is cut with a line on stderr.
func TestDamagedLog(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a lockstep server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*stepTimeout)
	defer cancel()
	s := testutil.StartServer(t)
	insertRows(t, ctx, s, 1, 40)
	// A crash (not a clean shutdown): only then can the log end in a torn
	// write.
	s.Kill()
	segs := segments(t, s.Datadir)
	if len(segs) != 1 {
		t.Fatalf("log segments: %v", segs)
	}
	seg := segs[0]

	t.Run("torn tail after a crash", func(t *testing.T) {
		// A crash while a 41st commit was being written: part of its
		// record after the last whole one.
		end := dataEnd(t, seg)
		b := readFile(t, seg)
		last := recordOffsets(t, seg)
		partial := append([]byte(nil), b[last[len(last)-1]:end]...)
		writeAt(t, seg, partial[:len(partial)-7], end)
		s := testutil.StartServer(t, "--datadir", s.Datadir)
		if !strings.Contains(s.Stderr(), "torn tail") || !strings.Contains(s.Stderr(), filepath.Base(seg)) {
			t.Errorf("no torn-tail line naming the segment on stderr:\n%s", s.Stderr())
		}
		// Nothing acknowledged is lost.
		if n := countRows(t, ctx, s); n != 40 {
			t.Fatalf("after a torn tail: %d rows, want 40", n)
		}
		must(t, s.Stop())
	})

	t.Run("corrupt middle", func(t *testing.T) {
		good := readFile(t, seg)
		offs := recordOffsets(t, seg)
		bad := append([]byte(nil), good...)
		bad[offs[len(offs)/2]+40] ^= 0x55
		must(t, os.WriteFile(seg, bad, 0o644))
		msg := refusedStart(t, ctx, s.Datadir)
		if !strings.Contains(msg, filepath.Base(seg)) || !strings.Contains(msg, "offset") || !strings.Contains(msg, "--recover-truncate") {
			t.Fatalf("error does not name the file, the offset and the way out:\n%s", msg)
		}
		start := time.Now()
		s2 := testutil.StartServer(t, "--datadir", s.Datadir, "--recover-truncate")
		if !strings.Contains(s2.Stderr(), "dropped") {
			t.Errorf("--recover-truncate did not report what it dropped:\n%s", s2.Stderr())
		}
		n := countRows(t, ctx, s2)
		if n <= 0 || n >= 40 {
			t.Fatalf("after --recover-truncate: %d rows (want the rows before the damage)", n)
		}
		// Writes go on after the cut, and survive another restart.
		insertRows(t, ctx, s2, 1000, 1000)
		must(t, s2.Stop())
		s3 := testutil.StartServer(t, "--datadir", s.Datadir)
		if m := countRows(t, ctx, s3); m != n+1 {
			t.Fatalf("after restart: %d rows; want %d", m, n+1)
		}
		t.Logf("corrupt record: %d rows kept, recovered in %v", n, time.Since(start).Round(time.Millisecond))
	})
}

// TestLogTail: the end of the log is checked against where it is known to
// have reached (log/log.state). After a clean shutdown the log must end
// exactly where it was left: a damaged or missing last record or segment
// is refused, naming the file, as damage in the middle is. After a crash a
// torn tail is accepted (TestDamagedLog), but not damage to records the log
// had made durable, nor a missing segment. Nothing acknowledged is lost
// without an error.
func TestLogTail(t *testing.T) {
	const rows = 500
	var ctx context.Context
	// A log of many small segments, as in the issue (494 acknowledged rows
	// lost with the last segment). Each subtest has its own deadline.
	newLog := func(t *testing.T, args ...string) *testutil.Server {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), 3*stepTimeout)
		t.Cleanup(cancel)
		s := testutil.StartServer(t, append([]string{"--log-segment-size", "4K"}, args...)...)
		insertRows(t, ctx, s, 1, rows)
		return s
	}

	t.Run("clean shutdown, last record damaged", func(t *testing.T) {
		s := newLog(t)
		must(t, s.Stop())
		segs := segments(t, s.Datadir)
		seg := segs[len(segs)-1]
		offs := recordOffsets(t, seg)
		good := readFile(t, seg)
		flipByte(t, seg, offs[len(offs)-1]+40)
		msg := refusedStart(t, ctx, s.Datadir)
		for _, want := range []string{filepath.Base(seg), "offset", "closed cleanly", "--recover-truncate"} {
			if !strings.Contains(msg, want) {
				t.Fatalf("refusal does not say %q:\n%s", want, msg)
			}
		}
		// Repaired, the log starts with every row.
		must(t, os.WriteFile(seg, good, 0o644))
		s2 := testutil.StartServer(t, "--datadir", s.Datadir)
		if n := countRows(t, ctx, s2); n != rows {
			t.Fatalf("%d rows after the repair, want %d", n, rows)
		}
		must(t, s2.Stop())
		// --recover-truncate drops the damaged record, and says so.
		flipByte(t, seg, offs[len(offs)-1]+40)
		s3 := testutil.StartServer(t, "--datadir", s.Datadir, "--recover-truncate")
		if !strings.Contains(s3.Stderr(), "dropped 1 records") {
			t.Errorf("--recover-truncate did not report the dropped record:\n%s", s3.Stderr())
		}
		if n := countRows(t, ctx, s3); n != rows-1 {
			t.Fatalf("%d rows after --recover-truncate, want %d", n, rows-1)
		}
	})

	t.Run("clean shutdown, last segment removed", func(t *testing.T) {
		s := newLog(t)
		must(t, s.Stop())
		segs := segments(t, s.Datadir)
		if len(segs) < 3 {
			t.Fatalf("log segments: %v", segs)
		}
		seg := segs[len(segs)-1]
		good := readFile(t, seg)
		must(t, os.Remove(seg))
		msg := refusedStart(t, ctx, s.Datadir)
		for _, want := range []string{seg, "missing", "--recover-truncate"} {
			if !strings.Contains(msg, want) {
				t.Fatalf("refusal does not say %q:\n%s", want, msg)
			}
		}
		must(t, os.WriteFile(seg, good, 0o644))
		s2 := testutil.StartServer(t, "--datadir", s.Datadir)
		if n := countRows(t, ctx, s2); n != rows {
			t.Fatalf("%d rows with the segment back, want %d", n, rows)
		}
		must(t, s2.Stop())
		// --recover-truncate accepts the shorter log, and says what it lost.
		must(t, os.Remove(seg))
		s3 := testutil.StartServer(t, "--datadir", s.Datadir, "--recover-truncate")
		if !strings.Contains(s3.Stderr(), "accepted the log as it is") || !strings.Contains(s3.Stderr(), filepath.Base(seg)) {
			t.Errorf("--recover-truncate did not say what it accepted:\n%s", s3.Stderr())
		}
		n := countRows(t, ctx, s3)
		if n >= rows {
			t.Fatalf("%d rows without the last segment", n)
		}
		insertRows(t, ctx, s3, 1000, 1000)
		must(t, s3.Stop())
		s4 := testutil.StartServer(t, "--datadir", s.Datadir)
		if m := countRows(t, ctx, s4); m != n+1 {
			t.Fatalf("after restart: %d rows, want %d", m, n+1)
		}
	})

	t.Run("crash, last segment removed", func(t *testing.T) {
		s := newLog(t)
		// The newest segment is recorded as soon as it is created.
		time.Sleep(100 * time.Millisecond)
		s.Kill()
		segs := segments(t, s.Datadir)
		seg := segs[len(segs)-1]
		must(t, os.Remove(seg))
		msg := refusedStart(t, ctx, s.Datadir)
		for _, want := range []string{seg, "missing", "--recover-truncate"} {
			if !strings.Contains(msg, want) {
				t.Fatalf("refusal does not say %q:\n%s", want, msg)
			}
		}
	})

	t.Run("crash, durable record damaged", func(t *testing.T) {
		s := newLog(t)
		// log.state records the durable index about once a second.
		time.Sleep(2500 * time.Millisecond)
		s.Kill()
		segs := segments(t, s.Datadir)
		seg := segs[len(segs)-1]
		offs := recordOffsets(t, seg)
		flipByte(t, seg, offs[len(offs)-1]+40)
		msg := refusedStart(t, ctx, s.Datadir)
		for _, want := range []string{filepath.Base(seg), "was durable", "--recover-truncate"} {
			if !strings.Contains(msg, want) {
				t.Fatalf("refusal does not say %q:\n%s", want, msg)
			}
		}
	})

	t.Run("file planted as the first segment", func(t *testing.T) {
		s := newLog(t)
		must(t, s.Stop())
		planted := filepath.Join(s.Datadir, "log", "log-00000000000000000000.seg")
		must(t, os.WriteFile(planted, []byte(strings.Repeat("not a log segment ", 20)), 0o644))
		for _, args := range [][]string{nil, {"--recover-truncate"}} {
			msg := refusedStart(t, ctx, s.Datadir, args...)
			for _, want := range []string{planted, "is not a segment of this log", "move it out"} {
				if !strings.Contains(msg, want) {
					t.Fatalf("refusal %v does not say %q:\n%s", args, want, msg)
				}
			}
		}
		must(t, os.Remove(planted))
		s2 := testutil.StartServer(t, "--datadir", s.Datadir)
		if n := countRows(t, ctx, s2); n != rows {
			t.Fatalf("%d rows after removing the planted file, want %d", n, rows)
		}
	})

	t.Run("log removed, checkpoint kept", func(t *testing.T) {
		s := newLog(t, "--checkpoint-log-size", "16K")
		db := openDB(t, s, "")
		deadline := time.Now().Add(stepTimeout)
		var ckptSeq int64
		for ckptSeq == 0 {
			if time.Now().After(deadline) {
				t.Fatal("no checkpoint written")
			}
			ckptSeq = statusValue(s.DSN(""), "Lockstep_checkpoint_last_seq")
			time.Sleep(50 * time.Millisecond)
		}
		db.Close()
		must(t, s.Stop())
		logDir := filepath.Join(s.Datadir, "log")
		must(t, os.RemoveAll(logDir))
		msg := refusedStart(t, ctx, s.Datadir)
		for _, want := range []string{logDir, "holds no log", "--recover-truncate"} {
			if !strings.Contains(msg, want) {
				t.Fatalf("refusal does not say %q:\n%s", want, msg)
			}
		}
		s2 := testutil.StartServer(t, "--datadir", s.Datadir, "--recover-truncate")
		if !strings.Contains(s2.Stderr(), "before the checkpoint") {
			t.Errorf("--recover-truncate did not say the log restarts after the checkpoint:\n%s", s2.Stderr())
		}
		n := countRows(t, ctx, s2)
		if n <= 0 || n > rows {
			t.Fatalf("%d rows from the checkpoint", n)
		}
		// Sequence numbers and log indexes agree again: writes survive a
		// restart.
		insertRows(t, ctx, s2, 1000, 1000)
		must(t, s2.Stop())
		s3 := testutil.StartServer(t, "--datadir", s.Datadir)
		if m := countRows(t, ctx, s3); m != n+1 {
			t.Fatalf("after restart: %d rows, want %d", m, n+1)
		}
	})
}

// insertRows creates dmg.t if needed and inserts rows lo..hi, one commit
// each.
func insertRows(t *testing.T, ctx context.Context, s *testutil.Server, lo, hi int) {
	t.Helper()
	db := openDB(t, s, "")
	defer db.Close()
	mustExec(t, ctx, db, "CREATE DATABASE IF NOT EXISTS dmg", "CREATE TABLE IF NOT EXISTS dmg.t (id INT PRIMARY KEY, v VARCHAR(40))")
	for i := lo; i <= hi; i++ {
		mustExec(t, ctx, db, "INSERT INTO dmg.t VALUES ("+strconv.Itoa(i)+", 'row "+strconv.Itoa(i)+" of the log tail test')")
	}
}

func countRows(t *testing.T, ctx context.Context, s *testutil.Server) int {
	t.Helper()
	db := openDB(t, s, "")
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM dmg.t").Scan(&n); err != nil && err != sql.ErrNoRows {
		t.Fatalf("counting rows: %v", err)
	}
	return n
}

// refusedStart starts the server on datadir expecting it to refuse (exit
// code 1), and returns its output. A server that starts instead is
// stopped at once and the test fails.
func refusedStart(t *testing.T, ctx context.Context, datadir string, args ...string) string {
	t.Helper()
	bin := testutil.BuildBinary(t)
	var out syncBuf
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--datadir", datadir, "--port", "0"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	must(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case err := <-done:
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 1 {
				t.Fatalf("start %v: %v (want exit 1)\n%s", args, err, out.String())
			}
			return out.String()
		case <-time.After(50 * time.Millisecond):
			if strings.Contains(out.String(), "ready for connections") {
				cmd.Process.Kill()
				<-done
				t.Fatalf("start %v: the server started on a log it should have refused:\n%s", args, out.String())
			}
		}
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// segments lists the log's segment files, oldest first.
func segments(t *testing.T, datadir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(datadir, "log", "log-*.seg"))
	must(t, err)
	sort.Strings(m)
	return m
}

// recordOffsets walks a segment file's records (docs/txlog.md: a 64-byte
// header, 32 in version 1; each record a 32-byte header whose first four
// bytes are the payload length) and returns their offsets, up to the zeros
// of a preallocated segment.
func recordOffsets(t *testing.T, path string) []int64 {
	t.Helper()
	b := readFile(t, path)
	off := int64(64)
	if binary.LittleEndian.Uint16(b[8:]) == 1 {
		off = 32
	}
	var offs []int64
	for off+32 <= int64(len(b)) {
		if allZero(b[off : off+32]) {
			break
		}
		offs = append(offs, off)
		off += 32 + int64(binary.LittleEndian.Uint32(b[off:]))
	}
	return offs
}

// dataEnd is the offset just past a segment's last record.
func dataEnd(t *testing.T, path string) int64 {
	t.Helper()
	offs := recordOffsets(t, path)
	last := offs[len(offs)-1]
	return last + 32 + int64(binary.LittleEndian.Uint32(readFile(t, path)[last:]))
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	return b
}

func writeAt(t *testing.T, path string, b []byte, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	must(t, err)
	defer f.Close()
	_, err = f.WriteAt(b, off)
	must(t, err)
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	b := readFile(t, path)
	b[off] ^= 0x55
	must(t, os.WriteFile(path, b, 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
