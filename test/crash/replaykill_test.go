package crash

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"lockstep/internal/bench"
	"lockstep/internal/testutil"
)

// TestKillDuringReplay: a server killed with SIGKILL while it recovers a
// long log with the parallel applier (4 workers) — twice, a third and two
// thirds into the time a full recovery of that log took — then started
// again, recovers to the tables the log was written from (checksums taken
// on the source server before it was stopped). Each kill is checked to
// have come before recovery's last line.
func TestKillDuringReplay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s := testutil.StartServer(t)
	dir := s.Datadir
	db := openDB(t, s, "")
	mustExec(t, ctx, db, "CREATE DATABASE r", "CREATE TABLE r.seq (n INT PRIMARY KEY)",
		"CREATE TABLE r.big (id INT PRIMARY KEY, k INT, pad VARCHAR(600), KEY (k))")
	for i := 0; i < 1000; i += 100 {
		var vals []string
		for j := i; j < i+100; j++ {
			vals = append(vals, fmt.Sprintf("(%d)", j))
		}
		mustExec(t, ctx, db, "INSERT INTO r.seq VALUES "+strings.Join(vals, ","))
	}
	for b := 0; b < 100; b++ {
		mustExec(t, ctx, db, fmt.Sprintf("INSERT INTO r.big SELECT n + %d, n %% 97, REPEAT(CHAR(65 + %d %% 26), 500) FROM r.seq", b*1000, b))
		if b%10 == 9 {
			mustExec(t, ctx, db, fmt.Sprintf("UPDATE r.big SET k = k + 1 WHERE id %% 7 = %d", b%7),
				fmt.Sprintf("DELETE FROM r.big WHERE id BETWEEN %d AND %d", b*1000, b*1000+49))
		}
	}
	want, err := bench.ServerChecksums(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	must(t, s.Stop())

	bin := testutil.BuildBinary(t)
	replayed := regexp.MustCompile(`recovery: replayed \d+ log records in ([0-9.]+m?s)`)
	start := func() (*exec.Cmd, *syncBuf, chan error) {
		var out syncBuf
		cmd := exec.CommandContext(ctx, bin, "serve", "--datadir", dir, "--port", "0", "--replica-parallel-workers", "4")
		cmd.Stdout, cmd.Stderr = &out, &out
		must(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		return cmd, &out, done
	}
	// A full recovery, to time it.
	cmd, out, done := start()
	began := time.Now()
	var full time.Duration
	for full == 0 {
		select {
		case err := <-done:
			t.Fatalf("the server exited: %v\n%s", err, out.String())
		case <-time.After(5 * time.Millisecond):
			if m := replayed.FindStringSubmatch(out.String()); m != nil {
				full = time.Since(began)
				t.Logf("a full recovery: %s (%v from the start of the process)", m[1], full)
			}
		}
	}
	must(t, cmd.Process.Kill())
	<-done
	if full < 300*time.Millisecond {
		t.Fatalf("recovery took %v: too short to kill the server during it", full)
	}
	// Two kills in the middle of recovery. A recovery runs faster once the
	// log is in the page cache and on a quieter machine: a kill that came
	// after the recovery ended (a kill -9 of a running server, which the
	// test also survives) is not counted, and the next one comes earlier.
	at, kills := 2*full/3, 0
	for attempt := 1; kills < 2; attempt++ {
		if attempt > 8 {
			t.Fatalf("no kill landed during recovery in %d attempts (the last at %v)", attempt-1, at)
		}
		cmd, out, done := start()
		time.Sleep(at)
		text := out.String()
		must(t, cmd.Process.Kill())
		<-done
		if replayed.MatchString(text) {
			t.Logf("SIGKILL %v after the start came after recovery had ended; trying earlier", at)
			at = at * 2 / 3
			continue
		}
		kills++
		t.Logf("kill %d: SIGKILL %v into recovery; it had written:\n%s", kills, at, text)
		at = at / 2
	}
	s = testutil.StartServer(t, "--datadir", dir, "--replica-parallel-workers", "4")
	got, err := bench.ServerChecksums(ctx, openDB(t, s, ""))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("after two kills during recovery and a full one: %+v\nthe source had %+v", got, want)
	}
}
