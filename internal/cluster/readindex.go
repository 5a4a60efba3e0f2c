package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"time"
)

// Linearizable reads: raft's ReadIndex (ReadOnlySafe). The leader answers
// with its commit index once a quorum of heartbeats has confirmed it still
// leads (and once it has committed an entry of its term); a follower
// forwards the request to its leader. Every entry committed before the
// request is at or below the index; a read that waits until the local
// state machine has applied it sees them all.

// readRetry: raft drops a read-index request it cannot serve (no leader
// known, a leader that lost its quorum) without an answer; the request is
// made again after this long.
const readRetry = 200 * time.Millisecond

// ErrNoReadIndex: the context ended before the group confirmed a read
// index (no leader reachable).
var ErrNoReadIndex = errors.New("cluster: no read index: the group's leader did not confirm one in time")

// ReadIndex returns an index at or above every entry committed before the
// call, confirmed by the group's current leader.
func (n *Node) ReadIndex(ctx context.Context) (uint64, error) {
	n.mu.Lock()
	if n.reads == nil {
		n.reads = map[uint64]chan uint64{}
	}
	n.nextRead++
	id := n.nextRead
	ch := make(chan uint64, 1)
	n.reads[id] = ch
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.reads, id)
		n.mu.Unlock()
	}()
	rctx := binary.LittleEndian.AppendUint64(nil, id)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case idx := <-ch:
			return idx, nil
		case <-ctx.Done():
			return 0, errors.Join(ErrNoReadIndex, ctx.Err())
		case <-t.C:
			if n.Err() != nil {
				return 0, ErrStopped
			}
			n.push(event{readIndex: rctx})
			t.Reset(readRetry)
		}
	}
}

// deliverReads hands read states from a Ready to their waiters (the raft
// step).
func (n *Node) deliverReads(states []readState) {
	if len(states) == 0 {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, rs := range states {
		if len(rs.RequestCtx) != 8 {
			continue
		}
		if ch := n.reads[binary.LittleEndian.Uint64(rs.RequestCtx)]; ch != nil {
			select {
			case ch <- rs.Index:
			default: // answered already (a retried request)
			}
		}
	}
}
