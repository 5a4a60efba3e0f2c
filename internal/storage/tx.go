package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"lockstep/internal/stat"
	"lockstep/internal/txn"
)

// undoEntry records that the transaction wrote the newest version of row
// ref of t.
type undoEntry struct {
	t   *Table
	ref rref
}

// Tx is a storage transaction. It is used by one goroutine at a time.
type Tx struct {
	e    *Engine
	iso  txn.Isolation
	undo []undoEntry
	done bool
	// stmt numbers this transaction's writes: each version it writes
	// carries the current value. stmtBase is the value at which the
	// running statement began (locking reads hide versions at or above it);
	// a consistent cursor that opens after writes in the current number
	// moves stmt on, so it can hide what is written after it opened.
	stmt, stmtBase uint32
	// wrote says a version was written with the current stmt number.
	wrote bool
	// seeStmt makes locking reads see the current statement's own writes
	// (finding a row to change, rather than reading rows to change).
	seeStmt bool
	// published is set by Commit's callback when the committer published
	// the transaction (a field, so the callback captures only tx).
	published bool

	// LockWait is how long a row lock request waits (innodb_lock_wait_timeout).
	LockWait time.Duration
	// ReadPolicy is how locking reads (Get and Cursor with a lock mode)
	// treat a row locked by another transaction; writes always wait.
	ReadPolicy ReadPolicy

	// xrow is the last row this transaction X-locked by a locking read
	// (its table and the record's own key, never changed). Row locks are
	// held to the end of the transaction, so the write that usually
	// follows such a read (UPDATE, DELETE, SELECT ... FOR UPDATE then
	// UPDATE) needs no second trip to the lock manager.
	xrow struct {
		t   *Table
		key []byte
	}

	// trx is the transaction, held in the Tx's own memory (with its first
	// read view): a transaction is one allocation, not three (issue 35).
	// A Tx is never reused, so neither is the Trx others may still point
	// at (&tx.trx).
	trx txn.Trx
}

// Begin starts a transaction at isolation level iso.
func (e *Engine) Begin(iso txn.Isolation) *Tx {
	tx := &Tx{e: e, iso: iso, LockWait: 50 * time.Second}
	e.Sys.BeginIn(&tx.trx)
	return tx
}

// Isolation returns the transaction's isolation level.
// Trx exposes the transaction-system handle (id, view).
func (tx *Tx) Trx() *txn.Trx { return &tx.trx }

// Done reports whether the transaction has committed or rolled back.
func (tx *Tx) Done() bool { return tx.done }

// EndStatement ends a statement: under READ COMMITTED the next read takes a
// fresh ReadView.
func (tx *Tx) EndStatement() {
	if tx.iso == txn.ReadCommitted {
		tx.trx.CloseReadView()
	}
}

// NewStatement starts a new write statement. Locking reads never return a
// version written by the current statement: an UPDATE that reaches the same
// row twice (through a join, say) reads it as it was before the statement,
// as MySQL does, instead of re-reading its own change.
func (tx *Tx) NewStatement() {
	tx.stmt++
	tx.stmtBase, tx.wrote = tx.stmt, false
}

// readEpoch is called when a consistent cursor opens: it returns the bound
// below which this transaction's own versions are visible to the cursor.
// Versions written later (an INSERT ... SELECT from the same table adding
// rows ahead of its own scan) carry a number at or above it, so a scan
// never returns rows written after it began.
func (tx *Tx) readEpoch() uint32 {
	if tx.wrote {
		tx.stmt++
		tx.wrote = false
	}
	return tx.stmt
}

// ownSeesAll is the epoch bound for reads that see every own write.
const ownSeesAll = ^uint32(0)

// Locate runs fn with locking reads that see the current statement's own
// writes: for finding the live row an edit applies to.
func (tx *Tx) Locate(fn func() error) error {
	tx.seeStmt = true
	defer func() { tx.seeStmt = false }()
	return fn()
}

// current returns the version a locking (current) read sees of row s of
// t: the newest, skipping the versions this transaction wrote in the
// current statement; ok is false when there is none. Caller holds t.mu
// and a lock on the row.
func (tx *Tx) current(t *Table, s uint32) (version, bool) {
	return tx.currentBefore(t, s, ownSeesAll)
}

// currentBefore is current for a locking cursor opened at epoch (its
// readEpoch): it also skips the versions this transaction wrote since the
// cursor opened, whatever statement number they carry. Caller holds t.mu
// and a lock on the row.
func (tx *Tx) currentBefore(t *Table, s uint32, epoch uint32) (version, bool) {
	w := t.walk(s)
	v := w.next()
	my := tx.trx.ID()
	if my == 0 || tx.seeStmt {
		return *v, true
	}
	bound := epoch // stmtBase 0: statements not tracked
	if tx.stmtBase != 0 && tx.stmtBase < bound {
		bound = tx.stmtBase
	}
	for v != nil && v.trx == my && v.stmt >= bound {
		v = w.next()
	}
	if v == nil {
		return version{}, false
	}
	return *v, true
}

// visible returns the version of row s of t this transaction's consistent
// read sees (ok false: none): the newest of its own versions numbered
// below epoch (see readEpoch), else the newest its ReadView sees. Caller
// holds t.mu.
func (tx *Tx) visible(t *Table, s uint32, epoch uint32) (version, bool) {
	my, view := tx.trx.ID(), tx.trx.ReadView()
	w := t.walk(s)
	for v := w.next(); v != nil; v = w.next() {
		if my != 0 && v.trx == my {
			if v.stmt < epoch {
				return *v, true
			}
			continue
		}
		if view.Sees(v.trx) {
			return *v, true
		}
	}
	return version{}, false
}

// ReadPolicy is what a locking read does when a row is locked by another
// transaction (MySQL's FOR UPDATE / FOR SHARE options).
type ReadPolicy uint8

const (
	// WaitLocked waits up to LockWait (the default).
	WaitLocked ReadPolicy = iota
	// NoWait fails at once with ErrLockNowait (NOWAIT).
	NoWait
	// SkipLocked leaves the row out of the result (SKIP LOCKED).
	SkipLocked
)

// lock takes a row lock for a write: it waits up to LockWait.
func (tx *Tx) lock(ctx context.Context, t *Table, idx int, key []byte, mode txn.LockMode) error {
	if idx == PrimaryIndex && tx.xrow.t == t && bytes.Equal(tx.xrow.key, key) {
		return nil // held in X since the locking read (every mode is covered)
	}
	return tx.e.Locks.Lock(ctx, &tx.trx, t.lockKey(idx, key), mode, tx.LockWait)
}

// lockedX records that the transaction holds the X lock of t's row with
// primary key pk (a row's own key bytes, never changed).
func (tx *Tx) lockedX(t *Table, pk []byte) { tx.xrow.t, tx.xrow.key = t, pk }

// lockRead takes a locking read's row lock under tx.ReadPolicy.
func (tx *Tx) lockRead(ctx context.Context, t *Table, idx int, key []byte, mode txn.LockMode) error {
	if tx.ReadPolicy == WaitLocked {
		return tx.lock(ctx, t, idx, key, mode)
	}
	err := tx.e.Locks.Lock(ctx, &tx.trx, t.lockKey(idx, key), mode, 0)
	if errors.Is(err, txn.ErrLockWaitTimeout) {
		if tx.ReadPolicy == SkipLocked {
			return errSkipLocked
		}
		return ErrLockNowait
	}
	return err
}

// Get reads the row with primary key pk. With mode 0 it is a consistent read
// from the transaction's ReadView; with txn.LockS or txn.LockX it locks the
// key first and reads the latest committed version (a current read).
func (tx *Tx) Get(ctx context.Context, t *Table, pk []byte, mode txn.LockMode) ([]byte, bool, error) {
	return tx.get(ctx, t, pk, mode, tx.gapLocking(mode))
}

// GetForUpsert is Get with txn.LockX for INSERT ... ON DUPLICATE KEY UPDATE
// and REPLACE: a key it does not find is inserted next, so, as InnoDB's
// insert-first order does, it locks no gap (two upserts of different new
// keys in one gap would otherwise deadlock on their insert intentions).
func (tx *Tx) GetForUpsert(ctx context.Context, t *Table, pk []byte) ([]byte, bool, error) {
	return tx.get(ctx, t, pk, txn.LockX, false)
}

func (tx *Tx) get(ctx context.Context, t *Table, pk []byte, mode txn.LockMode, gap bool) ([]byte, bool, error) {
	if tx.done {
		return nil, false, ErrTxDone
	}
	if gap {
		// REPEATABLE READ: look first, as InnoDB does. A key that is not
		// there gets the gap lock (which never waits) and no record lock,
		// so two transactions reading the same missing key both go on.
		t.mu.RLock()
		if t.dropped {
			t.mu.RUnlock()
			return nil, false, ErrTableDropped
		}
		if _, ok := t.get(pk); !ok {
			tx.lockGap(t, PrimaryIndex, t.succEntry(PrimaryIndex, pk, false), mode)
			t.mu.RUnlock()
			return nil, false, nil
		}
		t.mu.RUnlock()
	}
	if mode != 0 {
		if err := tx.lockRead(ctx, t, PrimaryIndex, pk, mode); err == errSkipLocked {
			return nil, false, nil
		} else if err != nil {
			return nil, false, err
		}
	} else {
		tx.trx.ReadView() // REPEATABLE READ: the first consistent read fixes the snapshot
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.dropped {
		return nil, false, ErrTableDropped
	}
	s, ok := t.get(pk)
	if !ok {
		if gap {
			// Gone while the record lock was awaited: lock its gap.
			tx.lockGap(t, PrimaryIndex, t.succEntry(PrimaryIndex, pk, false), mode)
		}
		return nil, false, nil
	}
	if mode == txn.LockX {
		tx.lockedX(t, t.pkOf(s))
	}
	var v version
	if mode != 0 {
		v, ok = tx.current(t, s)
	} else {
		v, ok = tx.visible(t, s, ownSeesAll)
	}
	if !ok || v.del {
		return nil, false, nil
	}
	stat.IncU(&tx.e.stats.RowsRead)
	return v.row, true, nil
}

// Range bounds a scan: Lo inclusive, Hi exclusive; nil means unbounded.
type Range struct {
	Lo, Hi []byte
}

func (tx *Tx) checkVersion(t *Table, ver uint64) error {
	if t.dropped {
		return ErrTableDropped
	}
	if ver != 0 && ver != t.version {
		return ErrTableChanged
	}
	return nil
}

// indexKeys computes row's key in the table's secondary indexes — only in
// the unique ones when uniqueOnly (a row being removed needs no new index
// entries) — and X-locks its non-NULL unique keys.
func (tx *Tx) indexKeys(ctx context.Context, t *Table, row []byte, uniqueOnly bool) ([][]byte, []bool, error) {
	t.mu.RLock()
	keys, nulls := make([][]byte, len(t.secs)), make([]bool, len(t.secs))
	var toLock []string
	for i, s := range t.secs {
		if uniqueOnly && !s.ix.Unique {
			continue
		}
		k, null, err := s.key(row)
		if err != nil {
			t.mu.RUnlock()
			return nil, nil, err
		}
		keys[i], nulls[i] = k, null
		if s.ix.Unique && !null {
			toLock = append(toLock, t.lockKey(i, k))
		}
	}
	t.mu.RUnlock()
	for _, k := range toLock {
		if err := tx.e.Locks.Lock(ctx, &tx.trx, k, txn.LockX, tx.LockWait); err != nil {
			return nil, nil, err
		}
	}
	return keys, nulls, nil
}

func (tx *Tx) dupErr(t *Table, idx int, key, existing []byte) error {
	name := "PRIMARY"
	if idx != PrimaryIndex {
		name = t.secs[idx].ix.Name
	}
	return &DuplicateKeyError{Table: t.name, Index: idx, Name: name, Key: key, Existing: existing}
}

// uniqueConflict checks every unique index for a live row other than self
// (when hasSelf) with the same key. Caller holds t.mu.
func (tx *Tx) uniqueConflict(t *Table, keys [][]byte, nulls []bool, self uint32, hasSelf bool) error {
	for i, s := range t.secs {
		if !s.ix.Unique || nulls[i] {
			continue
		}
		if row := t.liveConflict(i, keys[i], self, hasSelf); row != nil {
			return tx.dupErr(t, i, keys[i], row)
		}
	}
	return nil
}

// Insert adds a row. ver is the table version the row was encoded for (0:
// unchecked). A live row with the same primary key or unique key fails with
// *DuplicateKeyError.
func (tx *Tx) Insert(ctx context.Context, t *Table, ver uint64, pk, row []byte) error {
	if tx.done {
		return ErrTxDone
	}
	id := tx.trx.AssignID()
	if err := tx.lock(ctx, t, PrimaryIndex, pk, txn.LockX); err != nil {
		return err
	}
	keys, nulls, err := tx.indexKeys(ctx, t, row, false)
	if err != nil {
		return err
	}
	for {
		wait, err := tx.insertLatched(t, ver, id, pk, row, keys, nulls)
		if wait == "" || err != nil {
			return err
		}
		// Another transaction locks a gap the row goes into: wait for
		// it without the latch (insert intention), then check again.
		if err := tx.e.Locks.Lock(ctx, &tx.trx, wait, txn.LockInsertIntention, tx.LockWait); err != nil {
			return err
		}
	}
}

// insertLatched is Insert's work under the write latch. It returns the gap
// lock key to wait on when another transaction locks a gap the row enters.
func (tx *Tx) insertLatched(t *Table, ver uint64, id txn.ID, pk, row []byte, keys [][]byte, nulls []bool) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := tx.checkVersion(t, ver); err != nil {
		return "", err
	}
	s, ok := t.get(pk)
	if ok {
		if h := t.head(s); !h.del {
			return "", tx.dupErr(t, PrimaryIndex, pk, h.row)
		}
	}
	if err := tx.uniqueConflict(t, keys, nulls, s, ok); err != nil {
		return "", err
	}
	wait, splits := tx.insertGaps(t, pk, !ok, keys)
	if wait != "" {
		return wait, nil
	}
	var ref rref
	if !ok {
		ref = t.newRow(pk, keys, version{trx: id, stmt: tx.stmt, row: row})
	} else {
		t.push(s, &version{trx: id, stmt: tx.stmt, row: row})
		t.addEntries(s, keys)
		ref = t.ref(s)
	}
	tx.wrote = true
	tx.splitGaps(t, splits)
	tx.undo = append(tx.undo, undoEntry{t: t, ref: ref})
	t.rows.Add(1)
	stat.IncU(&tx.e.stats.RowsInserted)
	return "", nil
}

// Update replaces the row with primary key oldPK by row with primary key
// newPK (a primary key change is a delete and an insert).
func (tx *Tx) Update(ctx context.Context, t *Table, ver uint64, oldPK, newPK, row []byte) error {
	if tx.done {
		return ErrTxDone
	}
	if !bytes.Equal(oldPK, newPK) {
		if err := tx.Delete(ctx, t, ver, oldPK); err != nil {
			return err
		}
		if err := tx.Insert(ctx, t, ver, newPK, row); err != nil {
			return err
		}
		stat.AddU(&tx.e.stats.RowsInserted, ^uint64(0))
		stat.AddU(&tx.e.stats.RowsDeleted, ^uint64(0))
		stat.IncU(&tx.e.stats.RowsUpdated)
		return nil
	}
	id := tx.trx.AssignID()
	if err := tx.lock(ctx, t, PrimaryIndex, oldPK, txn.LockX); err != nil {
		return err
	}
	// Lock the unique keys the row leaves as well as those it takes, so a
	// concurrent insert of a freed value waits for this transaction. (A
	// table without unique secondary indexes has none: the old row is not
	// looked up twice.)
	if t.hasUniqueIndex() {
		oldRow, err := t.liveRow(oldPK)
		if err != nil {
			return err
		}
		if oldRow == nil {
			return fmt.Errorf("storage: update of a missing row in %s", t.name)
		}
		if _, _, err := tx.indexKeys(ctx, t, oldRow, true); err != nil {
			return err
		}
	}
	keys, nulls, err := tx.indexKeys(ctx, t, row, false)
	if err != nil {
		return err
	}
	for {
		wait, err := tx.updateLatched(t, ver, id, oldPK, row, keys, nulls)
		if wait == "" || err != nil {
			return err
		}
		if err := tx.e.Locks.Lock(ctx, &tx.trx, wait, txn.LockInsertIntention, tx.LockWait); err != nil {
			return err
		}
	}
}

// updateLatched is Update's work under the write latch; like insertLatched
// it returns a gap lock key to wait on when a secondary key moves into a
// gap another transaction locks.
func (tx *Tx) updateLatched(t *Table, ver uint64, id txn.ID, pk, row []byte, keys [][]byte, nulls []bool) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := tx.checkVersion(t, ver); err != nil {
		return "", err
	}
	s, ok := t.get(pk)
	if !ok || t.head(s).del {
		return "", fmt.Errorf("storage: update of a missing row in %s", t.name)
	}
	if err := tx.uniqueConflict(t, keys, nulls, s, true); err != nil {
		return "", err
	}
	wait, splits := tx.insertGaps(t, pk, false, keys)
	if wait != "" {
		return wait, nil
	}
	t.push(s, &version{trx: id, stmt: tx.stmt, row: row})
	tx.wrote = true
	t.addEntries(s, keys)
	tx.splitGaps(t, splits)
	tx.undo = append(tx.undo, undoEntry{t: t, ref: t.ref(s)})
	stat.IncU(&tx.e.stats.RowsUpdated)
	return "", nil
}

// Delete removes the row with primary key pk (no-op if there is none).
func (tx *Tx) Delete(ctx context.Context, t *Table, ver uint64, pk []byte) error {
	if tx.done {
		return ErrTxDone
	}
	id := tx.trx.AssignID()
	if err := tx.lock(ctx, t, PrimaryIndex, pk, txn.LockX); err != nil {
		return err
	}
	oldRow, err := t.liveRow(pk)
	if err != nil || oldRow == nil {
		return err
	}
	if _, _, err := tx.indexKeys(ctx, t, oldRow, true); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := tx.checkVersion(t, ver); err != nil {
		return err
	}
	s, ok := t.get(pk)
	if !ok || t.head(s).del {
		return nil
	}
	t.push(s, &version{trx: id, stmt: tx.stmt, del: true})
	tx.wrote = true
	tx.undo = append(tx.undo, undoEntry{t: t, ref: t.ref(s)})
	t.rows.Add(-1)
	stat.IncU(&tx.e.stats.RowsDeleted)
	return nil
}

// Savepoint returns a mark for RollbackTo (statement or SAVEPOINT start).
func (tx *Tx) Savepoint() int { return len(tx.undo) }

// RollbackTo undoes every change made after mark. Locks stay held.
func (tx *Tx) RollbackTo(mark int) {
	if mark < len(tx.undo) {
		// The values the undone inserts took are not handed out again:
		// the next commit record carries their tables' counters.
		tx.e.counters.note(tx.undo[mark:])
	}
	for i := len(tx.undo) - 1; i >= mark; i-- {
		tx.undoOne(tx.undo[i])
	}
	tx.undo = tx.undo[:mark]
}

func (tx *Tx) undoOne(u undoEntry) { u.rollback(tx.trx.ID()) }

// rollback removes the newest version of u's row, written by trx id (a
// rolled-back transaction's, or an applied transaction's that is not to be
// published), with its index entries; a row that was only that version
// (the transaction inserted it) leaves the table.
func (u undoEntry) rollback(id txn.ID) {
	t := u.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.holds(u.ref) {
		return // table truncated or dropped under us: the row is gone
	}
	s := u.ref.slot()
	w := t.walk(s)
	v := *w.next()
	below := w.next()
	if v.trx != id {
		return
	}
	popped := t.popHead(s) // false: v is the base, the row's only version
	if v.del {
		t.rows.Add(1)
	} else {
		if below == nil || below.del {
			t.rows.Add(-1)
		}
		t.dropVersionEntries(s, v.row, !popped)
	}
	if !popped {
		t.removeRow(s)
	}
}

// Rollback undoes the whole transaction, ends it and releases its locks.
func (tx *Tx) Rollback() {
	if tx.done {
		return
	}
	tx.RollbackTo(0)
	tx.finish()
	stat.IncU(&tx.e.stats.Rollbacks)
}

func (tx *Tx) finish() {
	tx.done = true
	tx.trx.Finish()
	tx.e.Locks.ReleaseAll(&tx.trx)
}

// failCommit ends a transaction the committer did not publish: rolled
// back, unless the outcome is uncertain — then it keeps its locks (the
// server stops taking writes).
func (tx *Tx) failCommit(err error) error {
	if errors.Is(err, ErrCommitUncertain) {
		tx.done = true
		return err
	}
	tx.Rollback()
	return err
}

// Commit commits the transaction through the engine's Committer: it builds
// the commit record (row images and writeset) and hands it over. On an
// error nothing was published; the transaction is rolled back unless the
// error wraps ErrCommitUncertain (see Committer).
func (tx *Tx) Commit() error {
	if tx.done {
		return ErrTxDone
	}
	if len(tx.undo) == 0 {
		tx.finish()
		return nil
	}
	rec := &CommitRecord{TrxID: tx.trx.ID(), Minimal: tx.e.minimal.Load()}
	tx.buildRecord(rec, rec.Minimal)
	var err error
	if len(rec.Changes) == 0 {
		// Only temporary tables, or rows inserted and deleted again:
		// nothing for the log (a counter this moved goes with the next
		// record).
		tx.e.counters.note(tx.undo)
		tx.finish()
	} else {
		// Counters rollbacks moved since a record last carried them.
		taken := tx.e.counters.take(rec)
		err = tx.e.committer.Load().c.Commit(rec, func() {
			tx.published = true
			tx.finish()
		})
		if err != nil && !tx.published {
			tx.e.counters.put(taken) // not in the log: the next record
			return tx.failCommit(err)
		}
	}
	stat.IncU(&tx.e.stats.Commits)
	tx.e.enqueuePurge(tx.trx.ID(), tx.undo)
	tx.undo = nil
	return err
}
