package server

import (
	"strings"
	"sync"
	"testing"
	"time"

	"lockstep/internal/config"
)

// TestSyncDelayVariables: --binlog-group-commit-sync-delay and
// _no_delay_count set the server's variables and its pipeline; SET GLOBAL
// changes both at run time; the counters show the leaders that waited.
func TestSyncDelayVariables(t *testing.T) {
	s := startInProcess(t, func(c *config.Config) {
		c.SyncDelayMicros = 20000 // 20 ms: well above Go's timer floor
		c.SyncNoDelayCount = 3
	})
	if v := s.str(t, "SELECT @@global.binlog_group_commit_sync_delay"); v != "20000" {
		t.Errorf("@@global.binlog_group_commit_sync_delay = %s, want 20000", v)
	}
	if v := s.variable(t, "GLOBAL", "binlog_group_commit_sync_no_delay_count"); v != "3" {
		t.Errorf("binlog_group_commit_sync_no_delay_count = %s, want 3", v)
	}
	s.exec(t, "CREATE DATABASE d")
	s.exec(t, "CREATE TABLE d.t (id INT PRIMARY KEY)")

	// One commit alone waits the whole delay.
	before := s.status(t, "GLOBAL", "Lockstep_group_commit_delays")
	start := time.Now()
	s.exec(t, "INSERT INTO d.t VALUES (1)")
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Errorf("a commit with a 20 ms sync delay took %v", el)
	}
	if n := s.status(t, "GLOBAL", "Lockstep_group_commit_delays"); n != before+1 {
		t.Errorf("Lockstep_group_commit_delays %d -> %d after one commit, want +1", before, n)
	}
	if us := s.status(t, "GLOBAL", "Lockstep_group_commit_delay_time_us"); us < 20000 {
		t.Errorf("Lockstep_group_commit_delay_time_us = %d, want >= 20000", us)
	}

	// A delay of a second (MySQL's largest), ended by the third queued commit: three
	// concurrent commits form one group and return long before a minute.
	s.exec(t, "SET GLOBAL binlog_group_commit_sync_delay = 1000000")
	// Under a loaded machine the three may not all reach the pipeline
	// within the second: up to three tries, the last one asserted. With
	// the count not ending the wait, every try takes the whole second.
	for try, id := 1, 2; ; try++ {
		groups := s.status(t, "GLOBAL", "Binlog_group_commits")
		cut := s.status(t, "GLOBAL", "Lockstep_group_commit_delays_cut")
		var wg sync.WaitGroup
		start = time.Now()
		for i := id; i < id+3; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.db.Exec("INSERT INTO d.t VALUES (?)", i); err != nil {
					t.Errorf("insert %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		id += 3
		el := time.Since(start)
		g := s.status(t, "GLOBAL", "Binlog_group_commits")
		c := s.status(t, "GLOBAL", "Lockstep_group_commit_delays_cut")
		if el <= 900*time.Millisecond && g == groups+1 && c == cut+1 {
			break
		}
		if try < 3 {
			t.Logf("try %d: %v, %d groups, %d cut: again", try, el, g-groups, c-cut)
			continue
		}
		if el > 900*time.Millisecond {
			t.Errorf("three commits with no_delay_count=3 took %v: the count did not end the wait", el)
		}
		if g != groups+1 {
			t.Errorf("Binlog_group_commits %d -> %d, want one group of three", groups, g)
		}
		if c != cut+1 {
			t.Errorf("Lockstep_group_commit_delays_cut %d -> %d, want +1", cut, c)
		}
		break
	}

	// Back to 0: no wait, no counting.
	s.exec(t, "SET GLOBAL binlog_group_commit_sync_delay = 0")
	before = s.status(t, "GLOBAL", "Lockstep_group_commit_delays")
	s.exec(t, "INSERT INTO d.t VALUES (100)")
	if n := s.status(t, "GLOBAL", "Lockstep_group_commit_delays"); n != before {
		t.Errorf("Lockstep_group_commit_delays %d -> %d with the delay at 0", before, n)
	}

	// Range and scope. MySQL clamps an out-of-range value with warning
	// 1292; go-mysql-server refuses it (1231 here), for every integer
	// system variable (noted on issue 9). A session SET is 1229 in both.
	for _, tc := range []struct{ q, want string }{
		{"SET GLOBAL binlog_group_commit_sync_delay = 1000001", "Error 1231"},
		{"SET GLOBAL binlog_group_commit_sync_delay = -1", "Error 1231"},
		{"SET SESSION binlog_group_commit_sync_delay = 10", "Error 1229"},
	} {
		_, err := s.db.Exec(tc.q)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s", tc.q, err, tc.want)
		}
	}
	if v := s.str(t, "SELECT @@global.binlog_group_commit_sync_delay"); v != "0" {
		t.Errorf("after refused SETs: @@global.binlog_group_commit_sync_delay = %s, want 0", v)
	}
}
