package commit

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"lockstep/internal/certify"
	"lockstep/internal/hist"
	"lockstep/internal/stat"
)

// Log is what the pipeline needs from the transaction log. internal/txlog
// implements it on one machine; the tests use an in-memory fake.
type Log interface {
	// Append appends the payloads, in order, as consecutive records written
	// under term (the raft term in a cluster, 0 standalone), and returns the
	// log position (LSN) just past the last one. It must be safe for
	// concurrent use with WaitDurable. On an error none of the payloads is in
	// the log; if the log cannot tell whether some reached it, the error
	// must wrap ErrUncertain, which the pipeline treats like a failed
	// WaitDurable.
	Append(term uint64, payloads ...[]byte) (lastLSN uint64, err error)
	// WaitDurable blocks until everything up to lsn is durable (fsynced, or
	// written when the log runs with sync_binlog=0). An error means the
	// records may or may not survive a crash.
	WaitDurable(lsn uint64) error
}

// Txn is one transaction handed to Commit.
type Txn struct {
	// Writeset holds the 64-bit hashes of the keys the transaction wrote.
	// Empty means DDL: the transaction is serial (last_committed = seq-1)
	// and every later one depends on it.
	Writeset []uint64
	// Encode builds the log payload once the record's position (sequence
	// number, GTID number, last_committed) is known. The leader calls it in sequence order, in the
	// flush stage, so it should be quick. An error fails this transaction
	// only: it is not appended and gets no sequence number. The payload must
	// not be modified after Encode returns until Commit returns; after
	// that neither the pipeline nor the log holds a reference to it, so
	// the caller may reuse its buffer.
	Encode func(pos Position) ([]byte, error)
	// Publish makes the transaction visible and releases its locks. It is
	// called exactly once, in sequence order, after the transaction is
	// durable, and never if Commit returns an error. May be nil.
	Publish func()
}

// Position is what the pipeline assigns a transaction: its sequence
// number (dense, in commit order), its GTID number (dense, server_uuid:GNO)
// and its last_committed (the highest sequence number it depends on). The
// record carries all three (internal/record.Position). None of them is the
// log index the record lands at: the log numbers its entries itself, and
// an entry may hold several records (a commit group, under raft) or none
// (raft's own entries). Standalone the pipeline appends one record per
// entry, but nothing may rely on that.
//
// CommitTime is when the group was flushed, in microseconds since the
// Unix epoch (MySQL's immediate_commit_timestamp, which a replica passes
// on as original_commit_timestamp): the flush stage reads the clock once
// per group, so a group's members share it. A replica's lag in seconds is
// measured against it.
type Position struct {
	Seq           int64
	GNO           int64
	LastCommitted int64
	CommitTime    int64
}

// WakeupMode chooses how followers wait for their leader.
type WakeupMode int32

const (
	// Targeted: each follower waits on its own slot and its leader wakes it
	// once, by name. No wake-up is wasted.
	Targeted WakeupMode = iota
	// Broadcast: every follower waits on one condition variable and each
	// leader wakes all of them (MySQL 5.6's design; the baseline).
	Broadcast
)

// String is the value of the group_commit_wakeup variable.
func (m WakeupMode) String() string {
	switch m {
	case Targeted:
		return "targeted"
	case Broadcast:
		return "broadcast"
	}
	return fmt.Sprintf("WakeupMode(%d)", int32(m))
}

// ParseWakeupMode parses "targeted" or "broadcast" (any case).
func ParseWakeupMode(s string) (WakeupMode, error) {
	switch strings.ToLower(s) {
	case "targeted":
		return Targeted, nil
	case "broadcast":
		return Broadcast, nil
	}
	return 0, fmt.Errorf("commit: unknown wake-up mode %q (want targeted or broadcast)", s)
}

func (m WakeupMode) valid() bool { return m == Targeted || m == Broadcast }

// Options configure a Pipeline.
type Options struct {
	// Log receives the records. Required.
	Log Log
	// Certifier computes last_committed. Default: certify.NewStatic with
	// certify.DefaultConfig() and Base NextSeq-1. A certifier passed in must
	// not have certified anything past NextSeq-1 (its Base is NextSeq-1
	// after recovery), and must not be used by anyone else while the
	// pipeline runs.
	Certifier certify.Certifier
	// Wakeup is the initial wake-up mode (default Targeted); SetWakeup
	// changes it at run time.
	Wakeup WakeupMode
	// NextSeq is the first sequence number to assign: 1 for a new log, the
	// last recovered sequence number plus one after recovery. 0 means 1.
	NextSeq int64
	// NextGNO is the first GTID number to assign (0 means NextSeq): the
	// last GNO recovered plus one. GNOs advance with sequence numbers, one
	// per transaction that reaches the log, but they are separate numbers:
	// a log started again after a checkpoint, or a source whose numbering
	// differs, has them apart.
	NextGNO int64
	// Term is the term passed to Log.Append until SetTerm changes it.
	Term uint64
	// SyncDelay and SyncNoDelayCount are the initial
	// binlog_group_commit_sync_delay and _no_delay_count (delay.go);
	// SetSyncDelay changes them at run time.
	SyncDelay        time.Duration
	SyncNoDelayCount int
	// SyncGroups is how many groups may wait for durability at once
	// (default 1, at most MaxSyncGroups). With more than one, a group can
	// append while earlier ones wait for their fsync; the log must then
	// keep as many fsyncs in flight to gain anything (txlog's Flushers).
	SyncGroups int
	// Clock reads the commit time of each group (default time.Now).
	Clock func() time.Time
	// MaxGroupBytes caps the payload bytes of one Log.Append (0: no cap;
	// SetMaxGroupBytes changes it): a group whose records add up to more
	// is appended as several, in sequence order, each after the one
	// before is durable and published (split.go). A group member's log
	// makes each Append one raft entry, which must fit a transport frame.
	MaxGroupBytes int64
}

// MaxSyncGroups bounds Options.SyncGroups.
const MaxSyncGroups = 16

var (
	// ErrUncertain is wrapped by Commit's error when the log failed after
	// the transaction's record was handed to it (a failed fsync, or an
	// append that may have partly happened): the record may or may not be
	// in the log. The caller must not roll such a transaction back. After
	// the first such failure the pipeline stays failed and every later
	// Commit returns an error wrapping ErrUncertain too.
	ErrUncertain = errors.New("commit: outcome uncertain: the log failed after the record was handed to it")
	// ErrNotCommitted, wrapped by a Log.WaitDurable error, says the
	// records are certainly not in the log, and neither will be any record
	// appended after them until the pipeline is rebased (a group member's
	// raft entry that another leader's replaced, or that raft refused).
	// The group, and every group after it, fails with that error without
	// publishing; the pipeline does not enter the failed state: Rebase
	// starts a new chain.
	ErrNotCommitted = errors.New("commit: not committed")
	// ErrClosed is returned by Commit after Close.
	ErrClosed = errors.New("commit: pipeline closed")

	errNoEncode = errors.New("Txn.Encode is nil")
)

// Pipeline is the group commit pipeline. Its methods are safe for concurrent
// use.
type Pipeline struct {
	log   Log
	clock func() time.Time                  // Options.Clock
	cert  atomic.Pointer[certify.Certifier] // replaced by Rebase
	// gnoOffset: a transaction's GNO is its sequence number plus this
	// (read by Stats; set by New and Rebase).
	gnoOffset atomic.Int64
	wakeup    atomic.Int32 // WakeupMode for new commits
	term      atomic.Uint64
	// maxGroupBytes: Options.MaxGroupBytes, SetMaxGroupBytes.
	maxGroupBytes atomic.Int64

	// queue is the stack of arrivals, newest first. Whoever pushes onto an
	// empty stack leads the group that will take it.
	queue atomic.Pointer[waiter]
	// queued counts arrivals since the last group took the queue, kept
	// only while a sync delay is set (delay.go; approximate: an arrival is
	// counted just after its push).
	queued atomic.Int64

	// Sync delay (delay.go): the settings, whether a leader is waiting,
	// the wake-up that ends its wait early, and its timer (under logMu).
	delay       atomic.Int64 // nanoseconds
	delayNoWait atomic.Int64
	delaying    atomic.Bool
	delayWake   chan struct{}
	delayTimer  *time.Timer

	// closeMu: every Commit holds it for reading; Close takes it for writing
	// and so waits for commits in flight.
	closeMu sync.RWMutex
	closed  bool

	// fatal is the error (wrapping ErrUncertain) after a durability failure.
	fatal atomic.Pointer[error]

	// syncSlots holds a token for each group between taking the queue and
	// joining the commit queue (capacity Options.SyncGroups).
	syncSlots chan struct{}

	// Flush stage: one group at a time; turns number the groups that
	// appended, in log order.
	logMu    sync.Mutex
	seq      *sequencer
	slots    []slot
	payloads [][]byte
	turns    uint64

	// Groups join the commit queue in turn order: joined is the next turn
	// to join.
	turnMu   sync.Mutex
	turnCond sync.Cond
	joined   uint64

	// Commit stage: durable groups queue here in sequence order (pushed
	// under logMu); the leader that pushed onto an empty queue takes
	// commitMu and publishes every group queued.
	commitQ  atomic.Pointer[waiter] // group leaders, newest first
	commitMu sync.Mutex
	chainErr error // under commitMu: set by the first group that could not publish

	// Broadcast wake-ups.
	bcMu   sync.Mutex
	bcCond sync.Cond

	waiters sync.Pool
	c       counters

	// WaitPublished's waiters, and the channel closed (and replaced) when
	// lastSeq moves while there are some.
	pubWaiters atomic.Int64
	pubCh      atomic.Pointer[chan struct{}]
}

// New creates a pipeline.
func New(opts Options) (*Pipeline, error) {
	if opts.Log == nil {
		return nil, errors.New("commit: Options.Log is required")
	}
	if opts.NextSeq == 0 {
		opts.NextSeq = 1
	}
	if opts.NextSeq < 1 {
		return nil, fmt.Errorf("commit: Options.NextSeq = %d, want >= 1", opts.NextSeq)
	}
	if opts.SyncGroups == 0 {
		opts.SyncGroups = 1
	}
	if opts.SyncGroups < 1 || opts.SyncGroups > MaxSyncGroups {
		return nil, fmt.Errorf("commit: Options.SyncGroups = %d, want 1..%d", opts.SyncGroups, MaxSyncGroups)
	}
	if !opts.Wakeup.valid() {
		return nil, fmt.Errorf("commit: Options.Wakeup = %v, want Targeted or Broadcast", opts.Wakeup)
	}
	if opts.Certifier == nil {
		cfg := certify.DefaultConfig()
		cfg.Base = opts.NextSeq - 1
		st, err := certify.NewStatic(cfg)
		if err != nil {
			return nil, err
		}
		opts.Certifier = st
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	p := &Pipeline{
		log:   opts.Log,
		clock: opts.Clock,
		seq:   newSequencer(opts.Certifier, opts.NextSeq),
	}
	p.c.latency = hist.New(LatencyBoundsMicros...)
	p.cert.Store(&opts.Certifier)
	if opts.NextGNO > 0 {
		p.seq.gnoOffset = opts.NextGNO - opts.NextSeq
		p.gnoOffset.Store(p.seq.gnoOffset)
	}
	p.wakeup.Store(int32(opts.Wakeup))
	p.term.Store(opts.Term)
	p.maxGroupBytes.Store(max(opts.MaxGroupBytes, 0))
	p.delayWake = make(chan struct{}, 1)
	p.SetSyncDelay(opts.SyncDelay, opts.SyncNoDelayCount)
	p.bcCond.L = &p.bcMu
	p.turnCond.L = &p.turnMu
	p.syncSlots = make(chan struct{}, opts.SyncGroups)
	p.waiters.New = func() any { return &waiter{wake: make(chan struct{}, 1)} }
	p.c.lastSeq.Store(opts.NextSeq - 1)
	ch := make(chan struct{})
	p.pubCh.Store(&ch)
	return p, nil
}

// SetWakeup switches the wake-up mode for commits that start from now on
// (commits already waiting keep the mode they started with; a leader wakes
// each follower the way it waits). An unknown mode is ignored.
func (p *Pipeline) SetWakeup(m WakeupMode) {
	if m.valid() {
		p.wakeup.Store(int32(m))
	}
}

// Wakeup returns the current wake-up mode.
func (p *Pipeline) Wakeup() WakeupMode { return WakeupMode(p.wakeup.Load()) }

// SetTerm sets the term passed to Log.Append for groups flushed from now on.
func (p *Pipeline) SetTerm(term uint64) { p.term.Store(term) }

// Err returns the error (wrapping ErrUncertain) that put the pipeline in the
// failed state, or nil.
func (p *Pipeline) Err() error {
	if e := p.fatal.Load(); e != nil {
		return *e
	}
	return nil
}

// Close makes later commits fail with ErrClosed and waits for the commits in
// flight to finish. It does not close the Log.
func (p *Pipeline) Close() error {
	p.closeMu.Lock()
	p.closed = true
	p.closeMu.Unlock()
	return nil
}

// Commit orders, certifies, logs and publishes t, and returns its sequence
// number once t is durable and published. There is no cancellation: once
// called, the commit runs to its end, because a client that goes away must
// not undo a commit that reached the log.
//
// On an error t was not published. If the error wraps ErrUncertain, t's
// record may be in the log and t must not be rolled back; any other error
// (Encode's, or the log's Append) means the record is not in the log.
func (p *Pipeline) Commit(t *Txn) (seq int64, err error) {
	if t == nil {
		return 0, errors.New("commit: nil Txn")
	}
	p.closeMu.RLock()
	defer p.closeMu.RUnlock()
	if p.closed {
		return 0, ErrClosed
	}
	if err := p.Err(); err != nil {
		stat.Inc(&p.c.failed)
		return 0, err
	}
	var start time.Time // for the latency histogram only
	if stat.On {
		start = time.Now()
	}
	w := p.waiters.Get().(*waiter)
	w.txn = t
	w.mode = WakeupMode(p.wakeup.Load())
	leader := p.enqueue(w)
	if p.delay.Load() > 0 {
		p.arrived()
	}
	if leader {
		p.lead(w)
	} else {
		p.follow(w)
	}
	seq, err = w.seq, w.err
	w.reset()
	p.waiters.Put(w)
	if err != nil {
		stat.Inc(&p.c.failed)
	} else if stat.On {
		p.c.latency.Observe(time.Since(start).Microseconds())
	}
	return seq, err
}

// setFatal enters the failed state (first error wins) and returns the error
// every later commit gets.
func (p *Pipeline) setFatal(cause error) error {
	if errors.Is(cause, ErrUncertain) {
		cause = fmt.Errorf("commit: %w", cause)
	} else {
		cause = fmt.Errorf("%w: %w", ErrUncertain, cause)
	}
	if p.fatal.CompareAndSwap(nil, &cause) {
		p.notifyPublished()
		return cause
	}
	return *p.fatal.Load()
}

// SetMaxGroupBytes sets the cap on the payload bytes of one Log.Append
// (Options.MaxGroupBytes; 0: none) for groups flushed from now on.
func (p *Pipeline) SetMaxGroupBytes(n int64) { p.maxGroupBytes.Store(max(n, 0)) }
