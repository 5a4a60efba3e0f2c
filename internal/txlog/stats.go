package txlog

import "sync/atomic"

// counters are the log's live counters, each updated atomically. Most have
// one writer (the writer or the flusher goroutine); the waiting ones are
// updated by waiters.
type counters struct {
	records     atomic.Uint64
	appends     atomic.Uint64
	writes      atomic.Uint64
	fsyncs      atomic.Uint64
	waits       atomic.Uint64
	wakeups     atomic.Uint64
	wakeupsDone atomic.Uint64
	failWakeups atomic.Uint64
	spaceWaits  atomic.Uint64
	compressed  atomic.Uint64
	compIn      atomic.Uint64 // payload bytes of compressed records, before
	compOut     atomic.Uint64 // and after compression
	segments    atomic.Uint64
	resumes     atomic.Uint64
	prealloc    atomic.Uint64
	preFailed   atomic.Uint64
	preUsed     atomic.Uint64
	overlapped  atomic.Uint64
	heldBack    atomic.Uint64
	marks       atomic.Uint64
	markFails   atomic.Uint64
}

// Stats is a snapshot of the log's counters since Open. Each field is read
// atomically; the snapshot as a whole is not taken under a lock.
type Stats struct {
	// Appends counts Append/AppendAt/AppendEntries calls that reserved
	// buffer space (counted by the writer as it consumes them).
	Appends uint64
	// Records counts records the writer stamped with their index.
	Records uint64
	// Bytes counts record bytes appended (the reserved LSN).
	Bytes uint64
	// Writes counts write(2) calls to segment files.
	Writes uint64
	// Fsyncs counts fsyncs of segment files (the flusher's and the
	// writer's when it closes a segment).
	Fsyncs uint64
	// FsyncsOverlapped counts the flushers' fsyncs started while another
	// was in flight (Options.Flushers > 1); FsyncsHeldBack those that
	// ended before an fsync started earlier and waited for it to publish.
	FsyncsOverlapped, FsyncsHeldBack uint64
	// Waits counts WaitDurable/WaitWritten calls that had to block.
	Waits uint64
	// Wakeups counts waiters woken because their LSN was reached, and
	// WakeupsDone those that found it reached when they woke: with targeted
	// wake-ups the two are equal.
	Wakeups     uint64
	WakeupsDone uint64
	// FailWakeups counts waiters woken with an error (failure or Close).
	FailWakeups uint64
	// SpaceWaits counts appends that waited for the writer to free buffer
	// space (or for the next piece of a large append).
	SpaceWaits uint64
	// Compressed counts payloads stored zstd-compressed; CompressedIn and
	// CompressedOut are their sizes before and after compression (the
	// compression ratio is In/Out).
	Compressed                  uint64
	CompressedIn, CompressedOut uint64
	// Preallocated counts spare segment files the preallocator zero-filled,
	// PreallocUsed those the writer moved to, PreallocFailures attempts
	// that failed (disk full, say; the log then grows its files as they
	// fill, and the preallocator tries again a second later).
	Preallocated, PreallocUsed, PreallocFailures uint64
	// SegmentsCreated counts segments created since Open.
	SegmentsCreated uint64
	// DiskFullResumes counts ResumeAfterDiskFull calls that took the log
	// out of a disk-full failure.
	DiskFullResumes uint64
	// StateWrites counts writes of log.state (its creation, Open, the
	// durable index and new segments recorded, Close, truncations);
	// StateWriteFailures those that failed, after which log.state is not
	// written again until the next Open (it stays a lower bound of the
	// log's end, so nothing is refused for it, but the end is checked
	// less closely).
	StateWrites, StateWriteFailures uint64
	// WrittenLSN and DurableLSN are the log positions written to the
	// operating system and fsynced.
	WrittenLSN, DurableLSN uint64
}

// Stats returns a snapshot of the counters.
func (l *Log) Stats() Stats {
	c := &l.st
	return Stats{
		Appends:            c.appends.Load(),
		Records:            c.records.Load(),
		Bytes:              l.reserved.Load() &^ closedBit,
		Writes:             c.writes.Load(),
		Fsyncs:             c.fsyncs.Load(),
		FsyncsOverlapped:   c.overlapped.Load(),
		FsyncsHeldBack:     c.heldBack.Load(),
		Waits:              c.waits.Load(),
		Wakeups:            c.wakeups.Load(),
		WakeupsDone:        c.wakeupsDone.Load(),
		FailWakeups:        c.failWakeups.Load(),
		SpaceWaits:         c.spaceWaits.Load(),
		Compressed:         c.compressed.Load(),
		CompressedIn:       c.compIn.Load(),
		CompressedOut:      c.compOut.Load(),
		SegmentsCreated:    c.segments.Load(),
		Preallocated:       c.prealloc.Load(),
		PreallocUsed:       c.preUsed.Load(),
		PreallocFailures:   c.preFailed.Load(),
		DiskFullResumes:    c.resumes.Load(),
		StateWrites:        c.marks.Load(),
		StateWriteFailures: c.markFails.Load(),
		WrittenLSN:         l.written.Load(),
		DurableLSN:         l.durable.Load(),
	}
}
