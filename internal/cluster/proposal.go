package cluster

import (
	"errors"
	"sync"
	"sync/atomic"

	pb "go.etcd.io/raft/v3/raftpb"

	"lockstep/internal/stat"
)

// Errors a proposal can end with. ErrProposalDropped and ErrProposalLost
// are certain: the proposal's entry is not and will never be committed.
// A proposal that has not ended has an unknown outcome: its entry may still
// commit (a caller that stops waiting must say so: MySQL's "lost connection
// during COMMIT" case).
var (
	// ErrProposalDropped: raft refused the proposal (this node is not the
	// leader, a leadership transfer is under way, or the leader's
	// uncommitted log is full).
	ErrProposalDropped = errors.New("cluster: proposal dropped: this node cannot accept writes now")
	// ErrProposalLost: another entry was committed at the index the
	// proposal's entry had (a new leader overwrote it).
	ErrProposalLost = errors.New("cluster: proposal lost: another leader's entry was committed in its place")
	// ErrStopped: the node stopped before the proposal's fate was known.
	ErrStopped = errors.New("cluster: node stopped")
)

// Proposal is one entry proposed through Node.Propose.
type Proposal struct {
	id     uint64
	data   []byte
	fence  Fence            // where the entry may enter the log
	change *pb.ConfChangeV2 // a membership change (membership.go)

	// Set by the raft step when the entry is handed to the append step.
	index, term uint64

	once sync.Once
	done chan struct{}
	err  error
	// failed, when set, counts proposals that ended dropped or lost (the
	// node's Counters).
	failed *atomic.Uint64
}

func newProposal(id uint64, data []byte) *Proposal {
	return &Proposal{id: id, data: data, done: make(chan struct{})}
}

// Done is closed when the proposal has ended.
func (p *Proposal) Done() <-chan struct{} { return p.done }

// Err is the proposal's end: nil once its entry is committed and applied
// on the proposing node. Valid after Done is closed.
func (p *Proposal) Err() error { return p.err }

// Index is the log index the entry was appended at (valid after a nil Err).
func (p *Proposal) Index() uint64 { return p.index }

func (p *Proposal) finish(err error) {
	p.once.Do(func() {
		p.err = err
		if p.failed != nil && (errors.Is(err, ErrProposalDropped) || errors.Is(err, ErrProposalLost)) {
			stat.IncU(p.failed)
		}
		close(p.done)
	})
}
