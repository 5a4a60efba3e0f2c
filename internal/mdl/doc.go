// Package mdl owns metadata locks: the locks on table names that make a
// DDL statement wait for the transactions that use a table, and make a
// statement that arrives while the DDL waits or runs wait for it and then
// find the table by name again.
//
// It owns the lock table (Manager), each session's held locks (Owner),
// the wait (with a timeout, the context's cancellation and a deadlock
// check) and the counters. It does not know SQL: the SQL layer
// (internal/sqlfront) decides which names a statement locks, in which mode
// and for how long, and what a statement does after a wait (plan again).
//
// The model is MySQL's, with the modes lockstep takes (modes.go):
//   - SharedRead / SharedWrite: taken by every statement that reads /
//     writes a table, held to the end of the transaction (of the statement
//     in autocommit mode). Compatible with each other.
//   - SharedReadOnly / SharedNoReadWrite: LOCK TABLES ... READ / WRITE,
//     held explicitly (to UNLOCK TABLES or the session's end). The first
//     lets others read, the second lets nobody else use the table.
//   - Exclusive: taken by DDL on the tables it changes (both names of a
//     RENAME, a table being created, every table of a dropped database),
//     for the statement; compatible with nothing but the owner's own
//     locks (an owner's shared lock upgrades).
//
// The conflict check counts holders and waiters per mode on each name, so
// a request that conflicts with no mode costs two mask tests, however
// many owners share the name.
//
// Invariants:
//   - A request is granted whole or not at all (Owner.Acquire takes a
//     set): a DDL statement never holds one exclusive lock while it waits
//     for another, so two DDL statements cannot deadlock on each other's
//     names.
//   - A pending exclusive (or LOCK TABLES) request makes new requests
//     from other owners that it conflicts with wait (a stream of short
//     statements cannot starve a DDL), as in MySQL; a request on a name
//     its owner already holds never queues behind pending requests (it
//     waits only for granted conflicting locks).
//   - A wait that would close a cycle of waits (an owner holding a shared
//     lock in a transaction waits behind a DDL that waits for that lock)
//     fails at once with ErrDeadlock; the owner that found the cycle is the
//     victim.
//   - Locks are released only by their owner (Owner.Release), and a
//     released name with no holders and no waiters leaves the table.
package mdl
