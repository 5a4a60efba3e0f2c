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
	s := newSecIndex(d, d.Indexes[len(d.Indexes)-1])
	var err error
	t.pk.Scan(func(r *record) bool {
		for v := r.head; v != nil; v = v.prev {
			if v.del {
				continue
			}
			k, _, kerr := s.key(v.row)
			if kerr != nil {
				err = fmt.Errorf("storage: adding index %s to %s: %w", ix.Name, t.name, kerr)
				return false
			}
			s.add(k, r)
		}
		return true
	})
	if err != nil {
		return err
	}
	if ix.Unique {
		if err := t.checkUniqueBuild(s); err != nil {
			return err
		}
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
	return t.checkUniqueBuild(newSecIndex(d, ix))
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
	owner := map[string]*record{}
	var err error
	t.pk.Scan(func(r *record) bool {
		for v := r.head; v != nil; v = v.prev {
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
	var err error
	t.pk.Scan(func(r *record) bool {
		for v := r.head; v != nil; v = v.prev {
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
		return true
	})
	if err != nil {
		return err
	}
	for v, row := range conv {
		v.row = row
	}
	t.setDesc(d)
	t.pk.Scan(func(r *record) bool {
		for v := r.head; v != nil; v = v.prev {
			if v.del {
				continue
			}
			for _, s := range t.secs {
				if k, _, kerr := s.key(v.row); kerr == nil {
					s.add(k, r)
				}
			}
		}
		return true
	})
	t.version++
	return nil
}

// Truncate removes every row at once, for everyone (TRUNCATE TABLE).
func (t *Table) Truncate() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := int(t.rows.Load())
	forgetRecords(t.pk)
	t.pk = newPKTree()
	for _, s := range t.secs {
		s.tree = newSecTree()
	}
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
	forgetRecords(t.pk)
	t.pk = newPKTree()
	for _, s := range t.secs {
		s.tree = newSecTree()
	}
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
	t.pk.Scan(func(r *record) bool {
		busy = !view.Sees(r.head.trx)
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
	tree := newPKTree()
	var err error
	t.pk.Scan(func(r *record) bool {
		head := r.head
		if head.del {
			return true
		}
		var k []byte
		if k, err = keyOf(head.row); err != nil {
			return false
		}
		nr := &record{key: k, first: version{trx: head.trx, row: head.row, stmt: head.stmt}}
		nr.head = &nr.first
		if prev, dup := tree.Set(nr); dup {
			err = &DuplicateKeyError{Table: t.name, Index: PrimaryIndex, Name: "PRIMARY", Key: k, Existing: prev.head.row}
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	forgetRecords(t.pk)
	t.pk = tree
	t.setDesc(d)
	tree.Scan(func(r *record) bool {
		for _, s := range t.secs {
			if k, _, kerr := s.key(r.head.row); kerr == nil {
				s.add(k, r)
			}
		}
		return true
	})
	t.rows.Store(int64(tree.Len()))
	t.version++
	return nil
}
