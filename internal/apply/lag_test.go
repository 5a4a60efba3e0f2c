package apply

import (
	"testing"
	"time"

	"lockstep/internal/record"
)

// timedTxn is a transaction record committed at commit (0: a record of a
// format without a commit time, as older logs hold).
func timedTxn(seq int64, commit time.Time) []byte {
	pos := record.Position{Seq: seq, GNO: seq, LastCommitted: seq - 1}
	if !commit.IsZero() {
		pos.CommitTime = commit.UnixMicro()
	}
	return record.AppendTxn(nil, &record.Txn{Position: pos})
}

// TestLagSeconds: the lag in seconds is the time now minus the commit time
// of the oldest record received and not applied (MySQL's
// Seconds_Behind_Source), 0 when caught up, -1 when that record has no
// commit time; the commit time of the last applied record is kept.
func TestLagSeconds(t *testing.T) {
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for _, tc := range []struct {
		name     string
		opts     Options
		entries  []entry
		apply    int           // steps performed (Next, Done) after feeding
		now      time.Duration // the clock, after t0
		lag      int64
		lastTime time.Time // LastAppliedCommitTime
	}{
		{name: "nothing received", now: time.Hour},
		{
			name:    "caught up",
			entries: []entry{{1, [][]byte{timedTxn(1, at(0)), timedTxn(2, at(time.Second))}}},
			apply:   2, now: time.Hour, lag: 0, lastTime: at(time.Second),
		},
		{
			name:    "nothing applied: the first record's commit time",
			entries: []entry{{1, [][]byte{timedTxn(1, at(0))}}, {2, [][]byte{timedTxn(2, at(3*time.Second))}}},
			now:     5700 * time.Millisecond, lag: 5,
		},
		{
			name: "the oldest not applied, not the newest, not the last applied",
			entries: []entry{{1, [][]byte{timedTxn(1, at(0)), timedTxn(2, at(2*time.Second))}},
				{2, [][]byte{timedTxn(3, at(9*time.Second))}}},
			apply: 1, now: 10 * time.Second, lag: 8, lastTime: at(0),
		},
		{
			name:    "a group shares its commit time",
			entries: []entry{{7, [][]byte{timedTxn(1, at(time.Second)), timedTxn(2, at(time.Second)), timedTxn(3, at(time.Second))}}},
			apply:   2, now: 4 * time.Second, lag: 3, lastTime: at(time.Second),
		},
		{
			name:    "the source's clock ahead of this one",
			entries: []entry{{1, [][]byte{timedTxn(1, at(time.Minute))}}},
			now:     0, lag: 0,
		},
		{
			name:    "an old record without a commit time: unknown",
			entries: []entry{{1, [][]byte{timedTxn(1, time.Time{}), timedTxn(2, at(0))}}},
			now:     time.Minute, lag: -1,
		},
		{
			name:    "past the old record, known again",
			entries: []entry{{1, [][]byte{timedTxn(1, time.Time{}), timedTxn(2, at(0))}}},
			apply:   1, now: time.Minute, lag: 60,
		},
		{
			name: "records the checkpoint holds are skipped, not lag",
			opts: Options{Applied: Position{Seq: 2}, ExecutedGNO: 2},
			entries: []entry{{1, [][]byte{timedTxn(1, at(0)), timedTxn(2, at(0))}},
				{2, [][]byte{timedTxn(3, at(20*time.Second))}}},
			now: 30 * time.Second, lag: 10,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := t0
			tc.opts.Clock = func() time.Time { return now }
			m := New(tc.opts)
			for _, e := range tc.entries {
				if err := m.Entry(e.index, payload(e)); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < tc.apply; i++ {
				s, ok := m.Next()
				if !ok {
					t.Fatalf("step %d: none ready", i)
				}
				m.Done(s, nil)
			}
			now = t0.Add(tc.now)
			mt := m.Metrics()
			if mt.LagSeconds != tc.lag {
				t.Errorf("LagSeconds %d, want %d", mt.LagSeconds, tc.lag)
			}
			var want int64
			if !tc.lastTime.IsZero() {
				want = tc.lastTime.UnixMicro()
			}
			if mt.LastAppliedCommitTime != want {
				t.Errorf("LastAppliedCommitTime %d, want %d", mt.LastAppliedCommitTime, want)
			}
		})
	}
}
