package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lockstep/internal/config"
	"lockstep/internal/txlog"
)

// TestLogRetention checks --log-retention-size: after a checkpoint the log
// before it is removed, except (with the option) at least that many bytes
// of whole segments, which a restart does not need and does not replay.
func TestLogRetention(t *testing.T) {
	const rows = 100 // about 1.5 KiB of log each: 40 segments of 4 KiB
	for _, retain := range []int64{0, 64 << 10} {
		t.Run(fmt.Sprintf("retain=%d", retain), func(t *testing.T) {
			cfg := config.Default()
			cfg.Datadir = t.TempDir()
			cfg.LogSegmentSize = 4 << 10
			cfg.LogCompression = false
			cfg.CheckpointLogSize = 0 // checkpoints only when the test asks
			cfg.LogRetentionSize = retain
			s := openLocal(t, cfg, nil)
			s.exec("CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v TEXT)")
			for i := range rows {
				s.exec(fmt.Sprintf("INSERT INTO d.t VALUES (%d, REPEAT('x', 1500))", i))
			}
			if n := len(s.d.log.Segments()); n < 30 {
				t.Fatalf("%d segments before the checkpoint, want many", n)
			}
			if _, err := s.d.checkpoint(s.fe); err != nil {
				t.Fatalf("checkpoint: %v", err)
			}
			seq := uint64(s.d.ckpt.lastSeq.Load())
			segs := s.d.log.Segments()
			// Segments wholly before the one holding the first record after
			// the checkpoint: what only retention keeps.
			var older int64
			var n int
			for i := 0; i+1 < len(segs) && segs[i+1].First <= seq+1; i++ {
				older += segs[i].Bytes
				n++
			}
			if retain == 0 && n != 0 {
				t.Errorf("without retention %d segments (%d bytes) before the checkpoint remain", n, older)
			}
			if retain > 0 {
				if older < retain {
					t.Errorf("retention %d: %d bytes of log before the checkpoint remain", retain, older)
				}
				if older-segs[0].Bytes >= retain {
					t.Errorf("retention %d: %d bytes remain, the oldest segment was not needed", retain, older)
				}
			}
			if segs[0].First <= 1 {
				t.Errorf("nothing removed: the log still starts at %d", segs[0].First)
			}
			files, err := filepath.Glob(filepath.Join(cfg.Datadir, "log", "*.seg"))
			if err != nil || len(files) != len(segs) {
				t.Errorf("%d segment files on disk (%v), the log lists %d: %s", len(files), err, len(segs), segmentNames(cfg.Datadir))
			}

			// A restart recovers from the checkpoint and the log after it.
			s.close()
			s = openLocal(t, cfg, nil)
			rowsOut, err := s.query("SELECT COUNT(*) FROM d.t")
			if err != nil || len(rowsOut) != 1 || fmt.Sprint(rowsOut[0][0]) != fmt.Sprint(rows) {
				t.Fatalf("after restart: %v rows (%v), want %d", rowsOut, err, rows)
			}
		})
	}
}

// segmentNames lists the log's segment files (for failure messages).
func segmentNames(dir string) string {
	ents, _ := os.ReadDir(filepath.Join(dir, "log"))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

func TestRetainFrom(t *testing.T) {
	segs := []txlog.SegmentInfo{
		{First: 1, Last: 9, Bytes: 100},
		{First: 10, Last: 19, Bytes: 100},
		{First: 20, Last: 29, Bytes: 100},
		{First: 30, Last: 35, Bytes: 60}, // being written
	}
	for _, tc := range []struct {
		before uint64
		retain int64
		want   uint64
	}{
		{25, 0, 25},   // no retention: TruncatePrefix's own rule
		{25, 1, 10},   // one segment older than the one holding 25
		{25, 100, 10}, // exactly one segment's bytes
		{25, 101, 1},  // two
		{25, 1 << 20, 1},
		{20, 150, 1},  // 20 starts a segment: the two before it
		{5, 1000, 5},  // nothing is older than the first segment
		{40, 150, 10}, // past the end: the segment being written is kept anyway
	} {
		if got := retainFrom(segs, tc.before, tc.retain); got != tc.want {
			t.Errorf("retainFrom(before %d, retain %d) = %d, want %d", tc.before, tc.retain, got, tc.want)
		}
	}
}
