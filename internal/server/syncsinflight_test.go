package server

import (
	"fmt"
	"sync"
	"testing"

	"lockstep/internal/config"
)

// TestLogSyncsInFlight: --log-syncs-in-flight sets its variable and the
// commit path; concurrent commits with several fsyncs in flight are all
// there after a restart, and every wake-up found its commit done.
func TestLogSyncsInFlight(t *testing.T) {
	dir := t.TempDir()
	s := startInProcess(t, func(c *config.Config) { c.Datadir, c.LogSyncsInFlight = dir, 4 })
	if v := s.str(t, "SELECT @@global.lockstep_log_syncs_in_flight"); v != "4" {
		t.Fatalf("@@lockstep_log_syncs_in_flight = %s, want 4", v)
	}
	s.exec(t, "CREATE DATABASE d")
	s.exec(t, "CREATE TABLE d.t (id INT PRIMARY KEY, g INT)")
	const workers, each = 16, 40
	s.db.SetMaxOpenConns(workers)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := s.db.Exec("INSERT INTO d.t VALUES (?, ?)", g*each+i, g); err != nil {
					t.Errorf("insert: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	want := fmt.Sprint(workers * each)
	if n := s.str(t, "SELECT COUNT(*) FROM d.t"); n != want {
		t.Fatalf("%s rows, want %s", n, want)
	}
	if e := s.status(t, "GLOBAL", "Lockstep_group_commit_wake_efficiency_pct"); e != 100 {
		t.Errorf("wake efficiency %d%%, want 100", e)
	}
	t.Logf("fsyncs %d, overlapped %d, held back %d, turn waits %d",
		s.status(t, "GLOBAL", "Lockstep_log_fsyncs"), s.status(t, "GLOBAL", "Lockstep_log_fsyncs_overlapped"),
		s.status(t, "GLOBAL", "Lockstep_log_fsyncs_held_back"), s.status(t, "GLOBAL", "Lockstep_group_commit_turn_waits"))
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	s = startInProcess(t, func(c *config.Config) { c.Datadir = dir })
	if n := s.str(t, "SELECT COUNT(*) FROM d.t"); n != want {
		t.Fatalf("%s rows after the restart, want %s", n, want)
	}
	if v := s.str(t, "SELECT @@global.lockstep_log_syncs_in_flight"); v != "1" {
		t.Fatalf("@@lockstep_log_syncs_in_flight = %s by default, want 1", v)
	}
}
