// Package txn is lockstep's transaction system (trx-sys) and row lock
// manager (lock-sys).
//
// It owns:
//
//   - transaction ids: allocated by one atomic counter on a transaction's
//     first write (Trx.AssignID); read-only transactions never get one;
//   - the active set: which ids have not finished yet, kept as a bitmap of
//     finished ids over the recent id range plus a short sorted list of old,
//     long-running ids, with no global latch on begin, commit or view close;
//   - read views (ReadView): consistent snapshots of the active set, copied
//     as a few bitmap words rather than a list of ids, answering Sees(id);
//   - the purge limit (Sys.PurgeLimit): the id below which every version is
//     visible to every open and future view;
//   - row locks (LockManager): S/X locks on opaque keys in a table sharded by
//     key hash, FIFO or CATS grant order, deadlock detection, lock wait
//     timeouts; plus SHOW STATUS counters for both halves (SysStats,
//     LockStats).
//
// It does not own row versions, undo, purge itself, or commit ordering: the
// storage package keeps version chains, checks a version's writer against
// the reader's own id before asking a view, undoes rolled-back writes and
// drops versions below the purge limit; the commit pipeline decides the
// serialisation order and calls Trx.Finish and LockManager.ReleaseAll at the
// commit point. See docs/txn.md for the design and its invariants.
package txn
