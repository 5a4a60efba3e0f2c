package server

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/sirupsen/logrus"

	"lockstep/internal/apply"
	"lockstep/internal/checkpoint"
	"lockstep/internal/commit"
	"lockstep/internal/config"
	logrec "lockstep/internal/record"
	"lockstep/internal/sqlfront"
	"lockstep/internal/storage"
	"lockstep/internal/txlog"
	"lockstep/internal/txn"
)

// durable is the commit path of a server: storage's Committer and
// sqlfront's DDL logger, both feeding the group commit pipeline, which
// certifies, orders and appends records to the log.
type durable struct {
	p    *commit.Pipeline
	log  *txlog.Log
	uuid string
	// gtidUUID is the UUID this server's GTIDs carry: the group name in a
	// group (groupname.go), else server_uuid.
	gtidUUID string
	datadir  string
	retain   int64 // --log-retention-size

	ckptFsync int64 // --checkpoint-fsync-threshold
	ckptRate  int64 // --checkpoint-rate-limit

	// bufs holds encoding buffers for transaction records: the log copies
	// a payload into its buffer before Append returns, so a record's buffer
	// is free again once its commit returns (about a sixth of the bytes the
	// server allocated in TPC-C were these records, grown from nil).
	bufs sync.Pool

	ckpt     checkpointStats
	ckptStop chan struct{}
	ckptDone chan struct{}

	// grp is the server's part of a replication group (group.go); nil
	// standalone.
	grp *group
	// applier: the metrics of the applier that ran last (recovery's),
	// shown by SHOW STATUS (applierStatus).
	applier apply.Metrics
}

var (
	_ storage.Committer       = (*durable)(nil)
	_ sqlfront.DDLLogger      = (*durable)(nil)
	_ sqlfront.AccountsLogger = (*durable)(nil)
)

// Commit implements storage.Committer.
func (d *durable) Commit(rec *storage.CommitRecord, publish func()) error {
	if d.grp != nil {
		// group_replication_transaction_size_limit (txnlimit.go): refused
		// before it is numbered, so never proposed.
		size := logrec.TxnSize(&logrec.Txn{Minimal: rec.Minimal, Changes: rec.Changes, Writeset: rec.Writeset, AutoInc: rec.AutoInc})
		if err := d.grp.checkTxnSize(int64(size)); err != nil {
			return err
		}
	}
	buf, _ := d.bufs.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	_, err := d.p.Commit(&commit.Txn{
		Writeset: rec.Writeset,
		Encode: func(pos commit.Position) ([]byte, error) {
			*buf = logrec.AppendTxn((*buf)[:0], &logrec.Txn{
				Position: recordPos(pos),
				Minimal:  rec.Minimal, Changes: rec.Changes, Writeset: rec.Writeset,
				AutoInc: rec.AutoInc,
			})
			return *buf, nil
		},
		Publish: publish,
	})
	// Commit has returned: the pipeline and the log hold no reference to
	// the payload any more (commit.Txn.Encode's contract).
	if cap(*buf) <= maxPooledRecord {
		d.bufs.Put(buf)
	}
	return commitError(err)
}

// recordPos is the position the pipeline assigned, as the record carries
// it: sequence number, GTID number and last_committed, each its own number
// (none of them is the log index), and the group's commit time.
func recordPos(p commit.Position) logrec.Position {
	return logrec.Position{Seq: p.Seq, GNO: p.GNO, LastCommitted: p.LastCommitted, CommitTime: p.CommitTime}
}

// maxPooledRecord: larger record buffers are left to the GC rather than
// kept for the next commit.
const maxPooledRecord = 256 << 10

// LogDDL implements sqlfront.DDLLogger: the statement is durable when it
// returns.
func (d *durable) LogDDL(database, query string, nextTableID uint64) (int64, error) {
	seq, err := d.p.Commit(&commit.Txn{
		Encode: func(pos commit.Position) ([]byte, error) {
			return logrec.AppendDDL(nil, &logrec.DDL{
				Position:    recordPos(pos),
				NextTableID: nextTableID, Database: database, Query: query,
			}), nil
		},
		Publish: func() {},
	})
	return seq, commitError(err)
}

// LogDDLFailed implements sqlfront.DDLLogger: a DDL record whose text is
// the failure mark of the statement logged at index. If it cannot be
// written (the log failed, the disk is full), the operator hears of it: a
// restart then replays the statement without knowing it failed (it
// normally fails again, and recovery says so).
func (d *durable) LogDDLFailed(index int64, nextTableID uint64) {
	if _, err := d.LogDDL("", sqlfront.FailedDDLMark(index), nextTableID); err != nil {
		logrus.WithField("log_index", index).Errorf("lockstep: could not log that the DDL statement at log index %d failed: %v", index, err)
	}
}

// LogAccounts implements sqlfront.AccountsLogger: the accounts are durable
// when it returns. Like DDL, an accounts record is serial (empty
// writeset).
func (d *durable) LogAccounts(data []byte) error {
	_, err := d.p.Commit(&commit.Txn{
		Encode: func(pos commit.Position) ([]byte, error) {
			return logrec.AppendAccounts(nil, &logrec.Accounts{
				Position: recordPos(pos),
				Data:     data,
			}), nil
		},
		Publish: func() {},
	})
	return commitError(err)
}

// commitError gives a failed commit MySQL's error: a full disk is 1021
// (ER_DISK_FULL) and nothing was logged; a log that failed after the record
// was handed to it is 1180 (ER_ERROR_DURING_COMMIT), storage must not roll
// back, and the server takes no more writes.
func commitError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, commit.ErrUncertain):
		return fmt.Errorf("%w: %w", storage.ErrCommitUncertain,
			mysql.NewSQLError(1180, "HY000", "Got error during COMMIT: %v; the server accepts no more writes", err))
	case errors.Is(err, txlog.ErrDiskFull):
		return mysql.NewSQLError(1021, "HY000", "Disk full (%v); the transaction was rolled back", err)
	}
	// A group member's refusal (3101: not the primary any more; 3100: a
	// replication hook refused it) reaches the client as it is, as MySQL
	// Group Replication's does.
	var se *mysql.SQLError
	if errors.As(err, &se) && (se.Num == 3101 || se.Num == 3100) {
		return se
	}
	return mysql.NewSQLError(1180, "HY000", "Got error during COMMIT: %v", err)
}

// gtidExecuted is @@gtid_executed: every GNO up to the last committed.
func (d *durable) gtidExecuted() string {
	n := d.lastGNO()
	if n == 0 {
		return ""
	}
	return d.gtidSource() + ":1-" + strconv.FormatInt(n, 10)
}

// gtidSource is the UUID of this server's GTIDs.
func (d *durable) gtidSource() string {
	if d.grp != nil {
		if n := d.grp.groupName(); n != "" {
			return n
		}
	}
	if d.gtidUUID != "" {
		return d.gtidUUID
	}
	return d.uuid
}

// lastGNO is the newest GNO executed here: committed by the pipeline, or
// applied from the group's log.
func (d *durable) lastGNO() int64 {
	n := d.p.Stats().LastGNO
	if d.grp != nil {
		n = max(n, d.grp.sm.lastGNO.Load())
	}
	return n
}

// status adds the log's and the pipeline's counters to SHOW STATUS.
func (d *durable) status(m map[string]int64) {
	if d.grp != nil {
		d.grp.status(m)
	}
	ps := d.p.Stats()
	ls := d.log.Stats()
	m["Binlog_commits"] = ps.Commits
	m["Binlog_group_commits"] = ps.Groups
	m["Lockstep_group_commit_leaders"] = ps.Leaders
	m["Lockstep_group_commit_wakeups"] = ps.Wakeups
	m["Lockstep_group_commit_wakeups_done"] = ps.WakeupsDone
	m["Lockstep_group_commit_wake_efficiency_pct"] = int64(ps.WakeEfficiency() * 100)
	for i, n := range ps.GroupSizes {
		m["Lockstep_group_commit_size_"+commit.GroupSizeBuckets[i]] = n
	}
	m["Lockstep_group_commit_appended"] = ps.Appended
	ps.Latency.Status(m, "Lockstep_commit_latency_us")
	m["Lockstep_group_commit_delays"] = ps.Delays
	m["Lockstep_group_commit_delays_cut"] = ps.DelaysCut
	m["Lockstep_group_commit_delays_skipped"] = ps.DelaysSkipped
	m["Lockstep_group_commit_delay_time_us"] = ps.DelayTime.Microseconds()
	m["Lockstep_log_fsyncs"] = int64(ls.Fsyncs)
	m["Lockstep_log_fsyncs_overlapped"] = int64(ls.FsyncsOverlapped)
	m["Lockstep_log_fsyncs_held_back"] = int64(ls.FsyncsHeldBack)
	m["Lockstep_group_commit_turn_waits"] = ps.TurnWaits
	m["Lockstep_log_writes"] = int64(ls.Writes)
	m["Lockstep_log_bytes"] = int64(ls.Bytes)
	m["Lockstep_log_appends"] = int64(ls.Appends)
	m["Lockstep_log_records_compressed"] = int64(ls.Compressed)
	m["Lockstep_log_compressed_input_bytes"] = int64(ls.CompressedIn)
	m["Lockstep_log_compressed_output_bytes"] = int64(ls.CompressedOut)
	m["Lockstep_log_wait_wakeups"] = int64(ls.Wakeups)
	m["Lockstep_log_wait_wakeups_done"] = int64(ls.WakeupsDone)
	m["Lockstep_log_disk_full_resumes"] = int64(ls.DiskFullResumes)
	m["Lockstep_log_segments_preallocated"] = int64(ls.Preallocated)
	m["Lockstep_log_segments_preallocated_used"] = int64(ls.PreallocUsed)
	m["Lockstep_log_preallocate_failures"] = int64(ls.PreallocFailures)
	m["Lockstep_log_state_writes"] = int64(ls.StateWrites)
	m["Lockstep_log_state_write_failures"] = int64(ls.StateWriteFailures)
	// InnoDB's names for the same counters of its redo log, which tools
	// (mysqltuner, monitoring dashboards) read.
	m["Innodb_log_write_requests"] = int64(ls.Appends)
	m["Innodb_log_writes"] = int64(ls.Writes)
	m["Innodb_os_log_written"] = int64(ls.Bytes)
	m["Innodb_os_log_fsyncs"] = int64(ls.Fsyncs)
	m["Innodb_data_fsyncs"] = int64(ls.Fsyncs)
	if segs := d.log.Segments(); len(segs) > 0 {
		m["Lockstep_log_segments"] = int64(len(segs))
		m["Lockstep_log_first_index"] = int64(segs[0].First)
	}
	if ps.Groups > 0 && ls.Fsyncs > 0 {
		m["Lockstep_commits_per_fsync_x100"] = ps.Commits * 100 / int64(ls.Fsyncs)
	}
	m["Lockstep_checkpoints"] = d.ckpt.count.Load()
	m["Lockstep_checkpoint_last_seq"] = d.ckpt.lastSeq.Load()
	m["Lockstep_checkpoint_last_rows"] = d.ckpt.lastRows.Load()
	m["Lockstep_checkpoint_last_ms"] = d.ckpt.lastNs.Load() / 1e6
	d.ckpt.times().Snapshot().Status(m, "Lockstep_checkpoint_time_ms")
	m["Lockstep_checkpoint_last_bytes"] = d.ckpt.lastBytes.Load()
	m["Lockstep_checkpoint_writeback_chunks"] = d.ckpt.chunks.Load()
	m["Lockstep_checkpoint_paused_ms"] = d.ckpt.pausedNs.Load() / 1e6
	cs := ps.Certify
	m["Lockstep_certify_certifications"] = cs.Certifications
	m["Lockstep_certify_resets"] = cs.Resets
	m["Lockstep_certify_serial_fallbacks"] = cs.SerialFallbacks()
	m["Lockstep_certify_mean_distance_x100"] = int64(cs.Mean() * 100)
	if d.grp != nil {
		d.grp.applierStatus(m) // the member's live applier (group.go)
	} else {
		applierStatus(m, d.applier)
	}
}

// openDurable opens the log in cfg.Datadir, replays it into fe (recovery),
// then starts the commit pipeline and installs it as storage's Committer
// and sqlfront's DDL logger. Progress goes to w.
func openDurable(cfg config.Config, fe *sqlfront.Frontend, w io.Writer) (*durable, error) {
	return openDurableFS(cfg, fe, w, runLogFS)
}

// runLogFS is the log's file layer of the servers Run starts: nil, the
// operating system's (tests inject faults through it).
var runLogFS txlog.FS

// openDurableFS is openDurable with the log's file layer (nil: the
// operating system's); tests inject faults through it.
func openDurableFS(cfg config.Config, fe *sqlfront.Frontend, w io.Writer, fs txlog.FS) (*durable, error) {
	// A data directory that has its auto.cnf has had a log: an empty log
	// directory then means the log was removed, not a first start (the
	// log is created before auto.cnf, below).
	_, statErr := os.Stat(filepath.Join(cfg.Datadir, "auto.cnf"))
	opts := txlog.Options{
		Dir:               filepath.Join(cfg.Datadir, "log"),
		MustExist:         statErr == nil,
		RecoverTruncate:   cfg.RecoverTruncate,
		Compression:       cfg.LogCompression,
		CompressThreshold: cfg.LogCompressMin,
		SyncMode:          txlog.SyncAlways,
		SegmentSize:       cfg.LogSegmentSize,
		Preallocate:       cfg.LogPreallocate,
		Flushers:          cfg.LogSyncsInFlight,
		FS:                fs,
	}
	if cfg.SyncBinlog == 0 {
		opts.SyncMode = txlog.SyncPeriodic
	}
	if err := checkDatadirKind(cfg); err != nil {
		return nil, err
	}
	if cfg.Grouped() {
		d, err := openGroup(cfg, fe, w, opts)
		if err != nil {
			return nil, err
		}
		fe.Storage().SetMinimalImages(cfg.RowImage == "minimal")
		fe.Storage().SetCommitter(d)
		fe.SetDDLLogger(d)
		fe.AddExtraStatus(d.status)
		if err := installIdentity(fe, d); err != nil {
			d.close()
			return nil, err
		}
		return d, nil
	}
	l, rec, err := txlog.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open the log: %w", err)
	}
	report(w, rec)
	uuid, err := loadServerUUID(cfg.Datadir)
	if err != nil {
		l.Close()
		return nil, err
	}
	ckptDir := filepath.Join(cfg.Datadir, "checkpoint")
	ckptSeq, ckptGNO, err := loadCheckpoint(ckptDir, fe, w)
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("recovery: %w", err)
	}
	if err := logReachesCheckpoint(l, ckptDir, ckptSeq, cfg.RecoverTruncate, w); err != nil {
		l.Close()
		return nil, fmt.Errorf("recovery: %w", err)
	}
	lastSeq, lastGNO, applied, err := replay(l, fe, w, replayOptions{
		from: ckptSeq, fromGNO: ckptGNO, uuid: uuid,
		workers: cfg.ReplicaParallelWorkers, preserveOrder: cfg.ReplicaPreserveCommitOrder, retries: cfg.ReplicaTransactionRetries,
	})
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("recovery: %w", err)
	}
	if err := fe.RecoverCounters(); err != nil {
		l.Close()
		return nil, fmt.Errorf("recovery: %w", err)
	}
	wake := commit.Targeted
	if cfg.GroupCommitWakeup == "broadcast" {
		wake = commit.Broadcast
	}
	p, err := commit.New(commit.Options{Log: durableLog{l}, Wakeup: wake, NextSeq: lastSeq + 1, NextGNO: lastGNO + 1,
		SyncGroups: cfg.LogSyncsInFlight})
	if err != nil {
		l.Close()
		return nil, err
	}
	if err := installSyncDelay(fe, p, cfg); err != nil {
		l.Close()
		return nil, err
	}
	d := &durable{p: p, log: l, uuid: uuid, datadir: cfg.Datadir, retain: cfg.LogRetentionSize,
		ckptFsync: cfg.CheckpointFsyncThreshold, ckptRate: cfg.CheckpointRateLimit, ckptStop: make(chan struct{}), ckptDone: make(chan struct{}),
		applier: applied}
	go d.checkpointLoop(fe, cfg.CheckpointLogSize, w, d.ckptStop)
	fe.Storage().SetMinimalImages(cfg.RowImage == "minimal")
	fe.Storage().SetCommitter(d)
	fe.SetDDLLogger(d)
	fe.AddExtraStatus(d.status)
	if err := installIdentity(fe, d); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// close stops the pipeline and closes the log (fsyncing what it holds).
func (d *durable) close() error {
	close(d.ckptStop)
	<-d.ckptDone
	if d.grp != nil {
		return d.grp.close()
	}
	perr := d.p.Close()
	lerr := d.log.Close()
	return errors.Join(perr, lerr)
}

// logReachesCheckpoint checks that the log reaches the newest
// checkpoint's sequence number: the checkpoint's marker record was durable
// in the log before the checkpoint was written, so a log whose last record
// has a lower sequence number has lost acknowledged records (whatever came
// after the checkpoint). A log that holds no record but has held some
// (LastIndex > 0: it was started again by Reset, as below) is accepted.
// With --recover-truncate the log is started again (empty, at the next
// index) instead.
func logReachesCheckpoint(l *txlog.Log, ckptDir string, ckptSeq int64, recoverTruncate bool, w io.Writer) error {
	if ckptSeq <= 0 {
		return nil
	}
	last := l.LastIndex()
	lastSeq, found, err := lastLoggedSeq(l)
	if err != nil {
		return err
	}
	if (found && lastSeq >= ckptSeq) || (!found && last > 0) {
		return nil
	}
	ckpt, _ := checkpoint.Latest(ckptDir)
	if !recoverTruncate {
		return fmt.Errorf("the log in %s ends at record %d (sequence number %d), but the checkpoint %s is at sequence number %d, whose record the log held durably: records are missing from the end of the log; start with --recover-truncate to start from the checkpoint and lose what the log held after it",
			l.Dir(), last, lastSeq, ckpt, ckptSeq)
	}
	term, _ := l.Term(last)
	if err := l.Reset(last+1, term); err != nil {
		return fmt.Errorf("--recover-truncate: restart the log after the checkpoint at %d: %w", ckptSeq, err)
	}
	fmt.Fprintf(w, "lockstep: log: --recover-truncate: the log ended at record %d, before the checkpoint at sequence number %d; the log starts again at %d (anything it held after the checkpoint is lost)\n",
		last, ckptSeq, last+1)
	return nil
}

// lastLoggedSeq is the sequence number of the last record in the log: the
// last record of the last entry that holds any (entries may hold none).
func lastLoggedSeq(l *txlog.Log) (seq int64, found bool, err error) {
	first := l.FirstIndex()
	for i := l.LastIndex(); i >= first && i > 0; i-- {
		// A large last entry (a transaction of a million rows) is not
		// read whole: its position is at its start (replaystream.go).
		ents, err := l.ReadStreaming(i, i+1, -1, txlog.StreamFrom)
		if err != nil {
			return 0, false, err
		}
		if len(ents) == 0 {
			break
		}
		if ents[0].Streamed {
			seq, found, err = streamedLastSeq(l, i)
		} else {
			seq, found, err = payloadLastSeq(i, ents[0].Payload)
		}
		if err != nil || found {
			return seq, found, err
		}
	}
	return 0, false, nil
}

// report prints what opening the log found.
func report(w io.Writer, rec *txlog.Recovery) {
	if rec == nil {
		return
	}
	if rec.TornBytes > 0 {
		fmt.Fprintf(w, "lockstep: log: truncated a torn tail of %d bytes in %s after record %d (an unfinished write at a crash; the log was known durable through record %d)\n",
			rec.TornBytes, rec.TornFile, rec.LastIndex, rec.DurableIndex)
	}
	if rec.Dropped != "" {
		fmt.Fprintf(w, "lockstep: log: --recover-truncate dropped %s records from a corrupt one on (%s)\n", rec.Dropped, rec.Corruption)
	}
	if rec.EndProblem != "" {
		fmt.Fprintf(w, "lockstep: log: --recover-truncate accepted the log as it is, ending at record %d: %s\n", rec.LastIndex, rec.EndProblem)
	}
	if rec.StateCreated && rec.LastIndex >= rec.FirstIndex && rec.EndProblem == "" {
		fmt.Fprintf(w, "lockstep: log: wrote log/log.state for a log that had none (its end is checked from the next start on)\n")
	}
}

// replayOptions: where the data loaded from the checkpoint stands, and
// the applier's options.
type replayOptions struct {
	from, fromGNO int64  // the checkpoint's sequence number; GNOs 1..fromGNO executed
	uuid          string // @@server_uuid: errors name a record's GTID
	workers       int    // replica_parallel_workers: > 1, the parallel applier
	preserveOrder bool   // replica_preserve_commit_order
	retries       int    // replica_transaction_retries
}

// replay applies the log to the data loaded from the checkpoint at
// sequence number o.from (GNOs 1..o.fromGNO executed) through the apply
// state machine (internal/apply), in order: transactions through storage's
// apply call, DDL by running its statement again, accounts by installing
// them. A record whose GNO the checkpoint holds is skipped, so replay
// reads the log from its first entry; nothing assumes that an entry holds
// one record, or that a sequence number is a log index. With workers > 1
// the parallel applier (apply.Parallel) runs transactions concurrently by
// their last_committed. It returns the last sequence number, the last GNO
// and the applier's metrics. A failed record stops it with an error naming
// its GTID, log index and sequence number; nothing of that record is
// applied.
func replay(l *txlog.Log, fe *sqlfront.Frontend, w io.Writer, o replayOptions) (lastSeq, lastGNO int64, mt apply.Metrics, err error) {
	retries := o.retries
	if retries == 0 {
		retries = -1 // none (apply.RetryPolicy's 0 is its default)
	}
	m := apply.New(apply.Options{
		Applied:     apply.Position{Seq: o.from},
		ExecutedGNO: o.fromGNO,
		FailedDDL:   sqlfront.FailedDDLIndex,
		UUID:        o.uuid,
		Retry:       apply.RetryPolicy{Retries: retries},
	})
	first, last := l.FirstIndex(), l.LastIndex()
	if last == 0 || last < first {
		return o.from, o.fromGNO, m.Metrics(), nil
	}
	x := &recoveryExec{fe: fe, w: w}
	feed := func(index uint64, payload []byte) error {
		if err := m.Entry(index, payload); err != nil {
			return err
		}
		return apply.Drain(m, x)
	}
	// A large entry is streamed (txlog.ReadStreaming, OpenPayload): its
	// transaction is read from the log a chunk at a time as it is
	// applied, never whole (replaystream.go).
	feedStream := func(index uint64, open logrec.Opener) error {
		if err := m.EntryStream(index, open, txlog.StreamMemory); err != nil {
			return err
		}
		return apply.Drain(m, x)
	}
	metrics := m.Metrics
	var par *apply.Parallel
	if o.workers > 1 {
		// The entries' payloads are the caller's (txlog.Read), so steps
		// may still be running while the next entries are read.
		par = apply.NewParallel(m, x, apply.ParallelOptions{Workers: o.workers, PreserveCommitOrder: o.preserveOrder})
		defer par.Close()
		feed = par.Entry
		feedStream = func(index uint64, open logrec.Opener) error {
			return par.EntryStream(index, open, txlog.StreamMemory)
		}
		metrics = par.Metrics
	}
	fail := func(err error) (int64, int64, apply.Metrics, error) { return 0, 0, apply.Metrics{}, err }
	total := last - first + 1
	start, lastReport := time.Now(), time.Now()
	for lo := first; lo <= last; {
		entries, err := l.ReadStreaming(lo, last+1, 8<<20, txlog.StreamFrom)
		if err != nil {
			return fail(err)
		}
		if len(entries) == 0 {
			return fail(fmt.Errorf("log read at index %d returned nothing", lo))
		}
		for _, e := range entries {
			if e.Streamed {
				err = feedStream(e.Index, payloadOpener(l, e.Index))
			} else {
				err = feed(e.Index, e.Payload)
			}
			if err != nil {
				return fail(err)
			}
			lo = e.Index + 1
		}
		if time.Since(lastReport) >= time.Second {
			lastReport = time.Now()
			done := lo - first
			rate := float64(done) / time.Since(start).Seconds()
			fmt.Fprintf(w, "lockstep: recovery: %d of %d log entries (%.0f%%), %.0f entries/s\n", done, total, 100*float64(done)/float64(total), rate)
		}
	}
	if par != nil {
		if err := par.Wait(); err != nil {
			return fail(err)
		}
		if err := par.Close(); err != nil {
			return fail(err)
		}
	}
	if note := m.Settle(); note != "" {
		x.Note(note)
	}
	mt = metrics()
	fmt.Fprintf(w, "lockstep: recovery: replayed %d log records in %v (last sequence number %d)\n",
		mt.Applied, time.Since(start).Round(time.Millisecond), mt.AppliedSeq)
	return mt.AppliedSeq, max(mt.LastGNO, o.fromGNO), mt, nil
}

// recoveryExec is the apply state machine's executor at recovery: the
// server's storage and SQL layer.
type recoveryExec struct {
	fe *sqlfront.Frontend
	w  io.Writer
	// afterChunk, if set, is called after each chunk of a transaction is
	// installed, before it is published (tests look at the engine then).
	afterChunk func(t *logrec.Txn)
}

var _ apply.HeldExecutor = (*recoveryExec)(nil)

// Txn applies a transaction whole or not at all: its rows held, its
// AUTO_INCREMENT counters, then published (a failure of either leaves
// none of its rows).
func (x *recoveryExec) Txn(t *logrec.Txn) error {
	publish, _, err := x.TxnHeld(t)
	if err != nil {
		return err
	}
	publish()
	return nil
}

// TxnHeld is Txn without publishing the transaction (the parallel
// applier's commit-order gate publishes it, or rolls it back).
func (x *recoveryExec) TxnHeld(t *logrec.Txn) (publish, rollback func(), err error) {
	st := x.fe.Storage()
	// A large transaction comes with its changes encoded (the machine's
	// ChunkChanges) and is installed a chunk at a time into one held
	// storage transaction: unseen until published, and a failed chunk
	// undoes the ones before it (storage.HeldTxn.Apply).
	h := st.BeginApply(t.NumChanges())
	if err := t.ChangeChunks(func(cs []logrec.Change) error {
		_, err := h.Apply(cs)
		if err == nil && x.afterChunk != nil {
			x.afterChunk(t)
		}
		return err
	}); err != nil {
		h.Rollback() // ended already if Apply failed
		return nil, nil, applyError(err)
	}
	// The counters the transaction left (format 2 records), only ever
	// raised: after its rows, as a replica's applier does.
	if err := st.ApplyAutoInc(t.AutoInc); err != nil {
		h.Rollback()
		return nil, nil, err
	}
	return h.Publish, h.Rollback, nil
}

// applyError marks the storage errors a transaction's apply (or a
// replayed DDL statement: sqlfront's ReplayDDL) may meet and
// that pass — a row lock a local session holds (the lock wait timed out,
// or the applier was a deadlock's victim) — as transient: the applier
// tries the transaction again (apply.RetryPolicy). Storage's apply takes
// no row locks today (recovery runs before clients connect), so none
// occurs yet; a raft follower that serves locking reads will meet them.
func applyError(err error) error {
	if errors.Is(err, txn.ErrLockWaitTimeout) || errors.Is(err, txn.ErrDeadlock) {
		return apply.Transient(err)
	}
	return err
}

// DDL replays a statement. The applier's error is transient when the
// statement gave up waiting for local transactions (a replayed primary key
// change, within innodb_lock_wait_timeout): it is tried again.
func (x *recoveryExec) DDL(d *logrec.DDL) (error, error) {
	stmtErr, err := x.fe.ReplayDDL(d.Database, d.Query, d.NextTableID)
	if err != nil {
		return nil, applyError(err)
	}
	return stmtErr, nil
}

func (x *recoveryExec) UndoDDL(mark *logrec.DDL) error {
	if err := x.fe.ReplayFailedDDL(mark.NextTableID); err != nil {
		return fmt.Errorf("the failure mark %q: %w", mark.Query, err)
	}
	return nil
}

func (x *recoveryExec) Accounts(a *logrec.Accounts) error { return x.fe.LoadAccounts(a.Data) }

func (x *recoveryExec) Note(line string) { fmt.Fprintln(x.w, line) }

// loadServerUUID reads @@server_uuid from DATADIR/auto.cnf (MySQL's file
// and format), creating it on first start.
func loadServerUUID(datadir string) (string, error) {
	path := filepath.Join(datadir, "auto.cnf")
	b, err := os.ReadFile(path)
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.TrimSpace(k) == "server-uuid" {
				if u := strings.TrimSpace(v); len(u) == 36 {
					return u, nil
				}
			}
		}
		return "", fmt.Errorf("%s: no valid server-uuid line", path)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	r[6] = r[6]&0x0f | 0x40
	r[8] = r[8]&0x3f | 0x80
	u := fmt.Sprintf("%x-%x-%x-%x-%x", r[0:4], r[4:6], r[6:8], r[8:10], r[10:16])
	tmp := path + ".tmp"
	if err := writeFileSync(tmp, []byte("[auto]\nserver-uuid="+u+"\n"), 0o640); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	return u, syncDir(datadir)
}

// writeFileSync writes path (created with mode, or truncated) and fsyncs it.
func writeFileSync(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
