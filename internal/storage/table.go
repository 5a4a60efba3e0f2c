package storage

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/tidwall/btree"

	"lockstep/internal/txn"
)

// version is one version of a row. Versions are immutable once published
// except for prev, which purge may cut (under the table latch).
//
// Field order keeps it at 48 bytes (the small fields last share one word).
type version struct {
	trx  txn.ID
	row  []byte // nil when del
	prev *version
	stmt uint32 // the writer's statement number (see Tx.NewStatement)
	del  bool
}

// record is one primary key and its version chain, newest first.
//
// The record is allocated with the row's first version inside it (first):
// one heap object instead of two for a row that is never updated, the
// common case in a large table. first is written once, when the record is
// made, and never overwritten in place afterwards (a record is never
// reused: invariant 4 in docs/storage.md), so a reader holding &r.first
// holds a version as immutable as any other; purge cuts links to it and
// rollback unlinks it like any version, and its memory lives as long as
// the record. key points into one byte allocation that also holds the
// first version's secondary entry keys (newRecord).
type record struct {
	key   []byte
	head  *version
	first version
}

// secEntry is one index entry: the index key followed by the record's
// primary key, so the index-key part is len(key) - len(rec.key) bytes.
type secEntry struct {
	key string // index key || primary key, as keyStr (see pkEntry)
	rec *record
}

// bytes returns the entry key's bytes (never to be modified).
func (e secEntry) bytes() []byte { return strKey(e.key) }

// secIndex is one secondary index: its descriptor, the key it computes
// from a row, and its entries.
type secIndex struct {
	ix IndexDesc
	keyer
	tree *btree.BTreeG[secEntry]
}

func secLess(a, b secEntry) bool { return a.key < b.key }
func newSecTree() *btree.BTreeG[secEntry] {
	return btree.NewBTreeGOptions(secLess, btree.Options{NoLocks: true, Degree: 64})
}

// Table is one table's data: the clustered index and its secondary indexes.
type Table struct {
	id   uint32
	name string
	e    *Engine

	mu      sync.RWMutex // guards pk, secs, the definition, chain heads and prev links
	pk      *pkTree
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

// get returns the record with primary key pk, or nil. Caller holds t.mu.
func (t *Table) get(pk []byte) *record {
	return t.pk.Get(pk)
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
	if r := t.get(pk); r != nil && r.head != nil && !r.head.del {
		return r.head.row, nil
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

// insertRecord makes the record of a new primary key pk whose first (and
// only) version is v, files it in the clustered index and files v in every
// secondary index under keys[i] (v's key in index i). The primary key and
// the entry keys (keys[i] || pk) share one allocation, so a new row costs
// two heap objects beside its row bytes — the record with its embedded
// version and this byte slice — where it cost 4 + one per index. Each
// slice handed out is capped at its own length, so an append to one never
// writes into its neighbours. Caller holds t.mu for writing.
func (t *Table) insertRecord(pk []byte, keys [][]byte, v version) *record {
	n := len(pk)
	for _, k := range keys {
		n += len(k) + len(pk)
	}
	b := make([]byte, 0, n)
	b = append(b, pk...)
	r := &record{key: b[:len(pk):len(pk)], first: v}
	r.head = &r.first
	t.pk.Set(r)
	for i, s := range t.secs {
		start := len(b)
		b = append(b, keys[i]...)
		b = append(b, pk...)
		s.tree.Set(secEntry{key: keyStr(b[start:]), rec: r})
	}
	return r
}

// add indexes r under index key k. Caller holds the table latch for writing.
func (s *secIndex) add(k []byte, r *record) {
	s.tree.Set(secEntry{key: keyStr(entryKey(k, r.key)), rec: r})
}

// hasKey reports whether row's key in this index is key.
func (s *secIndex) hasKey(row, key []byte) bool {
	k, _, err := s.key(row)
	return err == nil && bytes.Equal(k, key)
}

// holds reports whether r is still the record of its key in t: truncate and
// drop replace the tree, purge and undo remove records. Caller holds t.mu.
//
// Invariant: a record is in t.pk exactly while its head is not nil. Undo
// and purge empty the head before removing a record; truncate and drop
// empty the head of every record of the tree they replace (forgetRecords).
// So membership needs no tree lookup (one per write and per purged record
// before: 6% of the server's CPU under TPC-C).
func (t *Table) holds(r *record) bool {
	return r.head != nil
}

// forgetRecords empties the head of every record of tree, which is leaving
// its table (truncate, drop), so holds reports them gone. Caller holds t.mu
// for writing.
func forgetRecords(tree *pkTree) {
	tree.Scan(func(r *record) bool {
		r.head = nil
		return true
	})
}

// addEntries indexes version row of r in every secondary index. Caller holds
// t.mu for writing.
func (t *Table) addEntries(r *record, keys [][]byte) {
	for i, s := range t.secs {
		s.add(keys[i], r)
	}
}

// dropEntryUnlessUsed removes index i's entry for key from r unless a
// version still in r's chain has that key. Caller holds t.mu for writing.
func (t *Table) dropEntryUnlessUsed(i int, r *record, key []byte) {
	s := t.secs[i]
	for v := r.head; v != nil; v = v.prev {
		if !v.del && s.hasKey(v.row, key) {
			return
		}
	}
	ek := entryKey(key, r.key)
	if _, ok := s.tree.Delete(secEntry{key: keyStr(ek)}); ok {
		t.gapRemoved(i, ek)
	}
}

// liveConflict reports whether unique index i has a live row other than self
// whose newest version has key. Caller holds t.mu.
func (t *Table) liveConflict(i int, key []byte, self *record) []byte {
	s := t.secs[i]
	var found []byte
	s.tree.Ascend(secEntry{key: keyStr(key)}, func(e secEntry) bool {
		if !bytes.HasPrefix(e.bytes(), key) {
			return false // past the key: index keys are self-delimiting
		}
		if e.rec == self || e.rec.head == nil || e.rec.head.del {
			return true
		}
		if s.hasKey(e.rec.head.row, key) {
			found = e.rec.head.row
			return false
		}
		return true
	})
	return found
}
