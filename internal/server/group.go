package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"go.etcd.io/raft/v3"

	"lockstep/internal/apply"
	"lockstep/internal/cluster"
	"lockstep/internal/commit"
	"lockstep/internal/config"
	logrec "lockstep/internal/record"
	"lockstep/internal/sqlfront"
	"lockstep/internal/txlog"
)

// A server as a member of a replication group (docs/cluster.md): the raft
// log is the transaction log; the primary's commit pipeline proposes each
// commit group as one entry and acknowledges it once the entry is
// committed; every member applies committed entries through the apply
// state machine (internal/apply), the primary skipping its own (its
// pipeline publishes them). The member that leads raft and has applied
// everything before its term accepts writes; every other member refuses
// them with 1290 naming the primary.

// group is the server's part of a group.
type group struct {
	cfg  config.Config
	uuid string // this member's server_uuid
	fe   *sqlfront.Frontend
	st   *cluster.Storage
	node *cluster.Node
	rt   *cluster.Runtime
	tr   *cluster.Transport
	sm   *groupSM
	p    *commit.Pipeline
	stop chan struct{}
	done chan struct{}
	// applyStop ends the applier's wait for the pipeline (WaitPublished)
	// when the member stops, after its hand-off.
	applyStop chan struct{}
	write     atomic.Bool // this member accepts writes (primary, caught up)
	// wasPrimary: this member took writes since it last saw no local
	// read-write transaction as a secondary; before it applies another
	// member's entry, local transactions must be over (localWritesEnded).
	wasPrimary atomic.Bool
	// fence: the term this member leads as the primary and the epoch of
	// its promotion: its pipeline numbers transactions for them, and their
	// entries may enter the log only there (cluster.Fence).
	fence  atomic.Pointer[cluster.Fence]
	roleMu sync.Mutex // write, wasPrimary, fence and the front end's mode

	promotions atomic.Int64
	demotions  atomic.Int64
	handOffs   atomic.Int64
	errState   atomic.Bool // the node failed: MySQL GR's ERROR state
	// restart is closed once the member must restart to install a
	// snapshot (groupmembership.go): Run starts the server again.
	restart     chan struct{}
	restartOnce sync.Once
	failure     atomic.Pointer[groupError] // why (groupreplica.go)
	barriers    atomic.Int64               // read barriers passed (groupread.go)
	limit       txnLimit                   // group_replication_transaction_size_limit (txnlimit.go)

	// Membership (groupmembership.go).
	gtidName    atomic.Pointer[string] // the group name ("" until a new member learns it)
	addrs       *memberAddrs
	changes     atomic.Int64
	reinstalls  atomic.Int64 // checkpoints received over data held (groupmembership.go)
	lagCuts     atomic.Int64 // log cuts that left a lagging member behind (groupckpt.go)
	lastPromote time.Time    // the role watcher's

	// Checkpoints (groupckpt.go).
	d           *durable
	w           io.Writer
	ckptWanted  atomic.Bool
	ckptRunning atomic.Bool

	// The proposals of the commit groups in consensus (groupLog), by the
	// log position Append returned for them.
	inflightMu  sync.Mutex
	inflightLSN uint64
	inflight    map[uint64]*cluster.Proposal
}

// testGroups, when set (tests), maps each member's group address to its
// group, so that a test can cut a member off (Transport.Isolate).
var testGroups *sync.Map

// groupTick is raft's tick; with ElectionTick 10 an election starts after
// 1-2 s without a leader (raft randomizes it), heartbeats go every tick.
const groupTick = 100 * time.Millisecond

// checkDatadirKind refuses to start a standalone server on a group
// member's data directory and the other way round: their logs differ (a
// member's entries are raft's).
func checkDatadirKind(cfg config.Config) error {
	_, err := os.Stat(filepath.Join(cfg.Datadir, "raft-state"))
	member := err == nil
	if member && !cfg.Grouped() {
		return fmt.Errorf("the data directory %s belongs to a replication group member (it has raft-state): start it with --group-local-address and --group-seeds", cfg.Datadir)
	}
	if !member && cfg.Grouped() {
		segs, _ := filepath.Glob(filepath.Join(cfg.Datadir, "log", "log-*.seg"))
		if len(segs) > 0 {
			return fmt.Errorf("the data directory %s holds a standalone server's log: a group member needs a data directory of its own", cfg.Datadir)
		}
	}
	return nil
}

// openGroup opens a member's raft storage in cfg.Datadir, starts its node,
// transport and role watcher, applies what the log holds up to the commit
// index the member knew, and returns the server's commit path.
func openGroup(cfg config.Config, fe *sqlfront.Frontend, w io.Writer, opts txlog.Options) (*durable, error) {
	uuid, err := loadServerUUID(cfg.Datadir)
	if err != nil {
		return nil, err
	}
	opts.Dir, opts.FS = "", nil
	st, err := cluster.OpenStorage(cluster.StorageOptions{Dir: cfg.Datadir, Log: opts})
	if err != nil {
		return nil, fmt.Errorf("open the group's log: %w", err)
	}
	hs, _, _ := st.InitialState()
	if hs.Term == 0 && st.SnapshotIndex() == 0 {
		if !cfg.GroupBootstrap {
			fmt.Fprintf(w, "lockstep: group: member %d has no group state yet: it waits to be added to a running group (on its primary: SELECT group_replication_add_member(%d, '%s')); founding members start the group with --group-bootstrap\n",
				cfg.ServerID, cfg.ServerID, cfg.GroupLocalAddress)
		}
	}
	if hs.Term == 0 && cfg.GroupBootstrap && st.SnapshotIndex() == 0 {
		ids := make([]uint64, 0, len(cfg.GroupSeeds))
		for id := range cfg.GroupSeeds {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		if err := st.Bootstrap(ids); err != nil {
			st.Close()
			return nil, err
		}
		fmt.Fprintf(w, "lockstep: group: bootstrapped a new group of members %v\n", ids)
		hs, _, _ = st.InitialState()
	}
	// A new member learns the group's name with its first snapshot.
	joining := hs.Term == 0 && st.SnapshotIndex() == 0 && !cfg.GroupBootstrap
	name, err := loadGroupName(cfg, !joining || cfg.GroupName != "")
	if err != nil {
		st.Close()
		return nil, err
	}
	g := &group{cfg: cfg, uuid: uuid, fe: fe, st: st, stop: make(chan struct{}), done: make(chan struct{}), applyStop: make(chan struct{}),
		restart:  make(chan struct{}),
		inflight: map[uint64]*cluster.Proposal{}, w: w, addrs: newMemberAddrs(cfg.GroupSeeds)}
	g.gtidName.Store(&name)
	g.reinstalls.Store(cfg.GroupReinstalls)
	st.SetSource(g.snapshotData)
	// The newest checkpoint (groupckpt.go) is the state raft resumes from.
	applied, ckpt, err := loadGroupCheckpoint(cfg.Datadir, fe, st, w)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("recovery: %w", err)
	}
	hs, _, _ = st.InitialState()
	g.sm = &groupSM{x: &recoveryExec{fe: fe, w: w}, g: g,
		popt: apply.ParallelOptions{Workers: cfg.ReplicaParallelWorkers, PreserveCommitOrder: cfg.ReplicaPreserveCommitOrder}}
	g.sm.reset(apply.New(apply.Options{FailedDDL: sqlfront.FailedDDLIndex, UUID: name,
		Applied: apply.Position{Index: applied, Seq: ckpt.Seq}, ExecutedGNO: checkpointGNO(ckpt)}))
	g.sm.applied.Store(applied)
	g.sm.lastTerm.Store(ckpt.Term)
	g.sm.lastGNO.Store(checkpointGNO(ckpt))
	fe.SetGroupSecondary(true, "")
	// --log-syncs-in-flight: commit groups in consensus at once (the
	// pipeline's sync slots): with more than one, the next groups are
	// proposed while one group's entry travels and commits.
	p, err := commit.New(commit.Options{Log: groupLog{g}, Wakeup: commit.Targeted, SyncGroups: max(cfg.LogSyncsInFlight, 1)})
	if err != nil {
		st.Close()
		return nil, err
	}
	g.p = p
	if err := g.installTxnSizeLimit(fe); err != nil {
		st.Close()
		return nil, err
	}
	// The sync delay holds a group's leader as standalone (SET GLOBAL).
	if err := installSyncDelay(fe, p, cfg); err != nil {
		st.Close()
		return nil, err
	}
	g.node, err = cluster.NewNode(cluster.Config{
		ID: cfg.ServerID, Storage: st, StateMachine: g.sm, Applied: applied,
		// raft's bound on its uncommitted log must admit an entry of the
		// largest size (the transaction size limit) whatever else is
		// uncommitted: a group in consensus per sync slot, and the one
		// before whose apply response raft has not stepped yet. raft
		// drops a proposal over it, and a dropped entry ends the
		// primary's epoch. What the primary holds uncommitted is bounded
		// by its pipeline: one entry per slot (a split group proposes one
		// part at a time).
		MaxUncommittedEntriesSize: uint64(max(cfg.LogSyncsInFlight, 1)+1) * cluster.MaxEntryData,
		Send:                      func(ms []raftMessage) { g.tr.Send(ms) },
		ElectionTick:              10, HeartbeatTick: 1,
		Logf: func(format string, args ...any) { fmt.Fprintf(w, "lockstep: group: "+format+"\n", args...) },
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	g.tr, err = cluster.NewTransport(cluster.TransportOptions{ID: cfg.ServerID, Listen: cfg.GroupLocalAddress,
		Peers: cfg.GroupSeeds, Deliver: g.node.Receive, Unreachable: g.node.ReportUnreachable,
		SnapshotFailed: g.node.ReportSnapshotFailed, SnapshotSent: g.node.ReportSnapshotSent, ConnLost: g.node.ReportConnLost,
		MaxQueueBytes: testSendQueueBytes,
		SnapshotDir:   g.snapshotDir()})
	if err == nil {
		// Members added since the seeds were written (changes applied
		// before the transport existed).
		for _, id := range g.addrs.ids() {
			g.tr.AddPeer(id, g.addrs.get(id))
		}
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	g.rt = cluster.Start(g.node, groupTick)
	if testGroups != nil {
		testGroups.Store(cfg.GroupLocalAddress, g)
	}
	fe.SetGroupMembers(func() []sqlfront.GroupMember { return g.groupMemberRows(uuid) }) // groupmembers.go
	fe.SetReplicaStatus(g.replicaStatusRows)                                             // groupreplica.go
	// What this member knew committed is applied before clients connect,
	// as a standalone server replays its log.
	start := time.Now()
	for g.sm.applied.Load() < hs.Commit {
		if err := g.node.Err(); err != nil {
			g.close()
			return nil, fmt.Errorf("recovery: %w", err)
		}
		time.Sleep(time.Millisecond)
	}
	fmt.Fprintf(w, "lockstep: group: member %d applied the log up to index %d in %v\n", cfg.ServerID, hs.Commit, time.Since(start).Round(time.Millisecond))
	go g.watchRole()
	fe.SetReadBarrier(g.readBarrier)
	fe.SetGroupAdmin(groupAdmin{g}) // groupmembership.go

	d := &durable{p: p, log: st.Log(), uuid: uuid, datadir: cfg.Datadir, grp: g,
		retain: cfg.LogRetentionSize, ckptFsync: cfg.CheckpointFsyncThreshold, ckptRate: cfg.CheckpointRateLimit,
		ckptStop: make(chan struct{}), ckptDone: make(chan struct{})}
	g.d = d
	go g.checkpointLoop(d, cfg.CheckpointLogSize)
	return d, nil
}

// raftMessage is raft's message type, named for the Send callback.
type raftMessage = cluster.Message

// watchRole makes the member writable when it leads raft and has applied
// every entry before its term (its term's first entry is applied), after
// starting its pipeline's numbering where the log stands; and read-only
// again as soon as it does not lead.
func (g *group) watchRole() {
	defer close(g.done)
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		if err := g.node.Err(); err != nil {
			if errors.Is(err, cluster.ErrRestartToInstall) {
				g.restartOnce.Do(func() {
					fmt.Fprintf(g.w, "lockstep: group: member %d restarts to load the group's checkpoint\n", g.cfg.ServerID)
					close(g.restart)
				})
				continue
			}
			g.failed(err)
			continue
		}
		s := g.node.Status()
		ready := s.State == raft.StateLeader && g.sm.lastTerm.Load() == s.Term
		if ready {
			g.promote(s.Term)
			g.promoteLearners() // groupmembership.go
		} else {
			g.demote(s.Lead)
		}
	}
}

// failed puts a member whose node stopped with an error in MySQL Group
// Replication's ERROR state, once: it says why on stderr, refuses writes
// (naming the error) and keeps serving reads of what it applied (MySQL's
// group_replication_exit_state_action=READ_ONLY). Commits waiting for
// their entries end with an unknown outcome (the node ended them).
func (g *group) failed(err error) {
	if !g.errState.CompareAndSwap(false, true) {
		return
	}
	g.failure.Store(&groupError{err: err, at: time.Now()})
	fmt.Fprintf(g.w, "lockstep: group: member %d stopped replicating: %v; it serves reads of what it applied and refuses writes until it is restarted\n", g.cfg.ServerID, err)
	g.roleMu.Lock()
	defer g.roleMu.Unlock()
	if g.write.Load() {
		g.write.Store(false)
		g.demotions.Add(1)
	}
	g.fe.SetGroupSecondary(true, fmt.Sprintf("this member stopped replicating after an error (%v) and must be restarted", err))
}

// promote makes the member take writes, once: its pipeline's numbering
// continues where the log stands, in a new epoch fenced to the term it
// leads (cluster.Fence). Only the role watcher calls it; Rebase waits for
// the groups in flight, so it runs outside roleMu (the applier may need
// roleMu meanwhile, in localWritesEnded).
func (g *group) promote(term uint64) {
	if g.write.Load() {
		return
	}
	seq, gno := g.sm.next()
	if err := g.p.Rebase(seq, gno); err != nil {
		fmt.Fprintf(os.Stderr, "lockstep: group: member %d cannot take writes: %v\n", g.cfg.ServerID, err)
		return
	}
	g.roleMu.Lock()
	defer g.roleMu.Unlock()
	if s := g.node.Status(); s.State != raft.StateLeader || s.Term != term {
		return // lost it meanwhile
	}
	g.fence.Store(&cluster.Fence{Term: term, Epoch: uint64(g.promotions.Add(1))})
	g.wasPrimary.Store(true)
	g.write.Store(true)
	g.fe.SetGroupSecondary(false, "")
}

// endEpoch stops the member taking writes after a commit group that was
// certainly not committed: later groups of the epoch fail too (the
// pipeline's chain, the node's fence); if the member still leads, the role
// watcher promotes it again, rebasing the numbering.
func (g *group) endEpoch() {
	g.roleMu.Lock()
	defer g.roleMu.Unlock()
	if g.write.Load() {
		g.write.Store(false)
		g.demotions.Add(1)
	}
}

// demote makes the member refuse writes, naming the leader it knows.
func (g *group) demote(lead uint64) {
	g.roleMu.Lock()
	defer g.roleMu.Unlock()
	if g.write.Load() {
		g.write.Store(false)
		g.demotions.Add(1)
	}
	primary := ""
	if lead != 0 && lead != g.cfg.ServerID {
		primary = g.primaryText(lead) // groupinfo.go
	}
	g.fe.SetGroupSecondary(true, primary)
}

// localWriteWait bounds how long a demoted primary's applier waits for its
// local read-write transactions to end before it stops with an error.
var localWriteWait = 30 * time.Second

// localWritesEnded is called before another member's entry is applied on
// a member that took writes: it refuses writes from now on and waits until
// no local read-write transaction is open. Storage's apply installs
// committed versions without row locks, so a local transaction's
// uncommitted version under it would be lost or kept wrongly. The local
// transactions end as their sessions COMMIT (their entries are not
// committed: 3101) or ROLLBACK or disconnect; a session that keeps one open
// longer than localWriteWait stops the applier with an error naming the
// cause, rather than letting it apply over the transaction.
func (g *group) localWritesEnded() error {
	g.demote(g.node.Status().Lead)
	deadline := time.Now().Add(localWriteWait)
	for g.fe.Storage().Sys.Stats().Active > 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("this member was the primary and %d local read-write transactions are still open after %v: the applier cannot apply another member's transactions under them", g.fe.Storage().Sys.Stats().Active, localWriteWait)
		}
		select {
		case <-g.stop:
			return cluster.ErrStopped
		case <-time.After(time.Millisecond):
		}
	}
	g.wasPrimary.Store(false)
	return nil
}

// close stops the member: the role watcher, the node (pending proposals
// end with an unknown outcome), the transport, the pipeline, the log.
func (g *group) close() error {
	select {
	case <-g.stop:
	default:
		close(g.stop)
	}
	if g.done != nil {
		select {
		case <-g.done:
		case <-time.After(time.Second):
		}
	}
	g.handOff()
	// A checkpoint being written stops at its next write (ckptStop is
	// closed before this runs); wait for it before the log closes.
	for deadline := time.Now().Add(10 * time.Second); g.ckptRunning.Load() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	select { // after the hand-off, which needs the applier
	case <-g.applyStop:
	default:
		close(g.applyStop)
	}
	g.rt.Stop()
	aerr := g.sm.closeApplier()
	terr := g.tr.Close()
	perr := g.p.Close()
	serr := g.st.Close()
	return errors.Join(aerr, terr, perr, serr)
}

// applierStatus shows the member's applier (docs/apply.md, "Status"),
// live, with the group's lag: entries committed and not yet applied here,
// and, while there are some, the seconds since the last transaction
// applied here was committed on the primary (MySQL's
// Seconds_Behind_Source; 0 when caught up).
func (g *group) applierStatus(m map[string]int64) {
	a := g.sm.metrics()
	s := g.node.Status()
	behind := int64(0)
	if s.Commit > s.Applied {
		behind = int64(s.Commit - s.Applied)
	}
	a.LagSeconds = 0
	if behind > 0 && a.LastAppliedCommitTime > 0 {
		a.LagSeconds = max(0, (time.Now().UnixMicro()-a.LastAppliedCommitTime)/1e6)
	}
	applierStatus(m, a)
	m["Lockstep_group_replication_commit_index"] = int64(s.Commit)
	m["Lockstep_group_replication_apply_lag_entries"] = behind
}

// handOffWait bounds how long a stopping primary waits for another member
// to take over (a transfer needs the transferee to catch up, then one
// election round).
var handOffWait = 3 * time.Second

// handOff, on a member that leads, refuses writes and transfers leadership
// to the most caught-up member before the member stops, so that a planned
// shutdown of the primary costs the group one election round instead of
// an election timeout (MySQL's group_replication_set_as_primary on
// shutdown).
func (g *group) handOff() {
	if g.node.Status().State != raft.StateLeader {
		return
	}
	g.demote(0)
	start, asked := time.Now(), time.Now()
	g.node.HandOff()
	for time.Since(start) < handOffWait {
		s := g.node.Status()
		if s.State != raft.StateLeader && s.Lead != 0 && s.Lead != g.cfg.ServerID {
			g.handOffs.Add(1)
			fmt.Fprintf(os.Stderr, "lockstep: group: member %d handed the primary role to member %d in %v\n", g.cfg.ServerID, s.Lead, time.Since(start).Round(time.Millisecond))
			return
		}
		time.Sleep(5 * time.Millisecond)
		if time.Since(asked) > time.Second && s.State == raft.StateLeader {
			g.node.HandOff() // the transfer timed out: ask again
			asked = time.Now()
		}
	}
}

// status adds the member's counters to SHOW STATUS.
func (g *group) status(m map[string]int64) {
	s := g.node.Status()
	m["Lockstep_group_replication_member_id"] = int64(g.cfg.ServerID)
	m["Lockstep_group_replication_primary_id"] = int64(s.Lead)
	m["Lockstep_group_replication_term"] = int64(s.Term)
	m["Lockstep_group_replication_applied_index"] = int64(s.Applied)
	m["Lockstep_group_replication_written_index"] = int64(s.Written)
	if g.write.Load() {
		m["Lockstep_group_replication_primary"] = 1
	} else {
		m["Lockstep_group_replication_primary"] = 0
	}
	m["Lockstep_group_replication_promotions"] = g.promotions.Load()
	m["Lockstep_group_replication_demotions"] = g.demotions.Load()
	m["Lockstep_group_replication_hand_offs"] = g.handOffs.Load()
	m["Lockstep_group_replication_membership_changes"] = g.changes.Load()
	m["Lockstep_group_replication_reinstalls"] = g.reinstalls.Load()
	m["Lockstep_group_replication_lag_cuts"] = g.lagCuts.Load()
	if cs, _ := g.node.ConfState(); true {
		m["Lockstep_group_replication_voters"] = int64(len(cs.Voters))
		m["Lockstep_group_replication_learners"] = int64(len(cs.Learners))
	}
	if g.errState.Load() {
		m["Lockstep_group_replication_member_error"] = 1
	} else {
		m["Lockstep_group_replication_member_error"] = 0
	}
	m["Lockstep_group_replication_read_barriers"] = g.barriers.Load()
	m["Lockstep_group_replication_transactions_too_large"] = g.limit.refused.Load()
	ps := g.p.Stats()
	m["Lockstep_group_replication_commit_groups_split"] = ps.Splits
	m["Lockstep_group_replication_commit_group_split_entries"] = ps.SplitEntries
	nc := g.node.Counters()
	m["Lockstep_group_replication_proposals"] = int64(nc.Proposals)
	m["Lockstep_group_replication_proposals_failed"] = int64(nc.ProposalsFailed)
	m["Lockstep_group_replication_elections"] = int64(nc.Elections)
	m["Lockstep_group_replication_leader_conn_lost"] = int64(nc.LeaderConnLost)
	m["Lockstep_group_replication_append_queue"] = int64(nc.AppendQueue)
	m["Lockstep_group_replication_apply_queue"] = int64(nc.ApplyQueue)
	// Flow control (docs/cluster.md): what the transport holds for each
	// peer, the most it held, and what it dropped with the queue full.
	var queued, dropped int64
	for id, ps := range g.tr.Stats() {
		pre := fmt.Sprintf("Lockstep_group_replication_peer_%d_", id)
		m[pre+"queued_bytes"] = ps.QueuedBytes
		m[pre+"queued_bytes_max"] = ps.MaxQueuedBytes
		m[pre+"queued_messages"] = ps.QueuedMsgs
		m[pre+"dropped_messages"] = ps.Dropped
		queued += ps.QueuedBytes
		dropped += ps.Dropped
	}
	m["Lockstep_group_replication_send_queued_bytes"] = queued
	m["Lockstep_group_replication_send_dropped_messages"] = dropped
}

// groupLog is the pipeline's log in a group: appending a commit group
// proposes it as one raft entry and returns once that entry is committed
// (and applied here), or it is certain that it never will be.
type groupLog struct{ g *group }

// errNotPrimary is the error of a commit whose entry was certainly not
// committed: this member stopped being the primary (MySQL Group
// Replication's 3101, ER_TRANSACTION_ROLLBACK_DURING_COMMIT).
func errNotPrimary(cause error) error {
	return mysql.NewSQLError(3101, "HY000", "Plugin instructed the server to rollback the current transaction. (This server is not the primary of its replication group any more; the transaction was not committed: %v)", cause)
}

func (l groupLog) Append(_ uint64, payloads ...[]byte) (uint64, error) {
	data := payloads[0]
	if len(payloads) > 1 {
		data = logrec.AppendBatch(nil, payloads...)
	}
	if !l.g.write.Load() {
		return 0, errNotPrimary(cluster.ErrProposalDropped) // before numbers are spent on it
	}
	p := l.g.node.ProposeFenced(data, *l.g.fence.Load())
	l.g.inflightMu.Lock()
	l.g.inflightLSN++
	lsn := l.g.inflightLSN
	l.g.inflight[lsn] = p
	l.g.inflightMu.Unlock()
	return lsn, nil
}

// WaitDurable waits for the proposal Append made: committed (and applied
// here), certainly not (ErrNotCommitted: the epoch ends), or unknown.
func (l groupLog) WaitDurable(lsn uint64) error {
	l.g.inflightMu.Lock()
	p := l.g.inflight[lsn]
	delete(l.g.inflight, lsn)
	l.g.inflightMu.Unlock()
	if p == nil {
		return fmt.Errorf("%w: no proposal for log position %d", commit.ErrUncertain, lsn)
	}
	<-p.Done()
	switch err := p.Err(); {
	case err == nil:
		return nil
	case errors.Is(err, cluster.ErrStopped):
		return fmt.Errorf("%w: %w", commit.ErrUncertain, err)
	default:
		l.g.endEpoch()
		return fmt.Errorf("%w: %w", commit.ErrNotCommitted, errNotPrimary(err))
	}
}

// groupSM is the member's state machine: committed entries through the
// apply state machine; the primary's own entries only advance it (its
// pipeline publishes them: Apply waits until it has). With
// --replica-parallel-workers > 1 other members' entries go to the parallel
// applier (groupapply.go) and the node flushes it at the end of each
// batch; otherwise each is applied serially before Apply returns.
type groupSM struct {
	g  *group
	mu sync.Mutex // m and par (InstallSnapshot replaces them); the serial applier's m
	m  *apply.Machine
	// par: the parallel applier, which owns m; nil: the serial applier.
	par  *apply.Parallel
	popt apply.ParallelOptions
	x    *recoveryExec

	// pendIndex, pendTerm: the last entry handed to par that no Flush has
	// covered yet (0: none). The apply goroutine's.
	pendIndex, pendTerm uint64

	// The wholly applied prefix: readers, checkpoints, read barriers and
	// the role watcher see these.
	applied  atomic.Uint64
	lastTerm atomic.Uint64
	lastGNO  atomic.Int64
}

// testApplyDelay slows every member's applier (tests of read consistency).
var testApplyDelay time.Duration

// testApplyHook, when set (tests; before the members start), runs before
// a member applies another member's entry: it may slow one member down.
var testApplyHook func(serverID uint64)

// testSendQueueBytes, when set (tests), bounds the transport's queue per
// peer instead of cluster.DefaultMaxQueueBytes.
var testSendQueueBytes int64

func (s *groupSM) Apply(index, term uint64, data []byte, own bool) error {
	if testApplyDelay > 0 && data != nil && !own {
		time.Sleep(testApplyDelay)
	}
	if testApplyHook != nil && data != nil && !own {
		testApplyHook(s.g.cfg.ServerID)
	}
	if !own && data != nil && s.g.wasPrimary.Load() {
		if err := s.g.localWritesEnded(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	par := s.par
	if par != nil {
		s.mu.Unlock()
		return s.applyParallel(par, index, term, data, own) // groupapply.go
	}
	err := s.m.Entry(index, data)
	if err == nil {
		var x apply.Executor = groupExec{s.x}
		if own {
			x = ownExec{s.x}
		}
		err = apply.Drain(s.m, x)
	}
	seq, gno := s.m.Applied().Seq, s.m.LastGNO()
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if own {
		if err := s.g.p.WaitPublished(seq, s.g.applyStop); err != nil {
			return fmt.Errorf("the commit pipeline did not publish sequence number %d: %w", seq, err)
		}
	}
	s.appliedUpTo(index, term, seq, gno)
	return nil
}

// appliedUpTo records that every entry up to index (of term) is wholly
// applied, the machine then at sequence number seq with GNOs 1..gno
// executed, and starts a checkpoint there if one is wanted.
func (s *groupSM) appliedUpTo(index, term uint64, seq, gno int64) {
	s.lastGNO.Store(gno)
	s.lastTerm.Store(term)
	s.applied.Store(index)
	s.g.maybeCheckpoint(index, term, seq, gno) // groupckpt.go
}

// next is where the pipeline's numbering continues: after the last
// sequence number and GNO applied.
func (s *groupSM) next() (seq, gno int64) {
	s.mu.Lock()
	par := s.par
	if par == nil {
		defer s.mu.Unlock()
		return s.m.Applied().Seq + 1, s.m.LastGNO() + 1
	}
	s.mu.Unlock()
	pos, last, _ := par.Settled()
	return pos.Seq + 1, last + 1
}

// ownExec performs the primary's own records: its pipeline installs and
// publishes them, so applying them only advances the machine.
type ownExec struct{ x *recoveryExec }

func (ownExec) Txn(*logrec.Txn) error           { return nil }
func (ownExec) DDL(*logrec.DDL) (error, error)  { return nil, nil }
func (ownExec) UndoDDL(*logrec.DDL) error       { return nil }
func (ownExec) Accounts(*logrec.Accounts) error { return nil }
func (e ownExec) Note(line string)              { e.x.Note(line) }
