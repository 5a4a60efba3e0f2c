package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"lockstep/internal/apply"
	"lockstep/internal/config"
	logrec "lockstep/internal/record"
	"lockstep/internal/sqlfront"
	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// TestApplyFailureAtomic: a log whose five-row transaction has a third
// row that cannot be applied (its change names a table definition the
// table never had) stops the serial and the parallel applier with an
// error naming the record's GTID (server_uuid:GNO), log index and
// sequence number; the table holds none of the transaction's rows — not
// the two before the bad one, in the table or its index — nor the
// transaction after it, and the applied position is just before it.
func TestApplyFailureAtomic(t *testing.T) {
	cfg := config.Default()
	cfg.Datadir = t.TempDir()
	cfg.CheckpointLogSize = 0
	s := openLocal(t, cfg, nil)
	s.exec("CREATE DATABASE f", "CREATE TABLE f.t (id INT PRIMARY KEY, v INT, KEY (v))",
		"INSERT INTO f.t VALUES (1, 1)",
		"BEGIN", "INSERT INTO f.t VALUES (10, 10), (11, 11)", "INSERT INTO f.t VALUES (12, 12), (13, 13), (14, 14)", "COMMIT",
		"INSERT INTO f.t VALUES (20, 20)")
	uuid := s.d.uuid
	s.close()

	payloads := readLogEntries(t, filepath.Join(cfg.Datadir, "log"))
	var bad logrec.Position
	var badIndex uint64
	for i, b := range payloads {
		recs, err := logrec.EntryRecords(b)
		if err != nil {
			t.Fatal(err)
		}
		for j, r := range recs {
			if k, _, _ := logrec.PeekPosition(r); k != logrec.KindTxn {
				continue
			}
			tx, err := logrec.DecodeTxn(r)
			if err != nil {
				t.Fatal(err)
			}
			if len(tx.Changes) != 5 {
				continue
			}
			tx.Changes[2].Version += 7
			recs[j] = logrec.AppendTxn(nil, tx)
			bad, badIndex = tx.Position, uint64(i+1)
		}
		if badIndex == uint64(i+1) {
			if len(recs) == 1 {
				payloads[i] = recs[0]
			} else {
				payloads[i] = logrec.AppendBatch(nil, recs...)
			}
		}
	}
	if badIndex == 0 {
		t.Fatal("no five-row transaction in the log")
	}
	wantErr := fmt.Sprintf("log index %d (sequence number %d, GTID %s:%d): ", badIndex, bad.Seq, uuid, bad.GNO)
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			fe, err := sqlfront.New(sqlfront.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer fe.Close()
			x := &recoveryExec{fe: fe, w: io.Discard}
			m := apply.New(apply.Options{FailedDDL: sqlfront.FailedDDLIndex, UUID: uuid})
			if workers == 1 {
				for i, b := range payloads {
					if err = m.Entry(uint64(i+1), b); err == nil {
						err = apply.Drain(m, x)
					}
					if err != nil {
						break
					}
				}
			} else {
				p := apply.NewParallel(m, x, apply.ParallelOptions{Workers: workers, PreserveCommitOrder: true})
				for i, b := range payloads {
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
			}
			if err == nil || !strings.Contains(err.Error(), wantErr) || !strings.Contains(err.Error(), "(change 3 of 5)") {
				t.Fatalf("error %v\nwant one naming %q and the change", err, wantErr)
			}
			ls := &localServer{t: t, fe: fe, ctx: fe.NewLocalContext(context.Background())}
			if got := ls.rowsString("SELECT id, v FROM f.t ORDER BY id"); got != "[[1 1]]" {
				t.Errorf("rows %s, want only the row before the failed transaction", got)
			}
			if got := ls.rowsString("SELECT id FROM f.t WHERE v >= 10 ORDER BY v"); got != "[]" {
				t.Errorf("index on v finds %s", got)
			}
			if got := ls.rowsString("SELECT COUNT(*) FROM f.t"); got != "[[1]]" {
				t.Errorf("COUNT(*) %s", got)
			}
			if got := m.Applied().Seq; got != bad.Seq-1 {
				t.Errorf("applied through sequence number %d, want %d", got, bad.Seq-1)
			}
			if mt := m.Metrics(); mt.AppliedGNO != bad.GNO-1 || mt.Lag < 1 {
				t.Errorf("applied GNO %d (want %d), lag %d", mt.AppliedGNO, bad.GNO-1, mt.Lag)
			}
		})
	}
}

// TestApplyErrorTransient: the executor marks the lock errors a
// transaction's apply may meet as transient (the applier retries them) and
// nothing else.
func TestApplyErrorTransient(t *testing.T) {
	for _, c := range []struct {
		err       error
		transient bool
	}{
		{fmt.Errorf("storage: apply to t: %w", txn.ErrLockWaitTimeout), true},
		{fmt.Errorf("storage: apply to t: %w", txn.ErrDeadlock), true},
		{errors.New("storage: apply to t: change encoded for definition version 9, table is at 1"), false},
		{storage.ErrTableChanged, false},
	} {
		if got := apply.IsTransient(applyError(c.err)); got != c.transient {
			t.Errorf("%v: transient %v, want %v", c.err, got, c.transient)
		}
	}
}
