// Package ptree is an ordered index (a B+tree) whose entries hold no
// pointers, for table data laid out for the garbage collector (DESIGN
// principle 5; docs/storage.md, "Memory per row").
//
// An entry is two words, Entry{Prefix, Ref}: Prefix is the key's first 8
// bytes read big-endian (zero-padded when the key is shorter), Ref is the
// caller's handle of the key (for example a slab.Loc of the item that holds
// the key and its row). The full key is never stored in the tree: when a
// probe's prefix ties with an entry's, the tree asks the resolver given to
// New, keyOf(ref), for the entry's key and compares with bytes.Compare. The
// order is bytes.Compare of full keys (zero padding keeps prefix order
// consistent with it: a < b implies Prefix(a) <= Prefix(b)).
//
// # Memory layout
//
// A leaf holds only a count and an array of entries: it has no pointer, so
// the GC allocates it in a no-scan span and never reads it. An inner node
// puts its child pointers first and its separators last; the GC scans an
// object only up to its last pointer word, so of an inner node it reads the
// child array (TestLayout checks both). Leaves hold up to 127 entries
// (2,040 bytes, the 2 KiB size class), inner nodes up to 84 separators and
// 85 children (2,032 bytes).
//
// Fill. A full leaf that receives a key at its right end splits there (the
// old leaf stays full, the new one holds the key), at its left end likewise,
// and in the middle otherwise; inner nodes alike, except that each side
// keeps at least one separator. Keys inserted in ascending (or descending)
// order leave every leaf but the last full; random inserts leave leaves
// about 70% full. TestFill logs both (2026-11-28, 100k keys: ascending and
// descending 99.9% leaf fill, 16.3 bytes of nodes per entry; random 69.6%,
// 23.4 bytes per entry). Deletes rebalance: a node that falls below half
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
//
// Searches (Get, Set, Delete, Repoint, the start of an iteration) take the
// key as a []byte and allocate nothing.
package ptree

import (
	"bytes"
	"encoding/binary"
	"unsafe"
)

// Entry is a leaf entry: the key's first 8 bytes and the caller's Ref.
type Entry struct {
	Prefix uint64
	Ref    uint64
}

// Prefix returns the first 8 bytes of key big-endian, zero-padded.
func Prefix(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var b [8]byte
	copy(b[:], key)
	return binary.BigEndian.Uint64(b[:])
}

const (
	leafCap  = 127
	innerCap = 84
	// maxDepth is the depth an iteration's stack holds without growing.
	maxDepth = 24
)

// leaf is a leaf node: no pointers (see the package comment).
type leaf struct {
	n int
	e [leafCap]Entry
}

// inner is an inner node: child pointers first, separators last. Child i
// holds the keys k with sep[i-1] <= k < sep[i]. Children are *leaf when
// the node is at height 1, *inner above.
type inner struct {
	kids [innerCap + 1]unsafe.Pointer
	n    int // separators; n+1 children
	sep  [innerCap]Entry
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

// cmp compares key (whose prefix is p) with e's key.
func (t *Tree) cmp(key []byte, p uint64, e Entry) int {
	switch {
	case p < e.Prefix:
		return -1
	case p > e.Prefix:
		return 1
	}
	return bytes.Compare(key, t.keyOf(e.Ref))
}

// find returns the index of the first entry of es not below key, and
// whether it is key.
func (t *Tree) find(es []Entry, key []byte, p uint64) (int, bool) {
	lo, hi := 0, len(es)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c := t.cmp(key, p, es[m])
		if c == 0 {
			return m, true
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
func (t *Tree) child(in *inner, key []byte, p uint64) (int, bool) {
	i, found := t.find(in.sep[:in.n], key, p)
	if found {
		return i + 1, true
	}
	return i, false
}

// Len is the number of entries.
func (t *Tree) Len() int { return t.n }

// Get returns the Ref of key.
func (t *Tree) Get(key []byte) (uint64, bool) {
	p := Prefix(key)
	n := t.root
	for h := t.height; h > 0; h-- {
		in := (*inner)(n)
		i, sep := t.child(in, key, p)
		if sep { // invariant 1: the separator is the key, with its Ref
			return in.sep[i-1].Ref, true
		}
		n = in.kids[i]
	}
	l := (*leaf)(n)
	if i, ok := t.find(l.e[:l.n], key, p); ok {
		return l.e[i].Ref, true
	}
	return 0, false
}

// Set adds key with ref, or gives an existing key the new ref and returns
// the old one. keyOf(ref) must return key.
func (t *Tree) Set(key []byte, ref uint64) (old uint64, replaced bool) {
	p := Prefix(key)
	old, replaced, right, up := t.insert(t.root, t.height, key, p, ref)
	if right != nil {
		r := new(inner)
		r.kids[0], r.kids[1] = t.root, right
		r.sep[0] = up
		r.n = 1
		t.root = unsafe.Pointer(r)
		t.height++
		t.inners++
	}
	if !replaced {
		t.n++
	}
	return old, replaced
}

// insert adds (key, ref) under node n at height h. When n split, right is
// the new node holding the upper part and up its smallest key.
func (t *Tree) insert(n unsafe.Pointer, h int, key []byte, p, ref uint64) (old uint64, replaced bool, right unsafe.Pointer, up Entry) {
	if h == 0 {
		l := (*leaf)(n)
		i, found := t.find(l.e[:l.n], key, p)
		if found {
			old = l.e[i].Ref
			l.e[i].Ref = ref
			return old, true, nil, Entry{}
		}
		e := Entry{Prefix: p, Ref: ref}
		if l.n < t.maxLeaf {
			copy(l.e[i+1:l.n+1], l.e[i:l.n])
			l.e[i] = e
			l.n++
			return 0, false, nil, Entry{}
		}
		r := t.splitLeaf(l, i, e)
		return 0, false, unsafe.Pointer(r), r.e[0]
	}
	in := (*inner)(n)
	i, sep := t.child(in, key, p)
	if sep {
		in.sep[i-1].Ref = ref // invariant 1; the leaf entry is replaced below
	}
	old, replaced, right, up = t.insert(in.kids[i], h-1, key, p, ref)
	if right == nil {
		return old, replaced, nil, Entry{}
	}
	if in.n < t.maxInner {
		copy(in.sep[i+1:in.n+1], in.sep[i:in.n])
		copy(in.kids[i+2:in.n+2], in.kids[i+1:in.n+1])
		in.sep[i] = up
		in.kids[i+1] = right
		in.n++
		return old, replaced, nil, Entry{}
	}
	r, mid := t.splitInner(in, i, up, right)
	return old, replaced, unsafe.Pointer(r), mid
}

// splitPoint is how many of a leaf's total entries (the full leaf's and
// the new one, inserted at i) stay in the left leaf: all the old ones when
// the new one is appended at the right end, only the new one when it goes
// to the left end, half otherwise.
func splitPoint(i, total int) int {
	switch i {
	case total - 1:
		return total - 1
	case 0:
		return 1
	}
	return total / 2
}

// splitLeaf inserts e at i into the full leaf l, moving the upper part into
// a new leaf, which it returns.
func (t *Tree) splitLeaf(l *leaf, i int, e Entry) *leaf {
	var tmp [leafCap + 1]Entry
	copy(tmp[:i], l.e[:i])
	tmp[i] = e
	copy(tmp[i+1:], l.e[i:l.n])
	total := l.n + 1
	s := splitPoint(i, total)
	r := new(leaf)
	r.n = copy(r.e[:], tmp[s:total])
	l.n = copy(l.e[:], tmp[:s])
	t.leaves++
	return r
}

// splitInner inserts separator up at i and child right at i+1 into the
// full inner node in, moving the upper part into a new node; it returns
// that node and the separator that goes up (the new node's smallest key).
func (t *Tree) splitInner(in *inner, i int, up Entry, right unsafe.Pointer) (*inner, Entry) {
	var seps [innerCap + 1]Entry
	var kids [innerCap + 2]unsafe.Pointer
	copy(seps[:i], in.sep[:i])
	seps[i] = up
	copy(seps[i+1:], in.sep[i:in.n])
	copy(kids[:i+1], in.kids[:i+1])
	kids[i+1] = right
	copy(kids[i+2:], in.kids[i+1:in.n+1])
	total := in.n + 1 // separators
	// Left keeps seps[:m] and kids[:m+1]; seps[m] goes up; right gets the
	// rest. Both keep at least one separator (two children), so a leaf
	// always has a sibling to borrow from or merge with (invariant 3): at
	// the right end the right node starts with the new child and the old
	// last one, at the left end the left node likewise.
	var m int
	switch i {
	case total - 1:
		m = total - 2
	case 0:
		m = 1
	default:
		m = total / 2
	}
	r := new(inner)
	r.n = copy(r.sep[:], seps[m+1:total])
	copy(r.kids[:], kids[m+1:total+1])
	in.n = copy(in.sep[:], seps[:m])
	copy(in.kids[:], kids[:m+1])
	clear(in.kids[m+1:])
	t.inners++
	return r, seps[m]
}

// Repoint gives key the Ref ref (keyOf(ref) must return key) and returns
// the old one: a compaction moved the key's storage.
func (t *Tree) Repoint(key []byte, ref uint64) (old uint64, ok bool) {
	p := Prefix(key)
	n := t.root
	for h := t.height; h > 0; h-- {
		in := (*inner)(n)
		i, sep := t.child(in, key, p)
		if sep {
			in.sep[i-1].Ref = ref
		}
		n = in.kids[i]
	}
	l := (*leaf)(n)
	i, found := t.find(l.e[:l.n], key, p)
	if !found {
		return 0, false
	}
	old = l.e[i].Ref
	l.e[i].Ref = ref
	return old, true
}

// Delete removes key and returns its Ref.
func (t *Tree) Delete(key []byte) (uint64, bool) {
	p := Prefix(key)
	ref, ok, wasSep := t.remove(t.root, t.height, key, p)
	if !ok {
		return 0, false
	}
	t.n--
	for t.height > 0 && (*inner)(t.root).n == 0 {
		t.root = (*inner)(t.root).kids[0]
		t.height--
		t.inners--
	}
	if wasSep {
		t.fixSep(key, p)
	}
	return ref, true
}

// remove deletes key under node n at height h, rebalancing the children it
// passed through. wasSep reports that key was a separator on the way.
func (t *Tree) remove(n unsafe.Pointer, h int, key []byte, p uint64) (ref uint64, ok, wasSep bool) {
	if h == 0 {
		l := (*leaf)(n)
		i, found := t.find(l.e[:l.n], key, p)
		if !found {
			return 0, false, false
		}
		ref = l.e[i].Ref
		copy(l.e[i:], l.e[i+1:l.n])
		l.n--
		return ref, true, false
	}
	in := (*inner)(n)
	i, sep := t.child(in, key, p)
	ref, ok, wasSep = t.remove(in.kids[i], h-1, key, p)
	if ok {
		t.rebalance(in, i, h-1)
	}
	return ref, ok, wasSep || sep
}

// fixSep replaces the separator equal to key (just deleted from the
// leaves) with the smallest key of the subtree to its right (invariant 1).
func (t *Tree) fixSep(key []byte, p uint64) {
	n := t.root
	for h := t.height; h > 0; h-- {
		in := (*inner)(n)
		i, sep := t.child(in, key, p)
		if sep {
			c := in.kids[i]
			for hh := h - 1; hh > 0; hh-- {
				c = (*inner)(c).kids[0]
			}
			in.sep[i-1] = (*leaf)(c).e[0]
			return
		}
		n = in.kids[i]
	}
}

// rebalance fixes child i of in (at height h) if it fell below half full:
// it borrows an item from a sibling that can spare one, or merges with a
// sibling.
func (t *Tree) rebalance(in *inner, i, h int) {
	if h == 0 {
		t.rebalanceLeaf(in, i)
	} else {
		t.rebalanceInner(in, i)
	}
}

func (t *Tree) rebalanceLeaf(in *inner, i int) {
	c := (*leaf)(in.kids[i])
	if c.n >= t.minLeaf() && c.n > 0 {
		return
	}
	if i > 0 {
		if l := (*leaf)(in.kids[i-1]); l.n > t.minLeaf() {
			copy(c.e[1:c.n+1], c.e[:c.n])
			c.e[0] = l.e[l.n-1]
			c.n++
			l.n--
			in.sep[i-1] = c.e[0]
			return
		}
	}
	if i < in.n {
		if r := (*leaf)(in.kids[i+1]); r.n > t.minLeaf() {
			c.e[c.n] = r.e[0]
			c.n++
			copy(r.e[:], r.e[1:r.n])
			r.n--
			in.sep[i] = r.e[0]
			return
		}
	}
	if i > 0 {
		l := (*leaf)(in.kids[i-1])
		l.n += copy(l.e[l.n:], c.e[:c.n])
		t.removeAt(in, i-1)
	} else { // i == 0 < in.n: a child has a sibling (invariant 3)
		r := (*leaf)(in.kids[i+1])
		c.n += copy(c.e[c.n:], r.e[:r.n])
		t.removeAt(in, i)
	}
	t.leaves--
}

func (t *Tree) rebalanceInner(in *inner, i int) {
	c := (*inner)(in.kids[i])
	if c.n >= t.minInner() && c.n > 0 {
		return
	}
	if i > 0 {
		if l := (*inner)(in.kids[i-1]); l.n > t.minInner() {
			copy(c.sep[1:c.n+1], c.sep[:c.n])
			copy(c.kids[1:c.n+2], c.kids[:c.n+1])
			c.sep[0] = in.sep[i-1]
			c.kids[0] = l.kids[l.n]
			c.n++
			in.sep[i-1] = l.sep[l.n-1]
			l.kids[l.n] = nil
			l.n--
			return
		}
	}
	if i < in.n {
		if r := (*inner)(in.kids[i+1]); r.n > t.minInner() {
			c.sep[c.n] = in.sep[i]
			c.kids[c.n+1] = r.kids[0]
			c.n++
			in.sep[i] = r.sep[0]
			copy(r.sep[:], r.sep[1:r.n])
			copy(r.kids[:], r.kids[1:r.n+1])
			r.kids[r.n] = nil
			r.n--
			return
		}
	}
	if i > 0 {
		mergeInner((*inner)(in.kids[i-1]), in.sep[i-1], c)
		t.removeAt(in, i-1)
	} else {
		mergeInner(c, in.sep[i], (*inner)(in.kids[i+1]))
		t.removeAt(in, i)
	}
	t.inners--
}

// mergeInner appends separator s and r's separators and children to l.
func mergeInner(l *inner, s Entry, r *inner) {
	l.sep[l.n] = s
	copy(l.sep[l.n+1:], r.sep[:r.n])
	copy(l.kids[l.n+1:], r.kids[:r.n+1])
	l.n += 1 + r.n
}

// removeAt removes separator j and child j+1 of in.
func (t *Tree) removeAt(in *inner, j int) {
	copy(in.sep[j:], in.sep[j+1:in.n])
	copy(in.kids[j+1:], in.kids[j+2:in.n+1])
	in.kids[in.n] = nil
	in.n--
}
