package sqlfront

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// group_replication_consistency, MySQL Group Replication's variable, per
// session (and global default):
//
//   - EVENTUAL: a statement reads whatever this member has applied;
//   - BEFORE_ON_PRIMARY_FAILOVER (the default, as in MySQL 8.4): the same
//     for reads; a new primary takes writes only once it has applied
//     everything committed before its term (always so in lockstep);
//   - BEFORE: each statement first waits until this member has applied
//     everything the group committed before it began (a read index
//     confirmed by the leader's quorum, then the local applier): reads on
//     a secondary are linearizable. MySQL waits once per transaction; here
//     every statement waits, which is at least as strong.
//
// AFTER and BEFORE_AND_AFTER (a commit that waits until every member has
// applied it) are not offered: SET refuses them (1231) rather than accept
// a promise lockstep does not keep.

// ReadBarrier waits until this member has applied everything committed
// before the call (a group member's linearizable read point).
type ReadBarrier func(ctx context.Context) error

// SetReadBarrier installs the member's read barrier (nil standalone).
func (fe *Frontend) SetReadBarrier(f ReadBarrier) { fe.readBarrier.Store(&f) }

type readBarrierHolder = atomic.Pointer[ReadBarrier]

func consistencyVariable() sql.SystemVariable {
	return &sql.MysqlSystemVariable{
		Name:    "group_replication_consistency",
		Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic: true,
		Type:    types.NewSystemEnumType("group_replication_consistency", "EVENTUAL", "BEFORE_ON_PRIMARY_FAILOVER", "BEFORE"),
		Default: "BEFORE_ON_PRIMARY_FAILOVER",
	}
}

// BeforeStatement runs the read barrier for a statement of connection
// connID when its session asks for BEFORE consistency and the server is a
// group member; otherwise it does nothing.
func (fe *Frontend) BeforeStatement(ctx context.Context, connID uint32) error {
	p := fe.readBarrier.Load()
	if p == nil || *p == nil {
		return nil
	}
	s := fe.session(connID)
	if s == nil {
		return nil
	}
	v, err := s.GetSessionVariable(nil, "group_replication_consistency")
	if err != nil {
		return nil
	}
	if str, ok := v.(string); !ok || !strings.EqualFold(str, "BEFORE") {
		return nil
	}
	return (*p)(ctx)
}
