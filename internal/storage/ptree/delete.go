package ptree

import "unsafe"

// Delete removes key and returns its Ref.
func (t *Tree) Delete(key []byte) (uint64, bool) {
	ref, ok, wasSep := t.remove(t.root, t.height, key)
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
		t.fixSep(key)
	}
	return ref, true
}

// remove deletes key under node n at height h, rebalancing the children it
// passed through. wasSep reports that key was a separator on the way.
func (t *Tree) remove(n unsafe.Pointer, h int, key []byte) (ref uint64, ok, wasSep bool) {
	if h == 0 {
		l := (*leaf)(n)
		i, found := t.find(&l.hdr, l.e[:l.n], key)
		if !found {
			return 0, false, false
		}
		ref = l.e[i].ref
		copy(l.e[i:], l.e[i+1:l.n])
		l.n--
		return ref, true, false
	}
	in := (*inner)(n)
	i, sep := t.child(in, key)
	ref, ok, wasSep = t.remove(in.kids[i], h-1, key)
	if ok {
		t.rebalance(in, i, h-1)
	}
	return ref, ok, wasSep || sep
}

// fixSep replaces the separator equal to key (just deleted from the
// leaves; its Ref still resolves until Delete returns) with the smallest
// key of the subtree to its right (invariant 1).
func (t *Tree) fixSep(key []byte) {
	n := t.root
	for h := t.height; h > 0; h-- {
		in := (*inner)(n)
		i, sep := t.child(in, key)
		if sep {
			c := in.kids[i]
			for hh := h - 1; hh > 0; hh-- {
				c = (*inner)(c).kids[0]
			}
			l := (*leaf)(c)
			k := l.decode(l.e[0])
			t.setSep(in, i-1, &k)
			return
		}
		n = in.kids[i]
	}
}

// setSep makes k separator j of in, cutting in's prefix if k does not
// share it.
func (t *Tree) setSep(in *inner, j int, k *kbuf) {
	t.admit(&in.hdr, in.sep[:in.n], k)
	in.sep[j] = t.encode(k, int(in.plen))
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
	if int(c.n) >= t.minLeaf() && c.n > 0 {
		return
	}
	if i > 0 {
		if l := (*leaf)(in.kids[i-1]); int(l.n) > t.minLeaf() {
			k := l.decode(l.e[l.n-1])
			l.n--
			t.admit(&c.hdr, c.e[:c.n], &k)
			copy(c.e[1:c.n+1], c.e[:c.n])
			c.e[0] = t.encode(&k, int(c.plen))
			c.n++
			t.setSep(in, i-1, &k)
			return
		}
	}
	if i < int(in.n) {
		if r := (*leaf)(in.kids[i+1]); int(r.n) > t.minLeaf() {
			k := r.decode(r.e[0])
			t.admit(&c.hdr, c.e[:c.n], &k)
			c.e[c.n] = t.encode(&k, int(c.plen))
			c.n++
			copy(r.e[:], r.e[1:r.n])
			r.n--
			k = r.decode(r.e[0])
			t.setSep(in, i, &k)
			return
		}
	}
	if i > 0 {
		t.mergeLeaf((*leaf)(in.kids[i-1]), c)
		t.removeAt(in, i-1)
	} else { // i == 0 < in.n: a child has a sibling (invariant 3)
		t.mergeLeaf(c, (*leaf)(in.kids[i+1]))
		t.removeAt(in, i)
	}
	t.leaves--
}

// mergeLeaf appends r's entries to l, cutting l's prefix to what both
// prefixes share.
func (t *Tree) mergeLeaf(l, r *leaf) {
	if r.n == 0 {
		return
	}
	if l.n == 0 {
		l.hdr = r.hdr
		copy(l.e[:], r.e[:r.n])
		return
	}
	if p := lcp(l.prefix(), r.prefix()); p < int(l.plen) {
		t.shrink(&l.hdr, l.e[:l.n], p)
	}
	for _, e := range r.e[:r.n] {
		k := r.decode(e)
		l.e[l.n] = t.encode(&k, int(l.plen)) // l's prefix is no longer than r's: nothing resolved
		l.n++
	}
}

func (t *Tree) rebalanceInner(in *inner, i int) {
	c := (*inner)(in.kids[i])
	if int(c.n) >= t.minInner() && c.n > 0 {
		return
	}
	if i > 0 {
		if l := (*inner)(in.kids[i-1]); int(l.n) > t.minInner() {
			k := in.decode(in.sep[i-1])
			t.admit(&c.hdr, c.sep[:c.n], &k)
			copy(c.sep[1:c.n+1], c.sep[:c.n])
			copy(c.kids[1:c.n+2], c.kids[:c.n+1])
			c.sep[0] = t.encode(&k, int(c.plen))
			c.kids[0] = l.kids[l.n]
			c.n++
			k = l.decode(l.sep[l.n-1])
			t.setSep(in, i-1, &k)
			l.kids[l.n] = nil
			l.n--
			return
		}
	}
	if i < int(in.n) {
		if r := (*inner)(in.kids[i+1]); int(r.n) > t.minInner() {
			k := in.decode(in.sep[i])
			t.admit(&c.hdr, c.sep[:c.n], &k)
			c.sep[c.n] = t.encode(&k, int(c.plen))
			c.kids[c.n+1] = r.kids[0]
			c.n++
			k = r.decode(r.sep[0])
			t.setSep(in, i, &k)
			copy(r.sep[:], r.sep[1:r.n])
			copy(r.kids[:], r.kids[1:r.n+1])
			r.kids[r.n] = nil
			r.n--
			return
		}
	}
	if i > 0 {
		k := in.decode(in.sep[i-1])
		t.mergeInner((*inner)(in.kids[i-1]), &k, c)
		t.removeAt(in, i-1)
	} else {
		k := in.decode(in.sep[i])
		t.mergeInner(c, &k, (*inner)(in.kids[i+1]))
		t.removeAt(in, i)
	}
	t.inners--
}

// mergeInner appends separator s and r's separators and children to l,
// cutting l's prefix to what s, l's and r's keys share.
func (t *Tree) mergeInner(l *inner, s *kbuf, r *inner) {
	t.admit(&l.hdr, l.sep[:l.n], s)
	if r.n > 0 {
		if p := lcp(l.prefix(), r.prefix()); p < int(l.plen) {
			t.shrink(&l.hdr, l.sep[:l.n], p)
		}
	}
	l.sep[l.n] = t.encode(s, int(l.plen))
	for j, e := range r.sep[:r.n] {
		k := r.decode(e)
		l.sep[int(l.n)+1+j] = t.encode(&k, int(l.plen)) // nothing resolved, as in mergeLeaf
	}
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
