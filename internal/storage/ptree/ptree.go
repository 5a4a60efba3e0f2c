// Package ptree is an ordered index (a B+tree) whose entries hold no
// pointers, for table data laid out for the garbage collector (DESIGN
// principle 5; docs/storage.md, "Memory per row").
//
// The tree stores a caller's handle of each key, a Ref (for example a
// slab.Loc of the item that holds the key and its row), and a few bytes of
// the key; never the whole key. When those bytes do not decide a
// comparison, the tree asks the resolver given to New, keyOf(ref), for the
// entry's key and compares with bytes.Compare. The order is bytes.Compare
// of full keys.
//
// # Entries
//
// Every node holds a prefix: bytes (at most 29) that every key under it
// starts with — a leaf's entries' keys, an inner node's separators' keys.
// An entry is two words: a window, the key's next 7 bytes after its node's
// prefix (big-endian, zero-padded) with a length code in the low byte (how
// many bytes follow the prefix, 0-7, or 8 for "more than 7"), and the
// Ref. Windows of one node compare as their keys do (a key shorter than
// another's window is a prefix of the other, so it is smaller; the code
// orders it first), except that two equal windows with the code 8 tie:
// only then is a key resolved. A search compares its key with a node's
// prefix first (below or above it: the first or the past-the-end position,
// no entry read) and then its own window with the entries'. So a lookup of
// a key at most 7 bytes longer than its nodes' prefixes resolves nothing —
// a 9-byte integer key in a leaf of consecutive ids, a secondary entry key
// (index key || primary key) in a leaf of one index value.
//
// Prefixes change with the keys: a key that shares less of a node's prefix
// cuts it (the bytes cut go to the front of the windows; nothing is
// resolved), and a split lengthens each half's prefix to what its first
// and last keys share, when that is free (every window holds the rest of
// its key) or adds at least 4 bytes (then entries with the code 8 are
// resolved once each). Entries move between nodes (splits, borrows,
// merges, separators going up) re-encoded for their new node.
//
// # Memory layout
//
// A leaf holds only its header (count, prefix length, prefix: 32 bytes)
// and an array of entries: it has no pointer, so the GC allocates it in a
// no-scan span and never reads it. An inner node puts its child pointers
// first and its header and separators last; the GC scans an object only
// up to its last pointer word, so of an inner node it reads the child
// array (TestLayout checks both). Leaves hold up to 126 entries (2,048
// bytes, the 2 KiB size class), inner nodes up to 83 separators and 84
// children (2,032 bytes).
//
// Fill. A full leaf that receives a key at its right end splits there (the
// old leaf stays full, the new one holds the key), at its left end likewise,
// and in the middle otherwise — or, within the middle third, between two
// runs of keys that share more than the node's prefix (one value of a
// low-cardinality index each), so that each half's prefix grows over its
// run (boundary); inner nodes alike, except that each side keeps at least
// one separator. Keys inserted in ascending (or descending) order leave
// every leaf but the last full; random inserts leave leaves about 70%
// full. TestFill logs both (2026-11-28, 100k 9-byte keys: ascending and
// descending 99.96% leaf fill, 16.5 bytes of nodes per entry; random
// 70.1%, 23.5 bytes per entry; with 8-byte prefixes and 127-entry leaves
// it was 16.3 and 23.4). Deletes rebalance: a node that falls below half
// full borrows from a sibling that can spare an item or merges with it.
//
// # Invariants
//
//  1. Every separator in an inner node is a key that is in the tree — the
//     smallest key of the subtree to its right — and carries the same Ref
//     as that key's leaf entry. Set (replacing), Repoint and Delete keep it,
//     so the tree never resolves a Ref that is no longer one of its keys.
//  2. Every Ref in the tree resolves (keyOf) to its key for as long as it
//     is in the tree: a caller frees a key's storage only after Delete,
//     Set (replacing) or Repoint returned the old Ref.
//  3. All leaves are at the same depth; a leaf other than the root is not
//     empty; an inner node other than the root has at least one separator
//     (two children), the root at least one while it is an inner node.
//  4. No locking: callers serialise writers against everything else (a
//     table latch). fn of Ascend, Descend, Scan and Reverse must not modify
//     the tree.
//  5. Every key of a non-empty node starts with the node's prefix, and
//     every entry's window is its key's window after that prefix (check in
//     the tests verifies both on every node).
//
// Searches (Get, Set, Delete, Repoint, the start of an iteration) take the
// key as a []byte and allocate nothing.
package ptree

import (
	"bytes"
	"unsafe"
)

const (
	leafCap  = 126
	innerCap = 83
	// maxDepth is the depth an iteration's stack holds without growing.
	maxDepth = 24
)

// leaf is a leaf node: no pointers (see the package comment).
type leaf struct {
	hdr
	e [leafCap]entry
}

// inner is an inner node: child pointers first, then the header and the
// separators. Child i holds the keys k with sep[i-1] <= k < sep[i].
// Children are *leaf when the node is at height 1, *inner above.
type inner struct {
	kids [innerCap + 1]unsafe.Pointer
	hdr  // n separators; n+1 children
	sep  [innerCap]entry
}

// Tree is the index. The zero value is not usable; call New.
type Tree struct {
	root     unsafe.Pointer // *leaf when height is 0, else *inner
	height   int
	n        int
	keyOf    func(ref uint64) []byte
	maxLeaf  int // entries per leaf, <= leafCap (smaller under tests)
	maxInner int // separators per inner node, <= innerCap
	leaves   int
	inners   int
}

// New returns an empty tree whose entries' keys keyOf resolves.
func New(keyOf func(ref uint64) []byte) *Tree { return newTree(keyOf, leafCap, innerCap) }

// newTree is New with smaller nodes (tests: splits and merges at small
// sizes). maxLeaf >= 2, maxInner >= 2.
func newTree(keyOf func(ref uint64) []byte, maxLeaf, maxInner int) *Tree {
	return &Tree{root: unsafe.Pointer(new(leaf)), keyOf: keyOf, maxLeaf: maxLeaf, maxInner: maxInner, leaves: 1}
}

func (t *Tree) minLeaf() int  { return t.maxLeaf / 2 }
func (t *Tree) minInner() int { return t.maxInner / 2 }

// find returns the index of the first entry of es (h's entries) not below
// key, and whether it is key.
func (t *Tree) find(h *hdr, es []entry, key []byte) (int, bool) {
	c, w := h.probe(key)
	if c < 0 {
		return 0, false
	}
	if c > 0 {
		return len(es), false
	}
	lo, hi := 0, len(es)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		ew := es[m].w
		if w == ew {
			if w&0xff != more {
				return m, true
			}
			c = bytes.Compare(key, t.keyOf(es[m].ref))
			if c == 0 {
				return m, true
			}
		} else if w > ew {
			c = 1
		} else {
			c = -1
		}
		if c > 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, false
}

// child returns the index of the child of in whose range holds key, and
// whether key is a separator (then it is sep[i-1]).
func (t *Tree) child(in *inner, key []byte) (int, bool) {
	i, found := t.find(&in.hdr, in.sep[:in.n], key)
	if found {
		return i + 1, true
	}
	return i, false
}

// Len is the number of entries.
func (t *Tree) Len() int { return t.n }

// Get returns the Ref of key.
func (t *Tree) Get(key []byte) (uint64, bool) {
	n := t.root
	for h := t.height; h > 0; h-- {
		in := (*inner)(n)
		i, sep := t.child(in, key)
		if sep { // invariant 1: the separator is the key, with its Ref
			return in.sep[i-1].ref, true
		}
		n = in.kids[i]
	}
	l := (*leaf)(n)
	if i, ok := t.find(&l.hdr, l.e[:l.n], key); ok {
		return l.e[i].ref, true
	}
	return 0, false
}

// Repoint gives key the Ref ref (keyOf(ref) must return key) and returns
// the old one: a compaction moved the key's storage.
func (t *Tree) Repoint(key []byte, ref uint64) (old uint64, ok bool) {
	n := t.root
	for h := t.height; h > 0; h-- {
		in := (*inner)(n)
		i, sep := t.child(in, key)
		if sep {
			in.sep[i-1].ref = ref
		}
		n = in.kids[i]
	}
	l := (*leaf)(n)
	i, found := t.find(&l.hdr, l.e[:l.n], key)
	if !found {
		return 0, false
	}
	old = l.e[i].ref
	l.e[i].ref = ref
	return old, true
}
