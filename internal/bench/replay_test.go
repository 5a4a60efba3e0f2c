package bench

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"lockstep/internal/apply"
)

// TestReplayMakeLog: a log written by the generator (a server run in
// process, concurrent sysbench-like transactions with conflicts) replayed
// into a fresh engine gives the source's table checksums, and the replay
// ends with its result line. With a small --checkpoint-log-size the
// server checkpoints while the log is made and replay starts from the
// checkpoint. The parallel applier (2, 4, 8 and 16 workers) gives the
// same tables.
func TestReplayMakeLog(t *testing.T) {
	for _, tc := range []struct {
		name string
		ckpt int64
	}{{"from empty", 0}, {"from checkpoint", 64 << 10}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			var mout bytes.Buffer
			src, err := MakeLog(context.Background(), MakeLogConfig{Datadir: dir, Transactions: 400, ConflictRate: 0.3, HotRows: 8,
				Rows: 300, Threads: 4, Seed: 7, CheckpointLogSize: tc.ckpt, Out: &mout})
			if err != nil {
				t.Fatal(err)
			}
			if src.Transactions != 400 || len(src.Checksums) != 1 || src.Checksums[0].Rows != "300" || src.Checksums[0].Checksum == "0" {
				t.Fatalf("source: %+v\n%s", src, mout.String())
			}
			for _, workers := range []int{1, 2, 4, 8, 16} {
				var out, prog bytes.Buffer
				res, err := Replay(context.Background(), ReplayConfig{Datadir: dir, Workers: workers, PreserveCommitOrder: true, Out: &out, Progress: &prog})
				if err != nil {
					t.Fatalf("%d workers: %v\n%s", workers, err, prog.String())
				}
				if !res.ChecksumsMatch() {
					t.Errorf("replayed %+v, source %+v\n%s", res.Checksums, src.Checksums, out.String())
				}
				if tc.ckpt == 0 && (res.FromSeq != 0 || res.Transactions != int64(src.Transactions+src.LoadTxns)) {
					t.Errorf("from seq %d, %d transactions; want 0, %d", res.FromSeq, res.Transactions, src.Transactions+src.LoadTxns)
				}
				if tc.ckpt > 0 && (res.FromSeq == 0 || res.Skipped == 0 && res.FirstIndex == 1) {
					t.Errorf("from seq %d, skipped %d, first index %d: the checkpoint was not used", res.FromSeq, res.Skipped, res.FirstIndex)
				}
				line := regexp.MustCompile(`(?m)^replayed (\d+) transactions in [0-9.]+ s: [0-9]+ transactions/s\n\z`)
				if m := line.FindStringSubmatch(out.String()); m == nil {
					t.Errorf("no result line at the end:\n%s", out.String())
				}
				t.Logf("\n%s%s", prog.String(), out.String())
			}
			// --recertify: the dependencies computed from the writesets
			// (from the checkpoint's sequence number on) replay the same.
			for _, workers := range []int{1, 4, 16} {
				var out bytes.Buffer
				res, err := Replay(context.Background(), ReplayConfig{Datadir: dir, Workers: workers, PreserveCommitOrder: true, Recertify: true, Out: &out})
				if err != nil {
					t.Fatalf("%d workers, --recertify: %v", workers, err)
				}
				if !res.ChecksumsMatch() {
					t.Errorf("%d workers, --recertify: replayed %+v, source %+v\n%s", workers, res.Checksums, src.Checksums, out.String())
				}
				if res.Certified != res.Transactions+res.OtherRecords || res.SerialDeps != 0 || !strings.Contains(out.String(), "recomputed by the certifier") {
					t.Errorf("%d workers, --recertify: %d certified of %d+%d records, %d serial\n%s", workers, res.Certified, res.Transactions, res.OtherRecords, res.SerialDeps, out.String())
				}
			}
		})
	}
}

// TestReplayWorkersUsage: --workers must be at least 1.
func TestReplayWorkersUsage(t *testing.T) {
	_, err := Replay(context.Background(), ReplayConfig{Datadir: t.TempDir(), Workers: 0})
	if err == nil || !strings.Contains(err.Error(), "--workers must be at least 1") {
		t.Fatalf("got %v", err)
	}
}

// TestReplayLargeTxn: --make-log's large transaction (one INSERT ...
// SELECT of 3,000 rows, applied in chunks) replays to the source's
// tables with the serial applier and with either scheduler of the
// parallel one, and the replay reports its memory; also with every
// entry streamed from the log (StreamFrom 1: the 3,000 rows installed
// from three chunks read from the segment file) and with none.
func TestReplayLargeTxn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	src, err := MakeLog(context.Background(), MakeLogConfig{Datadir: dir, Transactions: 20, ConflictRate: 0.3, HotRows: 4,
		Rows: 50, Threads: 2, Seed: 3, LargeTxnRows: 3000})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range src.Checksums {
		found = found || c.Table == "sbtest.large" && c.Rows == "3000"
	}
	if !found {
		t.Fatalf("no 3,000-row sbtest.large at the source: %+v", src.Checksums)
	}
	for _, c := range []ReplayConfig{{Workers: 1}, {Workers: 4}, {Workers: 4, Scheduler: apply.SchedulerCoordinator},
		{Workers: 1, StreamFrom: 1}, {Workers: 4, StreamFrom: 1}, {Workers: 1, StreamFrom: -1}} {
		c.Datadir, c.PreserveCommitOrder = dir, true
		var out bytes.Buffer
		c.Out = &out
		res, err := Replay(context.Background(), c)
		if err != nil {
			t.Fatalf("%d workers, %v: %v", c.Workers, c.Scheduler, err)
		}
		if !res.ChecksumsMatch() {
			t.Errorf("%d workers, %v: replayed %+v, source %+v", c.Workers, c.Scheduler, res.Checksums, src.Checksums)
		}
		if streamed := res.Streamed > 0; streamed != (c.StreamFrom > 0) || res.Streamed > res.Entries {
			t.Errorf("StreamFrom %d: %d of %d entries streamed", c.StreamFrom, res.Streamed, res.Entries)
		}
		if res.Memory.HeapObjects == 0 || res.Memory.LiveAfter == 0 || res.MaxEntry < 3000*20 || !strings.Contains(out.String(), "peak memory") {
			t.Errorf("%d workers: memory %+v, largest entry %d\n%s", c.Workers, res.Memory, res.MaxEntry, out.String())
		}
	}
}
