package ptree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"unsafe"
)

// store is the tests' key storage: ref i resolves to keys[i]. A freed ref
// panics when resolved, so a tree that resolves a Ref it no longer holds
// (invariant 2, a stale separator: invariant 1) fails the test.
type store struct {
	keys  [][]byte
	freed []bool
}

func (s *store) put(k []byte) uint64 {
	s.keys = append(s.keys, slices.Clone(k))
	s.freed = append(s.freed, false)
	return uint64(len(s.keys) - 1)
}

func (s *store) free(ref uint64) { s.freed[ref] = true }

func (s *store) keyOf(ref uint64) []byte {
	if s.freed[ref] {
		panic(fmt.Sprintf("ptree resolved freed ref %d (%q)", ref, s.keys[ref]))
	}
	return s.keys[ref]
}

// check verifies the tree's structure: order, separators (invariant 1),
// depth and fill (invariant 3), counts, and every node's prefix and
// windows (invariant 5).
func check(t *testing.T, tr *Tree, s *store) {
	t.Helper()
	leaves, inners := 0, 0
	var prev []byte
	count := 0
	// entries checks that es' keys start with h's prefix and that their
	// windows are the keys' windows after it.
	entries := func(h *hdr, es []entry) {
		t.Helper()
		for _, e := range es {
			k := s.keyOf(e.ref)
			if !bytes.HasPrefix(k, h.prefix()) {
				t.Fatalf("key %q under prefix %q", k, h.prefix())
			}
			if w := window(k, int(h.plen)); e.w != w {
				t.Fatalf("key %q under prefix %q: window %x, want %x", k, h.prefix(), e.w, w)
			}
		}
	}
	var walk func(n unsafe.Pointer, h int, root bool) (uint64, bool)
	walk = func(n unsafe.Pointer, h int, root bool) (uint64, bool) {
		if h == 0 {
			l := (*leaf)(n)
			leaves++
			if l.n == 0 && !root {
				t.Fatal("empty leaf below the root")
			}
			if int(l.n) > tr.maxLeaf {
				t.Fatalf("leaf of %d > %d", l.n, tr.maxLeaf)
			}
			entries(&l.hdr, l.e[:l.n])
			for _, e := range l.e[:l.n] {
				k := s.keyOf(e.ref)
				if count > 0 && bytes.Compare(prev, k) >= 0 {
					t.Fatalf("order: %q then %q", prev, k)
				}
				prev = k
				count++
			}
			if l.n == 0 {
				return 0, false
			}
			return l.e[0].ref, true
		}
		in := (*inner)(n)
		inners++
		if int(in.n) > tr.maxInner || in.n == 0 {
			t.Fatalf("inner of %d > %d", in.n, tr.maxInner)
		}
		for j := int(in.n) + 1; j < len(in.kids); j++ {
			if in.kids[j] != nil {
				t.Fatal("stale child pointer beyond n")
			}
		}
		entries(&in.hdr, in.sep[:in.n])
		var first uint64
		for j := 0; j <= int(in.n); j++ {
			m, _ := walk(in.kids[j], h-1, false)
			if j == 0 {
				first = m
				continue
			}
			if in.sep[j-1].ref != m {
				t.Fatalf("separator %d is %q/%d, smallest key of its right child %q/%d",
					j-1, s.keyOf(in.sep[j-1].ref), in.sep[j-1].ref, s.keyOf(m), m)
			}
		}
		return first, true
	}
	walk(tr.root, tr.height, true)
	if count != tr.Len() || leaves != tr.leaves || inners != tr.inners {
		t.Fatalf("counted %d entries %d leaves %d inners; tree says %d %d %d",
			count, leaves, inners, tr.Len(), tr.leaves, tr.inners)
	}
}

// TestOrderTies: keys whose prefixes tie (shorter than 8 bytes, zero
// bytes, prefixes of one another, the empty key) order as bytes.Compare.
func TestOrderTies(t *testing.T) {
	keys := []string{"", "\x00", "\x00\x00", "a", "a\x00", "a\x00\x00\x00\x00\x00\x00\x00",
		"a\x00\x00\x00\x00\x00\x00\x00\x00", "abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefgha", "b", "\xff"}
	for _, sizes := range [][2]int{{2, 2}, {3, 2}, {leafCap, innerCap}} {
		s := &store{}
		tr := newTree(s.keyOf, sizes[0], sizes[1])
		rng := rand.New(rand.NewPCG(1, uint64(sizes[0])))
		for _, i := range rng.Perm(len(keys)) {
			if _, rep := tr.Set([]byte(keys[i]), s.put([]byte(keys[i]))); rep {
				t.Fatalf("%q replaced", keys[i])
			}
		}
		check(t, tr, s)
		var got []string
		tr.Scan(func(ref uint64) bool { got = append(got, string(s.keyOf(ref))); return true })
		want := slices.Clone(keys)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("sizes %v: scan %q, want %q", sizes, got, want)
		}
		for _, k := range keys {
			ref, ok := tr.Get([]byte(k))
			if !ok || string(s.keyOf(ref)) != k {
				t.Fatalf("Get(%q) = %d %v", k, ref, ok)
			}
		}
		for _, k := range []string{"\x00\x00\x00", "a\x00\x00", "abcdefg", "abcdefgh\x00\x00", "c"} {
			if _, ok := tr.Get([]byte(k)); ok {
				t.Fatalf("Get(%q) found a missing key", k)
			}
		}
	}
}

func TestSetGetDelete(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ops    string // +k set, -k delete, =k repoint
		scan   []string
		lookup map[string]bool
	}{
		{"empty", "", nil, map[string]bool{"": false}},
		{"empty key", "+ +a", []string{"", "a"}, map[string]bool{"": true}},
		{"replace", "+a +a +b", []string{"a", "b"}, map[string]bool{"a": true}},
		{"delete missing", "+a -b", []string{"a"}, map[string]bool{"b": false}},
		{"delete all", "+a +b +c -b -a -c", nil, map[string]bool{"a": false}},
		{"repoint", "+a +b =a", []string{"a", "b"}, map[string]bool{"a": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &store{}
			tr := newTree(s.keyOf, 2, 2)
			for _, op := range bytes.Fields([]byte(tc.ops)) {
				k := op[1:]
				switch op[0] {
				case '+':
					if old, rep := tr.Set(k, s.put(k)); rep {
						s.free(old)
					}
				case '-':
					if old, ok := tr.Delete(k); ok {
						s.free(old)
					}
				case '=':
					if old, ok := tr.Repoint(k, s.put(k)); ok {
						s.free(old)
					}
				}
				check(t, tr, s)
			}
			var got []string
			tr.Scan(func(ref uint64) bool { got = append(got, string(s.keyOf(ref))); return true })
			if !slices.Equal(got, tc.scan) {
				t.Fatalf("scan %q, want %q", got, tc.scan)
			}
			for k, want := range tc.lookup {
				if _, ok := tr.Get([]byte(k)); ok != want {
					t.Fatalf("Get(%q) found=%v", k, ok)
				}
			}
		})
	}
}

// genKey makes keys with long shared prefixes, keys shorter than 8 bytes,
// keys that are prefixes of others, zero bytes and the empty key.
func genKey(rng *rand.Rand) []byte {
	bases := []string{"", "\x00", "a", "ab\x00", "abcdefg", "abcdefgh", "abcdefgh\x00",
		"0123456789abcdefghij", "0123456789abcdefghij\x00\x00", "\xff\xff\xff\xff\xff\xff\xff\xff"}
	k := []byte(bases[rng.IntN(len(bases))])
	alpha := []byte{0, 1, 'a', 'b', 0xff}
	for range rng.IntN(4) {
		k = append(k, alpha[rng.IntN(len(alpha))])
	}
	return k
}

// TestDifferential runs random operations against a sorted reference, for
// each key generator (keys_test.go) at small node sizes and the real ones.
func TestDifferential(t *testing.T) {
	for _, g := range generators {
		for _, sizes := range [][2]int{{2, 2}, {3, 3}, {4, 5}, {leafCap, innerCap}} {
			for seed := uint64(1); seed <= 3; seed++ {
				t.Run(fmt.Sprintf("%s/leaf=%d/inner=%d/seed=%d", g.name, sizes[0], sizes[1], seed), func(t *testing.T) {
					differential(t, sizes[0], sizes[1], seed, g.gen)
				})
			}
		}
	}
}

func differential(t *testing.T, maxLeaf, maxInner int, seed uint64, gen func(*rand.Rand) []byte) {
	rng := rand.New(rand.NewPCG(seed, 99))
	s := &store{}
	tr := newTree(s.keyOf, maxLeaf, maxInner)
	ref := map[string]uint64{} // the reference: key -> ref
	sorted := func() []string {
		ks := make([]string, 0, len(ref))
		for k := range ref {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	steps := 6000
	maxHeight := 0
	for step := range steps {
		k := gen(rng)
		// grow for the first half, shrink for the second: splits then merges
		grow := step < steps/2
		switch r := rng.IntN(10); {
		case r < 4 && grow || r < 2:
			nr := s.put(k)
			old, rep := tr.Set(k, nr)
			want, had := ref[string(k)]
			if rep != had || rep && old != want {
				t.Fatalf("step %d: Set(%q) = %d %v, reference %d %v", step, k, old, rep, want, had)
			}
			if rep {
				s.free(old)
			}
			ref[string(k)] = nr
		case r < 6 || !grow && r < 8:
			if !grow && len(ref) > 0 && rng.IntN(2) == 0 {
				ks := sorted()
				k = []byte(ks[rng.IntN(len(ks))])
			}
			old, ok := tr.Delete(k)
			want, had := ref[string(k)]
			if ok != had || ok && old != want {
				t.Fatalf("step %d: Delete(%q) = %d %v, reference %d %v", step, k, old, ok, want, had)
			}
			if ok {
				s.free(old)
				delete(ref, string(k))
			}
		case r < 7:
			got, ok := tr.Get(k)
			want, had := ref[string(k)]
			if ok != had || got != want {
				t.Fatalf("step %d: Get(%q) = %d %v, reference %d %v", step, k, got, ok, want, had)
			}
		case r < 8:
			if _, had := ref[string(k)]; had {
				nr := s.put(k)
				old, ok := tr.Repoint(k, nr)
				if !ok || old != ref[string(k)] {
					t.Fatalf("step %d: Repoint(%q) = %d %v", step, k, old, ok)
				}
				s.free(old)
				ref[string(k)] = nr
			} else if _, ok := tr.Repoint(k, 0); ok {
				t.Fatalf("step %d: Repoint of missing %q", step, k)
			}
		default:
			ks := sorted()
			limit := 1 + rng.IntN(20)
			var got, want []string
			collect := func(r uint64) bool {
				got = append(got, string(s.keyOf(r)))
				return len(got) < limit
			}
			if rng.IntN(2) == 0 {
				tr.Ascend(k, collect)
				i, _ := slices.BinarySearch(ks, string(k))
				want = ks[i:min(len(ks), i+limit)]
			} else {
				tr.Descend(k, collect)
				i, found := slices.BinarySearch(ks, string(k))
				if found {
					i++
				}
				for j := i - 1; j >= 0 && len(want) < limit; j-- {
					want = append(want, ks[j])
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: iteration from %q: %q, want %q", step, k, got, want)
			}
		}
		if tr.Len() != len(ref) {
			t.Fatalf("step %d: Len %d, reference %d", step, tr.Len(), len(ref))
		}
		maxHeight = max(maxHeight, tr.height)
		if maxLeaf < 10 && step%10 == 0 || step%100 == 0 || step == steps-1 {
			check(t, tr, s)
			var all, rev []string
			tr.Scan(func(r uint64) bool { all = append(all, string(s.keyOf(r))); return true })
			tr.Reverse(func(r uint64) bool { rev = append(rev, string(s.keyOf(r))); return true })
			slices.Reverse(rev)
			if ks := sorted(); !slices.Equal(all, ks) || !slices.Equal(rev, ks) {
				t.Fatalf("step %d: scan %d keys, reverse %d, reference %d", step, len(all), len(rev), len(ks))
			}
		}
	}
	if maxLeaf < 10 && maxHeight < 3 {
		t.Fatalf("height reached %d: splits of inner nodes not exercised", maxHeight)
	}
}

// TestFill: ascending and descending inserts fill every leaf but one;
// random inserts about 70% (logged; the package comment quotes it).
func TestFill(t *testing.T) {
	const n = 100_000
	key := func(i int) []byte {
		k := []byte{0x01, 0x80, 0, 0, 0, 0, 0, 0, 0}
		for j := 8; i > 0; j, i = j-1, i>>8 {
			k[j] = byte(i)
		}
		return k
	}
	for _, order := range []string{"ascending", "descending", "random"} {
		s := &store{}
		tr := New(s.keyOf)
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i
		}
		switch order {
		case "descending":
			slices.Reverse(ids)
		case "random":
			rand.New(rand.NewPCG(5, 5)).Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		}
		for _, id := range ids {
			tr.Set(key(id), s.put(key(id)))
		}
		check(t, tr, s)
		st := tr.Stats()
		t.Logf("%s: %d leaves, %d inners, leaf fill %.1f%%, %.1f node bytes per entry",
			order, st.Leaves, st.Inners, 100*st.LeafFill, float64(st.Bytes)/n)
		if order != "random" && st.Leaves != (n+leafCap-1)/leafCap {
			t.Fatalf("%s: %d leaves for %d keys, want %d", order, st.Leaves, n, (n+leafCap-1)/leafCap)
		}
	}
}

// TestLayout: a leaf has no pointers (the GC does not scan it) and an
// inner node's pointers all come before its other fields, so the GC
// scans only the child array.
func TestLayout(t *testing.T) {
	if hasPointers(reflect.TypeFor[leaf]()) {
		t.Fatal("leaf holds pointers")
	}
	it := reflect.TypeFor[inner]()
	ptrEnd := uintptr(0) // end of the last field holding a pointer: the GC's scan limit
	for i := range it.NumField() {
		f := it.Field(i)
		if hasPointers(f.Type) {
			ptrEnd = f.Offset + f.Type.Size()
		}
	}
	kids, _ := it.FieldByName("kids")
	if ptrEnd != kids.Offset+kids.Type.Size() || kids.Offset != 0 {
		t.Fatalf("inner: pointers end at %d, child array is [%d, %d)", ptrEnd, kids.Offset, kids.Offset+kids.Type.Size())
	}
	t.Logf("leaf %d bytes, none scanned; inner %d bytes, %d scanned", unsafe.Sizeof(leaf{}), it.Size(), ptrEnd)
}

func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.String, reflect.Map,
		reflect.Chan, reflect.Func, reflect.Interface:
		return true
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// TestNoAllocs: searches take a []byte probe and allocate nothing.
func TestNoAllocs(t *testing.T) {
	s := &store{}
	tr := New(s.keyOf)
	for i := range 5000 {
		k := fmt.Appendf(nil, "key%06d", i)
		tr.Set(k, s.put(k))
	}
	probe := []byte("key002500")
	sink := 0
	if n := testing.AllocsPerRun(100, func() {
		r, _ := tr.Get(probe)
		tr.Repoint(probe, r)
		tr.Ascend(probe, func(uint64) bool { sink++; return sink%10 != 0 })
		tr.Descend(probe, func(uint64) bool { sink++; return sink%10 != 0 })
	}); n != 0 {
		t.Fatalf("%v allocations per search", n)
	}
}
