package storage

import (
	"bytes"
	"sync"
	"sync/atomic"

	"lockstep/internal/storage/ptree"
	"lockstep/internal/storage/slab"
	"lockstep/internal/txn"
)

// version is one version of a row. Versions are immutable once published
// except for prev, which purge may cut (under the table latch). A row's
// base version is not a Go object: it is in the row's slot and the slab
// (rows.go); only the versions newer than it are.
//
// Field order keeps it at 48 bytes (the small fields last share one word).
type version struct {
	trx  txn.ID
	row  []byte // nil when del
	prev *version
	stmt uint32 // the writer's statement number (see Tx.NewStatement)
	del  bool
}

// secIndex is one secondary index: its descriptor, the key it computes
// from a row, and its entries. An entry's key is index key || primary key;
// its Ref is the location of the entry's item (tag, slot, that key).
type secIndex struct {
	ix IndexDesc
	keyer
	tree *ptree.Tree
	id   uint16 // stable for the index's life (items are tagged with it)
}

// Table is one table's data: the clustered index and its secondary indexes.
type Table struct {
	id   uint32
	name string
	e    *Engine

	mu      sync.RWMutex // guards rs, pk, secs, the definition and everything they hold
	rs      *rowStore
	pk      *ptree.Tree // primary key -> slot
	genBase uint32      // >= every slot generation handed out (rows.go, invariant 2)
	ekBuf   []byte      // entry key scratch (under the write latch)
	nextIdx uint16      // the next secondary index id
	secs    []*secIndex
	cols    []ColumnDesc // the definition (see TableDesc; indexes are in secs)
	pkParts []KeyPart
	pkKey   keyer
	version uint64 // bumped by every DDL that changes the row format or indexes
	dropped bool
	temp    bool // a session's TEMPORARY table: never in a commit record

	autoInc atomic.Uint64 // next AUTO_INCREMENT value (0: not yet used)
	rows    atomic.Int64  // live rows, approximate (committed + in flight)
}

// ID returns the table's engine-wide id (stable for the table's life).
func (t *Table) ID() uint32 { return t.id }

// Name returns the name the table was created with.
func (t *Table) Name() string { return t.name }

// Version returns the table's definition version. Writes carry the version
// their rows were encoded for; a mismatch fails with ErrTableChanged.
func (t *Table) Version() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.version
}

// ApproxRows is the number of live rows, counting uncommitted changes.
func (t *Table) ApproxRows() int64 { return t.rows.Load() }

// IndexNames returns the secondary index names in index-number order.
func (t *Table) IndexNames() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	names := make([]string, len(t.secs))
	for i, s := range t.secs {
		names[i] = s.ix.Name
	}
	return names
}

// NextAutoIncrement reserves and returns the next AUTO_INCREMENT value. If
// explicit > 0 the counter moves past it and explicit is returned. Like
// InnoDB's, the counter is not transactional: rolled-back values are gaps.
func (t *Table) NextAutoIncrement(explicit uint64) uint64 {
	for {
		old := t.autoInc.Load()
		cur := max(old, 1)
		if explicit > 0 {
			if explicit < cur {
				return explicit
			}
			if t.autoInc.CompareAndSwap(old, explicit+1) {
				return explicit
			}
			continue
		}
		if t.autoInc.CompareAndSwap(old, cur+1) {
			return cur
		}
	}
}

// PeekAutoIncrement returns the value the next NextAutoIncrement(0) returns.
func (t *Table) PeekAutoIncrement() uint64 {
	if v := t.autoInc.Load(); v > 0 {
		return v
	}
	return 1
}

// SetAutoIncrement sets the next AUTO_INCREMENT value (ALTER TABLE ...
// AUTO_INCREMENT=n, and the counters commit records carry); it never moves
// the counter below a value already used.
func (t *Table) SetAutoIncrement(next uint64) {
	for {
		cur := t.autoInc.Load()
		if next <= cur {
			return
		}
		if t.autoInc.CompareAndSwap(cur, next) {
			return
		}
	}
}

// lockKey builds the lock-table key of a key in index idx of table t.
func (t *Table) lockKey(idx int, key []byte) string {
	b := make([]byte, 0, 6+len(key))
	b = append(b, byte(t.id>>24), byte(t.id>>16), byte(t.id>>8), byte(t.id), byte((idx+1)>>8), byte(idx+1))
	b = append(b, key...)
	return string(b)
}

// get returns the row with primary key pk. Caller holds t.mu.
func (t *Table) get(pk []byte) (uint32, bool) {
	ref, ok := t.pk.Get(pk)
	return uint32(ref), ok
}

// liveRow returns the newest version's row of pk, or nil if it has none or
// is deleted; the caller holds pk's row lock, so that version is committed
// or its own.
func (t *Table) liveRow(pk []byte) ([]byte, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.dropped {
		return nil, ErrTableDropped
	}
	if s, ok := t.get(pk); ok {
		if h := t.head(s); !h.del {
			return h.row, nil
		}
	}
	return nil, nil
}

// hasUniqueIndex reports whether the table has a unique secondary index.
func (t *Table) hasUniqueIndex() bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, s := range t.secs {
		if s.ix.Unique {
			return true
		}
	}
	return false
}

func entryKey(key, pk []byte) []byte {
	b := make([]byte, 0, len(key)+len(pk))
	b = append(b, key...)
	return append(b, pk...)
}

// hasKey reports whether row's key in this index is key.
func (s *secIndex) hasKey(row, key []byte) bool {
	k, _, err := s.key(row)
	return err == nil && bytes.Equal(k, key)
}

// addEntries indexes row version keys of slot s in every secondary index.
// Caller holds t.mu for writing.
func (t *Table) addEntries(s uint32, keys [][]byte) {
	pk := t.pkOf(s)
	for i := range t.secs {
		t.addEntry(i, keys[i], s, pk)
	}
}

// dropEntryUnlessUsed removes index i's entry for key from slot s unless a
// version still in s's chain or its base has that key. Caller holds t.mu
// for writing.
func (t *Table) dropEntryUnlessUsed(i int, s uint32, key []byte) {
	sx := t.secs[i]
	w := t.walk(s)
	for v := w.next(); v != nil; v = w.next() {
		if !v.del && sx.hasKey(v.row, key) {
			return
		}
	}
	t.dropEntry(i, key, t.pkOf(s))
}

// dropVersionEntries removes the entries of row version v of slot s that
// no remaining version of s has (all of them when gone: the row is being
// removed). Caller holds t.mu for writing.
func (t *Table) dropVersionEntries(s uint32, row []byte, gone bool) {
	for i, sx := range t.secs {
		k, _, err := sx.key(row)
		if err != nil {
			continue
		}
		if gone {
			t.dropEntry(i, k, t.pkOf(s))
		} else {
			t.dropEntryUnlessUsed(i, s, k)
		}
	}
}

// liveConflict reports whether unique index i has a live row other than
// self whose newest version has key. Caller holds t.mu.
func (t *Table) liveConflict(i int, key []byte, self uint32, hasSelf bool) []byte {
	sx := t.secs[i]
	var found []byte
	sx.tree.Ascend(key, func(ref uint64) bool {
		ek, s := t.entryAt(slab.Loc(ref))
		if !bytes.HasPrefix(ek, key) {
			return false // past the key: index keys are self-delimiting
		}
		if hasSelf && s == self {
			return true
		}
		h := t.head(s)
		if h.del {
			return true
		}
		if sx.hasKey(h.row, key) {
			found = h.row
			return false
		}
		return true
	})
	return found
}
