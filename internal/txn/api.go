package txn

// This file fixes the API that internal/storage and internal/sqlfront code
// against. Bodies live in the other files of the package.

import (
	"context"
	"errors"
	"time"
)

// ID is a transaction id. Ids are allocated from one atomic counter, start at
// 1, and are never reused. 0 means "no id" (a transaction that has not written).
type ID = uint64

// LockMode is a row lock mode.
type LockMode uint8

const (
	LockS LockMode = iota + 1 // shared
	LockX                     // exclusive

	// Gap modes (gaplock.go). A gap lock key names the open interval
	// before one index key; its queue holds only these modes.
	LockGapS            // gap lock taken by a shared locking read
	LockGapX            // gap lock taken by an exclusive locking read or a write
	LockInsertIntention // an insert into the gap: waits for other transactions' gap locks
)

// SchedulePolicy picks which waiter a released lock is granted to.
type SchedulePolicy int32

const (
	FIFO SchedulePolicy = iota // grant in arrival order
	CATS                       // grant first to the waiter that blocks the most transactions
)

// Errors returned by Lock. The SQL layer maps them to MySQL errors
// (ErrDeadlock -> 1213 ER_LOCK_DEADLOCK, ErrLockWaitTimeout -> 1205
// ER_LOCK_WAIT_TIMEOUT). A context cancellation returns ctx.Err().
var (
	ErrDeadlock        = errors.New("Deadlock found when trying to get lock; try restarting transaction")
	ErrLockWaitTimeout = errors.New("Lock wait timeout exceeded; try restarting transaction")
)

// Isolation is a transaction isolation level.
type Isolation uint8

const (
	RepeatableRead Isolation = iota
	ReadCommitted
)

// compile-time checks of the API shape (bodies elsewhere in the package).
var (
	_ func() *Sys                                                                      = NewSys
	_ func(*Sys) *Trx                                                                  = (*Sys).Begin
	_ func(*Trx) ID                                                                    = (*Trx).AssignID
	_ func(*Trx) ID                                                                    = (*Trx).ID
	_ func(*Trx) *ReadView                                                             = (*Trx).ReadView
	_ func(*Trx)                                                                       = (*Trx).CloseReadView
	_ func(*Trx)                                                                       = (*Trx).Finish
	_ func(*Sys) ID                                                                    = (*Sys).PurgeLimit
	_ func(*ReadView, ID) bool                                                         = (*ReadView).Sees
	_ func(LockConfig) *LockManager                                                    = NewLockManager
	_ func(*LockManager, context.Context, *Trx, string, LockMode, time.Duration) error = (*LockManager).Lock
	_ func(*LockManager, *Trx)                                                         = (*LockManager).ReleaseAll
	_ func(*LockManager, SchedulePolicy)                                               = (*LockManager).SetPolicy
	_ func(*LockManager) LockStats                                                     = (*LockManager).Stats
	_ func(*Sys) SysStats                                                              = (*Sys).Stats
)
