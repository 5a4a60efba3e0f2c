// Package commit is the group commit pipeline: it turns many concurrent
// COMMITs into few log appends and few durability waits, gives every
// transaction its sequence_number and last_committed, and makes transactions
// visible in exactly the order the log holds them.
//
// It follows MySQL's binlog group commit, in three stages:
//
//  1. Flush. A committing goroutine pushes itself onto a lock-free queue.
//     The one that finds the queue empty is the leader of the next group; it
//     takes the flush-stage lock, takes the whole queue as its group, numbers
//     the members in arrival order, computes every member's last_committed
//     with one certify.Certifier.CertifyBatch call, has each member encode its
//     record (Txn.Encode) and appends the group with one Log.Append. Only one
//     group is in the flush stage at a time, so sequence order is log order.
//  2. Sync. The leader waits for the group's last log position to become
//     durable (Log.WaitDurable): one wait for the whole group. A group holds
//     a sync slot from taking the queue to the end of its wait; with one
//     slot (the default) everyone who commits during the wait queues up and
//     becomes the next group, and only the commit stage overlaps the next
//     group's flush and sync. With Options.SyncGroups > 1, that many groups
//     may wait at once (each with its own fsync in the log), and they join
//     the commit stage in log order whichever wait ends first.
//  3. Commit. Groups take turns in sequence order: the leader waits for the
//     previous group's commit stage, calls Txn.Publish for every member in
//     sequence order, passes the turn on, and wakes its followers.
//
// Followers sleep until their leader is done with them. With Targeted
// wake-ups (the default) each follower waits on its own slot and is woken
// exactly once, by name. With Broadcast (MySQL 5.6's design, kept as the
// measured baseline) all followers wait on one condition variable, every
// group's leader wakes all of them, and each checks whether its own
// transaction is done. Stats counts the wake-ups that found their work done
// against all wake-ups.
//
// What the package owns: the queue, leader election, sequence numbers (dense,
// with no hole even when a transaction fails to encode or a group fails to
// append), the call to the certifier, the stage ordering, the wake-ups, the
// failed state after a durability error (ErrUncertain), and the counters.
//
// What it does not own: it does not encode records (Txn.Encode does, given
// the numbers), it does not write, fsync or replicate anything (the Log does:
// internal/txlog on one machine, the raft-backed log in a cluster), and it
// knows nothing about storage, rows, locks or visibility (Txn.Publish does
// that). It does not hash keys either: a writeset is already 64-bit hashes.
//
// The group-forming logic that needs no goroutines — numbering, certifying,
// mapping certifier numbers back to sequence numbers after a failure — is in
// sequencer, tested on its own; the Log is injected, and the tests drive the
// pipeline with an in-memory log whose latency and errors they control.
package commit
