package server

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"lockstep/internal/apply"
	"lockstep/internal/config"
	logrec "lockstep/internal/record"
	"lockstep/internal/sqlfront"
)

// TestLargeTxnChunkedAtomic: a 5,000-row transaction (one INSERT ...
// SELECT) is replayed a chunk of apply.DefaultChunkChanges rows at a time,
// serially and by the parallel applier. A reader that looks after every
// chunk (a new statement: a new ReadView) sees none of its rows until it
// is published, then all of them, with the row after it. The same log
// with its last change made unappliable stops the applier with an error
// naming the change, after the earlier chunks were installed, and leaves
// nothing of the transaction: not in the table, its index or COUNT(*).
func TestLargeTxnChunkedAtomic(t *testing.T) {
	const rows = 5000
	cfg := config.Default()
	cfg.Datadir = t.TempDir()
	cfg.CheckpointLogSize = 0
	s := openLocal(t, cfg, nil)
	var seq strings.Builder
	for i := 0; i < 100; i++ {
		if i > 0 {
			seq.WriteByte(',')
		}
		fmt.Fprintf(&seq, "(%d)", i)
	}
	s.exec("CREATE DATABASE f", "CREATE TABLE f.seq (n INT PRIMARY KEY)", "INSERT INTO f.seq VALUES "+seq.String(),
		"CREATE TABLE f.t (id INT PRIMARY KEY, v INT, c VARCHAR(20), KEY (v))",
		"INSERT INTO f.t VALUES (1, 1, 'first')",
		fmt.Sprintf("INSERT INTO f.t SELECT 100 + a.n * 100 + b.n, a.n * 100 + b.n, CONCAT('r', b.n) FROM f.seq a CROSS JOIN f.seq b WHERE a.n * 100 + b.n < %d", rows),
		"INSERT INTO f.t VALUES (2, 2, 'after')")
	uuid := s.d.uuid
	s.close()

	good := readLogEntries(t, filepath.Join(cfg.Datadir, "log"))
	bad := make([][]byte, len(good))
	copy(bad, good)
	var big logrec.Position
	var bigIndex uint64
	for i, b := range good {
		if k, _, _ := logrec.PeekPosition(b); k != logrec.KindTxn {
			continue // one record per entry in a standalone server's log
		}
		tx, err := logrec.DecodeTxn(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(tx.Changes) != rows {
			continue
		}
		tx.Changes[rows-1].Version += 7
		bad[i] = logrec.AppendTxn(nil, tx)
		big, bigIndex = tx.Position, uint64(i+1)
	}
	if bigIndex == 0 {
		t.Fatalf("no %d-row transaction in the log", rows)
	}
	wantChunks := (rows + apply.DefaultChunkChanges - 1) / apply.DefaultChunkChanges

	// look is the reader: what a new statement sees of the table.
	look := func(ls *localServer) string {
		rows, err := ls.query("SELECT COUNT(*), COALESCE(SUM(v), 0), (SELECT COUNT(*) FROM f.t WHERE v >= 0 AND v < 100000) FROM f.t")
		if err != nil {
			return err.Error()
		}
		return fmt.Sprint(rows)
	}
	const before = "[[1 1 1]]"
	after := fmt.Sprintf("[[%d %d %d]]", rows+2, 1+2+rows*(rows-1)/2, rows+2)

	for _, workers := range []int{1, 4} {
		for _, tc := range []struct {
			name    string
			log     [][]byte
			wantErr string
		}{
			{"whole", good, ""},
			{"last change fails", bad, fmt.Sprintf("log index %d (sequence number %d, GTID %s:%d): ", bigIndex, big.Seq, uuid, big.GNO)},
		} {
			t.Run(fmt.Sprintf("%s/workers=%d", tc.name, workers), func(t *testing.T) {
				fe, err := sqlfront.New(sqlfront.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer fe.Close()
				ls := &localServer{t: t, fe: fe, ctx: fe.NewLocalContext(context.Background())}
				chunks := 0
				var seen []string
				x := &recoveryExec{fe: fe, w: io.Discard, afterChunk: func(tx *logrec.Txn) {
					if !tx.Chunked() {
						return // a small transaction: one chunk, decoded whole
					}
					chunks++
					// The row before it (its own transaction, not a
					// dependency of the big one: the applier may run both
					// at once) may not be published yet; nothing of the
					// big one may show.
					if got := look(ls); got != before && got != "[[0 0 0]]" {
						seen = append(seen, fmt.Sprintf("after chunk %d: %s", chunks, got))
					}
				}}
				m := apply.New(apply.Options{FailedDDL: sqlfront.FailedDDLIndex, UUID: uuid})
				err = feedAll(m, x, workers, tc.log)
				if tc.wantErr == "" {
					if err != nil {
						t.Fatal(err)
					}
					if got := look(ls); got != after {
						t.Errorf("after replay: %s, want %s", got, after)
					}
				} else {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), fmt.Sprintf("(change %d of %d)", rows, rows)) {
						t.Fatalf("error %v\nwant one naming %q and the change", err, tc.wantErr)
					}
					// The row before it (its own transaction, not a
					// dependency of the big one: the applier may run both
					// at once) may not be published yet; nothing of the
					// big one may show.
					if got := look(ls); got != before && got != "[[0 0 0]]" {
						t.Errorf("after the failure: %s, want only the row before it (%s)", got, before)
					}
					if got := m.Applied().Seq; got != big.Seq-1 {
						t.Errorf("applied through sequence number %d, want %d", got, big.Seq-1)
					}
				}
				// Every chunk but a failed last one was installed and looked at.
				want := wantChunks
				if tc.wantErr != "" {
					want--
				}
				if chunks != want {
					t.Errorf("%d chunks installed, want %d", chunks, want)
				}
				if len(seen) > 0 {
					t.Errorf("the reader saw part of the held transaction %d times, first %s", len(seen), seen[0])
				}
			})
		}
	}
}

// feedAll applies the entries with the serial driver (workers 1) or the
// parallel one.
func feedAll(m *apply.Machine, x *recoveryExec, workers int, log [][]byte) error {
	if workers == 1 {
		for i, b := range log {
			if err := m.Entry(uint64(i+1), b); err != nil {
				return err
			}
			if err := apply.Drain(m, x); err != nil {
				return err
			}
		}
		return nil
	}
	p := apply.NewParallel(m, x, apply.ParallelOptions{Workers: workers, PreserveCommitOrder: true})
	var err error
	for i, b := range log {
		if err = p.Entry(uint64(i+1), b); err != nil {
			break
		}
	}
	if err == nil {
		err = p.Wait()
	}
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	return err
}
