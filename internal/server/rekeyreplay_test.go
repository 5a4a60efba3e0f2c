package server

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"lockstep/internal/apply"
	logrec "lockstep/internal/record"
	"lockstep/internal/sqlfront"
)

// TestReplayedRekeyWaitIsBounded: a replayed ALTER TABLE ... DROP PRIMARY
// KEY meets a local session's unfinished transaction on the table (a
// former primary's session, a session on a group member). The apply step
// waits for it at most innodb_lock_wait_timeout a try: when the local
// transaction outlasts the bound, the applier stops (after its retries,
// the error being transient) with MySQL's 1205 message naming the record,
// nothing re-keyed, the local transaction untouched; when it ends within
// the bound, the re-key proceeds.
func TestReplayedRekeyWaitIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout int           // innodb_lock_wait_timeout, seconds
		commit  time.Duration // the local transaction commits after this (0: after the step)
		err     string
	}{
		{name: "the local transaction outlasts the bound", timeout: 1,
			err: "apply: log index 1 (sequence number 1, GNO 1): replaying \"ALTER TABLE t DROP PRIMARY KEY\": Lock wait timeout exceeded; try restarting transaction (a local transaction has changed rows of the table for 1s, innodb_lock_wait_timeout) (a transient error, retried 1 times"},
		{name: "the local transaction ends within the bound", timeout: 20, commit: 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe, err := sqlfront.New(sqlfront.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer fe.Close()
			admin := &localServer{t: t, fe: fe, ctx: fe.NewLocalContext(context.Background())}
			admin.exec("CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)", "INSERT INTO d.t VALUES (1, 1), (2, 2)",
				"SET GLOBAL innodb_lock_wait_timeout = "+itoa(tc.timeout))
			local := &localServer{t: t, fe: fe, ctx: fe.NewLocalContext(context.Background())}
			local.exec("BEGIN", "UPDATE d.t SET v = 9 WHERE id = 1")
			committed := make(chan struct{})
			commit := func() {
				select {
				case <-committed:
				default:
					local.exec("COMMIT")
					close(committed)
				}
			}
			defer commit() // a step still waiting is let go

			m := apply.New(apply.Options{FailedDDL: sqlfront.FailedDDLIndex,
				Retry: apply.RetryPolicy{Retries: 1, Backoff: time.Millisecond, Sleep: func(time.Duration) {}}})
			rec := logrec.AppendDDL(nil, &logrec.DDL{Position: logrec.Position{Seq: 1, GNO: 1},
				NextTableID: fe.Storage().NextTableID(), Database: "d", Query: "ALTER TABLE t DROP PRIMARY KEY"})
			if err := m.Entry(1, rec); err != nil {
				t.Fatal(err)
			}
			if tc.commit > 0 {
				go func() { time.Sleep(tc.commit); commit() }()
			}
			start := time.Now()
			done := make(chan error, 1)
			go func() { done <- apply.Drain(m, &recoveryExec{fe: fe, w: io.Discard}) }()
			select {
			case err = <-done:
			case <-time.After(15 * time.Second):
				t.Fatalf("the apply step still waits for the local transaction after %v (innodb_lock_wait_timeout %d s)", time.Since(start).Round(time.Millisecond), tc.timeout)
			}
			took := time.Since(start)
			pk := strings.Contains(admin.rowsString("SHOW CREATE TABLE d.t"), "PRIMARY KEY")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v\nwant %q", err, tc.err)
				}
				// Two tries of about a second each.
				if took < 2*time.Second || took > 6*time.Second {
					t.Errorf("the step ended after %v, want about 2 s (two tries of 1 s)", took)
				}
				if mt := m.Metrics(); mt.Retries != 1 || mt.Applied != 0 || mt.AppliedSeq != 0 {
					t.Errorf("metrics after the failure: %+v", mt)
				}
				if !pk {
					t.Errorf("the table lost its primary key although the step failed")
				}
				commit()
				if got := admin.rowsString("SELECT id, v FROM d.t ORDER BY id"); got != "[[1 9] [2 2]]" {
					t.Errorf("after the local commit: %s", got)
				}
				// Replayed again once the local transaction ended, it runs.
				m2 := apply.New(apply.Options{FailedDDL: sqlfront.FailedDDLIndex})
				if err := m2.Entry(1, rec); err != nil {
					t.Fatal(err)
				}
				if err := apply.Drain(m2, &recoveryExec{fe: fe, w: io.Discard}); err != nil {
					t.Fatal(err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if took < tc.commit {
					t.Errorf("the step ended after %v, before the local transaction (%v)", took, tc.commit)
				}
			}
			if strings.Contains(admin.rowsString("SHOW CREATE TABLE d.t"), "PRIMARY KEY") {
				t.Errorf("the primary key was not dropped: %s", admin.rowsString("SHOW CREATE TABLE d.t"))
			}
			if got := admin.rowsString("SELECT id, v FROM d.t ORDER BY id"); got != "[[1 9] [2 2]]" {
				t.Errorf("rows %s", got)
			}
		})
	}
}
