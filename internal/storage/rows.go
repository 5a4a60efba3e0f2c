package storage

import (
	"encoding/binary"

	"lockstep/internal/storage/ptree"
	"lockstep/internal/storage/slab"
	"lockstep/internal/txn"
)

// Rows by slot (docs/coldrows.md). A row is a slot number for its whole
// life. The slot record is pointer-free and lives in chunks of up to 4,096
// slots; the row's primary key, its base version's bytes and its
// secondary entry keys are items in the table's slab arena; the trees hold
// slot numbers (clustered) and item locations (secondary). Only a row with
// versions newer than its base has Go objects: a chain of *version in
// t.rs.chains. So the garbage collector marks a handful of large chunks and
// the chains of recently changed rows, not three objects and a dozen
// pointers per row.
//
// Invariants (beside docs/storage.md's):
//
//  1. A row's versions, newest first, are its chain (if slotChain) and then
//     its base. The base is the oldest version kept; it is written when the
//     row is made, when purge folds a chain version into it and when
//     Rewrite converts it, under the write latch, never otherwise. A row always has a base while its slot
//     is live.
//  2. A slot is live exactly while its row is in the clustered index. A slot
//     is reused only after its row was removed, with a higher generation; a
//     table's slot store is replaced (truncate, drop, re-key) with
//     generations above every one handed out before. So a holder of a rref
//     across a latch release (undo, purge, cursor candidates) sees its row
//     gone — t.holds false — instead of another row.
//  3. Items are never written after they are published and never reused
//     (package slab), so a row or key slice read under the latch stays
//     valid and unchanged after the latch is released.
//  4. Every item starts with a tag and its slot (itemHdr bytes), so
//     compaction can repoint whatever refers to a moved item.

// rref is a reference to a row: its slot and the slot's generation.
type rref uint64

func mkRef(slot, gen uint32) rref { return rref(uint64(gen)<<32 | uint64(slot)) }
func (r rref) slot() uint32       { return uint32(r) }
func (r rref) gen() uint32        { return uint32(r >> 32) }

const (
	slotLive  = 1 << 0 // the row is in the clustered index
	slotDel   = 1 << 1 // the base version is a delete-mark
	slotChain = 1 << 2 // the row has versions newer than its base
)

// slot is a row's pointer-free record.
type slot struct {
	key   slab.Loc // item: the primary key
	row   slab.Loc // item: the base version's row (0 when it is a delete-mark)
	trx   txn.ID   // the base version's writer
	stmt  uint32   // the base version's statement number
	gen   uint32
	flags uint8
}

// slotChunkLen is the slots per chunk. A table's last chunk grows by
// appends (a small table holds a few slots, not a chunk); a full chunk is
// never reallocated. Only newRow grows a chunk, and nobody holds a *slot
// across it.
const slotChunkLen = 4096

// Item tags (the first two bytes of an item).
const (
	tagRow   = 0
	tagKey   = 1
	tagEntry = 2 // + the secondary index's id
	itemHdr  = 6 // tag (2 bytes) and slot (4 bytes), little-endian
)

// rowStore is a table's rows: slots, chains and the arena of their bytes.
type rowStore struct {
	arena  *slab.Arena
	chunks [][]slot // each of capacity up to slotChunkLen
	next   uint32   // slots handed out so far
	free   []uint32 // removed rows' slots, for reuse
	chains map[uint32]*version
}

func newRowStore() *rowStore {
	return &rowStore{arena: slab.New(0), chains: map[uint32]*version{}}
}

// sl returns slot s's record. Caller holds t.mu.
func (t *Table) sl(s uint32) *slot { return &t.rs.chunks[s/slotChunkLen][s%slotChunkLen] }

// holds reports whether r is still a row of t (invariant 2). Caller holds
// t.mu.
func (t *Table) holds(r rref) bool {
	s := r.slot()
	if s >= t.rs.next {
		return false
	}
	sl := t.sl(s)
	return sl.flags&slotLive != 0 && sl.gen == r.gen()
}

// ref returns the current reference of live slot s. Caller holds t.mu.
func (t *Table) ref(s uint32) rref { return mkRef(s, t.sl(s).gen) }

// item returns the payload of the item at l. Caller holds t.mu.
func (t *Table) item(l slab.Loc) []byte { return t.rs.arena.Bytes(l)[itemHdr:] }

// entryAt returns the entry key of the secondary entry item at l and the
// slot it names, reading the item once. Caller holds t.mu.
func (t *Table) entryAt(l slab.Loc) (ek []byte, slot uint32) {
	b := t.rs.arena.Bytes(l)
	return b[itemHdr:], binary.LittleEndian.Uint32(b[2:])
}

// putItem stores payload (the concatenation of parts) as an item of slot s
// with tag. Caller holds t.mu for writing.
func (t *Table) putItem(tag uint16, s uint32, parts ...[]byte) slab.Loc {
	n := itemHdr
	for _, p := range parts {
		n += len(p)
	}
	loc, b := t.rs.arena.Alloc(n)
	binary.LittleEndian.PutUint16(b, tag)
	binary.LittleEndian.PutUint32(b[2:], s)
	off := itemHdr
	for _, p := range parts {
		off += copy(b[off:], p)
	}
	return loc
}

// pkOf returns slot s's primary key. Caller holds t.mu.
func (t *Table) pkOf(s uint32) []byte { return t.item(t.sl(s).key) }

// pkResolver and secResolver are the trees' key resolvers.
func (t *Table) pkResolver(ref uint64) []byte  { return t.pkOf(uint32(ref)) }
func (t *Table) secResolver(ref uint64) []byte { return t.item(slab.Loc(ref)) }

func (t *Table) newPKTree() *ptree.Tree  { return ptree.New(t.pkResolver) }
func (t *Table) newSecTree() *ptree.Tree { return ptree.New(t.secResolver) }

// base returns slot s's base version (its prev is nil). Caller holds t.mu.
func (t *Table) base(s uint32) version {
	sl := t.sl(s)
	v := version{trx: sl.trx, stmt: sl.stmt, del: sl.flags&slotDel != 0}
	if !v.del {
		v.row = t.item(sl.row)
	}
	return v
}

// chain returns slot s's newest chain version, or nil. Caller holds t.mu.
func (t *Table) chain(s uint32) *version {
	if t.sl(s).flags&slotChain == 0 {
		return nil
	}
	return t.rs.chains[s]
}

// head returns slot s's newest version. Caller holds t.mu.
func (t *Table) head(s uint32) version {
	if c := t.chain(s); c != nil {
		return *c
	}
	return t.base(s)
}

// vwalk walks a row's versions newest first: its chain, then its base.
type vwalk struct {
	t    *Table
	s    uint32
	v    *version // next chain version; nil: the base is next
	done bool
	b    version // the base, once reached
}

// walk starts a walk over slot s's versions. Caller holds t.mu.
func (t *Table) walk(s uint32) vwalk { return vwalk{t: t, s: s, v: t.chain(s)} }

// next returns the next version, or nil after the base. The base is
// returned as a pointer into the walk (valid until the walk is dropped);
// chain versions as themselves.
func (w *vwalk) next() *version {
	if w.v != nil {
		v := w.v
		w.v = v.prev
		return v
	}
	if w.done {
		return nil
	}
	w.done = true
	w.b = w.t.base(w.s)
	return &w.b
}

// newRow makes a row with primary key pk whose base (and only) version is
// v, files it in the clustered index and files v in every secondary index
// under keys[i] (v's key in index i; keys nil: the caller files it).
// Caller holds t.mu for writing.
func (t *Table) newRow(pk []byte, keys [][]byte, v version) rref {
	rs := t.rs
	var s uint32
	var sl *slot
	if k := len(rs.free); k > 0 {
		s = rs.free[k-1]
		rs.free = rs.free[:k-1]
		sl = t.sl(s)
	} else {
		s = rs.next
		if int(s/slotChunkLen) == len(rs.chunks) {
			rs.chunks = append(rs.chunks, make([]slot, 0, 16))
		}
		c := &rs.chunks[s/slotChunkLen]
		if len(*c) == cap(*c) { // double, up to a whole chunk
			g := make([]slot, len(*c), min(2*cap(*c), slotChunkLen))
			copy(g, *c)
			*c = g
		}
		*c = append(*c, slot{})
		rs.next++
		sl = t.sl(s)
		sl.gen = t.genBase
	}
	sl.key = t.putItem(tagKey, s, pk)
	sl.trx, sl.stmt, sl.flags, sl.row = v.trx, v.stmt, slotLive, 0
	if v.del {
		sl.flags |= slotDel
	} else {
		sl.row = t.putItem(tagRow, s, v.row)
	}
	t.pk.Set(pk, uint64(s))
	if !v.del && keys != nil {
		for i := range t.secs {
			t.addEntry(i, keys[i], s, pk)
		}
	}
	return mkRef(s, sl.gen)
}

// push makes v the newest version of slot s. Caller holds t.mu for writing.
func (t *Table) push(s uint32, v *version) {
	sl := t.sl(s)
	v.prev = nil
	if sl.flags&slotChain != 0 {
		v.prev = t.rs.chains[s]
	}
	t.rs.chains[s] = v
	sl.flags |= slotChain
}

// popHead removes slot s's newest chain version; it reports false when the
// row has no chain (its base is its newest version). Caller holds t.mu for
// writing.
func (t *Table) popHead(s uint32) bool {
	sl := t.sl(s)
	if sl.flags&slotChain == 0 {
		return false
	}
	if h := t.rs.chains[s]; h.prev == nil {
		t.dropChain(s)
	} else {
		t.rs.chains[s] = h.prev
	}
	return true
}

// dropChain forgets slot s's chain: its base is its newest version again.
// Caller holds t.mu for writing.
func (t *Table) dropChain(s uint32) {
	delete(t.rs.chains, s)
	t.sl(s).flags &^= slotChain
}

// removeRow takes slot s's row out of the table: out of the clustered
// index (its secondary entries must be gone already), its items freed,
// the slot free for reuse with the next generation. Caller holds t.mu for
// writing.
func (t *Table) removeRow(s uint32) {
	sl := t.sl(s)
	pk := t.pkOf(s)
	t.pk.Delete(pk)
	t.gapRemoved(PrimaryIndex, pk)
	a := t.rs.arena
	a.Free(sl.key)
	if sl.flags&slotDel == 0 {
		a.Free(sl.row)
	}
	if sl.flags&slotChain != 0 {
		delete(t.rs.chains, s)
	}
	gen := sl.gen + 1
	*sl = slot{gen: gen}
	if gen > t.genBase {
		t.genBase = gen // every generation handed out is <= genBase
	}
	t.rs.free = append(t.rs.free, s)
}

// setBase makes v slot s's base version (purge folding a chain into it;
// re-writing rows). Caller holds t.mu for writing.
func (t *Table) setBase(s uint32, v *version) {
	sl := t.sl(s)
	if sl.flags&slotDel == 0 {
		t.rs.arena.Free(sl.row)
	}
	sl.trx, sl.stmt, sl.row = v.trx, v.stmt, 0
	if v.del {
		sl.flags |= slotDel
	} else {
		sl.flags &^= slotDel
		sl.row = t.putItem(tagRow, s, v.row)
	}
}

// entryKeyIn builds index key || pk in the table's scratch buffer (valid
// until the next call). Caller holds t.mu for writing.
func (t *Table) entryKeyIn(key, pk []byte) []byte {
	t.ekBuf = append(append(t.ekBuf[:0], key...), pk...)
	return t.ekBuf
}

// addEntry files slot s (primary key pk) in index i under key, unless the
// entry is there. Caller holds t.mu for writing.
func (t *Table) addEntry(i int, key []byte, s uint32, pk []byte) {
	t.addEntryTo(t.secs[i], key, s, pk)
}

// addEntryTo is addEntry for an index that may not be in t.secs yet.
func (t *Table) addEntryTo(sx *secIndex, key []byte, s uint32, pk []byte) {
	ek := t.entryKeyIn(key, pk)
	if _, ok := sx.tree.Get(ek); ok {
		return
	}
	loc := t.putItem(tagEntry+sx.id, s, key, pk)
	sx.tree.Set(t.item(loc), uint64(loc))
}

// dropEntry removes index i's entry key || pk, if it is there. Caller holds
// t.mu for writing.
func (t *Table) dropEntry(i int, key, pk []byte) {
	ek := t.entryKeyIn(key, pk)
	if old, ok := t.secs[i].tree.Delete(ek); ok {
		t.gapRemoved(i, ek)
		t.rs.arena.Free(slab.Loc(old))
	}
}

// freeEntries frees the items of every entry of tree (an index leaving the
// table). Caller holds t.mu for writing.
func (t *Table) freeEntries(tree *ptree.Tree) {
	tree.Scan(func(ref uint64) bool {
		t.rs.arena.Free(slab.Loc(ref))
		return true
	})
}

// newStore gives the table an empty row store and clustered index: every
// rref handed out before stops being held (invariant 2). The secondary
// indexes are the caller's (resetRows empties them, Rekey makes new ones).
// Caller holds t.mu for writing.
func (t *Table) newStore() {
	t.rs, t.pk = newRowStore(), t.newPKTree()
	t.genBase++ // above every generation of the old store
}

// resetRows empties the table (truncate, drop). Caller holds t.mu for
// writing.
func (t *Table) resetRows() {
	t.newStore()
	for _, s := range t.secs {
		s.tree = t.newSecTree()
	}
}
