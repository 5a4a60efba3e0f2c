package cluster

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"time"

	"lockstep/internal/txlog"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Storage is raft's storage on lockstep's log: raft.Storage for the raft
// step (reads), and the writes the append step makes. The log is the
// transaction log itself (one record per raft entry); the raft-state file
// beside it holds the hard state and the snapshot metadata.
//
// Concurrency: the raft step reads while the append step writes. raft reads
// only entries it knows are stable (its unstable log answers for the rest,
// including a tail being overwritten), and the append step is the only
// writer, so the log's own rules (one appender; no read of a range being
// truncated) hold.
type Storage struct {
	fs  txlog.FS
	dir string
	log *txlog.Log

	mu sync.Mutex
	p  persisted // what the raft-state file holds
	// commit is the newest commit index raft reported, which may be ahead
	// of p.hs.Commit (written lazily).
	commit uint64
	// source gives a checkpoint's data for Snapshot (nil: none).
	source SnapshotSource
	// lastLSN: the log position of the last append (the append step's).
	lastLSN uint64
	// prep: the snapshot's data, read off the raft step (Snapshot).
	prep snapPrep
}

// StorageOptions configure OpenStorage.
type StorageOptions struct {
	// Dir holds the raft-state file and the log (in Dir/log).
	Dir string
	// FS is the file layer (nil: the operating system's).
	FS txlog.FS
	// Log configures the log; its Dir and FS are set from the above.
	Log txlog.Options
}

// OpenStorage opens (or creates) a node's raft storage.
func OpenStorage(o StorageOptions) (*Storage, error) {
	if o.FS == nil {
		o.FS = txlog.OSFS{}
	}
	if err := o.FS.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster: creating %s: %w", o.Dir, err)
	}
	p, _, err := readPersisted(o.FS, o.Dir)
	if err != nil {
		return nil, err
	}
	lo := o.Log
	lo.Dir = filepath.Join(o.Dir, "log")
	lo.FS = o.FS
	log, _, err := txlog.Open(lo)
	if err != nil {
		return nil, fmt.Errorf("cluster: opening the log: %w", err)
	}
	s := &Storage{fs: o.FS, dir: o.Dir, log: log, p: p, commit: p.hs.Commit}
	if err := s.check(); err != nil {
		log.Close()
		return nil, err
	}
	return s, nil
}

// check makes the log and the raft-state file agree at open: a snapshot
// install interrupted after the raft-state file was written is completed
// (the log reset to start after it); a log that does not reach back to the
// snapshot, or a commit index beyond the log, is refused.
func (s *Storage) check() error {
	snap := s.p.snap
	if snap.Index > 0 && s.log.LastIndex() < snap.Index {
		if err := s.log.Reset(snap.Index+1, snap.Term); err != nil {
			return fmt.Errorf("cluster: completing the install of the snapshot at %d: %w", snap.Index, err)
		}
	}
	if first := s.log.FirstIndex(); first > snap.Index+1 {
		return fmt.Errorf("cluster: the log starts at index %d but the snapshot covers only up to %d: entries are missing", first, snap.Index)
	}
	if last := s.log.LastIndex(); s.p.hs.Commit > last {
		return fmt.Errorf("cluster: the raft state says index %d is committed but the log ends at %d: committed entries are missing", s.p.hs.Commit, last)
	}
	return nil
}

// Bootstrap starts a never-used storage as a member of a new group whose
// voters are given: the log starts after a snapshot at index 1, term 1 of
// the empty state with that membership, which every founding member holds
// alike (and a member added later receives as its first snapshot).
func (s *Storage) Bootstrap(voters []uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p.hs.Term != 0 || s.p.snap.Index != 0 || s.log.LastIndex() != 0 {
		return errors.New("cluster: bootstrap of a node that already has raft state")
	}
	p := persisted{
		hs:   pb.HardState{Term: 1, Commit: 1},
		snap: pb.SnapshotMetadata{Index: 1, Term: 1, ConfState: pb.ConfState{Voters: append([]uint64(nil), voters...)}},
	}
	if err := writePersisted(s.fs, s.dir, p); err != nil {
		return err
	}
	if err := s.log.Reset(2, 1); err != nil {
		return fmt.Errorf("cluster: bootstrap: %w", err)
	}
	s.p, s.commit = p, 1
	return nil
}

// Close closes the log (which fsyncs what it holds), then records the
// newest commit index in the raft-state file, so that a member restarted
// after a clean shutdown applies everything it knew committed before it
// hears from the group.
func (s *Storage) Close() error {
	err := s.log.Close()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.p
	next.hs.Commit = max(next.hs.Commit, min(s.commit, s.log.LastIndex()))
	if next.hs.Commit == s.p.hs.Commit {
		return nil
	}
	if err := writePersisted(s.fs, s.dir, next); err != nil {
		return err
	}
	s.p = next
	return nil
}

// Log is the log under the storage (reads of committed entries, status).
func (s *Storage) Log() *txlog.Log { return s.log }

// InitialState implements raft.Storage.
func (s *Storage) InitialState() (pb.HardState, pb.ConfState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hs := s.p.hs
	hs.Commit = max(hs.Commit, s.p.snap.Index)
	return hs, s.p.snap.ConfState, nil
}

// Entries implements raft.Storage: entries [lo, hi), at most maxSize bytes
// of payload but at least one.
func (s *Storage) Entries(lo, hi, maxSize uint64) ([]pb.Entry, error) {
	limit := -1
	if maxSize < math.MaxInt {
		limit = int(maxSize)
	}
	recs, err := s.log.Read(lo, hi, limit)
	if err != nil {
		return nil, raftError(err)
	}
	ents := make([]pb.Entry, len(recs))
	for i, r := range recs {
		if ents[i], err = fromRecord(r); err != nil {
			return nil, err
		}
	}
	return ents, nil
}

// Term implements raft.Storage.
func (s *Storage) Term(i uint64) (uint64, error) {
	s.mu.Lock()
	snap := s.p.snap
	s.mu.Unlock()
	if i == snap.Index {
		return snap.Term, nil
	}
	t, err := s.log.Term(i)
	return t, raftError(err)
}

// LastIndex implements raft.Storage.
func (s *Storage) LastIndex() (uint64, error) {
	s.mu.Lock()
	snap := s.p.snap.Index
	s.mu.Unlock()
	return max(s.log.LastIndex(), snap), nil
}

// FirstIndex implements raft.Storage: the log's first index. The log may
// still hold entries a checkpoint covers (a checkpoint drops the log's head
// only as far as every member has it, in whole segments): they stay
// available to raft, so a member that lags behind a checkpoint is sent
// entries, not a snapshot (which cannot be sent yet, see Snapshot). A
// node restarted from a checkpoint tells raft where it applied to
// (Config.Applied), so it does not apply them twice.
func (s *Storage) FirstIndex() (uint64, error) {
	return s.log.FirstIndex(), nil
}

// Snapshot implements raft.Storage. The snapshot is the state the log
// starts after: the bootstrap snapshot (index 1: the empty state and the
// founding membership, no data), or a checkpoint, whose data the
// SnapshotSource gives: a reference to the checkpoint file, which the
// transport streams (snapfile.go), or the data itself (at most
// maxSnapshotData bytes; a larger one, or none, is unavailable and raft
// asks again later).
//
// raft calls Snapshot on the raft step, and again on every proposal and
// every answer from the member while it gets ErrSnapshotTemporarilyUnavailable
// (it has nothing else to send it). So Snapshot never reads the data
// itself: it hands the reading to a goroutine (one at a time, see
// snapPrep) and answers unavailable until the data is in memory. The raft
// step, which every commit of the primary goes through, is never held up
// by a checkpoint being read (TestSnapshotOffRaftStep).
func (s *Storage) Snapshot() (pb.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	meta, src := s.p.snap, s.source
	switch {
	case meta.Index == 1:
		return pb.Snapshot{Metadata: meta}, nil // the bootstrap: no data
	case meta.Index == 0 || src == nil:
		return pb.Snapshot{}, raft.ErrSnapshotTemporarilyUnavailable
	}
	pr := &s.prep
	if pr.ready && pr.index == meta.Index {
		return pb.Snapshot{Metadata: meta, Data: pr.data}, nil
	}
	if !pr.running && (pr.failedIndex != meta.Index || time.Since(pr.failedAt) >= snapRetry) {
		pr.running = true
		go s.prepare(meta, src)
	}
	return pb.Snapshot{}, raft.ErrSnapshotTemporarilyUnavailable
}

// snapPrep is the snapshot data being read for raft, or read (under
// Storage.mu).
type snapPrep struct {
	running bool   // a goroutine is reading
	ready   bool   // data holds the snapshot at index
	index   uint64 // the snapshot index data is for
	data    []byte
	// failedIndex, failedAt: the last read that failed (no data for the
	// snapshot at that index yet: a checkpoint being retaken for a new
	// membership), not tried again before snapRetry.
	failedIndex uint64
	failedAt    time.Time
}

// snapRetry: a snapshot whose data could not be read is not tried again
// sooner (unless a newer snapshot is recorded meanwhile).
const snapRetry = 50 * time.Millisecond

// prepare reads the data of the snapshot at meta off the raft step and
// keeps it for Snapshot while meta is the snapshot the log starts after.
func (s *Storage) prepare(meta pb.SnapshotMetadata, src SnapshotSource) {
	data, err := src(meta)
	if err == nil && len(data) > maxSnapshotData {
		err = fmt.Errorf("the snapshot at %d has %d bytes, more than a frame", meta.Index, len(data))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := &s.prep
	pr.running = false
	switch {
	case err != nil:
		pr.failedIndex, pr.failedAt = meta.Index, time.Now()
	case s.p.snap.Index == meta.Index:
		pr.ready, pr.index, pr.data = true, meta.Index, data
	}
}

// dropPrepared forgets snapshot data read for an older snapshot (s.mu
// held): a member's data is held in memory only until the next checkpoint.
func (s *Storage) dropPrepared() {
	if s.prep.index != s.p.snap.Index {
		s.prep.ready, s.prep.data = false, nil
	}
}

// maxSnapshotData: a snapshot whose data is not a file reference travels
// in one transport frame, with room for the message around it.
const maxSnapshotData = maxFrame - 1<<20

// SetSnapshot records that the state machine's durable state (a
// checkpoint) holds every entry up to meta.Index: the raft-state file says
// so, and raft's first index moves past it. The log itself is cut later
// (TruncatePrefix), keeping what other members still need. An older
// snapshot than the one recorded is ignored.
func (s *Storage) SetSnapshot(meta pb.SnapshotMetadata) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if meta.Index <= s.p.snap.Index {
		return nil
	}
	if last := s.log.LastIndex(); meta.Index > last {
		return fmt.Errorf("cluster: a snapshot at index %d is beyond the log's end %d", meta.Index, last)
	}
	next := s.p
	next.snap = meta
	next.hs.Commit = max(next.hs.Commit, meta.Index)
	if err := writePersisted(s.fs, s.dir, next); err != nil {
		return err
	}
	s.p = next
	s.commit = max(s.commit, meta.Index)
	s.dropPrepared()
	return nil
}

// CompleteInstall makes the log start after a snapshot whose data the
// state machine holds already (a checkpoint installed from a snapshot,
// whose raft-state update a crash interrupted): as installSnapshot.
func (s *Storage) CompleteInstall(meta pb.SnapshotMetadata) error {
	return s.installSnapshot(meta)
}

// installSnapshot makes the log start after a snapshot the leader sent:
// the raft-state file first (a crash after it completes the reset at
// open), then the log is emptied to start at meta.Index+1.
func (s *Storage) installSnapshot(meta pb.SnapshotMetadata) error {
	s.mu.Lock()
	next := s.p
	next.snap = meta
	next.hs.Commit = max(next.hs.Commit, meta.Index)
	if err := writePersisted(s.fs, s.dir, next); err != nil {
		s.mu.Unlock()
		return err
	}
	s.p = next
	s.commit = max(s.commit, meta.Index)
	s.dropPrepared()
	s.mu.Unlock()
	if err := s.log.Reset(meta.Index+1, meta.Term); err != nil {
		return fmt.Errorf("cluster: starting the log after the snapshot at %d: %w", meta.Index, err)
	}
	return nil
}

// SetSource installs where Snapshot finds a checkpoint's data.
func (s *Storage) SetSource(src SnapshotSource) {
	s.mu.Lock()
	s.source = src
	s.mu.Unlock()
}

// ConfState is the membership of the snapshot the log starts after.
func (s *Storage) ConfState() pb.ConfState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.snap.ConfState
}

// raftError maps the log's errors onto raft's.
func raftError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, txlog.ErrCompacted):
		return raft.ErrCompacted
	case errors.Is(err, txlog.ErrUnavailable):
		return raft.ErrUnavailable
	}
	return err
}

// append writes entries to the log (not yet durable), first dropping a
// conflicting tail they replace. It returns the LSN to wait for.
func (s *Storage) append(ents []pb.Entry) (uint64, error) {
	if len(ents) == 0 {
		return 0, nil
	}
	// The log's LastIndex counts what its writer has written: wait for
	// the previous append, or a conflicting tail still on its way would
	// look absent.
	if s.lastLSN != 0 {
		if err := s.log.WaitWritten(s.lastLSN); err != nil {
			return 0, err
		}
	}
	if first := ents[0].Index; first <= s.log.LastIndex() {
		if err := s.log.TruncateSuffix(first); err != nil {
			return 0, fmt.Errorf("cluster: dropping the log's tail from %d: %w", first, err)
		}
	}
	recs := make([]txlog.Entry, len(ents))
	for i, e := range ents {
		recs[i] = toRecord(e)
	}
	lsn, err := s.log.AppendEntries(recs)
	if err != nil {
		return 0, fmt.Errorf("cluster: appending entries %d..%d: %w", ents[0].Index, ents[len(ents)-1].Index, err)
	}
	s.lastLSN = lsn
	return lsn, nil
}

// waitDurable waits until the log is durable up to lsn (0: nothing).
func (s *Storage) waitDurable(lsn uint64) error {
	if lsn == 0 {
		return nil
	}
	return s.log.WaitDurable(lsn)
}

// saveHardState records raft's hard state once everything appended before
// it is durable. A new term or vote is written at once (before any message
// that depends on it leaves); a commit index alone is written when it has
// moved commitEvery entries past the file's (raft relearns it; the file's
// only use is how far a restarted node may apply before it hears from the
// leader). It never records a commit index beyond the log's end.
func (s *Storage) saveHardState(hs pb.HardState, commitEvery uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if hs.Commit > s.commit {
		s.commit = hs.Commit
	}
	next := s.p
	if !raft.IsEmptyHardState(hs) {
		next.hs.Term, next.hs.Vote = hs.Term, hs.Vote
	}
	next.hs.Commit = min(s.commit, s.log.LastIndex())
	votes := next.hs.Term != s.p.hs.Term || next.hs.Vote != s.p.hs.Vote
	if !votes && next.hs.Commit < s.p.hs.Commit+max(commitEvery, 1) {
		return nil
	}
	if next.hs.Commit < s.p.hs.Commit {
		next.hs.Commit = s.p.hs.Commit
	}
	if err := writePersisted(s.fs, s.dir, next); err != nil {
		return err
	}
	s.p = next
	return nil
}

// SnapshotIndex is the index of the snapshot the log starts after: the
// state a node starts from holds every entry up to it.
func (s *Storage) SnapshotIndex() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.snap.Index
}

// persistedState is what the raft-state file holds now (tests).
func (s *Storage) persistedState() persisted {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p
}
