package server

import (
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"go.etcd.io/raft/v3"

	"lockstep/internal/sqlfront"
)

// SHOW REPLICA STATUS on a group member (docs/cluster.md, "Status"): a
// secondary replicates from the group, so it shows one row, as MySQL 8
// shows Group Replication's applier channel: Channel_Name
// group_replication_applier, the source the current primary (its SQL
// address and uuid, groupinfo.go). The primary, which applies nothing of
// another member's, shows none (as a standalone server).
//
//   - Replica_IO_Running: Yes while the member follows a leader (raft
//     knows one: a follower forgets it when it campaigns, an election
//     timeout after it last heard from it), Connecting while it does
//     not, No in the ERROR state.
//   - Replica_SQL_Running: No in the ERROR state (Last_SQL_Errno,
//     Last_SQL_Error and Last_SQL_Error_Timestamp then say why), else Yes.
//   - Read_Source_Log_Pos: the commit index (entries known committed);
//     Exec_Source_Log_Pos and Relay_Log_Pos: the applied index;
//     Relay_Log_Space: the bytes of the member's log. The log files are
//     the one log SHOW BINARY LOGS names.
//   - Seconds_Behind_Source: Lockstep_applier_lag_seconds; NULL when the
//     applier is not running, or the member hears from no leader and has
//     applied everything it has.
//   - Retrieved_Gtid_Set: the GTIDs of the committed entries handed to the
//     applier; Executed_Gtid_Set: @@gtid_executed.

// groupError is the error that put the member in the ERROR state.
type groupError struct {
	err error
	at  time.Time
}

// replicaStatusRows answers SHOW REPLICA STATUS.
func (g *group) replicaStatusRows() []sqlfront.ReplicaStatus {
	if g.write.Load() {
		return nil
	}
	s := g.node.Status()
	if s.State == raft.StateLeader && !g.errState.Load() {
		return nil // the primary, about to take writes
	}
	r := sqlfront.ReplicaStatus{Channel: "group_replication_applier", ConnectRetry: 60, SourceRetryCount: 86400,
		SourceLogFile: logFileName, RelayLogFile: logFileName, RelaySourceLogFile: logFileName, AutoPosition: true,
		ReadSourceLogPos: int64(s.Commit), RelayLogPos: int64(s.Applied), ExecSourceLogPos: int64(s.Applied),
		RelayLogSpace: int64(g.st.Log().Stats().Bytes), SourceServerID: s.Lead, SQLRunning: true}
	// raft forgets the leader when it campaigns: an election timeout
	// after it last heard from one (PreVote keeps a cut-off member
	// campaigning, leaderless).
	heard := s.Lead != 0
	if s.Lead != 0 {
		r.SourceHost = g.addrs.get(s.Lead)
		if u, addr, ok := g.memberSQL(s.Lead); ok {
			r.SourceUUID, r.SourceHost = u, addr
		}
		if h, p, err := net.SplitHostPort(r.SourceHost); err == nil {
			r.SourceHost = h
			r.SourcePort, _ = strconv.Atoi(p)
		}
	}
	switch {
	case g.errState.Load():
		r.IORunning, r.SQLRunning = "No", false
	case heard:
		r.IORunning, r.IOState = "Yes", "Waiting for source to send event"
	default:
		r.IORunning, r.IOState = "Connecting", "Connecting to source"
	}
	if e := g.failure.Load(); e != nil {
		r.LastSQLErrno, r.LastSQLError, r.LastSQLErrorAt = 1105, e.err.Error(), e.at
		var se *mysql.SQLError
		if errors.As(e.err, &se) {
			r.LastSQLErrno = se.Num
		}
	}
	lag := map[string]int64{}
	g.applierStatus(lag)
	behind := lag["Lockstep_group_replication_apply_lag_entries"]
	r.SecondsBehind = lag["Lockstep_applier_lag_seconds"]
	if !r.SQLRunning || (!heard && behind == 0) {
		r.SecondsBehind = -1
	}
	switch {
	case !r.SQLRunning:
	case behind == 0:
		r.SQLRunningState = "Replica has read all relay log; waiting for more updates"
	case g.cfg.ReplicaParallelWorkers > 1:
		r.SQLRunningState = "Waiting for replica workers to process their queues"
	default:
		r.SQLRunningState = "Reading event from the relay log"
	}
	name := g.groupName()
	if set := g.sm.receivedSet(); set != "" && name != "" {
		r.RetrievedGtidSet = name + ":" + set
	}
	if g.d != nil {
		r.ExecutedGtidSet = g.d.gtidExecuted()
	}
	return []sqlfront.ReplicaStatus{r}
}

// receivedSet is the applier's received GNOs ("1-5:7-9").
func (s *groupSM) receivedSet() string {
	s.mu.Lock()
	par := s.par
	if par == nil {
		defer s.mu.Unlock()
		return s.m.ReceivedSet()
	}
	s.mu.Unlock()
	return par.ReceivedSet()
}
