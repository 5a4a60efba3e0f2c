package storage

import (
	"fmt"
)

// DDL operations are not transactional (as in MySQL, where DDL commits
// implicitly). Each runs under the table latch and bumps the table version
// so writes encoded for the old definition fail with ErrTableChanged.

// AddIndex builds a secondary index over every version of every row, so
// consistent reads through it see exactly what they see through the primary
// key. A unique index fails with *DuplicateKeyError if two live rows share a
// non-NULL key.
func (t *Table) AddIndex(spec IndexSpec) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &secIndex{spec: spec, tree: newSecTree()}
	var err error
	t.pk.Scan(func(r *record) bool {
		for v := r.head; v != nil; v = v.prev {
			if v.del {
				continue
			}
			k, _, kerr := spec.Key(v.row)
			if kerr != nil {
				err = kerr
				return false
			}
			s.add(k, r)
		}
		return true
	})
	if err != nil {
		return err
	}
	if spec.Unique {
		if err := t.checkUniqueBuild(spec); err != nil {
			return err
		}
	}
	t.secs = append(t.secs, s)
	t.version++
	return nil
}

// CheckUnique reports (as *DuplicateKeyError) whether spec's key would be
// duplicated by the table's rows, counting uncommitted versions as
// checkUniqueBuild does. For callers that rebuild indexes with Rewrite.
func (t *Table) CheckUnique(spec IndexSpec) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.checkUniqueBuild(spec)
}

// checkUniqueBuild fails if two rows could both be live with the same
// non-NULL key. A row whose newest version belongs to a transaction still
// running counts with every key it may end up with: its uncommitted version
// and the committed one below it (the transaction may roll back). DDL does
// not wait for such transactions (there is no metadata lock yet), so this is
// conservative: it can refuse an index MySQL would build after waiting.
// Caller holds t.mu for writing.
func (t *Table) checkUniqueBuild(spec IndexSpec) error {
	probe := t.e.Sys.Begin()
	view := probe.ReadView()
	defer probe.Finish()
	owner := map[string]*record{}
	var err error
	t.pk.Scan(func(r *record) bool {
		for v := r.head; v != nil; v = v.prev {
			if !v.del {
				k, null, kerr := spec.Key(v.row)
				if kerr != nil {
					err = kerr
					return false
				}
				if !null {
					if o, ok := owner[string(k)]; ok && o != r {
						err = &DuplicateKeyError{Table: t.name, Index: len(t.secs), Name: spec.Name, Key: k, Existing: v.row}
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

// Rewrite converts every version of every row with fn (ADD/DROP COLUMN) and
// rebuilds the secondary indexes from specs. Versions keep their
// transaction ids, so visibility and undo are unchanged.
func (t *Table) Rewrite(fn func(row []byte) ([]byte, error), specs []IndexSpec) error {
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
	t.secs = t.secs[:0]
	for _, s := range specs {
		t.secs = append(t.secs, &secIndex{spec: s, tree: newSecTree()})
	}
	t.pk.Scan(func(r *record) bool {
		for v := r.head; v != nil; v = v.prev {
			if v.del {
				continue
			}
			for _, s := range t.secs {
				if k, _, kerr := s.spec.Key(v.row); kerr == nil {
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
	t.pk = newPKTree()
	for _, s := range t.secs {
		s.tree = newSecTree()
	}
	t.version++
}
