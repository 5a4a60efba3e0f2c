package server

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"lockstep/internal/apply"
	"lockstep/internal/config"
	logrec "lockstep/internal/record"
	"lockstep/internal/sqlfront"
	"lockstep/internal/txlog"
)

// jitterExec is the recovery executor with a random pause before each
// transaction, so that workers overlap and finish out of order: a wrong
// last_committed then shows in the data (the oracle can fail).
type jitterExec struct{ *recoveryExec }

var _ apply.HeldExecutor = jitterExec{}

func (x jitterExec) pause() { time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond) }

func (x jitterExec) Txn(t *logrec.Txn) error {
	x.pause()
	return x.recoveryExec.Txn(t)
}

func (x jitterExec) TxnHeld(t *logrec.Txn) (publish, rollback func(), err error) {
	x.pause()
	return x.recoveryExec.TxnHeld(t)
}

// bankState is what the oracle compares: every table's rows.
func bankState(s *localServer) string {
	return s.rowsString("SELECT id, bal FROM b.acct ORDER BY id") + " | " +
		s.rowsString("SELECT id, a, z, amt FROM b.hist ORDER BY id")
}

// readLogEntries returns every entry's payload of the log in dir.
func readLogEntries(t *testing.T, dir string) [][]byte {
	t.Helper()
	l, _, err := txlog.Open(txlog.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ents, err := l.Read(l.FirstIndex(), l.LastIndex()+1, -1)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(ents))
	for i, e := range ents {
		out[i] = append([]byte(nil), e.Payload...)
	}
	return out
}

// replayEntries replays payloads (log indexes 1, 2, ...) into a fresh
// frontend with the parallel applier and returns the tables' contents.
func replayEntries(t *testing.T, payloads [][]byte, workers int) string {
	t.Helper()
	return replayEntriesWith(t, payloads, workers, apply.Options{}, nil)
}

// replayEntriesWith is replayEntries with the machine's options (its
// FailedDDL is set here) and, if wrap is not nil, the executor it returns.
func replayEntriesWith(t *testing.T, payloads [][]byte, workers int, opts apply.Options, wrap func(apply.HeldExecutor) apply.Executor) string {
	t.Helper()
	fe, err := sqlfront.New(sqlfront.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fe.Close()
	opts.FailedDDL = sqlfront.FailedDDLIndex
	m := apply.New(opts)
	var x apply.Executor = jitterExec{&recoveryExec{fe: fe, w: io.Discard}}
	if wrap != nil {
		x = wrap(x.(apply.HeldExecutor))
	}
	p := apply.NewParallel(m, x, apply.ParallelOptions{Workers: workers, PreserveCommitOrder: true})
	for i, b := range payloads {
		if err := p.Entry(uint64(i+1), b); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	s := &localServer{t: t, fe: fe, ctx: fe.NewLocalContext(context.Background())}
	return bankState(s)
}

// makeBankLog runs concurrent bank transfers (with inserts into and
// deletes from a history table) on a durable server and returns its data
// directory and final state.
func makeBankLog(t *testing.T) (config.Config, string) {
	cfg := config.Default()
	cfg.Datadir = t.TempDir()
	cfg.CheckpointLogSize = 0
	s := openLocal(t, cfg, nil)
	const accounts = 12
	s.exec("CREATE DATABASE b",
		"CREATE TABLE b.acct (id INT PRIMARY KEY, bal INT NOT NULL)",
		"CREATE TABLE b.hist (id INT PRIMARY KEY AUTO_INCREMENT, a INT, z INT, amt INT, KEY (a))")
	for i := 1; i <= accounts; i++ {
		s.exec(fmt.Sprintf("INSERT INTO b.acct VALUES (%d, 1000)", i))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	committed := 0
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := &localServer{t: t, fe: s.fe, d: s.d, ctx: s.fe.NewLocalContext(context.Background())}
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for range 60 {
				a, z := 1+r.IntN(accounts), 1+r.IntN(accounts)
				if a == z {
					continue
				}
				amt := 1 + r.IntN(50)
				lo, hi, dlo, dhi := a, z, -amt, amt
				if lo > hi { // rows in id order: no deadlock between transfers
					lo, hi, dlo, dhi = z, a, amt, -amt
				}
				qs := []string{"BEGIN",
					fmt.Sprintf("UPDATE b.acct SET bal = bal + %d WHERE id = %d", dlo, lo),
					fmt.Sprintf("UPDATE b.acct SET bal = bal + %d WHERE id = %d", dhi, hi),
					fmt.Sprintf("INSERT INTO b.hist (a, z, amt) VALUES (%d, %d, %d)", a, z, amt)}
				if r.IntN(3) == 0 {
					qs = append(qs, fmt.Sprintf("DELETE FROM b.hist WHERE a = %d ORDER BY id LIMIT 1", a))
				}
				ok := true
				for _, q := range qs {
					if _, err := sess.query(q); err != nil {
						ok = false
						break
					}
				}
				if ok {
					_, err := sess.query("COMMIT")
					ok = err == nil
				}
				if !ok {
					sess.query("ROLLBACK")
					continue
				}
				mu.Lock()
				committed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if committed < 100 {
		t.Fatalf("only %d transfers committed", committed)
	}
	if got := s.rowsString("SELECT SUM(bal) FROM b.acct"); got != fmt.Sprintf("[[%d]]", accounts*1000) {
		t.Fatalf("sum of balances %s", got)
	}
	want := bankState(s)
	s.close()
	return cfg, want
}

// TestParallelReplayOracle: a log made by concurrent random transactions
// (bank transfers, inserts and deletes) replayed into fresh engines with
// 1, 2, 4, 8 and 16 workers (and the commit-order gate) gives exactly the
// source's final state; so does the server's recovery with
// ReplicaParallelWorkers. The same log with a wrong last_committed
// (every transaction made independent of every other) gives another
// state: the oracle catches it.
func TestParallelReplayOracle(t *testing.T) {
	cfg, want := makeBankLog(t)
	payloads := readLogEntries(t, filepath.Join(cfg.Datadir, "log"))
	deps := 0
	for _, b := range payloads {
		recs, err := logrec.EntryRecords(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if k, pos, _ := logrec.PeekPosition(r); k == logrec.KindTxn && pos.LastCommitted < pos.Seq-1 {
				deps++
			}
		}
	}
	if deps < 10 {
		t.Fatalf("only %d transactions had a last_committed before their predecessor: nothing to run in parallel", deps)
	}
	for _, workers := range []int{1, 2, 4, 8, 16} {
		if got := replayEntries(t, payloads, workers); got != want {
			t.Errorf("%d workers: replayed state\n%s\nwant\n%s", workers, got, want)
		}
	}
	for _, workers := range []int{4, 16} {
		c := cfg
		c.ReplicaParallelWorkers = workers
		s := openLocal(t, c, nil)
		if got := bankState(s); got != want {
			t.Errorf("recovery with %d workers: state\n%s\nwant\n%s", workers, got, want)
		}
		s.close()
	}

	// The oracle can fail: every transaction after the tables' creation
	// claims to depend on nothing (last_committed = the DDL before them).
	rewrite := func(wrongLC bool) [][]byte {
		wrong := make([][]byte, len(payloads))
		var ddlSeq int64
		for i, b := range payloads {
			recs, err := logrec.EntryRecords(b)
			if err != nil {
				t.Fatal(err)
			}
			for j, r := range recs {
				k, pos, _ := logrec.PeekPosition(r)
				if k == logrec.KindDDL {
					ddlSeq = pos.Seq
				}
				if k != logrec.KindTxn {
					continue
				}
				tx, err := logrec.DecodeTxn(r)
				if err != nil {
					t.Fatal(err)
				}
				if wrongLC {
					tx.LastCommitted = ddlSeq
				}
				recs[j] = logrec.AppendTxn(nil, tx)
			}
			if len(recs) == 1 {
				wrong[i] = recs[0]
			} else {
				wrong[i] = logrec.AppendBatch(nil, recs...)
			}
		}
		return wrong
	}
	// The rewriting itself changes nothing.
	if got := replayEntries(t, rewrite(false), 16); got != want {
		t.Fatalf("the log re-encoded unchanged replays to\n%s\nwant\n%s", got, want)
	}
	wrong := rewrite(true)
	caught := false
	for try := 0; try < 5 && !caught; try++ {
		caught = replayEntries(t, wrong, 16) != want
		t.Logf("wrong last_committed, try %d: caught %v", try+1, caught)
	}
	if !caught {
		t.Fatal("a log whose transactions all claim to be independent replayed to the source's state five times: the oracle cannot fail")
	}
}
