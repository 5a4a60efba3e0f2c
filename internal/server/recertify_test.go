package server

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"lockstep/internal/apply"
	logrec "lockstep/internal/record"
)

// stripLastCommitted re-encodes every record of the entries with
// last_committed 0: a log whose source did not fill the field (missing
// reads as 0, "depends on nothing").
func stripLastCommitted(t *testing.T, payloads [][]byte) [][]byte {
	t.Helper()
	out := make([][]byte, len(payloads))
	for i, b := range payloads {
		recs, err := logrec.EntryRecords(b)
		if err != nil {
			t.Fatal(err)
		}
		for j, r := range recs {
			k, _, err := logrec.PeekPosition(r)
			if err != nil {
				t.Fatal(err)
			}
			switch k {
			case logrec.KindTxn:
				tx, err := logrec.DecodeTxn(r)
				if err != nil {
					t.Fatal(err)
				}
				tx.LastCommitted = 0
				recs[j] = logrec.AppendTxn(nil, tx)
			case logrec.KindDDL:
				d, err := logrec.DecodeDDL(r)
				if err != nil {
					t.Fatal(err)
				}
				d.LastCommitted = 0
				recs[j] = logrec.AppendDDL(nil, d)
			case logrec.KindAccounts:
				a, err := logrec.DecodeAccounts(r)
				if err != nil {
					t.Fatal(err)
				}
				a.LastCommitted = 0
				recs[j] = logrec.AppendAccounts(nil, a)
			}
		}
		if len(recs) == 1 {
			out[i] = recs[0]
		} else {
			out[i] = logrec.AppendBatch(nil, recs...)
		}
	}
	return out
}

// depRecorder records the last_committed and writeset of every
// transaction the applier installs.
type depRecorder struct {
	apply.HeldExecutor
	mu   sync.Mutex
	txns map[int64]*logrec.Txn
}

func (x *depRecorder) note(t *logrec.Txn) {
	x.mu.Lock()
	x.txns[t.Seq] = &logrec.Txn{Position: t.Position, Writeset: slices.Clone(t.Writeset)}
	x.mu.Unlock()
}

func (x *depRecorder) Txn(t *logrec.Txn) error {
	x.note(t)
	return x.HeldExecutor.Txn(t)
}

func (x *depRecorder) TxnHeld(t *logrec.Txn) (func(), func(), error) {
	x.note(t)
	return x.HeldExecutor.TxnHeld(t)
}

// missedDeps checks every transaction's last_committed against an exact
// oracle: it must be at least the sequence number of the last earlier
// record that wrote one of its keys, and of the last DDL or account
// record (sequence numbers missing from txns). It returns the violations
// and how many transactions could start before their predecessor.
func missedDeps(txns map[int64]*logrec.Txn, lastSeq int64) (missed []int64, parallel int) {
	lastWriter := map[uint64]int64{}
	var floor int64
	for seq := int64(1); seq <= lastSeq; seq++ {
		tx, ok := txns[seq]
		if !ok {
			floor = seq // a DDL or account record: serial
			continue
		}
		need := floor
		for _, h := range tx.Writeset {
			need = max(need, lastWriter[h])
		}
		if tx.LastCommitted < need {
			missed = append(missed, seq)
		}
		if tx.LastCommitted < seq-1 {
			parallel++
		}
		for _, h := range tx.Writeset {
			lastWriter[h] = seq
		}
	}
	return missed, parallel
}

// TestParallelReplayRecertified: the bank log with every last_committed
// wiped (a source without the field) replayed with apply's Recertify —
// dependencies computed from the writesets by the certifier — gives the
// source's state with 1, 2, 4, 8 and 16 jittered workers; no transaction
// misses a dependency an exact oracle finds, and most may still run in
// parallel. Without Recertify the same log misses dependencies (the
// check can fail).
func TestParallelReplayRecertified(t *testing.T) {
	cfg, want := makeBankLog(t)
	stripped := stripLastCommitted(t, readLogEntries(t, filepath.Join(cfg.Datadir, "log")))
	run := func(workers int, recertify bool) (string, map[int64]*logrec.Txn, int64) {
		rec := &depRecorder{txns: map[int64]*logrec.Txn{}}
		var lastSeq int64
		state := replayEntriesWith(t, stripped, workers, apply.Options{Recertify: recertify}, func(x apply.HeldExecutor) apply.Executor {
			rec.HeldExecutor = x
			return rec
		})
		for _, b := range stripped {
			recs, _ := logrec.EntryRecords(b)
			for _, r := range recs {
				_, pos, _ := logrec.PeekPosition(r)
				lastSeq = max(lastSeq, pos.Seq)
			}
		}
		return state, rec.txns, lastSeq
	}
	for _, workers := range []int{1, 2, 4, 8, 16} {
		got, txns, lastSeq := run(workers, true)
		if got != want {
			t.Errorf("%d workers, recertified: replayed state\n%s\nwant\n%s", workers, got, want)
		}
		missed, parallel := missedDeps(txns, lastSeq)
		if len(missed) > 0 {
			t.Errorf("%d workers, recertified: transactions %v miss a dependency", workers, missed)
		}
		if parallel < len(txns)/4 {
			t.Errorf("%d workers, recertified: only %d of %d transactions may start before their predecessor", workers, parallel, len(txns))
		}
		t.Logf("%d workers: %d transactions, %d may start before their predecessor", workers, len(txns), parallel)
	}
	_, txns, lastSeq := run(1, false)
	if missed, _ := missedDeps(txns, lastSeq); len(missed) == 0 {
		t.Fatal("the log without last_committed misses no dependency when read as it is: the check cannot fail")
	}
}
