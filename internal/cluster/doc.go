// Package cluster is lockstep's group replication: a single-primary group
// of servers agreeing on one log with go.etcd.io/raft/v3.
//
// What the package owns:
//
//   - raft's storage (storage.go): raft's log is lockstep's transaction log
//     (internal/txlog), one raft entry per log record, raft's index and term
//     in the record header; the raft-state file (hardstate.go) holds the
//     hard state (term, vote, commit) and the metadata of the snapshot the
//     log starts after (index, term, membership). There is no second log.
//   - the node (node.go): the owner of a raft RawNode configured for
//     asynchronous storage writes, split into three steps that each own one
//     kind of work — the raft step (ticks, messages, proposals in; a Ready
//     out), the append step (the only writer and fsyncer of the log, one
//     fsync per batch of Readys) and the apply step (committed entries to
//     the state machine, in order) — so that the leader's own fsync runs
//     while its entries travel to the followers (raft thesis §10.2.1).
//     The steps are plain methods: the runtime (run.go) runs each on its
//     own goroutine; the simulation test runs them from one goroutine in
//     an order a seeded PRNG picks.
//   - proposals: a proposal is acknowledged once its entry is applied at
//     the index and term it was appended with; an entry committed at that
//     index with another term proves it lost (ErrProposalLost), and a
//     proposal whose fate the node cannot know yet stays pending (its
//     caller's deadline says "outcome unknown").
//
// What it does not own: the encoding of what an entry carries (a commit
// group's records, internal/record), applying them (internal/apply),
// the commit pipeline (internal/commit) and the SQL-facing status.
//
// See docs/cluster.md for the design, the rules it follows and what is
// not done yet.
package cluster
