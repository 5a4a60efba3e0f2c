package server

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"lockstep/internal/checkpoint"
	"lockstep/internal/cluster"
	"lockstep/internal/sqlfront"
	"lockstep/internal/storage"
	"lockstep/internal/txlog"
	"lockstep/internal/txn"
)

// Checkpoints on a group member: each member checkpoints on its own, as
// raft nodes snapshot on their own. The point is an applied log index: the
// applier, after applying an entry, opens the ReadView the rows are read
// through (every entry up to it is applied and published there, and no
// later one yet) and takes the DDL latch (without waiting: a DDL statement
// that holds it may be waiting for the applier), then a goroutine writes
// the checkpoint file while applying goes on. The file's header carries
// the index, its term and the membership: it is the raft snapshot. Then the
// raft-state file records it (raft's first index moves past it) and the
// log's head is dropped — but only up to what every member is known to
// have (the leader's match indexes), since a checkpoint cannot yet be sent
// to a member that needs older entries (cluster.Storage.Snapshot).
//
// At start, the newest checkpoint is loaded and raft resumes applying
// after its index.

// checkpointLoop asks for a checkpoint whenever the log has grown by more
// than every bytes since the last one (the applier starts it: maybeCheckpoint).
func (g *group) checkpointLoop(d *durable, every int64) {
	d.onLogGrowth(every, d.ckptStop, func() bool {
		if !g.ckptRunning.Load() {
			g.ckptWanted.Store(true)
		}
		return true
	})
}

// maybeCheckpoint starts a checkpoint at the entry just applied, if one
// is wanted and the DDL latch is free (the applier; index and term are the
// entry's, seq and gno where the apply state machine stands).
func (g *group) maybeCheckpoint(index, term uint64, seq, gno int64) {
	if !g.ckptWanted.Load() || g.d == nil {
		return
	}
	conf, ok := g.node.ConfState()
	if !ok {
		return // a membership change up to here is not yet in raft's configuration
	}
	if !g.fe.TryLockDDL() {
		return
	}
	g.ckptWanted.Store(false)
	g.ckptRunning.Store(true)
	snap := g.fe.Storage().Begin(txn.RepeatableRead)
	snap.Trx().ReadView()
	enc, _ := conf.Marshal()
	h := checkpoint.Header{Seq: seq, GTID: g.d.gtidSource() + ":1-" + strconv.FormatInt(gno, 10), Index: index, Term: term, Conf: enc}
	go func() {
		defer g.ckptRunning.Store(false)
		err := g.checkpoint(snap, h, conf)
		if errors.Is(err, checkpoint.ErrStopped) {
			return
		}
		if err != nil {
			fmt.Fprintf(g.w, "lockstep: group: member %d: checkpoint at log index %d failed: %v\n", g.cfg.ServerID, index, err)
		}
	}()
}

// checkpoint writes the checkpoint, records it as the raft snapshot and
// drops the log every member has beyond it.
func (g *group) checkpoint(snap *storage.Tx, h checkpoint.Header, conf pb.ConfState) error {
	start := time.Now()
	d := g.d
	path, rows, err := func() (string, int64, error) {
		defer g.fe.UnlockDDL()
		defer snap.Rollback()
		return d.writeCheckpoint(g.fe, snap, h)
	}()
	if err != nil {
		return err
	}
	if err := g.st.SetSnapshot(pb.SnapshotMetadata{Index: h.Index, Term: h.Term, ConfState: conf}); err != nil {
		return err
	}
	if err := checkpoint.RemoveOlder(d.checkpointDir(), path); err != nil {
		return err
	}
	if cut := g.logCut(h.Index, d.log.Segments(), g.cfg.GroupLagRetentionSize); cut > 0 {
		if err := d.log.TruncatePrefix(retainFrom(d.log.Segments(), cut, d.retain)); err != nil {
			return fmt.Errorf("truncating the log: %w", err)
		}
	}
	d.ckpt.count.Add(1)
	d.ckpt.lastSeq.Store(h.Seq)
	d.ckpt.lastRows.Store(rows)
	took := time.Since(start)
	d.ckpt.lastNs.Store(int64(took))
	d.ckpt.times().Observe(took.Milliseconds())
	return nil
}

// logCut is the first log index to keep after a checkpoint at index: the
// entry after it, or after the lowest index any member of the group is
// known to hold, whichever is lower; 0 when a member's is not known.
// A member that lags so far behind (or whose position is unknown) that
// keeping the log for it would keep more than lagKeep bytes of it (segs:
// the log's segments) is not waited for: when it comes back it gets the
// checkpoint instead, and installs it by restarting (InstallSnapshot).
// lagKeep 0: every member is waited for.
func (g *group) logCut(index uint64, segs []txlog.SegmentInfo, lagKeep int64) uint64 {
	cut := index + 1
	for _, m := range g.node.Members() {
		if m.Learner || m.ID == g.cfg.ServerID {
			continue
		}
		need := m.Match + 1 // the first entry the member lacks
		if lagKeep > 0 && logBytes(segs, need, index) > lagKeep {
			g.lagCuts.Add(1)
			continue // left behind: it will get the checkpoint
		}
		if m.Match == 0 {
			return 0
		}
		cut = min(cut, need)
	}
	return cut
}

// logBytes is the size of the log's segments that hold entries from
// first to last.
func logBytes(segs []txlog.SegmentInfo, first, last uint64) int64 {
	var n int64
	for _, sg := range segs {
		if sg.Last >= first && sg.First <= last {
			n += sg.Bytes
		}
	}
	return n
}

// loadGroupCheckpoint loads the member's newest checkpoint into fe and
// makes the raft storage start after it (completing a checkpoint whose
// raft-state update a crash interrupted). It returns the index applying
// resumes after and the checkpoint's header (zero: none).
func loadGroupCheckpoint(datadir string, fe *sqlfront.Frontend, st *cluster.Storage, w io.Writer) (uint64, checkpoint.Header, error) {
	h, err := loadCheckpointHeader(filepath.Join(datadir, "checkpoint"), fe, w)
	if err != nil {
		return 0, h, err
	}
	if h.Seq == 0 && h.Index == 0 {
		return st.SnapshotIndex(), h, nil
	}
	if h.Index == 0 {
		return 0, h, fmt.Errorf("the checkpoint in %s is a standalone server's (it has no raft index)", datadir)
	}
	var conf pb.ConfState
	if err := conf.Unmarshal(h.Conf); err != nil {
		return 0, h, fmt.Errorf("the checkpoint's membership: %w", err)
	}
	meta := pb.SnapshotMetadata{Index: h.Index, Term: h.Term, ConfState: conf}
	set := st.SetSnapshot
	if h.Index > st.SnapshotIndex() && h.Index > st.Log().LastIndex() {
		// Beyond this member's log: a checkpoint the group sent
		// (InstallSnapshot), whose raft-state update a crash cut short.
		// A checkpoint of its own never is (it covers applied entries).
		set = st.CompleteInstall
	}
	if err := set(meta); err != nil {
		return 0, h, err
	}
	if err := fe.RecoverCounters(); err != nil {
		return 0, h, err
	}
	return h.Index, h, nil
}
