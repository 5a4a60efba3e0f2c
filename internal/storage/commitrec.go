package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cespare/xxhash/v2"

	logrec "lockstep/internal/record"
	"lockstep/internal/stat"
	"lockstep/internal/txn"
)

// buildRecord fills rec with the transaction's changes — per changed row
// its durable table id, the table's definition version, the primary key,
// the image before the transaction (unless minimal) and the final image —
// its writeset: a 64-bit hash of every primary key and every non-NULL
// unique key the transaction wrote or removed — and the AUTO_INCREMENT
// counter of every table it wrote that has one. It reads the chains under
// each table's latch; the transaction still holds all its row locks, so
// its versions are the newest of each row.
func (tx *Tx) buildRecord(rec *CommitRecord, minimal bool) {
	my := tx.trx.ID()
	// A row is (table, rref): slot numbers are per table.
	seen := make(map[undoEntry]struct{}, len(tx.undo))
	var scratch []byte
	var tabBuf [4]*Table
	tables := tabBuf[:0] // tables written, for their counters
	for _, u := range tx.undo {
		if _, ok := seen[u]; ok {
			continue
		}
		seen[u] = struct{}{}
		t := u.t
		if t.temp {
			continue
		}
		if !slices.Contains(tables, t) {
			tables = append(tables, t)
		}
		t.mu.RLock()
		if t.dropped || !t.holds(u.ref) {
			// The row left the table (truncate, drop, or a savepoint
			// rollback of its insert): nothing of ours remains.
			t.mu.RUnlock()
			continue
		}
		s := u.ref.slot()
		w := t.walk(s)
		head := *w.next()
		before := w.next()
		for before != nil && before.trx == my {
			before = w.next()
		}
		c := logrec.Change{Table: uint64(t.id), Version: t.version, PK: t.pkOf(s)}
		existed := before != nil && !before.del
		exists := head.trx == my && !head.del
		switch {
		case head.trx != my:
			// Undone by a savepoint rollback, or the record left the
			// table (truncate): nothing of ours remains.
			t.mu.RUnlock()
			continue
		case !existed && !exists:
			t.mu.RUnlock()
			continue // inserted and deleted again
		case !existed:
			c.Op = logrec.OpInsert
		case exists:
			c.Op = logrec.OpUpdate
		default:
			c.Op = logrec.OpDelete
		}
		if exists {
			c.After = head.row
		}
		if existed && !minimal {
			c.Before = before.row
		}
		scratch = rec.addHash(scratch, t.id, PrimaryIndex, c.PK)
		for i, sx := range t.secs {
			if !sx.ix.Unique {
				continue
			}
			for j, img := range [2]*version{before, &head} {
				if img == nil || img.del || (j == 0 && !existed) {
					continue
				}
				if k, null, err := sx.key(img.row); err == nil && !null {
					scratch = rec.addHash(scratch, t.id, i, k)
				}
			}
		}
		t.mu.RUnlock()
		rec.Changes = append(rec.Changes, c)
	}
	// The counters, read after the transaction's last insert: each is past
	// every value this transaction used, and past those others (committed
	// or rolled back) reserved before now. A table whose rows this
	// transaction inserted and deleted again is included too.
	for _, t := range tables {
		rec.addCounter(t)
	}
}

// addHash appends the writeset hash of key in index idx of table id.
func (rec *CommitRecord) addHash(scratch []byte, id uint32, idx int, key []byte) []byte {
	scratch = binary.BigEndian.AppendUint32(scratch[:0], id)
	scratch = binary.BigEndian.AppendUint16(scratch, uint16(idx+1))
	scratch = append(scratch, key...)
	rec.Writeset = append(rec.Writeset, xxhash.Sum64(scratch))
	return scratch
}

// ApplyTxn installs the row changes of a committed transaction from their
// images, as recovery and a secondary's applier do: without row locks and
// without undo, in one storage transaction that becomes visible to new
// ReadViews all at once when ApplyTxn returns. It is idempotent: a change
// whose after-image is already the row's newest version (or a delete of a
// row that is not there) is skipped. Changes to tables that were dropped are
// skipped; a change to a table id this engine never had fails. It is
// atomic: when a change fails, the changes before it are undone and
// nothing of the transaction was ever visible.
func (e *Engine) ApplyTxn(changes []logrec.Change) (applied int, err error) {
	applied, h, err := e.ApplyTxnHeld(changes)
	if err != nil {
		return 0, err
	}
	h.Publish()
	return applied, nil
}

// ApplyTxnHeld is ApplyTxn that does not make the transaction visible:
// its versions are in place (a later ApplyTxnHeld of a transaction that
// depends on it builds on them), but no ReadView sees them until the
// HeldTxn is published — the parallel applier's commit-order gate
// publishes in sequence order, so a reader never sees a later transaction
// without every earlier one. Transactions may be applied concurrently:
// each change takes only its table's latch. When a change fails, the
// changes before it are undone and the storage transaction ends unseen:
// h is nil and nothing of the transaction remains (issue 31 item 3: never
// a half-applied transaction).
func (e *Engine) ApplyTxnHeld(changes []logrec.Change) (applied int, h *HeldTxn, err error) {
	h = e.BeginApply(len(changes))
	if applied, err = h.Apply(changes); err != nil {
		return 0, nil, err
	}
	return applied, h, nil
}

// BeginApply starts a held transaction of total changes that Apply
// installs chunk by chunk (a large transaction decoded a chunk at a
// time: record.Txn.ChangeChunks), so that the caller never holds all its
// changes at once. Until Publish nobody sees any of it, whatever the
// number of chunks; Rollback, or a failed Apply, removes every chunk
// installed. total only numbers the changes in errors (0: unknown).
func (e *Engine) BeginApply(total int) *HeldTxn {
	trx := e.Sys.Begin()
	return &HeldTxn{e: e, trx: trx, id: trx.AssignID(), total: total}
}

// Apply installs the next changes of the held transaction and returns how
// many were not in place already. When a change fails, every change the
// transaction installed — in this call and in the earlier ones — is
// undone and it ends unseen: nothing of it remains, and Publish and
// Rollback do nothing after that.
func (h *HeldTxn) Apply(changes []logrec.Change) (applied int, err error) {
	if h.ended {
		return 0, fmt.Errorf("storage: apply: the transaction already ended")
	}
	for i := range changes {
		c := &changes[i]
		h.seen++
		t, known := h.e.TableByID(c.Table)
		if t == nil {
			if known {
				continue // dropped since
			}
			h.Rollback()
			return 0, fmt.Errorf("storage: apply: change %d names table id %d, which this engine never had", h.seen-1, c.Table)
		}
		u, changed, aerr := t.apply(h.id, c)
		if aerr != nil {
			h.Rollback()
			if h.total > 0 {
				return 0, fmt.Errorf("%w (change %d of %d)", aerr, h.seen, h.total)
			}
			return 0, fmt.Errorf("%w (change %d)", aerr, h.seen)
		}
		if changed {
			h.undo = append(h.undo, undoEntry{t: t, ref: u})
			applied++
		}
	}
	return applied, nil
}

// HeldTxn is a transaction ApplyTxnHeld (or BeginApply and Apply)
// installed and nobody sees yet. Exactly one of Publish and Rollback is
// called, once (after a failed Apply, neither is needed).
type HeldTxn struct {
	e     *Engine
	trx   *txn.Trx
	id    txn.ID
	undo  []undoEntry
	total int  // the changes the caller announced (errors)
	seen  int  // the changes Apply was given so far
	ended bool // published or rolled back
}

// Publish makes the transaction visible to ReadViews opened from now on
// and hands its old versions to purge.
func (h *HeldTxn) Publish() {
	if h.ended {
		return
	}
	h.ended = true
	h.trx.Finish()
	if len(h.undo) > 0 {
		h.e.enqueuePurge(h.id, h.undo)
		stat.IncU(&h.e.stats.Commits)
	}
}

// Rollback removes the transaction's versions, newest first, and ends it
// unseen: the rows are as they were before ApplyTxnHeld (an applier that
// stops after installing a transaction it may not publish).
func (h *HeldTxn) Rollback() {
	if h.ended {
		return
	}
	h.ended = true
	for i := len(h.undo) - 1; i >= 0; i-- {
		h.undo[i].rollback(h.id)
	}
	h.undo = nil
	h.trx.Finish()
}

// apply installs one change as a version by trx id; it returns the row
// changed, and false when the change was already in place.
func (t *Table) apply(id txn.ID, c *logrec.Change) (rref, bool, error) {
	var keys [][]byte
	if c.After != nil {
		keys = make([][]byte, 0, 4)
		t.mu.RLock()
		for _, s := range t.secs {
			k, _, err := s.key(c.After)
			if err != nil {
				t.mu.RUnlock()
				return 0, false, fmt.Errorf("storage: apply to %s: index key: %w", t.name, err)
			}
			keys = append(keys, k)
		}
		t.mu.RUnlock()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped {
		return 0, false, nil
	}
	if c.Version != t.version {
		return 0, false, fmt.Errorf("storage: apply to %s: change encoded for definition version %d, table is at %d", t.name, c.Version, t.version)
	}
	if len(keys) != len(t.secs) && c.After != nil {
		return 0, false, fmt.Errorf("storage: apply to %s: indexes changed during apply", t.name)
	}
	s, ok := t.get(c.PK)
	var head version
	if ok {
		head = t.head(s)
	}
	live := ok && !head.del
	if c.After == nil {
		if !live {
			return 0, false, nil
		}
		t.push(s, &version{trx: id, del: true})
		t.rows.Add(-1)
		return t.ref(s), true, nil
	}
	if live && bytes.Equal(head.row, c.After) {
		return 0, false, nil
	}
	if !live {
		t.rows.Add(1)
	}
	if !ok {
		// The slab keeps its own copy: c.After is not retained.
		return t.newRow(c.PK, keys, version{trx: id, row: c.After}), true, nil
	}
	t.push(s, &version{trx: id, row: append([]byte(nil), c.After...)})
	t.addEntries(s, keys)
	return t.ref(s), true, nil
}

// SetNextTableID makes the next NewTable use id, as loading a checkpoint
// must (tables keep their durable ids). Ids are never reused: an id below
// the next one is an error.
func (e *Engine) SetNextTableID(id uint64) error {
	if id == 0 || id > 1<<32-1 {
		return fmt.Errorf("storage: table id %d out of range", id)
	}
	cur := uint64(e.nextTable.Load()) + 1
	if id < cur {
		return fmt.Errorf("storage: table id %d is below the next id %d", id, cur)
	}
	e.nextTable.Store(uint32(id - 1))
	return nil
}

// SetVersion sets the table's definition version, as loading a checkpoint
// must: commit records after it carry the version the table had then.
func (t *Table) SetVersion(v uint64) {
	t.mu.Lock()
	t.version = v
	t.mu.Unlock()
}

// LoadRow installs a committed row visible to every transaction (loading a
// checkpoint into an empty table; no locks, no undo).
func (t *Table) LoadRow(pk, row []byte) error {
	keys := make([][]byte, len(t.secs))
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, s := range t.secs {
		k, _, err := s.key(row)
		if err != nil {
			return fmt.Errorf("storage: load into %s: index key: %w", t.name, err)
		}
		keys[i] = k
	}
	if _, dup := t.get(pk); dup {
		return fmt.Errorf("storage: load into %s: duplicate primary key", t.name)
	}
	t.newRow(pk, keys, version{row: row}) // the slab keeps its own copy
	t.rows.Add(1)
	return nil
}
