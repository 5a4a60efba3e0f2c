package storage

import (
	"errors"
	"fmt"
)

// DDL operations are not transactional (as in MySQL, where DDL commits
// implicitly). Each runs under the table latch and bumps the table version
// so writes encoded for the old definition fail with ErrTableChanged.

// AddIndex builds a secondary index over every version of every row, so
// consistent reads through it see exactly what they see through the primary
// key. A unique index fails with *DuplicateKeyError if two live rows share a
// non-NULL key. The index becomes the table's last.
func (t *Table) AddIndex(ix IndexDesc) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.descLocked()
	d.Indexes = append(d.Indexes, ix)
	if err := d.Validate(); err != nil {
		return fmt.Errorf("storage: adding index %s to %s: %w", ix.Name, t.name, err)
	}
	s := t.newSecIndex(d, d.Indexes[len(d.Indexes)-1])
	var err error
	t.pk.Scan(func(ref uint64) bool {
		slot := uint32(ref)
		pk := t.pkOf(slot)
		w := t.walk(slot)
		for v := w.next(); v != nil; v = w.next() {
			if v.del {
				continue
			}
			k, _, kerr := s.key(v.row)
			if kerr != nil {
				err = fmt.Errorf("storage: adding index %s to %s: %w", ix.Name, t.name, kerr)
				return false
			}
			t.addEntryTo(s, k, slot, pk)
		}
		return true
	})
	if err == nil && ix.Unique {
		err = t.checkUniqueBuild(s)
	}
	if err != nil {
		t.freeEntries(s.tree)
		return err
	}
	t.secs = append(t.secs, s)
	t.version++
	return nil
}

// CheckUnique reports (as *DuplicateKeyError) whether index ix's key would
// be duplicated by the table's rows, counting uncommitted versions as
// checkUniqueBuild does. For callers that rebuild indexes with Rewrite.
func (t *Table) CheckUnique(ix IndexDesc) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := &TableDesc{Columns: t.cols, Indexes: []IndexDesc{ix}}
	if err := d.Validate(); err != nil {
		return fmt.Errorf("storage: checking index %s of %s: %w", ix.Name, t.name, err)
	}
	return t.checkUniqueBuild(t.newSecIndex(d, ix))
}

// checkUniqueBuild fails if two rows could both be live with the same
// non-NULL key. A row whose newest version belongs to a transaction still
// running counts with every key it may end up with: its uncommitted version
// and the committed one below it (the transaction may roll back). DDL does
// not wait for such transactions (there is no metadata lock yet), so this is
// conservative: it can refuse an index MySQL would build after waiting.
// Caller holds t.mu for writing.
func (t *Table) checkUniqueBuild(s *secIndex) error {
	probe := t.e.Sys.Begin()
	view := probe.ReadView()
	defer probe.Finish()
	owner := map[string]uint32{}
	var err error
	t.pk.Scan(func(ref uint64) bool {
		r := uint32(ref)
		w := t.walk(r)
		for v := w.next(); v != nil; v = w.next() {
			if !v.del {
				k, null, kerr := s.key(v.row)
				if kerr != nil {
					err = fmt.Errorf("storage: checking index %s of %s: %w", s.ix.Name, t.name, kerr)
					return false
				}
				if !null {
					if o, ok := owner[string(k)]; ok && o != r {
						err = &DuplicateKeyError{Table: t.name, Index: len(t.secs), Name: s.ix.Name, Key: k, Existing: v.row}
						return false
					}
					owner[string(k)] = r
				}
			}
			if view.Sees(v.trx) {
				break // committed: older versions are history, not candidates
			}
		}
		return true
	})
	return err
}

// RenameIndex renames secondary index i. Keys do not change, so neither
// does the table version.
func (t *Table) RenameIndex(i int, name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i < 0 || i >= len(t.secs) {
		return fmt.Errorf("storage: table %s has no index %d", t.name, i)
	}
	t.secs[i].ix.Name = name
	return nil
}

// DropIndex removes secondary index i; later indexes shift down by one.
func (t *Table) DropIndex(i int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i < 0 || i >= len(t.secs) {
		return fmt.Errorf("storage: table %s has no index %d", t.name, i)
	}
	t.freeEntries(t.secs[i].tree)
	t.secs = append(t.secs[:i:i], t.secs[i+1:]...)
	t.version++
	return nil
}

// Rewrite converts every version of every row with fn (ADD/DROP COLUMN),
// installs the new definition d and rebuilds the secondary indexes from it.
// Versions keep their transaction ids, so visibility and undo are
// unchanged.
func (t *Table) Rewrite(fn func(row []byte) ([]byte, error), d *TableDesc) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("storage: rewriting %s: %w", t.name, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// Convert into a copy first so a failure leaves the table untouched.
	conv := make(map[*version][]byte)
	bases := make(map[uint32][]byte)
	var err error
	t.pk.Scan(func(ref uint64) bool {
		slot := uint32(ref)
		for v := t.chain(slot); v != nil; v = v.prev {
			if v.del {
				continue
			}
			nr, ferr := fn(v.row)
			if ferr != nil {
				err = ferr
				return false
			}
			conv[v] = nr
		}
		if b := t.base(slot); !b.del {
			nr, ferr := fn(b.row)
			if ferr != nil {
				err = ferr
				return false
			}
			bases[slot] = nr
		}
		return true
	})
	if err != nil {
		return err
	}
	for v, row := range conv {
		v.row = row
	}
	for slot, row := range bases {
		b := t.base(slot)
		b.row = row
		t.setBase(slot, &b)
	}
	for _, s := range t.secs {
		t.freeEntries(s.tree)
	}
	t.setDesc(d)
	t.pk.Scan(func(ref uint64) bool {
		t.addVersionEntries(uint32(ref))
		return true
	})
	t.version++
	return nil
}

// addVersionEntries files every version of slot s in every secondary index
// (keys that fail to compute are left out). Caller holds t.mu for writing.
func (t *Table) addVersionEntries(slot uint32) {
	pk := t.pkOf(slot)
	w := t.walk(slot)
	for v := w.next(); v != nil; v = w.next() {
		if v.del {
			continue
		}
		for _, s := range t.secs {
			if k, _, kerr := s.key(v.row); kerr == nil {
				t.addEntryTo(s, k, slot, pk)
			}
		}
	}
}

// Truncate removes every row at once, for everyone (TRUNCATE TABLE).
func (t *Table) Truncate() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := int(t.rows.Load())
	t.resetRows()
	t.rows.Store(0)
	t.autoInc.Store(0)
	t.version++
	return n
}

// Drop marks the table dropped; later access fails with ErrTableDropped.
func (t *Table) Drop() {
	t.e.unregister(t)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropped = true
	t.resetRows()
	t.version++
}

// ErrRowsInUse is returned by Rekey while a transaction that has not
// finished has changed a row of the table (MySQL makes such an ALTER wait
// for the table's metadata lock; the caller waits, see InUse).
var ErrRowsInUse = errors.New("storage: a row of the table is changed by an unfinished transaction")

// InUse reports whether a transaction that has not finished (open, or
// committing) has changed a row of the table.
func (t *Table) InUse() bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.inUseLocked()
}

func (t *Table) inUseLocked() bool {
	trx := t.e.Sys.Begin()
	defer trx.Finish()
	view := trx.ReadView()
	busy := false
	t.pk.Scan(func(ref uint64) bool {
		busy = !view.Sees(t.head(uint32(ref)).trx)
		return !busy
	})
	return busy
}

// Rekey gives the table a new primary key (ALTER TABLE ADD/DROP PRIMARY
// KEY): every row is filed under keyOf(row) — for d's primary key when
// keyOf is nil — in a new clustered index, the definition d is installed
// and the secondary indexes are rebuilt from it. Only the newest version
// of each row is kept, with the transaction id that wrote it: a
// transaction whose snapshot predates the statement sees the rows as they
// are after it, and a row deleted before it is gone (MySQL's copying
// ALTER gives such a transaction ER_TABLE_DEF_CHANGED instead). It fails
// with ErrRowsInUse, changing nothing, while an unfinished transaction has
// changed a row, and with a *DuplicateKeyError (Index PrimaryIndex) when
// two rows get the same key.
func (t *Table) Rekey(d *TableDesc, keyOf func(row []byte) ([]byte, error)) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("storage: re-keying %s: %w", t.name, err)
	}
	if keyOf == nil {
		pk := newKeyer(d, d.PrimaryKey, false)
		keyOf = func(row []byte) ([]byte, error) {
			k, _, err := pk.key(row)
			return k, err
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped {
		return ErrTableDropped
	}
	if t.inUseLocked() {
		return ErrRowsInUse
	}
	// Collect the newest version of every row under its new key, then
	// file them in a new row store; on a duplicate the old store is put
	// back untouched.
	type newRow struct {
		key []byte
		v   version
	}
	var rows []newRow
	var err error
	t.pk.Scan(func(ref uint64) bool {
		head := t.head(uint32(ref))
		if head.del {
			return true
		}
		var k []byte
		if k, err = keyOf(head.row); err != nil {
			return false
		}
		rows = append(rows, newRow{key: k, v: version{trx: head.trx, row: head.row, stmt: head.stmt}})
		return true
	})
	if err != nil {
		return err
	}
	// The old store, trees and indexes stay untouched until the new ones
	// are complete (resetRows would empty the old indexes' trees).
	oldRS, oldPK, oldSecs := t.rs, t.pk, t.secs
	oldCols, oldParts, oldKey := t.cols, t.pkParts, t.pkKey
	t.newStore()
	t.setDesc(d)
	for _, r := range rows {
		if prev, dup := t.get(r.key); dup {
			err = &DuplicateKeyError{Table: t.name, Index: PrimaryIndex, Name: "PRIMARY", Key: r.key, Existing: t.head(prev).row}
			break
		}
		ref := t.newRow(r.key, nil, r.v)
		t.addVersionEntries(ref.slot())
	}
	if err != nil {
		t.rs, t.pk, t.secs = oldRS, oldPK, oldSecs
		t.cols, t.pkParts, t.pkKey = oldCols, oldParts, oldKey
		return err
	}
	t.rows.Store(int64(t.pk.Len()))
	t.version++
	return nil
}
