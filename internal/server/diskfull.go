package server

import (
	"errors"
	"fmt"

	"lockstep/internal/commit"
	"lockstep/internal/txlog"
)

// durableLog is the log as the commit pipeline sees it: Append returns
// once the records are written to the operating system, so that a full
// disk is found while the pipeline can still fail the group cleanly (a
// write, not an fsync, is what finds it: the log fails at the write).
//
// The pipeline appends one group at a time (its flush stage), so waiting
// here costs the next group only the write; the group's fsync is waited
// for by the pipeline's own WaitDurable, outside the flush stage, where
// the durability waits of several groups may overlap
// (--log-syncs-in-flight, docs/commit.md). When the wait fails because a write
// found the disk full and none of the group's records reached the log
// (LastIndex did not move), the log is resumed (txlog.ResumeAfterDiskFull
// cuts any part of them off the file, durably) and Append returns the
// error: the pipeline gives the sequence numbers back, the transactions
// fail with ER_DISK_FULL (1021) and roll back, and later commits succeed
// once there is space. Any other failure of the wait (a failed fsync, or a
// disk full after part of the group was written) leaves the outcome
// unknown: ErrUncertain, 1180, and the server takes no more writes.
type durableLog struct{ l *txlog.Log }

var _ commit.Log = durableLog{}

func (a durableLog) Append(term uint64, payloads ...[]byte) (uint64, error) {
	before := a.l.LastIndex()
	lsn, err := a.l.Append(term, payloads...)
	if err != nil {
		return 0, err // nothing was appended
	}
	err = a.l.WaitWritten(lsn)
	if err == nil {
		return lsn, nil
	}
	if errors.Is(err, txlog.ErrDiskFull) && a.l.LastIndex() == before {
		rerr := a.l.ResumeAfterDiskFull()
		if rerr == nil {
			return 0, fmt.Errorf("nothing of the group reached the log: %w", err)
		}
		err = errors.Join(err, rerr)
	}
	return 0, fmt.Errorf("%w: %w", commit.ErrUncertain, err)
}

func (a durableLog) WaitDurable(lsn uint64) error { return a.l.WaitDurable(lsn) }
