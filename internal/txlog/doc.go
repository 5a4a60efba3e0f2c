// Package txlog is lockstep's one transaction log: the crash-recovery log,
// the replication stream and, in a group, raft's log storage. Callers hand
// it opaque payloads (encoded commit records); it stores each as one record
// with a dense index and a term, in segment files in one directory.
//
// What the package owns:
//
//   - the on-disk format: segment files named by their first index, each with
//     a versioned header, holding records with a CRC32C over the header and
//     one over the payload, large payloads compressed with zstd (format.go);
//   - the concurrent log buffer: an appender reserves its byte range with one
//     atomic add, copies into a ring buffer in parallel with the others and
//     marks its range complete in a link_buf-style table (append.go,
//     linkbuf.go);
//   - the dedicated writer goroutine, which takes completed ranges in LSN
//     order, stamps each record's index and header CRC, writes the bytes to
//     the current segment and rotates segments (writer.go), and the dedicated
//     flusher goroutine (Options.Flushers of them, each with its own file
//     description, publishing in fsync start order), which fsyncs and wakes
//     exactly the waiters whose LSN became durable (flusher.go, waitset.go);
//   - failure handling: a failed fsync is never retried, a failed write
//     (ENOSPC) fails the appends whose bytes were not written (log.go);
//   - recovery at Open: verifying every record, truncating a torn tail,
//     refusing (or, with RecoverTruncate, cutting at) a corrupt record
//     (recovery.go); reads by index (read.go); truncating the tail and the
//     head, and resetting the log (truncate.go);
//   - the end of the log (state.go): log.state records the log's id, the
//     newest segment, the index known durable and, at Close, that the log
//     was closed cleanly and where it ends, so that Open accepts a torn
//     tail only where a crash can explain it, refuses a log that lost its
//     end, and refuses segment files that are not this log's.
//
// What it does not own: the encoding of a payload (internal/record), the
// order of commits and the numbering of transactions (internal/commit), and
// checkpoints of table data (internal/checkpoint). A checkpoint tells the log
// how far it may drop its head with TruncatePrefix.
//
// LSNs are byte positions in the logical stream of records appended since
// Open (segment headers are not counted). They are handles for waiting, not
// persistent addresses: a record's persistent address is its index. Append
// does not learn its records' indexes (the writer assigns them, in LSN
// order); a caller that needs an exact index either knows it from its own
// payload (the commit pipeline's sequence numbers are the indexes) or uses
// AppendAt/AppendEntries, which check the index and require that no other
// Append runs at the same time. See docs/txlog.md for the design, the
// recovery rules and the mapping onto raft's Storage.
package txlog
