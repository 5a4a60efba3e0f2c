package txlog

import (
	"errors"
	"fmt"
	"math/bits"
	"time"
)

// SyncMode says what WaitDurable waits for.
type SyncMode int

const (
	// SyncAlways: WaitDurable returns once the bytes are fsynced. The
	// flusher fsyncs whenever the writer has written something new, so one
	// fsync covers everything written meanwhile (group commit).
	SyncAlways SyncMode = iota
	// SyncPeriodic (sync_binlog=0): WaitDurable returns once the bytes are
	// written to the operating system; the flusher fsyncs about every
	// Options.SyncInterval. A machine crash can lose up to that much.
	SyncPeriodic
)

func (m SyncMode) String() string {
	switch m {
	case SyncAlways:
		return "always"
	case SyncPeriodic:
		return "periodic"
	}
	return fmt.Sprintf("SyncMode(%d)", int(m))
}

// Defaults for zero Options fields.
const (
	DefaultSegmentSize       = 64 << 20
	DefaultBufferSize        = 16 << 20
	DefaultPreallocAfter     = 1 << 20
	DefaultSyncInterval      = time.Second
	maxFlushers              = 16
	DefaultCompressThreshold = 4096

	minBufferSize = 64 << 10
	maxBufferSize = 1 << 30
	// MaxPayload is the largest payload (after compression) a record holds.
	MaxPayload = 1 << 30
)

// Options configure Open.
type Options struct {
	// Dir holds the segment files. It is created if missing.
	Dir string
	// FS is the file layer; nil means the operating system's (OSFS).
	FS FS
	// SegmentSize: the writer starts a new segment at the first record
	// boundary after the current segment reaches this many bytes.
	SegmentSize int64
	// BufferSize is the log buffer (a ring) in bytes, rounded up to a power
	// of two, at least 64 KiB. Appends larger than half of it are copied in
	// pieces as the writer drains the ring.
	BufferSize int
	// SyncMode: SyncAlways (the default) or SyncPeriodic.
	SyncMode SyncMode
	// SyncInterval is the fsync period in SyncPeriodic mode.
	SyncInterval time.Duration
	// Flushers is how many fsyncs may be in flight at once (default 1).
	// With more than one, an fsync starts as soon as something new is
	// written even while an earlier one runs, each flusher syncing through
	// its own open file description; durable positions are still
	// published in the order the fsyncs started (flusher.go).
	Flushers int
	// Compression stores payloads longer than CompressThreshold bytes
	// zstd-compressed (when that makes them smaller).
	Compression       bool
	CompressThreshold int
	// Preallocate keeps a zero-filled segment file of SegmentSize bytes
	// ready (written by a background goroutine once the log has taken
	// PreallocAfter bytes since Open), and the writer moves to it at the
	// next record boundary when the current segment is not preallocated.
	// Records are then written over zeros that are already on disk, so the
	// file's size and block map do not change and a sync flushes only
	// data: on ext4 that halves the cost of each commit's fsync
	// (docs/txlog.md). Recovery reads a run of zeros to the end of a
	// segment as its end, not as a torn record.
	Preallocate bool
	// PreallocAfter: bytes the log takes before the first spare segment is
	// written (default 1 MiB, or a quarter of SegmentSize if less), so that
	// a short-lived log writes none.
	PreallocAfter int64
	// RecoverTruncate: at Open, a corrupt record that is not a torn tail is
	// dropped together with everything after it, instead of failing Open;
	// and a log that does not reach where log.state says it reached (a
	// missing last segment, a log cut short, a lost log.state) is accepted
	// as it is (Recovery.EndProblem says what was wrong). Segment files
	// that are not this log's are refused even so (ForeignError).
	RecoverTruncate bool
	// MustExist: Dir must already hold a log (log.state or segments); Open
	// refuses an empty directory (a removed log) unless RecoverTruncate.
	MustExist bool
	// MarkInterval: how often the index known durable is recorded in
	// log.state (state.go), which bounds where a torn tail is accepted
	// after a crash. 0: DefaultMarkInterval; negative: only at Open, at a
	// new segment, at truncations and at Close.
	MarkInterval time.Duration
	// Progress, if set, is called about once a second while Open scans a
	// large log.
	Progress func(Progress)
}

// Progress reports a long recovery scan.
type Progress struct {
	Done, Total int64   // bytes scanned, bytes to scan
	Percent     float64 // 100 * Done / Total
	BytesPerSec float64
}

func (o Options) withDefaults() (Options, error) {
	if o.Dir == "" {
		return o, errors.New("txlog: Options.Dir is empty")
	}
	if o.FS == nil {
		o.FS = OSFS{}
	}
	if o.SegmentSize == 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.SegmentSize < segHeaderSize+recHeaderSize {
		return o, fmt.Errorf("txlog: Options.SegmentSize %d is too small", o.SegmentSize)
	}
	if o.PreallocAfter == 0 {
		o.PreallocAfter = min(DefaultPreallocAfter, o.SegmentSize/4)
	}
	if o.BufferSize == 0 {
		o.BufferSize = DefaultBufferSize
	}
	if o.BufferSize < 0 || o.BufferSize > maxBufferSize {
		return o, fmt.Errorf("txlog: Options.BufferSize %d is outside 64 KiB..1 GiB", o.BufferSize)
	}
	o.BufferSize = max(o.BufferSize, minBufferSize)
	o.BufferSize = 1 << bits.Len(uint(o.BufferSize-1))
	if o.SyncMode != SyncAlways && o.SyncMode != SyncPeriodic {
		return o, fmt.Errorf("txlog: unknown %v", o.SyncMode)
	}
	if o.SyncInterval <= 0 {
		o.SyncInterval = DefaultSyncInterval
	}
	if o.Flushers <= 0 {
		o.Flushers = 1
	}
	if o.Flushers > maxFlushers {
		return o, fmt.Errorf("txlog: Options.Flushers %d is more than %d", o.Flushers, maxFlushers)
	}
	if o.MarkInterval == 0 {
		o.MarkInterval = DefaultMarkInterval
	}
	if o.CompressThreshold <= 0 {
		o.CompressThreshold = DefaultCompressThreshold
	}
	return o, nil
}
