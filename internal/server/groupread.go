package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/stat"
)

// A group member's read barrier (group_replication_consistency = BEFORE,
// sqlfront/consistency.go): a read index confirmed by the leader's quorum,
// then wait until this member has applied up to it.

// readBarrierWait bounds a statement's wait for its read point.
var readBarrierWait = 10 * time.Second

func (g *group) readBarrier(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readBarrierWait)
	defer cancel()
	idx, err := g.node.ReadIndex(ctx)
	if err != nil {
		return err
	}
	stat.Inc(&g.barriers)
	pause := 50 * time.Microsecond
	for g.sm.applied.Load() < idx {
		select {
		case <-ctx.Done():
			return fmt.Errorf("this member had applied up to index %d of %d when the wait ended: %w", g.sm.applied.Load(), idx, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(pause*2, 2*time.Millisecond)
	}
	return nil
}

// consistencyError is what a client sees when its statement's read point
// could not be reached: MySQL Group Replication's 3100 for a consistency
// guarantee the group cannot give.
func consistencyError(err error) error {
	if errors.Is(err, context.Canceled) {
		return mysql.NewSQLError(mysql.ERQueryInterrupted, mysql.SSUnknownSQLState, "Query execution was interrupted")
	}
	return mysql.NewSQLError(3100, "HY000", "Error on observer while running replication hook 'before_transaction_begin'. (group_replication_consistency=BEFORE: %v)", err)
}
