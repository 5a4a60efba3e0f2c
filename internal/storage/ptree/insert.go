package ptree

import (
	"math/bits"
	"unsafe"
)

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

// splitPoint is how many of a leaf's total entries es (the full leaf's
// and the new one, inserted at i) stay in the left leaf: all the old ones
// when the new one is appended at the right end, only the new one when it
// goes to the left end, otherwise half, or a point in the middle third
// where the halves' keys share more (see boundary).
func splitPoint(es []entry, i int) int {
	total := len(es)
	switch i {
	case total - 1:
		return total - 1
	case 0:
		return 1
	}
	return boundary(es, 0, max(1, total/3), total-total/3, total/2)
}

// boundary returns the split point s in [lo, hi] of es (a node's entries
// with the new one; the left node keeps es[:s], the right one es[s+gap:],
// gap 1 for an inner node whose es[s] goes up), mid unless another point
// helps searches: one that keeps a run of keys sharing a long prefix (one
// value of a low-cardinality index) in one node, whose prefix then grows
// over the run, where a split in the middle leaves a node spanning two
// runs, whose prefix stops before them and whose windows tie.
//
//   - When at least half the neighbours' windows tie (equal, code more:
//     the node's keys are runs longer than its prefix and window), the
//     point between neighbours that share the fewest window bytes, nearest
//     mid among equals: a boundary between runs.
//   - Otherwise the point whose halves share the most leading window bytes
//     within each (the shorter of the two counts), if that beats mid by 2
//     bytes or more. Random keys split in the middle (leaf fill as before).
func boundary(es []entry, gap, lo, hi, mid int) int {
	ties := 0
	for j := 1; j < len(es); j++ {
		if es[j].w == es[j-1].w && es[j].w&0xff == more {
			ties++
		}
	}
	best, bestDist := mid, 0
	if 2*ties >= len(es)-1 {
		bestShared := 9
		for s := lo; s <= hi; s++ {
			shared, dist := bits.LeadingZeros64(es[s-1].w^es[s].w)/8, abs(s-mid)
			if shared < bestShared || shared == bestShared && dist < bestDist {
				best, bestShared, bestDist = s, shared, dist
			}
		}
		return best
	}
	first, last := es[0].w, es[len(es)-1].w
	score := func(s int) int {
		return min(bits.LeadingZeros64(first^es[s-1].w), bits.LeadingZeros64(es[s+gap].w^last)) / 8
	}
	bestScore := score(mid) + 2
	for s := lo; s <= hi; s++ {
		sc, dist := score(s), abs(s-mid)
		if sc > bestScore || sc == bestScore && (best == mid || dist < bestDist) {
			best, bestScore, bestDist = s, sc, dist
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
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
	s := splitPoint(tmp[:total], i)
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
		m = boundary(seps[:total], 1, max(1, total/3), min(total-2, total-total/3), max(1, min(total-2, total/2)))
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
