package ptree

import "unsafe"

// Set adds key with ref, or gives an existing key the new ref and returns
// the old one. keyOf(ref) must return key.
func (t *Tree) Set(key []byte, ref uint64) (old uint64, replaced bool) {
	old, replaced, right, up := t.insert(t.root, t.height, key, ref)
	if right != nil {
		r := new(inner)
		r.kids[0], r.kids[1] = t.root, right
		r.setFrom(&up)
		r.sep[0] = t.encode(&up, int(r.plen))
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
func (t *Tree) insert(n unsafe.Pointer, h int, key []byte, ref uint64) (old uint64, replaced bool, right unsafe.Pointer, up kbuf) {
	if h == 0 {
		l := (*leaf)(n)
		i, found := t.find(&l.hdr, l.e[:l.n], key)
		if found {
			old = l.e[i].ref
			l.e[i].ref = ref
			return old, true, nil, up
		}
		t.admitKey(&l.hdr, l.e[:l.n], key)
		e := entry{window(key, int(l.plen)), ref}
		if int(l.n) < t.maxLeaf {
			copy(l.e[i+1:l.n+1], l.e[i:l.n])
			l.e[i] = e
			l.n++
			return 0, false, nil, up
		}
		r := t.splitLeaf(l, i, e)
		return 0, false, unsafe.Pointer(r), r.decode(r.e[0])
	}
	in := (*inner)(n)
	i, sep := t.child(in, key)
	if sep {
		in.sep[i-1].ref = ref // invariant 1; the leaf entry is replaced below
	}
	old, replaced, right, up = t.insert(in.kids[i], h-1, key, ref)
	if right == nil {
		return old, replaced, nil, up
	}
	t.admit(&in.hdr, in.sep[:in.n], &up)
	e := t.encode(&up, int(in.plen))
	if int(in.n) < t.maxInner {
		copy(in.sep[i+1:in.n+1], in.sep[i:in.n])
		copy(in.kids[i+2:in.n+2], in.kids[i+1:in.n+1])
		in.sep[i] = e
		in.kids[i+1] = right
		in.n++
		return old, replaced, nil, kbuf{}
	}
	r, mid := t.splitInner(in, i, e, right)
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

// splitLeaf inserts e (encoded for l's prefix) at i into the full leaf l,
// moving the upper part into a new leaf, which it returns. Both halves
// keep l's prefix, then grow theirs.
func (t *Tree) splitLeaf(l *leaf, i int, e entry) *leaf {
	var tmp [leafCap + 1]entry
	copy(tmp[:i], l.e[:i])
	tmp[i] = e
	copy(tmp[i+1:], l.e[i:l.n])
	total := int(l.n) + 1
	s := splitPoint(i, total)
	r := new(leaf)
	r.hdr = l.hdr
	r.n = uint16(copy(r.e[:], tmp[s:total]))
	l.n = uint16(copy(l.e[:], tmp[:s]))
	t.grow(&l.hdr, l.e[:l.n])
	t.grow(&r.hdr, r.e[:r.n])
	t.leaves++
	return r
}

// splitInner inserts separator e (encoded for in's prefix) at i and child
// right at i+1 into the full inner node in, moving the upper part into a
// new node; it returns that node and the separator that goes up (the new
// node's smallest key).
func (t *Tree) splitInner(in *inner, i int, e entry, right unsafe.Pointer) (*inner, kbuf) {
	var seps [innerCap + 1]entry
	var kids [innerCap + 2]unsafe.Pointer
	copy(seps[:i], in.sep[:i])
	seps[i] = e
	copy(seps[i+1:], in.sep[i:in.n])
	copy(kids[:i+1], in.kids[:i+1])
	kids[i+1] = right
	copy(kids[i+2:], in.kids[i+1:in.n+1])
	total := int(in.n) + 1 // separators
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
	mid := in.decode(seps[m])
	r := new(inner)
	r.hdr = in.hdr
	r.n = uint16(copy(r.sep[:], seps[m+1:total]))
	copy(r.kids[:], kids[m+1:total+1])
	in.n = uint16(copy(in.sep[:], seps[:m]))
	copy(in.kids[:], kids[:m+1])
	clear(in.kids[m+1:])
	t.grow(&in.hdr, in.sep[:in.n])
	t.grow(&r.hdr, r.sep[:r.n])
	t.inners++
	return r, mid
}
