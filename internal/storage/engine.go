package storage

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"lockstep/internal/txn"
)

// Change is one row change of a committing transaction: the final image of
// a primary key (Row nil means deleted).
type Change struct {
	Table uint32
	PK    []byte
	Row   []byte
}

// CommitRecord is what a read-write transaction hands the commit pipeline.
type CommitRecord struct {
	TrxID   txn.ID
	Changes []Change // filled only when the Committer asks for them
}

// Committer is the commit point seam. Commit is called for every
// read-write transaction after all its changes and locks are in place. It
// must make the transaction durable (or fail before anything is visible),
// and call publish exactly once on success — publish makes the transaction
// visible to new ReadViews and releases its locks; a group-commit pipeline
// calls it in sequence order. Commit returns after publish has run.
type Committer interface {
	WantsChanges() bool
	Commit(ctx context.Context, rec *CommitRecord, publish func()) error
}

// Immediate is the standalone in-memory Committer: no log, publish at once.
type Immediate struct{}

func (Immediate) WantsChanges() bool { return false }
func (Immediate) Commit(_ context.Context, _ *CommitRecord, publish func()) error {
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
	committer Committer

	nextTable atomic.Uint32

	purgeMu    sync.Mutex
	purgeQueue []purgeItem
	stopPurge  chan struct{}
	purgeDone  chan struct{}

	stats Stats
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
		committer: opts.Committer,
		stopPurge: make(chan struct{}),
		purgeDone: make(chan struct{}),
	}
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

// NewTable creates an empty table with the given secondary indexes.
func (e *Engine) NewTable(name string, indexes []IndexSpec) *Table {
	t := &Table{id: e.nextTable.Add(1), name: name, e: e, pk: newPKTree(), version: 1}
	for _, s := range indexes {
		t.secs = append(t.secs, &secIndex{spec: s, tree: newSecTree()})
	}
	return t
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
	PurgeRuns     atomic.Uint64
	HistoryLength atomic.Int64 // committed records waiting for purge
}

// Stats returns the engine's live counters.
func (e *Engine) Stats() *Stats { return &e.stats }
