package storage

import (
	"errors"
	"fmt"
)

// PrimaryIndex is the index number of the clustered (primary key) index in
// errors and scans; secondary indexes are numbered from 0.
const PrimaryIndex = -1

// DuplicateKeyError is returned when an insert or update would give a unique
// index (or the primary key) a second live row with the same key.
type DuplicateKeyError struct {
	Table string
	Index int    // PrimaryIndex or a secondary index number
	Name  string // index name ("PRIMARY" for the primary key)
	Key   []byte // the encoded key
	// Existing is the conflicting row as it stands (latest version).
	Existing []byte
}

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("duplicate key in %s.%s", e.Table, e.Name)
}

// ErrTableChanged is returned when a write was encoded for a table
// definition that a DDL statement has since replaced (MySQL's
// ER_TABLE_DEF_CHANGED, 1412).
var ErrTableChanged = errors.New("Table definition has changed, please retry transaction")

// ErrTableDropped is returned when a transaction touches a dropped table.
var ErrTableDropped = errors.New("table was dropped")

// ErrTxDone is returned when a finished transaction is used.
var ErrTxDone = errors.New("transaction already finished")

// ErrLockNowait is returned by a locking read under the NoWait policy when a
// row is locked by another transaction (MySQL's ER_LOCK_NOWAIT, 3572).
var ErrLockNowait = errors.New("Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.")

// errSkipLocked tells a locking read under the SkipLocked policy to leave
// the row out; it never reaches callers.
var errSkipLocked = errors.New("row locked: skipped")
