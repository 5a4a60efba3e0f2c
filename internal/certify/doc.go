// Package certify computes last_committed for the commit pipeline: given a
// transaction's sequence_number and its writeset (the 64-bit hashes of the
// rows it wrote), it returns the largest earlier sequence_number the
// transaction must wait for when a secondary replays the log in parallel.
//
// The contract of a returned value L for a transaction S is the logical-clock
// contract used by parallel appliers: S may start once every transaction with
// a sequence_number <= L has committed, and L < S always. A transaction that
// shares no key with anything recorded since the last reset (or DDL) gets the
// current floor, so history that was forgotten is still covered.
//
// Three implementations satisfy the Certifier interface:
//
//   - Static, the production structure: a fixed, pointer-free array of
//     buckets selected by the top bits of the hash, each holding a bounded
//     number of packed 8-byte entries (48-bit key remainder, 16-bit sequence
//     number relative to a base), and a dense array of bucket counts. It is
//     allocated once, never grows, and forgets everything by zeroing the
//     counts when a bucket fills or a relative number would no longer fit in
//     16 bits. The transaction that triggers such a reset is made serial.
//   - HashMap, a baseline: a Go map from key hash to the last
//     sequence_number that wrote it, cleared when it grows past a history
//     size, in the way MySQL's writeset history behaves.
//   - CertDB, a baseline: shaped like group replication's certification
//     database (string keys, a pointer to a per-transaction snapshot,
//     periodic garbage collection).
//
// The baselines exist to be measured against (docs/benchmarks/notes.md); only
// Static is meant for the commit pipeline and the applier, which call
// CertifyBatch once per group of transactions.
//
// What this package does not do: it does not hash rows or keys (the caller
// passes 64-bit hashes, for example xxhash of the encoded primary key with
// the table id); it does not assign sequence numbers or order transactions
// (the commit pipeline leader does, and calls Certify in that order); it does
// not schedule replay (the applier reads last_committed from the log). It is
// not safe for concurrent use except for Stats, which may be read from any
// goroutine: see Certifier.
package certify
