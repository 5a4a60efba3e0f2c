package ptree

import "unsafe"

// frame is one inner node on an iteration's path and the child taken.
type frame struct {
	in *inner
	i  int
}

// Ascend calls fn with the Ref of every key from start upwards (start
// included) in key order, until fn returns false.
func (t *Tree) Ascend(start []byte, fn func(ref uint64) bool) {
	var buf [maxDepth]frame
	stack, l, i, _ := t.seek(buf[:0], start)
	t.ascend(stack, l, i, fn)
}

// seek descends to the leaf where key is or would be, recording the path
// on stack: the leaf, key's position in it and whether it is there.
func (t *Tree) seek(stack []frame, key []byte) ([]frame, *leaf, int, bool) {
	n := t.root
	for h := t.height; h > 0; h-- {
		in := (*inner)(n)
		i, _ := t.child(in, key)
		stack = append(stack, frame{in, i})
		n = in.kids[i]
	}
	l := (*leaf)(n)
	i, found := t.find(&l.hdr, l.e[:l.n], key)
	return stack, l, i, found
}

// Scan calls fn with every Ref in key order until fn returns false.
func (t *Tree) Scan(fn func(ref uint64) bool) {
	var buf [maxDepth]frame
	stack, n := t.leftmost(buf[:0], t.root, t.height)
	t.ascend(stack, (*leaf)(n), 0, fn)
}

// Descend calls fn with the Ref of every key from start downwards (start
// included) in descending key order, until fn returns false.
func (t *Tree) Descend(start []byte, fn func(ref uint64) bool) {
	var buf [maxDepth]frame
	stack, l, i, found := t.seek(buf[:0], start)
	if !found {
		i--
	}
	t.descend(stack, l, i, fn)
}

// Reverse calls fn with every Ref in descending key order until fn returns
// false.
func (t *Tree) Reverse(fn func(ref uint64) bool) {
	var buf [maxDepth]frame
	stack, n := t.rightmost(buf[:0], t.root, t.height)
	l := (*leaf)(n)
	t.descend(stack, l, int(l.n)-1, fn)
}

// leftmost pushes the path from n (at height h) to its first leaf.
func (t *Tree) leftmost(stack []frame, n unsafe.Pointer, h int) ([]frame, unsafe.Pointer) {
	for ; h > 0; h-- {
		in := (*inner)(n)
		stack = append(stack, frame{in, 0})
		n = in.kids[0]
	}
	return stack, n
}

// rightmost pushes the path from n (at height h) to its last leaf.
func (t *Tree) rightmost(stack []frame, n unsafe.Pointer, h int) ([]frame, unsafe.Pointer) {
	for ; h > 0; h-- {
		in := (*inner)(n)
		stack = append(stack, frame{in, int(in.n)})
		n = in.kids[in.n]
	}
	return stack, n
}

// ascend walks from entry i of leaf l (stack: its path) to the end.
func (t *Tree) ascend(stack []frame, l *leaf, i int, fn func(uint64) bool) {
	for {
		for ; i < int(l.n); i++ {
			if !fn(l.e[i].ref) {
				return
			}
		}
		for len(stack) > 0 && stack[len(stack)-1].i == int(stack[len(stack)-1].in.n) {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			return
		}
		top := &stack[len(stack)-1]
		top.i++
		var n unsafe.Pointer
		stack, n = t.leftmost(stack, top.in.kids[top.i], t.height-len(stack))
		l, i = (*leaf)(n), 0
	}
}

// descend walks from entry i of leaf l (stack: its path) to the start.
func (t *Tree) descend(stack []frame, l *leaf, i int, fn func(uint64) bool) {
	for {
		for ; i >= 0; i-- {
			if !fn(l.e[i].ref) {
				return
			}
		}
		for len(stack) > 0 && stack[len(stack)-1].i == 0 {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			return
		}
		top := &stack[len(stack)-1]
		top.i--
		var n unsafe.Pointer
		stack, n = t.rightmost(stack, top.in.kids[top.i], t.height-len(stack))
		l = (*leaf)(n)
		i = int(l.n) - 1
	}
}

// Stats describes a tree's memory.
type Stats struct {
	Len       int     // entries
	Leaves    int     // leaf nodes
	Inners    int     // inner nodes
	Bytes     int     // the nodes' size (each is allocated in the 2 KiB size class)
	LeafFill  float64 // entries / leaf capacity
	Height    int     // inner levels above the leaves
	LeafBytes int     // bytes of leaves
}

// Stats returns the tree's current figures.
func (t *Tree) Stats() Stats {
	lb := t.leaves * int(unsafe.Sizeof(leaf{}))
	return Stats{
		Len:       t.n,
		Leaves:    t.leaves,
		Inners:    t.inners,
		Bytes:     lb + t.inners*int(unsafe.Sizeof(inner{})),
		LeafFill:  float64(t.n) / float64(t.leaves*t.maxLeaf),
		Height:    t.height,
		LeafBytes: lb,
	}
}
