// Package slab is an append-only byte arena for table data held outside
// the garbage collector's view: items (encoded rows and their keys) are
// carved from large pointer-free chunks, so the GC marks one chunk per
// thousands of items and never scans their bytes (DESIGN principle 5;
// docs/storage.md, "Memory per row").
//
// # Locations
//
// An item is addressed by a Loc, a uint64: the chunk number in the high 32
// bits, the item's byte offset in that chunk in the low 32. Chunk numbers
// start at 1, so the zero Loc is never an item (callers may use it as
// "none").
//
// # Item format
//
// Each item is a 4-byte little-endian header followed by its bytes: the
// header's low 31 bits are the item's length, its top bit is the dead bit
// (set by Free). Items are packed back to back from offset 0, unaligned, so
// a chunk can be walked from its start by headers alone; that is how
// Compact finds the live items. Bytes(loc) reads the length from the
// header: callers do not keep lengths. An item is at most MaxItem bytes.
//
// # Invariants
//
//  1. An item's bytes are written only by the caller of Alloc, before the
//     item is published to any reader; afterwards nobody writes them. The
//     arena itself writes only headers: Alloc the new item's, Free its
//     item's dead bit. Slices handed out (Alloc, Bytes) cover the item's
//     bytes only, capped at their length, so a reader's append copies.
//  2. Memory is never reused: a chunk is appended to until full and then
//     only read. Free only accounts dead bytes; Compact copies the live
//     items of sparse chunks into the current chunk and drops the old chunk
//     from the table without writing it. A reader that still holds a slice
//     into a dropped chunk keeps it alive; the GC frees it after the last
//     such slice is gone.
//  3. A chunk number is reused only after its chunk was dropped. A Loc into
//     a dropped chunk must not be passed to Bytes or Free: Compact's move
//     callback is where the caller repoints its references.
//  4. No locking: the caller serialises Alloc, Free and Compact against
//     each other and against Bytes (a table latch). Slices obtained under
//     the latch stay valid and unchanged after it is released.
//
// An item larger than the chunk size gets a chunk of its own, exactly its
// size; it is dropped by Compact once dead.
package slab

import (
	"encoding/binary"
	"fmt"
)

// Loc is an item's location: chunk number << 32 | offset of its header.
type Loc uint64

// Chunk returns the chunk number of l.
func (l Loc) Chunk() uint32 { return uint32(l >> 32) }

// Offset returns the offset of l's header in its chunk.
func (l Loc) Offset() uint32 { return uint32(l) }

func makeLoc(chunk uint32, off int) Loc { return Loc(uint64(chunk)<<32 | uint64(off)) }

const (
	headerSize = 4
	deadBit    = 1 << 31
	// MaxItem is the largest item Alloc accepts.
	MaxItem = deadBit - 1 - headerSize
	// DefaultChunkSize is the chunk size of New(0).
	DefaultChunkSize = 1 << 20
)

// chunk is one pointer-free allocation and its accounting.
type chunk struct {
	buf  []byte // nil: dropped (the number is free)
	used int    // bytes handed out: headers and items, from offset 0
	dead int    // bytes of freed items, headers included
}

// Arena is the set of chunks items are allocated from. The zero value is
// not usable; call New.
type Arena struct {
	chunks    []chunk  // index = chunk number; entry 0 unused
	free      []uint32 // dropped chunk numbers, for reuse
	cur       uint32   // the chunk Alloc appends to; 0 before the first Alloc
	chunkSize int
	next      int // the size of the next chunk: from minChunk, doubling up to chunkSize
	live      int // chunks in the table
	bytes     int // sum of len(buf) over chunks in the table
	used      int // sum of used
	dead      int // sum of dead
	items     int // live items
}

// New returns an empty arena whose chunks are chunkSize bytes (0:
// DefaultChunkSize).
func New(chunkSize int) *Arena {
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	if chunkSize < headerSize+1 {
		chunkSize = headerSize + 1
	}
	return &Arena{chunks: make([]chunk, 1), chunkSize: chunkSize, next: min(minChunk, chunkSize)}
}

// minChunk is an arena's first chunk size: a table of a few rows costs a
// few KiB, not a whole chunk; each new chunk doubles the last up to the
// arena's chunk size.
const minChunk = 4 << 10

// newChunk adds a chunk of size bytes and returns its number.
func (a *Arena) newChunk(size int) uint32 {
	var n uint32
	if k := len(a.free); k > 0 {
		n = a.free[k-1]
		a.free = a.free[:k-1]
	} else {
		if len(a.chunks) > 1<<32-1 {
			panic("slab: chunk numbers exhausted")
		}
		n = uint32(len(a.chunks))
		a.chunks = append(a.chunks, chunk{})
	}
	a.chunks[n] = chunk{buf: make([]byte, size)}
	a.live++
	a.bytes += size
	return n
}

// Alloc reserves an item of n bytes and returns its location and its bytes,
// for the caller to fill before it publishes loc (invariant 1).
func (a *Arena) Alloc(n int) (Loc, []byte) {
	if n < 0 || n > MaxItem {
		panic(fmt.Sprintf("slab: item of %d bytes", n))
	}
	need := headerSize + n
	var cn uint32
	if need > a.chunkSize {
		cn = a.newChunk(need) // an item of its own; cur stays
	} else {
		if a.cur == 0 || a.chunks[a.cur].used+need > len(a.chunks[a.cur].buf) {
			size := a.next
			for size < need {
				size *= 2
			}
			size = min(size, a.chunkSize)
			a.cur = a.newChunk(size)
			a.next = min(2*size, a.chunkSize)
		}
		cn = a.cur
	}
	c := &a.chunks[cn]
	off := c.used
	binary.LittleEndian.PutUint32(c.buf[off:], uint32(n))
	c.used += need
	a.used += need
	a.items++
	start := off + headerSize
	return makeLoc(cn, off), c.buf[start : start+n : start+n]
}

// header returns the chunk of l and l's header word. It panics on a Loc
// that is not an item of a chunk in the table.
func (a *Arena) header(l Loc) (*chunk, uint32) {
	cn, off := l.Chunk(), int(l.Offset())
	if cn == 0 || int(cn) >= len(a.chunks) || a.chunks[cn].buf == nil || off+headerSize > a.chunks[cn].used {
		panic(fmt.Sprintf("slab: no item at %#x", uint64(l)))
	}
	c := &a.chunks[cn]
	return c, binary.LittleEndian.Uint32(c.buf[off:])
}

// Bytes returns the bytes of the item at l (never to be modified).
func (a *Arena) Bytes(l Loc) []byte {
	c := &a.chunks[l.Chunk()]
	off := int(l.Offset())
	n := int(binary.LittleEndian.Uint32(c.buf[off:]) &^ deadBit)
	start := off + headerSize
	return c.buf[start : start+n : start+n]
}

// Free marks the item at l dead: its bytes count as garbage of its chunk
// until Compact drops the chunk. The bytes themselves are not touched, so
// a reader still holding them is unaffected. Freeing an item twice panics.
func (a *Arena) Free(l Loc) {
	c, h := a.header(l)
	if h&deadBit != 0 {
		panic(fmt.Sprintf("slab: item at %#x freed twice", uint64(l)))
	}
	binary.LittleEndian.PutUint32(c.buf[l.Offset():], h|deadBit)
	size := headerSize + int(h)
	c.dead += size
	a.dead += size
	a.items--
}

// Compact moves the live items of every full chunk whose dead share
// (dead bytes / used bytes) is above minGarbage into the current chunk,
// calling move(old, new) for each after its bytes were copied, and then
// drops that chunk (invariant 2). A chunk with no live item is dropped
// without a move; a chunk with no dead bytes is never moved (minGarbage
// below 0 counts as 0). The current chunk is not compacted. Each live item moves once. It returns the
// number of chunks dropped.
//
// move is where the caller repoints its index from old to new; it must
// not call Alloc or Free. A Loc that move receives as new may equal one
// that an earlier call of the same Compact received as old (a chunk
// number dropped earlier in the pass, reused): repoint by key, not by
// location.
func (a *Arena) Compact(minGarbage float64, move func(old, new Loc)) int {
	return a.CompactSome(minGarbage, 0, move)
}

// CompactSome is Compact that stops after it dropped limit chunks (0: no
// limit), so a caller holding a latch bounds the pause: a later call
// goes on where candidates remain.
func (a *Arena) CompactSome(minGarbage float64, limit int, move func(old, new Loc)) int {
	// Moved items go to the chunk that is current at the start (skipped
	// here, though it stops being current during the pass) and to chunks
	// made during the pass, which hold no garbage: with minGarbage >= 0
	// they are never candidates, so no item moves twice.
	minGarbage = max(minGarbage, 0)
	start := a.cur
	dropped := 0
	for cn := uint32(1); int(cn) < len(a.chunks); cn++ {
		c := a.chunks[cn] // a copy: Alloc may grow a.chunks
		if c.buf == nil || cn == start || cn == a.cur || c.used == 0 {
			continue
		}
		if float64(c.dead)/float64(c.used) <= minGarbage {
			continue
		}
		for off := 0; off < c.used; {
			h := binary.LittleEndian.Uint32(c.buf[off:])
			n := int(h &^ deadBit)
			if h&deadBit == 0 {
				nl, nb := a.Alloc(n)
				copy(nb, c.buf[off+headerSize:off+headerSize+n])
				a.items-- // Alloc counted the copy; the item is the same
				move(makeLoc(cn, off), nl)
			}
			off += headerSize + n
		}
		a.drop(cn)
		dropped++
		if limit > 0 && dropped >= limit {
			break
		}
	}
	return dropped
}

// drop removes chunk cn from the table without writing its memory.
func (a *Arena) drop(cn uint32) {
	c := &a.chunks[cn]
	a.live--
	a.bytes -= len(c.buf)
	a.used -= c.used
	a.dead -= c.dead
	*c = chunk{}
	a.free = append(a.free, cn)
	if a.cur == cn {
		a.cur = 0
	}
}

// Stats describes an arena's memory.
type Stats struct {
	Chunks    int // chunks in the table
	Bytes     int // their total size
	Used      int // bytes handed out (headers and items, live or dead)
	LiveBytes int // bytes of live items, headers included
	Items     int // live items
}

// Stats returns the arena's current figures.
func (a *Arena) Stats() Stats {
	return Stats{Chunks: a.live, Bytes: a.bytes, Used: a.used, LiveBytes: a.used - a.dead, Items: a.items}
}
