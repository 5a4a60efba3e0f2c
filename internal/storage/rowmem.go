package storage

import (
	"encoding/binary"
	"unsafe"

	"lockstep/internal/storage/slab"
)

// Row memory upkeep: compaction of the tables' slab arenas after purge,
// and the figures SHOW STATUS shows (docs/storage.md, "Memory per row").

const (
	// compactMinDead is the dead bytes a table's arena holds before purge
	// compacts it, and compactShare the share of its used bytes they must
	// be: below either, the garbage is not worth the copying.
	compactMinDead = 4 << 20
	compactShare   = 0.25
	// compactChunks bounds one compaction step (chunks dropped under the
	// write latch: about 1 MiB copied each, at most).
	compactChunks = 4
)

// compact moves the live items of mostly dead slab chunks into the current
// one when the arena's garbage is worth it (compactMinDead, compactShare),
// at most compactChunks chunks per call; it returns the chunks dropped.
// Caller holds t.mu for writing.
func (t *Table) compact() int {
	a := t.rs.arena
	st := a.Stats()
	dead := st.Used - st.LiveBytes
	if dead < compactMinDead || float64(dead) < compactShare*float64(st.Used) {
		return 0
	}
	return a.CompactSome(0.5, compactChunks, t.moveItem)
}

// moveItem repoints what refers to an item compaction moved (invariant 4):
// its slot for a row or a key, its index entry for an entry key.
func (t *Table) moveItem(old, nw slab.Loc) {
	b := t.rs.arena.Bytes(nw)
	tag, s := binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint32(b[2:])
	sl := t.sl(s)
	switch tag {
	case tagRow:
		sl.row = nw
	case tagKey:
		sl.key = nw
	default:
		for _, sx := range t.secs {
			if sx.id == tag-tagEntry {
				sx.tree.Repoint(b[itemHdr:], uint64(nw))
				return
			}
		}
	}
}

// RowMemory describes the memory of the engine's tables' rows (SHOW
// STATUS, the metrics endpoint): their slab arenas and slot chunks, and
// how many rows have versions beside their base (Go objects).
type RowMemory struct {
	ArenaBytes int64 // slab chunk bytes
	LiveBytes  int64 // bytes of live items in them, headers included
	SlotBytes  int64 // slot chunk bytes
	TreeBytes  int64 // the clustered and secondary trees' nodes
	Rows       int64 // live slots
	ChainRows  int64 // rows with versions newer than their base
}

// RowMemory sums the figures over the durable tables (temporary tables
// are not in the registry). It takes each table's read latch in turn.
func (e *Engine) RowMemory() RowMemory {
	e.regMu.RLock()
	tabs := make([]*Table, 0, len(e.tables))
	for _, t := range e.tables {
		tabs = append(tabs, t)
	}
	e.regMu.RUnlock()
	var m RowMemory
	for _, t := range tabs {
		t.mu.RLock()
		st := t.rs.arena.Stats()
		m.ArenaBytes += int64(st.Bytes)
		m.LiveBytes += int64(st.LiveBytes)
		for _, c := range t.rs.chunks {
			m.SlotBytes += int64(cap(c)) * int64(unsafe.Sizeof(slot{}))
		}
		m.TreeBytes += int64(t.pk.Stats().Bytes)
		for _, sx := range t.secs {
			m.TreeBytes += int64(sx.tree.Stats().Bytes)
		}
		m.Rows += int64(t.pk.Len()) // a slot is live exactly while its row is in the clustered index
		m.ChainRows += int64(len(t.rs.chains))
		t.mu.RUnlock()
	}
	return m
}
