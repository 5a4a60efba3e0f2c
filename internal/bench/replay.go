package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"lockstep/internal/apply"
	logrec "lockstep/internal/record"
	"lockstep/internal/server"
	"lockstep/internal/sqlfront"
	"lockstep/internal/storage"
	"lockstep/internal/txlog"
)

// ReplayConfig is a replay of a stopped server's data directory.
type ReplayConfig struct {
	Datadir string
	Workers int // 1: the serial applier (apply.Drain); more: apply.Parallel
	// PreserveCommitOrder (replica_preserve_commit_order) with Workers > 1:
	// transactions become visible in sequence order.
	PreserveCommitOrder bool
	// Scheduler, with Workers > 1: who waits for a transaction's
	// last_committed — its worker (lockstep's) or the dispatching thread
	// (MySQL's coordinator, the baseline).
	Scheduler apply.Scheduler
	// Recertify ignores the records' last_committed and computes it with
	// a certifier from their writesets (apply.Options.Recertify).
	Recertify bool
	// StreamFrom: an entry whose stored payload is this many bytes or
	// more is streamed (txlog.ReadStreaming). 0: txlog.StreamFrom;
	// negative: never.
	StreamFrom     int
	ReportInterval time.Duration
	Out            io.Writer // the table and the result line
	Progress       io.Writer // progress lines and the applier's notes (stderr)
}

// ReplayResult is what a replay measured.
type ReplayResult struct {
	Transactions int64 // transaction records applied
	OtherRecords int64 // DDL and account records applied
	Skipped      int64 // records the checkpoint held
	Entries      int64
	Streamed     int64 // entries read as a stream (txlog.OpenPayload)
	SerialDeps   int64 // records whose last_committed was not usable (their predecessor)
	Certified    int64 // records whose last_committed was computed (Recertify)
	CertMean     float64
	FirstIndex   uint64
	LastIndex    uint64
	FromSeq      int64 // the checkpoint's sequence number (0: from empty)
	CheckpointNs time.Duration
	ReadNs       time.Duration // reading (and uncompressing) the log
	Elapsed      time.Duration // reading and applying the log, not the checkpoint
	Checksums    []TableChecksum
	Source       *SourceInfo // the generator's record, if the data directory has one
	// PayloadBytes is the log's entries' payload bytes (uncompressed),
	// MaxEntry the largest one's.
	PayloadBytes, MaxEntry int64
	// Memory: the Go heap's and the process's peaks while the log was
	// read and applied (not the checksums after), and the heap the
	// replayed data keeps.
	Memory MemPeak
	// Waits: the parallel applier's (0 serially): transactions that
	// waited for their last_committed (in their worker, or in the
	// coordinator), and at the commit-order gate.
	DependencyWaits, GateWaits int64
}

// Rate is the replay rate in transactions per second.
func (r *ReplayResult) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Transactions) / r.Elapsed.Seconds()
}

// countingExec counts the transactions the executor applies (workers
// call it concurrently).
type countingExec struct {
	apply.Executor
	txns, other atomic.Int64
}

func (x *countingExec) Txn(t *logrec.Txn) error {
	x.txns.Add(1)
	return x.Executor.Txn(t)
}

func (x *countingExec) DDL(d *logrec.DDL) (error, error) {
	x.other.Add(1)
	return x.Executor.DDL(d)
}

func (x *countingExec) Accounts(a *logrec.Accounts) error {
	x.other.Add(1)
	return x.Executor.Accounts(a)
}

// countingHeldExec keeps the executor's TxnHeld (the parallel applier
// installs with it and publishes at the commit-order gate).
type countingHeldExec struct {
	*countingExec
	hx apply.HeldExecutor
}

var _ apply.HeldExecutor = countingHeldExec{}

func (x countingHeldExec) TxnHeld(t *logrec.Txn) (publish, rollback func(), err error) {
	x.txns.Add(1)
	return x.hx.TxnHeld(t)
}

// Replay loads the data directory's newest checkpoint (if any) into a
// fresh in-memory engine and applies every record of its log after it
// through the apply state machine and the executor crash recovery uses
// (server.NewApplyExecutor): serially (apply.Drain) with one worker, with
// the parallel applier (apply.Parallel) with more. The data directory
// is opened as a server start would open its log (a torn tail is
// truncated); nothing else in it is written.
func Replay(ctx context.Context, c ReplayConfig) (*ReplayResult, error) {
	if c.Datadir == "" {
		return nil, errors.New("--datadir is required")
	}
	if c.Workers < 1 {
		return nil, fmt.Errorf("--workers must be at least 1, not %d", c.Workers)
	}
	out, prog := orDiscard(c.Out), orDiscard(c.Progress)
	if _, err := os.Stat(filepath.Join(c.Datadir, "auto.cnf")); err != nil {
		return nil, fmt.Errorf("%s is not a lockstep data directory (no auto.cnf)", c.Datadir)
	}
	l, _, err := txlog.Open(txlog.Options{Dir: filepath.Join(c.Datadir, "log"), MustExist: true})
	if err != nil {
		return nil, fmt.Errorf("open the log: %w", err)
	}
	defer l.Close()
	store := storage.New(storage.Options{})
	fe, err := sqlfront.New(sqlfront.Options{Store: store})
	if err != nil {
		store.Close()
		return nil, err
	}
	defer fe.Close()

	res := &ReplayResult{FirstIndex: l.FirstIndex(), LastIndex: l.LastIndex()}
	t0 := time.Now()
	seq, gno, err := server.LoadDatadirCheckpoint(c.Datadir, l, fe, prog)
	if err != nil {
		return nil, err
	}
	res.FromSeq, res.CheckpointNs = seq, time.Since(t0)

	m := apply.New(apply.Options{Applied: apply.Position{Seq: seq}, ExecutedGNO: gno, FailedDDL: sqlfront.FailedDDLIndex, Recertify: c.Recertify})
	cx := &countingExec{Executor: server.NewApplyExecutor(fe, prog)}
	var x apply.Executor = cx
	if hx, ok := cx.Executor.(apply.HeldExecutor); ok {
		x = countingHeldExec{cx, hx}
	}
	feed := func(index uint64, payload []byte) error {
		if err := m.Entry(index, payload); err != nil {
			return err
		}
		return apply.Drain(m, x)
	}
	// A large entry is streamed (txlog.ReadStreaming, OpenPayload): its
	// transaction is read from the log a chunk at a time as it is applied.
	feedStream := func(index uint64, open logrec.Opener) error {
		if err := m.EntryStream(index, open, txlog.StreamMemory); err != nil {
			return err
		}
		return apply.Drain(m, x)
	}
	var par *apply.Parallel
	if c.Workers > 1 {
		// The entries' payloads are the caller's (txlog.Read), so steps
		// may still be running while the next entries are read.
		par = apply.NewParallel(m, x, apply.ParallelOptions{Workers: c.Workers, PreserveCommitOrder: c.PreserveCommitOrder, Scheduler: c.Scheduler})
		defer par.Close()
		feed = par.Entry
		feedStream = func(index uint64, open logrec.Opener) error {
			return par.EntryStream(index, open, txlog.StreamMemory)
		}
	}
	streamFrom := c.StreamFrom
	switch {
	case streamFrom == 0:
		streamFrom = txlog.StreamFrom
	case streamFrom < 0:
		streamFrom = 0
	}
	first, last := res.FirstIndex, res.LastIndex
	mem := watchMemory(2 * time.Millisecond)
	defer func() {
		if mem != nil {
			mem.finish()
		}
	}()
	start := time.Now()
	lastReport := start
	if last >= first && last > 0 {
		total := last - first + 1
		for lo := first; lo <= last; {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r0 := time.Now()
			entries, err := l.ReadStreaming(lo, last+1, 8<<20, streamFrom)
			res.ReadNs += time.Since(r0)
			if err != nil {
				return nil, err
			}
			if len(entries) == 0 {
				return nil, fmt.Errorf("log read at index %d returned nothing", lo)
			}
			for _, e := range entries {
				var err error
				if e.Streamed {
					res.Streamed++
					o := &countingOpener{l: l, index: e.Index}
					err = feedStream(e.Index, o.open)
					res.PayloadBytes += o.bytes.Load()
					res.MaxEntry = max(res.MaxEntry, o.bytes.Load())
				} else {
					res.PayloadBytes += int64(len(e.Payload))
					res.MaxEntry = max(res.MaxEntry, int64(len(e.Payload)))
					err = feed(e.Index, e.Payload)
				}
				if err != nil {
					return nil, err
				}
				lo = e.Index + 1
			}
			if c.ReportInterval > 0 && time.Since(lastReport) >= c.ReportInterval {
				lastReport = time.Now()
				done := lo - first
				fmt.Fprintf(prog, "replay: %d of %d log entries (%.0f%%), %d transactions, %.0f transactions/s\n",
					done, total, 100*float64(done)/float64(total), cx.txns.Load(), float64(cx.txns.Load())/time.Since(start).Seconds())
			}
		}
	}
	if par != nil {
		if err := par.Wait(); err != nil {
			return nil, err
		}
		mt := par.Metrics()
		res.DependencyWaits, res.GateWaits = mt.DependencyWaits, mt.GateWaits
		if err := par.Close(); err != nil {
			return nil, err
		}
	}
	if note := m.Settle(); note != "" {
		x.Note(note)
	}
	res.Elapsed = time.Since(start)
	res.Memory, mem = mem.finish(), nil
	st := m.Stats()
	res.Transactions, res.OtherRecords, res.Skipped, res.Entries = cx.txns.Load(), cx.other.Load(), st.Skipped, st.Entries
	res.SerialDeps, res.Certified = st.SerialDeps, st.Certified
	if cs, ok := m.CertifyStats(); ok {
		res.CertMean = cs.Mean()
	}

	if res.Checksums, err = checksums(localQuerier(fe)); err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(filepath.Join(c.Datadir, SourceFile)); err == nil {
		var si SourceInfo
		if json.Unmarshal(b, &si) == nil {
			res.Source = &si
		}
	}
	res.print(out, c)
	return res, nil
}

// countingOpener opens an entry's payload as a stream
// (txlog.OpenPayload) and counts the bytes its first reader returned (the
// first pass reads the whole payload: record.StreamEntry).
type countingOpener struct {
	l     *txlog.Log
	index uint64
	opens atomic.Int64
	bytes atomic.Int64
}

func (o *countingOpener) open() (io.ReadCloser, error) {
	r, err := o.l.OpenPayload(o.index)
	if err != nil {
		return nil, err
	}
	if o.opens.Add(1) > 1 {
		return r, nil
	}
	return countingReader{r, &o.bytes}, nil
}

type countingReader struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c countingReader) Read(b []byte) (int, error) {
	n, err := c.ReadCloser.Read(b)
	c.n.Add(int64(n))
	return n, err
}

func (r *ReplayResult) print(w io.Writer, c ReplayConfig) {
	from := "from empty (the log reaches back to the start)"
	if r.FromSeq > 0 {
		from = fmt.Sprintf("from the checkpoint at sequence number %d (loaded in %.3f s)", r.FromSeq, r.CheckpointNs.Seconds())
	}
	fmt.Fprintf(w, "replay of %s, %s\n", c.Datadir, from)
	row := func(k, v string, a ...any) { fmt.Fprintf(w, "  %-22s %s\n", k, fmt.Sprintf(v, a...)) }
	if c.Workers > 1 {
		row("workers", "%d (apply.Parallel, scheduler %v, commit order preserved: %v; the recovery executor)", c.Workers, c.Scheduler, c.PreserveCommitOrder)
	} else {
		row("workers", "1 (serial: apply.Drain, the recovery executor)")
	}
	row("log entries", "%d (indexes %d..%d)", r.Entries, r.FirstIndex, r.LastIndex)
	row("transactions", "%d", r.Transactions)
	row("DDL/account records", "%d", r.OtherRecords)
	row("skipped (checkpoint)", "%d", r.Skipped)
	row("no last_committed", "%d (depend on their predecessor)", r.SerialDeps)
	if c.Workers > 1 {
		row("waits", "%d for last_committed, %d at the commit-order gate", r.DependencyWaits, r.GateWaits)
	}
	if c.Recertify {
		row("last_committed", "recomputed by the certifier for %d records (--recertify; mean distance %.2f)", r.Certified, r.CertMean)
	}
	row("read log", "%.3f s", r.ReadNs.Seconds())
	row("read and apply", "%.3f s", r.Elapsed.Seconds())
	row("log payload", "%s (largest entry %s; %d entries streamed)", mib(uint64(r.PayloadBytes)), mib(uint64(r.MaxEntry)), r.Streamed)
	row("peak memory", "Go heap objects %s, Go total %s, process RSS %s; heap kept after %s",
		mib(r.Memory.HeapObjects), mib(r.Memory.GoTotal), mib(r.Memory.RSSHighWater), mib(r.Memory.LiveAfter))
	row("replay rate", "%.0f transactions/s", r.Rate())
	if s := r.Source; s != nil && s.Rate > 0 {
		row("source rate", "%.0f transactions/s (%d transactions at %d threads, conflict rate %g; %s)", s.Rate, s.Transactions, s.Threads, s.ConflictRate, SourceFile)
		row("replay / source", "%.2fx", r.Rate()/s.Rate)
	}
	var src []TableChecksum
	if r.Source != nil {
		src = r.Source.Checksums
	}
	printChecksums(w, r.Checksums, src)
	fmt.Fprintf(w, "replayed %d transactions in %.3f s: %.0f transactions/s\n", r.Transactions, r.Elapsed.Seconds(), r.Rate())
}

// ChecksumsMatch reports whether the replayed tables are the source's.
func (r *ReplayResult) ChecksumsMatch() bool {
	if r.Source == nil {
		return false
	}
	return slices.Equal(r.Checksums, r.Source.Checksums)
}

// printChecksums prints a table's checksums; with src, whether each
// matches the source's.
func printChecksums(w io.Writer, sums, src []TableChecksum) {
	want := map[string]TableChecksum{}
	for _, s := range src {
		want[s.Table] = s
	}
	fmt.Fprintf(w, "  %-30s %10s %20s", "table", "rows", "checksum")
	if src != nil {
		fmt.Fprintf(w, "  %s", "source")
	}
	fmt.Fprintln(w)
	for _, s := range sums {
		fmt.Fprintf(w, "  %-30s %10s %20s", s.Table, s.Rows, s.Checksum)
		if src != nil {
			v := "DIFFERS"
			if ws, ok := want[s.Table]; !ok {
				v = "missing at the source"
			} else if ws == s {
				v = "same"
			}
			fmt.Fprintf(w, "  %s", v)
		}
		fmt.Fprintln(w)
	}
	if src != nil {
		have := map[string]bool{}
		for _, s := range sums {
			have[s.Table] = true
		}
		for _, s := range src {
			if !have[s.Table] {
				fmt.Fprintf(w, "  %-30s %10s %20s  missing after replay\n", s.Table, s.Rows, s.Checksum)
			}
		}
	}
}
