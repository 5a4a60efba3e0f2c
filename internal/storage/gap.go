package storage

import (
	"bytes"

	"lockstep/internal/storage/rowenc"
	"lockstep/internal/storage/slab"
	"lockstep/internal/txn"
)

// Gap and next-key locks (docs/storage.md, "Gap and next-key locks").
//
// The one rule that makes them sound without holding the table latch
// across a lock wait: gap locks are taken, gaps are checked by inserts, and
// gap locks are passed on (inheritance), only while the table latch is
// held — read latch for scans (gap locks never wait), write latch for
// inserts and removals. So a scan's view of the entries and the gap locks
// it takes are one atomic step against every insert: an insert either
// comes first (the scan sees the new entry and locks its row) or finds the
// scan's gap lock on its successor and waits, with the latch released,
// before trying again.

// gapTag marks a gap lock key in the index field of a lock key; supTag
// marks the supremum (the gap after the last entry of the index).
const (
	gapTag = 0x8000
	supTag = 0x4000
)

// gapKey is the lock key of the gap before entry key in index idx (for a
// secondary index an entry key is index key || primary key); key nil is
// the index's supremum.
func (t *Table) gapKey(idx int, key []byte) string {
	tag := uint16(idx+1) | gapTag
	if key == nil {
		tag |= supTag
	}
	b := make([]byte, 0, 6+len(key))
	b = append(b, byte(t.id>>24), byte(t.id>>16), byte(t.id>>8), byte(t.id), byte(tag>>8), byte(tag))
	b = append(b, key...)
	return string(b)
}

// succEntry returns the first entry key of index idx above key (at or
// above it with incl), or nil when there is none (the supremum). Caller
// holds t.mu.
func (t *Table) succEntry(idx int, key []byte, incl bool) []byte {
	var out []byte
	if idx == PrimaryIndex {
		t.pk.Ascend(key, func(ref uint64) bool {
			k := t.pkOf(uint32(ref))
			if !incl && bytes.Equal(k, key) {
				return true
			}
			out = k
			return false
		})
		return out
	}
	t.secs[idx].tree.Ascend(key, func(ref uint64) bool {
		k := t.item(slab.Loc(ref))
		if !incl && bytes.Equal(k, key) {
			return true
		}
		out = k
		return false
	})
	return out
}

// hasEntry reports whether index idx has the entry key. Caller holds t.mu.
func (t *Table) hasEntry(idx int, key []byte) bool {
	if idx == PrimaryIndex {
		_, ok := t.pk.Get(key)
		return ok
	}
	_, ok := t.secs[idx].tree.Get(key)
	return ok
}

// gapRemoved passes the gap locks of a removed entry of index idx to the
// gap that now contains it, its successor's. Caller holds t.mu for writing
// and has removed the entry.
func (t *Table) gapRemoved(idx int, key []byte) {
	lm := t.e.Locks
	if !lm.GapLocksHeld() {
		return
	}
	lm.InheritGap(t.gapKey(idx, key), t.gapKey(idx, t.succEntry(idx, key, true)))
}

// gapLocking reports whether a read with mode takes gap locks: locking
// reads under REPEATABLE READ (and SERIALIZABLE, which is REPEATABLE READ
// here); READ COMMITTED takes none, as in InnoDB. A build with -tags
// nogaplocks takes none at any level (gap_off.go).
func (tx *Tx) gapLocking(mode txn.LockMode) bool {
	return gapLocksEnabled && mode != 0 && tx.iso != txn.ReadCommitted
}

// lockGap takes the gap lock before entry key of index idx (nil: the
// supremum) for a read with mode. Caller holds t.mu.
func (tx *Tx) lockGap(t *Table, idx int, key []byte, mode txn.LockMode) {
	gm := txn.LockGapS
	if mode == txn.LockX {
		gm = txn.LockGapX
	}
	tx.e.Locks.LockGap(&tx.trx, t.gapKey(idx, key), gm)
}

// gapSplit is one gap an insert splits: entry key lands before succ.
type gapSplit struct {
	idx       int
	key, succ []byte
}

// insertGaps checks the gaps a write's new entries enter: the record's key
// when newRec, and each secondary entry of keys not yet in its index. It
// returns the gap lock key of the first gap another transaction has locked
// (the writer must wait for an insert intention there, without the latch,
// and try again), or the splits to apply once the entries are in. Caller
// holds t.mu for writing.
func (tx *Tx) insertGaps(t *Table, pk []byte, newRec bool, keys [][]byte) (wait string, splits []gapSplit) {
	lm := tx.e.Locks
	if !lm.GapLocksHeld() {
		return "", nil
	}
	check := func(idx int, key []byte) bool {
		succ := t.succEntry(idx, key, false)
		if gk := t.gapKey(idx, succ); !lm.GapFree(&tx.trx, gk) {
			wait = gk
			return false
		}
		splits = append(splits, gapSplit{idx: idx, key: key, succ: succ})
		return true
	}
	if newRec && !t.hasEntry(PrimaryIndex, pk) && !check(PrimaryIndex, pk) {
		return wait, nil
	}
	for i := range t.secs {
		if i >= len(keys) || keys[i] == nil {
			continue
		}
		ek := entryKey(keys[i], pk)
		if !t.hasEntry(i, ek) && !check(i, ek) {
			return wait, nil
		}
	}
	return "", splits
}

// splitGaps gives each new entry the gap locks of the gap it split (the
// writer's own, since others' made it wait). Caller holds t.mu for writing
// and has added the entries.
func (tx *Tx) splitGaps(t *Table, splits []gapSplit) {
	for _, s := range splits {
		tx.e.Locks.InheritGap(t.gapKey(s.idx, s.succ), t.gapKey(s.idx, s.key))
	}
}

// uniqueEq reports whether a cursor's range names one full key of a unique
// index (or the primary key): [K, PrefixEnd(K)). Caller holds t.mu.
func (c *Cursor) uniqueEq() bool {
	lo, hi := c.rng.Lo, c.rng.Hi
	if lo == nil || hi == nil {
		return false
	}
	if c.idx != PrimaryIndex && (c.idx < 0 || c.idx >= len(c.t.secs) || !c.t.secs[c.idx].ix.Unique) {
		return false
	}
	return bytes.Equal(hi, rowenc.PrefixEnd(lo))
}

// uniqueHit reports whether cd is a live row whose key in the cursor's
// unique index is the whole range key without NULLs: a unique equality
// that found its row, which InnoDB locks without the gap. Caller holds
// t.mu.
func (c *Cursor) uniqueHit(cd *cand) bool {
	if !c.t.holds(cd.ref) {
		return false
	}
	v, ok := c.tx.currentBefore(c.t, cd.ref.slot(), c.epoch)
	if !ok || v.del {
		return false
	}
	if c.idx == PrimaryIndex {
		return bytes.Equal(cd.pk, c.rng.Lo)
	}
	if !bytes.Equal(cd.ikey, c.rng.Lo) {
		return false
	}
	k, null, err := c.t.secs[c.idx].key(v.row)
	return err == nil && !null && bytes.Equal(k, cd.ikey)
}

// lockBatchGaps takes the gap locks of a filled batch (caller holds t.mu):
// the gap before each candidate entry and, when a forward scan reached its
// end (a reverse one: when it starts), the gap after the range — before
// the first entry past it, or the supremum. A unique equality that found
// its row takes none.
func (c *Cursor) lockBatchGaps(first bool) {
	if c.uniq && !c.hit {
		for i := range c.batch {
			if c.uniqueHit(&c.batch[i]) {
				c.batch[i].hit, c.hit = true, true
			}
		}
	}
	if c.hit {
		return
	}
	if first && c.reverse {
		// A reverse scan starts below Hi: the gap between the range's
		// last entry and the first entry past it.
		var past []byte
		if c.rng.Hi != nil {
			past = c.t.succEntry(c.idx, c.rng.Hi, true)
		}
		c.tx.lockGap(c.t, c.idx, past, c.mode)
	}
	for i := range c.batch {
		if i == 0 && first && !c.reverse && c.idx == PrimaryIndex && bytes.Equal(c.batch[0].ekey, c.rng.Lo) {
			// The range starts exactly at this primary key: the gap
			// before it is outside the range (InnoDB locks such a first
			// row without its gap too).
			continue
		}
		c.tx.lockGap(c.t, c.idx, c.batch[i].ekey, c.mode)
	}
	if c.exhausted && !c.reverse {
		c.tx.lockGap(c.t, c.idx, c.past, c.mode)
	}
}
