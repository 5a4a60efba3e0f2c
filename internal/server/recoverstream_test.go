package server

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"lockstep/internal/config"
	"lockstep/internal/txlog"
)

// TestRecoverStreamsLargeTxn: a server whose log ends with one
// transaction of 200,000 rows, after a checkpoint, recovers exactly its
// rows — serially and with 4 workers — with the entry streamed from the
// log (txlog.ReadStreaming, EntryStream: docs/apply.md "Large entries")
// rather than read whole: Lockstep_applier_streamed_entries is 1 in SHOW
// STATUS. The check that the log reaches the checkpoint reads the last
// entry's position from its start (lastLoggedSeq) instead of the entry.
// The log is closed as a crash leaves it (sync_binlog=1: every commit was
// durable; nothing at shutdown is written that recovery reads).
func TestRecoverStreamsLargeTxn(t *testing.T) {
	const side, rows = 1000, 200_000
	cfg := config.Default()
	cfg.Datadir = t.TempDir()
	cfg.CheckpointLogSize = 0
	s := openLocal(t, cfg, nil)
	var seq strings.Builder
	for i := 0; i < side; i++ {
		if i > 0 {
			seq.WriteByte(',')
		}
		fmt.Fprintf(&seq, "(%d)", i)
	}
	s.exec("CREATE DATABASE r", "CREATE TABLE r.seq (n INT PRIMARY KEY)", "INSERT INTO r.seq VALUES "+seq.String(),
		"CREATE TABLE r.big (id BIGINT PRIMARY KEY, k INT, c CHAR(40), KEY (k))",
		"INSERT INTO r.big VALUES (0, 0, 'first')")
	if _, err := s.d.checkpoint(s.fe); err != nil {
		t.Fatal(err)
	}
	s.exec(fmt.Sprintf("INSERT INTO r.big SELECT a.n * %d + b.n + 1, (a.n * 7919 + b.n) %% 1000, CONCAT('large-', a.n, '-', LPAD(b.n, 12, '0')) "+
		"FROM r.seq a CROSS JOIN r.seq b WHERE a.n * %d + b.n < %d", side, side, rows))
	want := fmt.Sprint(s.rows("SELECT COUNT(*), SUM(id), SUM(k), SUM(LENGTH(c)), (SELECT COUNT(*) FROM r.big WHERE k < 500) FROM r.big"))
	// 'first' and 200 values of a.n: 10 of one digit, 90 of two, 100 of three.
	if w := fmt.Sprintf("[[%d %d %d %d %d]]", rows+1, int64(rows)*(rows+1)/2, 200*(999*1000/2), 5+200*19*1000+1000*(10+180+300), 100_001); want != w {
		t.Fatalf("the source has %s, want %s", want, w)
	}
	s.close()

	// The large entry is the log's last and is stored (compressed) above
	// the size from which it is streamed.
	l, _, err := txlog.Open(txlog.Options{Dir: filepath.Join(cfg.Datadir, "log"), MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	last := l.LastIndex()
	ents, err := l.ReadStreaming(last, last+1, -1, txlog.StreamFrom)
	if err != nil || len(ents) != 1 || !ents[0].Streamed {
		l.Close()
		t.Fatalf("the log's last entry is not one to be streamed: %v %+v", err, ents)
	}
	whole, err := l.Read(last, last+1, -1)
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	size := len(whole[0].Payload)
	whole = nil
	// Its sequence number is read from its start (the checkpoint's check
	// at every start): what that allocates is the payload reader's
	// (txlog.StreamMemory at most: read buffer, zstd window), not the
	// entry's bytes, which reading it whole allocates at least.
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	lastSeq, found, err := lastLoggedSeq(l)
	runtime.ReadMemStats(&m1)
	l.Close()
	if err != nil || !found || lastSeq != 7 {
		t.Fatalf("lastLoggedSeq: %d %v %v, want sequence number 7 (the checkpoint marker is 6)", lastSeq, found, err)
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > uint64(size)*3/4 {
		t.Errorf("lastLoggedSeq allocated %d bytes for a last entry of %d", alloc, size)
	}
	t.Logf("the last entry: %d bytes; lastLoggedSeq allocated %d", size, m1.TotalAlloc-m0.TotalAlloc)

	for _, workers := range []int{1, 4} {
		cfg.ReplicaParallelWorkers = workers
		r := openLocal(t, cfg, nil)
		if got := fmt.Sprint(r.rows("SELECT COUNT(*), SUM(id), SUM(k), SUM(LENGTH(c)), (SELECT COUNT(*) FROM r.big WHERE k < 500) FROM r.big")); got != want {
			t.Errorf("workers %d: recovered %s, want %s", workers, got, want)
		}
		st := r.rows("SHOW GLOBAL STATUS LIKE 'Lockstep_applier_streamed_entries'")
		if got := fmt.Sprint(st); got != "[[Lockstep_applier_streamed_entries 1]]" {
			t.Errorf("workers %d: SHOW STATUS %s, want the large entry streamed", workers, got)
		}
		if a := r.d.applier; a.Transactions != 1 || a.Streamed != 1 {
			t.Errorf("workers %d: the applier applied %d transactions, streamed %d entries; want 1 and 1", workers, a.Transactions, a.Streamed)
		}
		r.close()
	}
}

// rows runs q and returns its rows (the test fails on an error).
func (s *localServer) rows(q string) [][]any {
	s.t.Helper()
	rs, err := s.query(q)
	if err != nil {
		s.t.Fatalf("%s: %v", q, err)
	}
	out := make([][]any, len(rs))
	for i, r := range rs {
		out[i] = []any(r)
	}
	return out
}
