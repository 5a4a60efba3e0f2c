package txn

import (
	"math"
	"math/bits"
	"sort"
	"sync"
	"sync/atomic"

	"lockstep/internal/stat"
)

// The global active set records, for every allocated id, whether the
// transaction has FINISHED. A set bit means finished; a clear bit means
// active. Ids are allocated by one atomic add before their transaction does
// anything else, so an id whose allocation is visible but whose owner has not
// reached any other step still reads as active. Nothing ever has to
// "register" an id as active, and a bit only ever goes from 0 to 1 while its
// block is live; the view snapshot below relies on that monotonicity.
//
// Layout:
//
//   - ids are grouped in blocks of blockIDs consecutive ids; a block is a
//     fixed array of atomic words and is found through a ring of ringSize
//     slots (slot = block number mod ringSize);
//   - window.lo is the first id still covered by the ring; every id below it
//     has finished unless it is listed in window.long, the sorted list of
//     "long" ids that were still active when their block was retired;
//   - window is an immutable value replaced by pointer (copy on write) under
//     activeSet.mu, which is taken only for window maintenance: installing a
//     new block (once per blockIDs allocations), retiring old blocks, and
//     compacting the long list. Begin, AssignID's fast path, Finish, view
//     creation and view closing never take it.
//
// A retired block object stays alive as long as a long entry (or a
// transaction) points to it; a long transaction keeps setting its finished
// bit in the same block, so the bit is the single source of truth for every
// id, and the long list is only an index of where to look.
const (
	blockShift = 12
	blockIDs   = 1 << blockShift // ids per block
	blockWords = blockIDs / 64
	ringSize   = 64 // blocks in the ring: 262,144 consecutive ids

	// A block at the bottom of the ring is retired into the long list when
	// its remaining active ids are at most this many (listing them costs no
	// more words than the block would cost a view to copy), or when they are
	// fewer than half the bitmap words between the block and the newest id
	// (see maintainLocked).
	retireMaxActive = blockWords / 2
)

type block struct {
	base  ID
	words [blockWords]atomic.Uint64
}

func newBlock(base ID) *block {
	b := &block{base: base}
	if base == 0 {
		b.words[0].Store(1) // id 0 is never allocated: count it as finished
	}
	return b
}

func (b *block) finished(id ID) bool {
	off := id - b.base
	return b.words[off>>6].Load()&(1<<(off&63)) != 0
}

func (b *block) markFinished(id ID) {
	off := id - b.base
	b.words[off>>6].Or(1 << (off & 63))
}

type longEntry struct {
	id  ID
	blk *block
}

type window struct {
	lo   ID          // multiple of blockIDs
	long []longEntry // sorted by id, all < lo
}

type activeSet struct {
	next atomic.Uint64 // last allocated id
	win  atomic.Pointer[window]
	ring [ringSize]atomic.Pointer[block]
	mu   sync.Mutex // window maintenance only

	viewRetries atomic.Uint64
	fallbacks   atomic.Uint64

	// view barrier (see snapshot and finish)
	barrier  atomic.Int32
	inflight [16]struct {
		n atomic.Int32
		_ [60]byte
	}
}

func (a *activeSet) init() {
	a.win.Store(&window{})
	a.ring[0].Store(newBlock(0))
}

// assign allocates the next id and returns it with the block holding its bit.
func (a *activeSet) assign() (ID, *block) {
	id := a.next.Add(1)
	base := id &^ (blockIDs - 1)
	if b := a.ring[(id>>blockShift)%ringSize].Load(); b != nil && b.base == base {
		return id, b
	}
	return id, a.slowBlock(id)
}

// slowBlock finds or installs the block for an allocated id.
func (a *activeSet) slowBlock(id ID) *block {
	a.mu.Lock()
	defer a.mu.Unlock()
	base := id &^ (blockIDs - 1)
	slot := &a.ring[(id>>blockShift)%ringSize]
	if w := a.win.Load(); base < w.lo {
		return findLong(w.long, id).blk
	}
	if b := slot.Load(); b != nil {
		if b.base == base {
			return b
		}
		// An older block still owns the slot: the ring is full. Retire
		// everything up to and including it; its active ids become long.
		a.retireLocked(b.base + blockIDs)
		if w := a.win.Load(); base < w.lo {
			return findLong(w.long, id).blk
		}
	}
	nb := newBlock(base)
	slot.Store(nb)
	a.maintainLocked()
	return nb
}

func findLong(long []longEntry, id ID) longEntry {
	i := sort.Search(len(long), func(i int) bool { return long[i].id >= id })
	if i == len(long) || long[i].id != id {
		panic("txn: allocated id missing from the long list")
	}
	return long[i]
}

// retireLocked moves every block below upto out of the ring. Callers make
// sure every id below upto has been allocated.
func (a *activeSet) retireLocked(upto ID) {
	w := a.win.Load()
	if upto <= w.lo {
		return
	}
	long := make([]longEntry, 0, len(w.long)+8)
	for _, e := range w.long {
		if !e.blk.finished(e.id) {
			long = append(long, e)
		}
	}
	for base := w.lo; base < upto; base += blockIDs {
		b := a.ring[(base>>blockShift)%ringSize].Load()
		if b == nil || b.base != base {
			// Allocated but never installed: nobody could finish in it yet.
			b = newBlock(base)
		}
		for i := range b.words {
			free := ^b.words[i].Load()
			for free != 0 {
				j := bits.TrailingZeros64(free)
				free &= free - 1
				long = append(long, longEntry{id: base + ID(i*64+j), blk: b})
			}
		}
	}
	a.win.Store(&window{lo: upto, long: long})
	// Clear the slots only after the new window is published: a view that
	// still works from the old window and finds a slot cleared or reused
	// will notice the window change when it validates, and retry.
	for base := w.lo; base < upto; base += blockIDs {
		slot := &a.ring[(base>>blockShift)%ringSize]
		if b := slot.Load(); b != nil && b.base == base {
			slot.CompareAndSwap(b, nil)
		}
	}
}

// maintainLocked retires cheap blocks at the bottom of the ring and drops
// finished ids from the long list.
func (a *activeSet) maintainLocked() {
	for {
		w := a.win.Load()
		b := a.ring[(w.lo>>blockShift)%ringSize].Load()
		if b == nil || b.base != w.lo || w.lo+blockIDs-1 > a.next.Load() {
			break
		}
		active := 0
		for i := range b.words {
			active += 64 - bits.OnesCount64(b.words[i].Load())
		}
		// Keeping the block costs every view the words from it up to the
		// newest id; moving it costs one long-list entry per active id.
		span := int((a.next.Load() - w.lo) / 64)
		if active > retireMaxActive && active*2 > span {
			break
		}
		a.retireLocked(w.lo + blockIDs)
	}
	w := a.win.Load()
	n := 0
	for _, e := range w.long {
		if e.blk.finished(e.id) {
			n++
		}
	}
	if n > 0 && (n >= 8 || n*4 >= len(w.long)) {
		long := make([]longEntry, 0, len(w.long)-n)
		for _, e := range w.long {
			if !e.blk.finished(e.id) {
				long = append(long, e)
			}
		}
		a.win.Store(&window{lo: w.lo, long: long})
	}
}

// word returns the finished bits of ids [64*wi, 64*wi+63] as the ring holds
// them now; a missing or foreign block reads as all active.
func (a *activeSet) word(wi uint64) uint64 {
	base := (wi * 64) &^ (blockIDs - 1)
	b := a.ring[(base>>blockShift)%ringSize].Load()
	if b == nil || b.base != base {
		return 0
	}
	return b.words[wi%blockWords].Load()
}

// snapshot fills v with an atomic snapshot of the active set: the set of
// finished ids at one instant inside the call.
//
// The fast path is a double collect. Every value read (the finished bits,
// the window pointer) only moves one way while the window pointer is
// unchanged, so if a second read of all of them returns exactly what the
// first read returned, they all held those values at the instant between the
// two reads. Ids allocated after the first read of the id counter are outside
// the view; the validation checks that none of them had finished by its end,
// so at that instant the view is exact for them too. Words below the first
// word with a clear bit are read once: all-ones words stay all-ones.
//
// A validation fails only if a transaction finishes (or the window moves)
// inside the short copy window. After snapshotRetries failures the view
// raises the barrier: finishers wait at the door (see finish) until the copy
// is done, so the next collect cannot be disturbed and the view cannot
// starve under a continuous stream of commits.
func (a *activeSet) snapshot(v *ReadView) {
	for attempt := 0; ; attempt++ {
		if attempt == snapshotRetries {
			stat.IncU(&a.fallbacks)
			a.barrier.Add(1)
			defer a.barrier.Add(-1)
			for i := range a.inflight {
				for a.inflight[i].n.Load() != 0 {
					yield()
				}
			}
		}
		if a.collect(v) {
			return
		}
		stat.IncU(&a.viewRetries)
	}
}

const snapshotRetries = 2

func (a *activeSet) collect(v *ReadView) bool {
	next := a.next.Load()
	w := a.win.Load()
	up := next + 1

	long := v.long[:0]
	if cap(long) < len(w.long) {
		long = make([]ID, 0, len(w.long))
	}
	for _, e := range w.long {
		if !e.blk.finished(e.id) {
			long = append(long, e.id)
		}
	}
	lastW := next / 64
	wi := w.lo / 64
	for wi <= lastW && a.word(wi) == math.MaxUint64 {
		wi++
	}
	startW := wi
	words := v.bits[:0]
	if n := int(lastW+1) - int(startW); n > cap(words) {
		words = make([]uint64, 0, n)
	}
	for ; wi <= lastW; wi++ {
		words = append(words, a.word(wi))
	}
	v.long, v.bits = long, words

	// validate: the same finished bits again ...
	k := 0
	for _, e := range w.long {
		if !e.blk.finished(e.id) {
			if k >= len(long) || long[k] != e.id {
				return false
			}
			k++
		}
	}
	if k != len(long) {
		return false
	}
	for i, x := range words {
		if a.word(startW+uint64(i)) != x {
			return false
		}
	}
	// ... no id allocated since the start has finished ...
	if now := a.next.Load(); now > next {
		for wi := up / 64; wi <= now/64; wi++ {
			x := a.word(wi)
			if wi == up/64 {
				x &^= 1<<(up&63) - 1 // ids below up belong to the view
			}
			if x != 0 {
				return false
			}
		}
	}
	// ... and the same window, checked last.
	if a.win.Load() != w {
		return false
	}

	v.up = up
	v.base = startW * 64
	v.low = up
	if len(long) > 0 {
		v.low = long[0]
	} else {
		for i, x := range words {
			if x != math.MaxUint64 {
				if id := v.base + uint64(i*64+bits.TrailingZeros64(^x)); id < up {
					v.low = id
				}
				break
			}
		}
	}
	return true
}

// finish marks id finished in its block. The in-flight count is the door a
// view's barrier closes: a finisher announces itself, then looks for a
// barrier; a view raises the barrier, then waits for announced finishers to
// leave. With sequentially consistent atomics one of the two always sees the
// other.
func (a *activeSet) finish(id ID, b *block) {
	c := &a.inflight[id%uint64(len(a.inflight))].n
	for {
		c.Add(1)
		if a.barrier.Load() == 0 {
			break
		}
		c.Add(-1)
		for a.barrier.Load() != 0 {
			yield()
		}
	}
	b.markFinished(id)
	c.Add(-1)
}

// minActive returns an id m such that every id below m has finished. It is
// exact when nothing changes during the call and errs low otherwise.
func (a *activeSet) minActive() ID {
	next := a.next.Load()
	w := a.win.Load()
	for _, e := range w.long {
		if !e.blk.finished(e.id) {
			return e.id
		}
	}
	for wi := w.lo / 64; wi <= next/64; wi++ {
		if x := a.word(wi); x != math.MaxUint64 {
			if id := wi*64 + uint64(bits.TrailingZeros64(^x)); id <= next {
				return id
			}
			break
		}
	}
	return next + 1
}

// tryMaintain runs window maintenance if nobody else is doing it.
func (a *activeSet) tryMaintain() {
	if a.mu.TryLock() {
		a.maintainLocked()
		a.mu.Unlock()
	}
}
