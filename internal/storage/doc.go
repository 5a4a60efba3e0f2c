// Package storage is lockstep's transactional storage engine: tables kept as
// ordered indexes over memcomparable byte keys, MVCC version chains per row,
// undo for statement and transaction rollback, and purge of versions that no
// ReadView can see any more.
//
// It works on bytes: the caller (internal/sqlfront) encodes rows and primary
// keys (with internal/storage/rowenc); storage orders, versions, locks and
// purges them. Each table has a schema descriptor (TableDesc: columns with
// their kind and collation, the primary key, the secondary indexes), which
// the caller builds and storage keeps; storage computes every secondary
// index key from it, so recovery and a replica's applier need no SQL layer
// to install rows. The descriptor has a versioned binary encoding
// (Marshal, UnmarshalTableDesc) that checkpoints carry. Storage does not
// parse SQL and does not decide commit order or durability — a Committer
// (the commit pipeline) is handed every read-write transaction at its
// commit point and publishes it.
//
// Invariants:
//   - A row's version chain is ordered newest first. A transaction only adds a
//     version to a row while it holds the row's X lock, so while any lock on
//     the row is held the head version is committed or the holder's own.
//   - Versions are immutable once published, except the prev link (cut by
//     purge) and the row (replaced, never modified, by Rewrite). A record
//     embeds its first version (one allocation per new row), written once
//     when the record is made and never overwritten in place: records are
//     never reused.
//   - Every version's key in every secondary index has an entry (index key ||
//     primary key) pointing at the row's record. Readers re-check the key of
//     the version they can see, so an entry never makes a row appear twice or
//     under a key it does not have. Purge removes entries no remaining version
//     has.
//   - Table structure (the B-trees, chain heads) is guarded by the table's
//     latch; no latch is held while waiting for a row lock.
package storage
