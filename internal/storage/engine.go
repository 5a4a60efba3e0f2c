package storage

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	logrec "lockstep/internal/record"
	"lockstep/internal/txn"
)

// CommitRecord is what a read-write transaction hands the commit pipeline
// at its commit point: every row change with its images and the writeset
// (see record.Txn, which the pipeline completes with the position).
type CommitRecord struct {
	TrxID    txn.ID
	Minimal  bool // Changes carry no before-images (row_image = minimal)
	Changes  []logrec.Change
	Writeset []uint64
	// AutoInc: AUTO_INCREMENT counters as they stood at commit, of the
	// tables the transaction wrote and of those rollbacks moved
	// (autoinc.go; record.Txn.AutoInc).
	AutoInc []logrec.AutoInc
}

// Committer is the commit point seam. Commit is called for every
// read-write transaction after all its changes and locks are in place. It
// must make the transaction durable and then call publish exactly once —
// publish makes the transaction visible to new ReadViews and releases its
// locks; a group-commit pipeline calls it in sequence order. Commit returns
// after publish has run.
//
// An error means nothing was published. If it wraps ErrCommitUncertain the
// record may already be in the log: the transaction is then neither
// published nor rolled back (it keeps its locks; the server stops taking
// writes). Any other error means the record is not in the log, and the
// transaction is rolled back.
type Committer interface {
	Commit(rec *CommitRecord, publish func()) error
}

// ErrCommitUncertain is wrapped by a Committer's error when the commit
// record may have reached the log (for example the log's fsync failed).
var ErrCommitUncertain = errors.New("commit outcome unknown: the log failed after the record was handed to it")

// Immediate is the standalone in-memory Committer: no log, publish at once.
type Immediate struct{}

func (Immediate) Commit(_ *CommitRecord, publish func()) error {
	publish()
	return nil
}

// Options configure an Engine.
type Options struct {
	Committer     Committer     // default Immediate
	LockShards    int           // default from txn
	PurgeInterval time.Duration // default 50ms; <0 disables the background purge
}

// Engine owns the tables, the transaction system and the lock table.
type Engine struct {
	Sys       *txn.Sys
	Locks     *txn.LockManager
	committer atomic.Pointer[committerBox]
	minimal   atomic.Bool // row_image = minimal

	nextTable atomic.Uint32
	nextTemp  atomic.Uint32 // temporary tables (NewTempTable)
	regMu     sync.RWMutex
	tables    map[uint32]*Table   // live tables by durable id
	dropped   map[uint32]struct{} // ids of dropped tables

	purgeMu    sync.Mutex
	purgeQueue []purgeItem
	stopPurge  chan struct{}
	purgeDone  chan struct{}

	stats Stats

	batches sync.Pool // *[]cand of capacity scanBatch, for cursors

	counters unloggedCounters // AUTO_INCREMENT counters moved by rollbacks (autoinc.go)
}

// New starts an engine (and its purge goroutine; Close stops it).
func New(opts Options) *Engine {
	if opts.Committer == nil {
		opts.Committer = Immediate{}
	}
	if opts.PurgeInterval == 0 {
		opts.PurgeInterval = 50 * time.Millisecond
	}
	e := &Engine{
		Sys:       txn.NewSys(),
		Locks:     txn.NewLockManager(txn.LockConfig{Shards: opts.LockShards}),
		tables:    map[uint32]*Table{},
		dropped:   map[uint32]struct{}{},
		stopPurge: make(chan struct{}),
		purgeDone: make(chan struct{}),
	}
	e.SetCommitter(opts.Committer)
	if opts.PurgeInterval > 0 {
		go e.purgeLoop(opts.PurgeInterval)
	} else {
		close(e.purgeDone)
	}
	return e
}

// Close stops background work.
func (e *Engine) Close() {
	select {
	case <-e.stopPurge:
	default:
		close(e.stopPurge)
	}
	<-e.purgeDone
}

type committerBox struct{ c Committer }

// SetCommitter replaces the Committer (nil: Immediate). Recovery replays
// the log with Immediate and then installs the commit pipeline; commits
// already inside the old Committer finish there.
func (e *Engine) SetCommitter(c Committer) {
	if c == nil {
		c = Immediate{}
	}
	e.committer.Store(&committerBox{c: c})
}

// SetMinimalImages chooses row_image: minimal (true) leaves before-images
// out of commit records, full (false, the default) keeps them.
func (e *Engine) SetMinimalImages(on bool) { e.minimal.Store(on) }

// NewTable creates an empty table with definition d (its columns, primary
// key and secondary indexes; storage computes index keys from it). Its id
// is durable: tables are numbered in creation order, and recovery, which
// replays the same DDL in the same order, numbers them the same way
// (NextTableID lets it check). An invalid descriptor is an error and uses
// no id.
func (e *Engine) NewTable(name string, d *TableDesc) (*Table, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("storage: creating table %s: %w", name, err)
	}
	t := &Table{name: name, e: e, version: 1}
	t.rs, t.pk = newRowStore(), t.newPKTree()
	t.setDesc(d)
	t.id = e.nextTable.Add(1)
	e.regMu.Lock()
	e.tables[t.id] = t
	e.regMu.Unlock()
	return t, nil
}

// NewTempTable creates a session's TEMPORARY table: like NewTable, but it
// takes no durable id (its id, above every durable one, is not in the
// registry) and its changes stay out of commit records — the log, a
// replica and recovery never hear of it, as MySQL's binary log in row
// format leaves temporary tables out. Its rows still have versions, undo
// and locks, so a transaction that changed it rolls back whole.
func (e *Engine) NewTempTable(name string, d *TableDesc) (*Table, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("storage: creating temporary table %s: %w", name, err)
	}
	t := &Table{name: name, e: e, version: 1, temp: true}
	t.rs, t.pk = newRowStore(), t.newPKTree()
	t.setDesc(d)
	t.id = tempTableIDs + e.nextTemp.Add(1)
	return t, nil
}

// tempTableIDs is where temporary tables' ids start.
const tempTableIDs = 1 << 31

// NextTableID is the id the next NewTable will give.
func (e *Engine) NextTableID() uint64 { return uint64(e.nextTable.Load()) + 1 }

// TableByID returns the live table with durable id id. known reports
// whether the engine ever had it (a dropped table: nil, true).
func (e *Engine) TableByID(id uint64) (t *Table, known bool) {
	e.regMu.RLock()
	defer e.regMu.RUnlock()
	if t := e.tables[uint32(id)]; t != nil && uint64(uint32(id)) == id {
		return t, true
	}
	_, known = e.dropped[uint32(id)]
	return nil, known
}

// unregister moves a dropped table to the tombstones.
func (e *Engine) unregister(t *Table) {
	e.regMu.Lock()
	if e.tables[t.id] == t {
		delete(e.tables, t.id)
		e.dropped[t.id] = struct{}{}
	}
	e.regMu.Unlock()
}

// Stats are the engine's counters (SHOW STATUS: Innodb_rows_*, purge).
type Stats struct {
	RowsRead      atomic.Uint64
	RowsInserted  atomic.Uint64
	RowsUpdated   atomic.Uint64
	RowsDeleted   atomic.Uint64
	Commits       atomic.Uint64
	Rollbacks     atomic.Uint64
	PurgedVersion atomic.Uint64
	PurgedRecords atomic.Uint64
	// SlabChunksCompacted counts table arena chunks whose live rows purge
	// moved to a new chunk (rows.go, compact).
	SlabChunksCompacted atomic.Uint64
	PurgeRuns           atomic.Uint64
	HistoryLength       atomic.Int64 // committed records waiting for purge
}

// Stats returns the engine's live counters.
func (e *Engine) Stats() *Stats { return &e.stats }
