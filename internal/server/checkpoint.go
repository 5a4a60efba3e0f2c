package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"lockstep/internal/checkpoint"
	"lockstep/internal/commit"
	"lockstep/internal/hist"
	logrec "lockstep/internal/record"
	"lockstep/internal/sqlfront"
	"lockstep/internal/storage"
	"lockstep/internal/txlog"
	"lockstep/internal/txn"
)

// Checkpoints: a consistent snapshot of the database written while writes
// go on, after which the log it covers is removed.
//
// The snapshot point is fixed inside the commit pipeline: a marker record
// (a DDL record with no statement) is committed like a transaction, and its
// Publish — which the pipeline calls in sequence order, after every earlier
// transaction was made visible and before any later one is — opens the
// ReadView the rows are read through. The checkpoint therefore holds
// exactly the transactions up to the marker's sequence number. DDL is held
// off while the catalog and the rows are read (an ALTER rewrites rows in
// place).

type checkpointStats struct {
	count    atomic.Int64
	lastSeq  atomic.Int64
	lastNs   atomic.Int64
	lastRows atomic.Int64
	// lastBytes: the last checkpoint file's size; chunks: chunks sent to
	// disk while checkpoints were written (--checkpoint-fsync-threshold).
	lastBytes atomic.Int64
	chunks    atomic.Int64
	pausedNs  atomic.Int64 // time checkpoints slept for --checkpoint-rate-limit

	timesOnce sync.Once
	timesH    *hist.Hist // durations of checkpoints written, ms (times)
}

// checkpointBoundsMs are the upper bounds of the checkpoint duration
// histogram (SHOW STATUS Lockstep_checkpoint_time_ms_*).
var checkpointBoundsMs = []int64{10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000}

// times is the histogram of checkpoint durations in milliseconds.
func (c *checkpointStats) times() *hist.Hist {
	c.timesOnce.Do(func() { c.timesH = hist.New(checkpointBoundsMs...) })
	return c.timesH
}

func (d *durable) checkpointDir() string { return filepath.Join(d.datadir, "checkpoint") }

// checkpoint writes a checkpoint now and truncates the log it covers.
func (d *durable) checkpoint(fe *sqlfront.Frontend) (string, error) {
	start := time.Now()
	fe.LockDDL()
	defer fe.UnlockDDL()
	store := fe.Storage()
	var seq, gno int64
	var covered uint64 // log index through which the checkpoint covers the log
	var snap *storage.Tx
	_, err := d.p.Commit(&commit.Txn{
		Encode: func(pos commit.Position) ([]byte, error) {
			seq, gno = pos.Seq, pos.GNO
			// Every entry the log has written so far comes before the
			// marker (the pipeline is the log's only appender and this
			// runs in its flush stage): what the checkpoint covers. A
			// lower bound of the marker's own index, which the log
			// assigns.
			covered = d.log.LastIndex()
			return logrec.AppendDDL(nil, &logrec.DDL{
				Position:    recordPos(pos),
				NextTableID: store.NextTableID(),
			}), nil
		},
		Publish: func() {
			snap = store.Begin(txn.RepeatableRead)
			snap.Trx().ReadView()
		},
	})
	if err != nil {
		return "", fmt.Errorf("checkpoint marker: %w", err)
	}
	defer snap.Rollback()
	path, rows, err := d.writeCheckpoint(fe, snap, checkpoint.Header{Seq: seq, GTID: d.gtidSource() + ":1-" + strconv.FormatInt(gno, 10)})
	if err != nil {
		return "", err
	}
	if err := checkpoint.RemoveOlder(d.checkpointDir(), path); err != nil {
		return path, err
	}
	if err := d.log.TruncatePrefix(retainFrom(d.log.Segments(), covered+1, d.retain)); err != nil {
		return path, fmt.Errorf("checkpoint: truncating the log: %w", err)
	}
	d.ckpt.count.Add(1)
	d.ckpt.lastSeq.Store(seq)
	d.ckpt.lastRows.Store(rows)
	took := time.Since(start)
	d.ckpt.lastNs.Store(int64(took))
	d.ckpt.times().Observe(took.Milliseconds())
	return path, nil
}

// writeCheckpoint writes a checkpoint of what snap (a ReadView opened at
// the checkpoint's point) sees, with header h; the caller holds LockDDL.
func (d *durable) writeCheckpoint(fe *sqlfront.Frontend, snap *storage.Tx, h checkpoint.Header) (path string, rows int64, err error) {
	items, err := fe.Catalog()
	if err != nil {
		return "", 0, err
	}
	w, err := checkpoint.Create(d.checkpointDir(), h,
		checkpoint.Options{FsyncThreshold: d.ckptFsync, RateLimit: d.ckptRate, Stop: d.ckptStop, Hurry: fe.DDLWaiting})
	if err != nil {
		return "", 0, err
	}
	ctx := context.Background()
	for _, it := range items {
		if it.Table != nil {
			t := checkpoint.Table{ID: uint64(it.Table.ID()), Version: it.Version, Desc: it.Table.Desc().Marshal(nil)}
			if err := w.Table(t); err != nil {
				w.Abort()
				return "", 0, err
			}
		}
		if err := w.SQL(checkpoint.Statement{Database: it.Database, SQL: it.SQL}); err != nil {
			w.Abort()
			return "", 0, err
		}
		if it.Table == nil {
			continue
		}
		err := snap.Scan(ctx, it.Table, storage.PrimaryIndex, storage.Range{}, false, 0, func(pk, row []byte) (bool, error) {
			rows++
			return true, w.Row(pk, row)
		})
		if err != nil {
			w.Abort()
			return "", 0, fmt.Errorf("checkpoint: reading table %s: %w", it.Table.Name(), err)
		}
	}
	if acct := fe.Accounts(); acct != nil {
		if err := w.Accounts(acct); err != nil {
			w.Abort()
			return "", 0, err
		}
	}
	path, err = w.Commit()
	d.ckpt.chunks.Add(w.Chunks())
	d.ckpt.pausedNs.Add(int64(w.Paused()))
	if err != nil {
		return "", 0, err
	}
	d.ckpt.lastBytes.Store(w.Bytes())
	return path, rows, nil
}

// retainFrom is where the log may be cut after a checkpoint that covers
// the records before index before, keeping --log-retention-size: whole
// segments older than the one holding before, newest first, until they
// add up to at least retain bytes. (TruncatePrefix always keeps the segment
// holding before and the one being written.)
func retainFrom(segs []txlog.SegmentInfo, before uint64, retain int64) uint64 {
	if retain <= 0 {
		return before
	}
	k := 0 // the first segment TruncatePrefix(before) keeps
	for k < len(segs)-1 && segs[k+1].First <= before {
		k++
	}
	var kept int64
	for i := k - 1; i >= 0 && kept < retain; i-- {
		kept += segs[i].Bytes
		before = segs[i].First
	}
	return before
}

// checkpointLoop checkpoints whenever the log has grown by more than every
// bytes since the last checkpoint, until stop is closed.
func (d *durable) checkpointLoop(fe *sqlfront.Frontend, every int64, w io.Writer, stop <-chan struct{}) {
	d.onLogGrowth(every, stop, func() bool {
		if _, err := d.checkpoint(fe); errors.Is(err, checkpoint.ErrStopped) {
			fmt.Fprintf(w, "lockstep: checkpoint abandoned: shutting down (the log keeps what it would have held)\n")
			return false
		} else if err != nil {
			fmt.Fprintf(w, "lockstep: checkpoint failed: %v\n", err)
		}
		return true
	})
}

// onLogGrowth calls fire each time the log has grown by more than every
// bytes since the last call (checked every 200 ms), until stop is closed
// or fire returns false; it closes d.ckptDone when it returns. every <= 0:
// never.
func (d *durable) onLogGrowth(every int64, stop <-chan struct{}, fire func() bool) {
	defer close(d.ckptDone)
	if every <= 0 {
		return
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	base := int64(d.log.Stats().Bytes)
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		if int64(d.log.Stats().Bytes)-base < every {
			continue
		}
		base = int64(d.log.Stats().Bytes)
		if !fire() {
			return
		}
	}
}

// loadCheckpoint loads the newest checkpoint into fe (an empty engine) and
// returns its sequence number and last GNO (0: none).
func loadCheckpoint(dir string, fe *sqlfront.Frontend, w io.Writer) (seq, gno int64, err error) {
	h, err := loadCheckpointHeader(dir, fe, w)
	return h.Seq, checkpointGNO(h), err
}

// loadCheckpointHeader is loadCheckpoint returning the checkpoint's
// header (zero: none).
func loadCheckpointHeader(dir string, fe *sqlfront.Frontend, w io.Writer) (checkpoint.Header, error) {
	path, err := checkpoint.Latest(dir)
	if err != nil || path == "" {
		return checkpoint.Header{}, err
	}
	start := time.Now()
	store := fe.Storage()
	var pending *checkpoint.Table
	var cur *storage.Table
	var rows int64
	h, err := checkpoint.Read(path, checkpoint.Visitor{
		Table: func(t checkpoint.Table) error {
			pending = &t
			return store.SetNextTableID(t.ID)
		},
		SQL: func(s checkpoint.Statement) error {
			if err := fe.RunCatalogSQL(s.Database, s.SQL); err != nil {
				return err
			}
			cur = nil
			if pending != nil {
				t, err := fe.RestoreTableVersion(pending.ID, pending.Version)
				if err != nil {
					return err
				}
				if err := checkRestoredDesc(t, pending.Desc); err != nil {
					return fmt.Errorf("checkpoint %s: %w", path, err)
				}
				cur, pending = t, nil
			}
			return nil
		},
		Accounts: func(data []byte) error {
			return fe.LoadAccounts(data)
		},
		Row: func(pk, row []byte) error {
			if cur == nil {
				return fmt.Errorf("checkpoint %s: a row outside a table", path)
			}
			rows++
			return cur.LoadRow(pk, row)
		},
	})
	if err != nil {
		return checkpoint.Header{}, err
	}
	fmt.Fprintf(w, "lockstep: recovery: loaded checkpoint at sequence number %d (%d rows) in %v\n",
		h.Seq, rows, time.Since(start).Round(time.Millisecond))
	return h, nil
}

// checkpointGNO is the last GNO a checkpoint holds, from its GTID set
// (server_uuid:1-N); a checkpoint whose set says nothing usable (written
// when GNOs were sequence numbers) holds GNOs 1..Seq.
func checkpointGNO(h checkpoint.Header) int64 {
	if _, iv, ok := strings.Cut(h.GTID, ":"); ok {
		if _, hi, ok := strings.Cut(iv, "-"); ok {
			if n, err := strconv.ParseInt(hi, 10, 64); err == nil && n >= 0 {
				return n
			}
		}
	}
	return h.Seq
}

// checkRestoredDesc checks that table t, just recreated from its catalog
// statement, computes keys as the table the checkpoint was written from did
// (enc: that table's descriptor; empty in checkpoints that predate
// descriptors). The rows that follow are indexed with t's keys.
func checkRestoredDesc(t *storage.Table, enc []byte) error {
	if len(enc) == 0 {
		return nil
	}
	want, err := storage.UnmarshalTableDesc(enc)
	if err != nil {
		return fmt.Errorf("table %s (id %d): %w", t.Name(), t.ID(), err)
	}
	if got := t.Desc(); !got.SameKeys(want) {
		return fmt.Errorf("table %s (id %d): the definition its CREATE TABLE gives computes other keys than the one checkpointed (%+v, checkpointed %+v)",
			t.Name(), t.ID(), got, want)
	}
	return nil
}
