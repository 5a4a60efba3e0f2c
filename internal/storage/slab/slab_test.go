package slab

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

func fill(b []byte, seed int) {
	for i := range b {
		b[i] = byte(seed*31 + i)
	}
}

func want(n, seed int) []byte {
	b := make([]byte, n)
	fill(b, seed)
	return b
}

func TestAllocBytes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		chunkSize int
		sizes     []int
		chunks    int
	}{
		{"empty item", 64, []int{0, 0, 0}, 1},
		{"fits one chunk", 64, []int{10, 20, 18}, 1}, // 14+24+22 = 60
		{"rolls over", 64, []int{10, 20, 23}, 2},     // 14+24+27 = 65
		{"rolls over at the edge", 64, []int{30, 30}, 2},
		{"large item own chunk", 64, []int{10, 100, 10}, 2},
		{"large first", 64, []int{200}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(tc.chunkSize)
			var locs []Loc
			for i, n := range tc.sizes {
				l, b := a.Alloc(n)
				if len(b) != n || cap(b) != n {
					t.Fatalf("item %d: len %d cap %d, want %d", i, len(b), cap(b), n)
				}
				if l == 0 {
					t.Fatalf("item %d: zero Loc", i)
				}
				fill(b, i)
				locs = append(locs, l)
			}
			for i, l := range locs {
				if got := a.Bytes(l); !bytes.Equal(got, want(tc.sizes[i], i)) || cap(got) != len(got) {
					t.Fatalf("item %d: got %v (cap %d)", i, got, cap(got))
				}
			}
			st := a.Stats()
			if st.Chunks != tc.chunks || st.Items != len(tc.sizes) || st.LiveBytes != st.Used {
				t.Fatalf("stats %+v, want %d chunks", st, tc.chunks)
			}
		})
	}
}

func TestFreeAccounts(t *testing.T) {
	a := New(100)
	l1, _ := a.Alloc(10)
	l2, b2 := a.Alloc(20)
	fill(b2, 2)
	a.Free(l1)
	st := a.Stats()
	if st.Used != 38 || st.LiveBytes != 24 || st.Items != 1 {
		t.Fatalf("stats after free: %+v", st)
	}
	if !bytes.Equal(a.Bytes(l2), want(20, 2)) {
		t.Fatal("free touched a neighbour")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("double free did not panic")
		}
	}()
	a.Free(l1)
}

// TestCompact: live items of sparse chunks move, move is called for each,
// dropped chunks' memory is left as it was (a reader's old slice still
// reads the item), and their numbers are reused only after the drop.
func TestCompact(t *testing.T) {
	a := New(64) // 4 items of 12 bytes (16 with header) per chunk
	type item struct {
		loc  Loc
		seed int
	}
	var items []item
	for i := range 12 {
		l, b := a.Alloc(12)
		fill(b, i)
		items = append(items, item{l, i})
	}
	if st := a.Stats(); st.Chunks != 3 {
		t.Fatalf("chunks %d, want 3", st.Chunks)
	}
	// chunk 1: free 3 of 4 (75% dead); chunk 2: free 1 (25%); chunk 3 is current.
	held := a.Bytes(items[3].loc) // a reader's slice into chunk 1
	for _, i := range []int{0, 1, 2, 5} {
		a.Free(items[i].loc)
	}
	live := map[int]Loc{}
	for _, it := range items {
		live[it.seed] = it.loc
	}
	for _, i := range []int{0, 1, 2, 5} {
		delete(live, i)
	}
	moves := 0
	dropped := a.Compact(0.5, func(old, nw Loc) {
		moves++
		for s, l := range live {
			if l == old {
				live[s] = nw
				return
			}
		}
		t.Fatalf("move of unknown %#x", old)
	})
	if dropped != 1 || moves != 1 {
		t.Fatalf("dropped %d moved %d, want 1 and 1", dropped, moves)
	}
	if !bytes.Equal(held, want(12, 3)) {
		t.Fatal("a held slice changed after compaction")
	}
	for s, l := range live {
		if l.Chunk() == 1 {
			t.Fatalf("item %d still in dropped chunk", s)
		}
		if !bytes.Equal(a.Bytes(l), want(12, s)) {
			t.Fatalf("item %d wrong after compaction", s)
		}
	}
	st := a.Stats()
	if st.Items != len(live) || st.Chunks != 3 { // chunk 1 dropped, item moved into a new chunk 4
		t.Fatalf("stats %+v", st)
	}
	// The dropped number is reused by the next new chunk.
	for range 8 {
		a.Alloc(12)
	}
	if a.chunks[1].buf == nil {
		t.Fatal("dropped chunk number 1 not reused")
	}
	// An entirely dead chunk is dropped without moves.
	b := New(64)
	var ls []Loc
	for range 8 {
		l, _ := b.Alloc(12)
		ls = append(ls, l)
	}
	for _, l := range ls[:4] {
		b.Free(l)
	}
	if n := b.Compact(0.99, func(Loc, Loc) { t.Fatal("move of a dead item") }); n != 1 {
		t.Fatalf("dropped %d, want 1", n)
	}
	// A negative threshold compacts chunks with garbage only (terminates).
	if n := b.Compact(-1, func(Loc, Loc) {}); n != 0 {
		t.Fatalf("dropped %d chunks without garbage", n)
	}
}

// TestCompactMovesOnce: the chunk that is current when Compact starts
// receives moved items and then stops being current; it is not compacted
// in the same pass, so no item moves twice.
func TestCompactMovesOnce(t *testing.T) {
	a := New(64) // 4 items of 12 bytes per chunk
	var ls []Loc
	for range 10 { // chunks 1 and 2 full, chunk 3 holds 2
		l, _ := a.Alloc(12)
		ls = append(ls, l)
	}
	a.Free(ls[8]) // chunk 3: 50% dead
	a.Free(ls[0]) // chunk 1: 25%
	a.Free(ls[4]) // chunk 2: 25%
	live := map[Loc]bool{}
	for i, l := range ls {
		if i != 0 && i != 4 && i != 8 {
			live[l] = true
		}
	}
	moves := 0
	a.Compact(0.2, func(old, nw Loc) {
		if !live[old] {
			t.Fatalf("move of %#x, not an item from before the pass", old)
		}
		moves++
	})
	if moves != 6 {
		t.Fatalf("%d moves, want 6", moves)
	}
}

// TestRandom runs random Alloc/Free/Compact against a map of what every
// live item holds.
func TestRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := New(256)
	live := map[Loc]int{} // loc -> seed
	var order []Loc       // live's keys, for a seeded choice
	sizes := map[int]int{}
	seed := 0
	for step := range 20000 {
		switch r := rng.IntN(10); {
		case r < 6:
			n := rng.IntN(40)
			if rng.IntN(50) == 0 {
				n = 300 + rng.IntN(300) // a large item
			}
			l, b := a.Alloc(n)
			if _, ok := live[l]; ok {
				t.Fatalf("step %d: Loc %#x handed out twice", step, l)
			}
			seed++
			fill(b, seed)
			live[l] = seed
			order = append(order, l)
			sizes[seed] = n
		case r < 9:
			if len(order) == 0 {
				continue
			}
			i := rng.IntN(len(order))
			l := order[i]
			order[i] = order[len(order)-1]
			order = order[:len(order)-1]
			a.Free(l)
			delete(live, l)
		default:
			moved := map[Loc]int{}
			a.Compact(rng.Float64(), func(old, nw Loc) {
				s, ok := live[old]
				if !ok {
					t.Fatalf("step %d: move of %#x, not live", step, old)
				}
				delete(live, old)
				moved[nw] = s
			})
			order = order[:0]
			for l := range live {
				order = append(order, l)
			}
			for l, s := range moved {
				live[l] = s
				order = append(order, l)
			}
			slices.Sort(order)
		}
		if step%500 == 0 || step == 19999 {
			total := 0
			for l, s := range live {
				if !bytes.Equal(a.Bytes(l), want(sizes[s], s)) {
					t.Fatalf("step %d: item %d at %#x wrong", step, s, l)
				}
				total += headerSize + sizes[s]
			}
			if st := a.Stats(); st.Items != len(live) || st.LiveBytes != total {
				t.Fatalf("step %d: stats %+v, want %d items %d bytes", step, st, len(live), total)
			}
		}
	}
	start := a.cur
	a.Compact(0, func(old, nw Loc) {
		live[nw] = live[old]
		delete(live, old)
	})
	st := a.Stats()
	if st.LiveBytes+a.chunks[start].dead != st.Used { // the current chunk is not compacted
		t.Fatalf("garbage left after Compact(0): %+v", st)
	}
	for l, s := range live {
		if !bytes.Equal(a.Bytes(l), want(sizes[s], s)) {
			t.Fatalf("item %d wrong after full compaction", s)
		}
	}
}

// TestCompactSomeLimit: CompactSome drops at most limit chunks per call and
// a later call goes on with the remaining candidates.
func TestCompactSomeLimit(t *testing.T) {
	a := New(64) // 4 items of 12 bytes per chunk
	var ls []Loc
	for range 20 { // chunks 1-5 full
		l, _ := a.Alloc(12)
		ls = append(ls, l)
	}
	for i := 0; i < 16; i += 4 { // chunks 1-4: 3 of 4 dead
		for _, l := range ls[i : i+3] {
			a.Free(l)
		}
	}
	var calls []int
	for {
		n := a.CompactSome(0.5, 1, func(old, nw Loc) {})
		if n == 0 {
			break
		}
		calls = append(calls, n)
	}
	if len(calls) != 4 || calls[0] != 1 {
		t.Fatalf("dropped per call %v, want 1 four times", calls)
	}
}

// TestChunkGrowth: an arena's first chunk is small and each new one
// doubles the last up to the chunk size; an item larger than the next size
// gets a chunk that holds it.
func TestChunkGrowth(t *testing.T) {
	a := New(0)
	a.Alloc(10)
	if st := a.Stats(); st.Bytes != minChunk {
		t.Fatalf("first chunk %d bytes, want %d", st.Bytes, minChunk)
	}
	var sizes []int
	for range 600 {
		a.Alloc(1000)
	}
	for _, c := range a.chunks[1:] {
		sizes = append(sizes, len(c.buf))
	}
	want := []int{4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10}
	if !slices.Equal(sizes[:len(want)], want) {
		t.Fatalf("chunk sizes %v, want %v first", sizes, want)
	}
	b := New(0)
	b.Alloc(10)
	b.Alloc(100 << 10) // above the next size (8 KiB), below the chunk size
	if st := b.Stats(); st.Chunks != 2 || st.Bytes != 4<<10+128<<10 {
		t.Fatalf("after a 100 KiB item: %+v", st)
	}
}
