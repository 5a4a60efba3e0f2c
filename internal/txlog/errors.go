package txlog

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
)

var (
	// ErrLogFailed is wrapped by every error after the log failed: an fsync
	// failed (never retried) or a write failed. The log takes no more writes;
	// restart to recover from what is on disk.
	ErrLogFailed = errors.New("txlog: the log failed")
	// ErrDiskFull is wrapped (with ErrLogFailed) when a write failed with
	// ENOSPC: the appends whose bytes were not written fail with it.
	ErrDiskFull = errors.New("txlog: disk full")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("txlog: log closed")
	// ErrCorrupt is wrapped by *CorruptError.
	ErrCorrupt = errors.New("txlog: corrupt log")
	// ErrCompacted: the index is before FirstIndex (removed by
	// TruncatePrefix). Same meaning as raft.ErrCompacted.
	ErrCompacted = errors.New("txlog: index compacted")
	// ErrUnavailable: the index is after LastIndex. Same meaning as
	// raft.ErrUnavailable.
	ErrUnavailable = errors.New("txlog: index unavailable")
	// ErrNotDense: AppendAt/AppendEntries were given an index other than
	// LastIndex()+1, or entries that are not consecutive.
	ErrNotDense = errors.New("txlog: indexes not dense")
	// ErrBusy: TruncateSuffix/Reset found appends in flight.
	ErrBusy = errors.New("txlog: appends in flight")
	// ErrTooLarge: a payload is larger than MaxPayload.
	ErrTooLarge = errors.New("txlog: payload too large")
	// ErrForeign is wrapped by *ForeignError.
	ErrForeign = errors.New("txlog: not a segment of this log")
)

// CorruptError is a record (or segment header) that fails verification.
type CorruptError struct {
	File   string // segment file name, without the directory
	Offset int64  // byte offset of the record in the file
	Reason string
	// AtOpen adds the --recover-truncate hint to the message.
	AtOpen bool
}

func (e *CorruptError) Error() string {
	if e.AtOpen {
		return fmt.Sprintf("txlog: %s offset %d: corrupt record (%s); start with --recover-truncate to drop it and everything after it",
			e.File, e.Offset, e.Reason)
	}
	return fmt.Sprintf("txlog: %s offset %d: corrupt record (%s)", e.File, e.Offset, e.Reason)
}

func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// TailError: at Open, the log does not reach where it is known to have
// reached (log.state: where a clean Close left it, the newest segment
// created, the index known durable), or its end is damaged where no crash
// can explain it (after a clean Close; before the durable index). Nothing
// is changed on disk. With RecoverTruncate, Open accepts the log as it is
// instead and reports it in Recovery.TailLoss.
type TailError struct {
	Path   string // the file concerned (a segment, or log.state)
	Reason string
}

func (e *TailError) Error() string {
	return fmt.Sprintf("txlog: %s: %s; start with --recover-truncate to accept the log as it is (what is missing or damaged is lost)",
		e.Path, e.Reason)
}

func (e *TailError) Unwrap() error { return ErrCorrupt }

// ForeignError: a file named as a segment is not a segment of this log: it
// is no lockstep segment at all, it carries another log's id, or its header
// names another index than its file name. RecoverTruncate does not remove
// it (nor the log after it): it may not be this log's to remove, and
// cutting the log there would drop everything after it.
type ForeignError struct {
	Path   string
	Reason string
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("txlog: %s is not a segment of this log (%s); move it out of %s (--recover-truncate does not remove it)",
		e.Path, e.Reason, filepath.Dir(e.Path))
}

func (e *ForeignError) Unwrap() error { return ErrForeign }

// VersionError is a segment written by a newer binary.
type VersionError struct {
	File    string
	Version uint16
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("txlog: %s: format version %d is newer than this binary supports (%d)",
		e.File, e.Version, formatVersion)
}

// failError is the error of a failed log: it names the file and the
// operation and wraps ErrLogFailed, the cause and, for ENOSPC, ErrDiskFull.
type failError struct {
	msg    string
	causes []error
}

func (e *failError) Error() string   { return e.msg }
func (e *failError) Unwrap() []error { return e.causes }

// fsyncError: an fsync of file failed.
func fsyncError(file string, cause error) error {
	return &failError{
		msg:    fmt.Sprintf("txlog: fsync %s: %v; the log is closed for writes", file, cause),
		causes: []error{ErrLogFailed, cause},
	}
}

// writeError: writing file at offset failed (or creating a segment).
func writeError(op, file string, offset int64, cause error) error {
	e := &failError{
		msg:    fmt.Sprintf("txlog: %s %s at offset %d: %v; the log is closed for writes", op, file, offset, cause),
		causes: []error{ErrLogFailed, cause},
	}
	if errors.Is(cause, syscall.ENOSPC) {
		e.causes = append(e.causes, ErrDiskFull)
	}
	return e
}
