package storage

import (
	"unsafe"

	"github.com/tidwall/btree"
)

// pkTree is a table's clustered index: its records in primary key order.
//
// An entry holds the key's slice header beside the record pointer, so a
// comparison during a descent reads the key bytes directly; with only the
// record pointer in the node, every comparison first loaded the record to
// find its key — a second cache miss per comparison on a table larger than
// the caches (about a quarter of a lookup's time in a micro-benchmark of
// 1.2M TPC-C order-line keys: docs/storage.md). The cost is 24 bytes per
// row. The key is the record's own (never copied, never changed), held as
// a string header (keyStr): 16 bytes instead of a slice's 24, so an entry
// is 24 bytes.
type pkTree struct {
	t *btree.BTreeG[pkEntry]
}

type pkEntry struct {
	key string // == keyStr(rec.key)
	rec *record
}

func pkLess(a, b pkEntry) bool { return a.key < b.key }

// keyStr views key bytes as a string without copying, for the trees'
// entries (a string header is 16 bytes, a slice header 24; entries are
// the bulk of a tree's nodes) and their search probes. It is safe because
// storage never modifies key bytes once made (docs/storage.md, "Key
// contract"), and string order is bytes.Compare order.
func keyStr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// strKey gives back the bytes of a key keyStr made (nil for an empty key).
func strKey(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func newPKTree() *pkTree {
	return &pkTree{t: btree.NewBTreeGOptions(pkLess, btree.Options{NoLocks: true, Degree: 64})}
}

// Get returns the record of key, or nil.
func (p *pkTree) Get(key []byte) *record {
	e, ok := p.t.Get(pkEntry{key: keyStr(key)})
	if !ok {
		return nil
	}
	return e.rec
}

// Set adds r, replacing a record with the same key; it returns the record
// replaced, if any.
func (p *pkTree) Set(r *record) (prev *record, replaced bool) {
	e, replaced := p.t.Set(pkEntry{key: keyStr(r.key), rec: r})
	return e.rec, replaced
}

// Delete removes the record with r's key.
func (p *pkTree) Delete(r *record) { p.t.Delete(pkEntry{key: keyStr(r.key)}) }

// Len is the number of records.
func (p *pkTree) Len() int { return p.t.Len() }

// Scan calls fn for every record in key order until it returns false.
func (p *pkTree) Scan(fn func(*record) bool) {
	p.t.Scan(func(e pkEntry) bool { return fn(e.rec) })
}

// Reverse is Scan in descending key order.
func (p *pkTree) Reverse(fn func(*record) bool) {
	p.t.Reverse(func(e pkEntry) bool { return fn(e.rec) })
}

// Ascend calls fn for the records from key start upwards.
func (p *pkTree) Ascend(start []byte, fn func(*record) bool) {
	p.t.Ascend(pkEntry{key: keyStr(start)}, func(e pkEntry) bool { return fn(e.rec) })
}

// Descend calls fn for the records from key start downwards (start
// included).
func (p *pkTree) Descend(start []byte, fn func(*record) bool) {
	p.t.Descend(pkEntry{key: keyStr(start)}, func(e pkEntry) bool { return fn(e.rec) })
}
