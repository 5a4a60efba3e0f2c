package storage

import (
	"slices"
	"time"

	"lockstep/internal/stat"
	"lockstep/internal/txn"
)

// purgeItem is one committed transaction's touched rows, kept until no
// ReadView can need the versions its changes made obsolete.
type purgeItem struct {
	trx  txn.ID
	undo []undoEntry
}

func (e *Engine) enqueuePurge(id txn.ID, undo []undoEntry) {
	e.purgeMu.Lock()
	e.purgeQueue = append(e.purgeQueue, purgeItem{trx: id, undo: undo})
	e.purgeMu.Unlock()
	stat.Inc(&e.stats.HistoryLength)
}

func (e *Engine) purgeLoop(every time.Duration) {
	defer close(e.purgeDone)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-e.stopPurge:
			return
		case <-tick.C:
			e.Purge()
		}
	}
}

// Purge removes the versions no current or future ReadView can see: for
// every row touched by a transaction below the purge limit, the chain is
// cut after the newest version below the limit, index entries only cut
// versions had are removed, and rows whose surviving version is a
// delete-mark are removed from their table. It returns the number of
// transactions purged. Safe to call concurrently with everything.
func (e *Engine) Purge() int {
	limit := e.Sys.PurgeLimit()
	e.purgeMu.Lock()
	q := e.purgeQueue
	// Commit order and id order differ, so scan the whole queue; it holds
	// only the transactions committed since the last run or still needed.
	// The items kept are compacted in place; the ready ones are copied out.
	var ready []purgeItem
	n := 0
	for _, it := range q {
		if it.trx < limit {
			ready = append(ready, it)
		} else {
			q[n] = it
			n++
		}
	}
	clear(q[n:])
	e.purgeQueue = q[:n]
	e.purgeMu.Unlock()
	stat.IncU(&e.stats.PurgeRuns)
	var tabBuf [8]*Table
	tables := tabBuf[:0] // tables purged, to compact
	for _, it := range ready {
		for _, u := range it.undo {
			e.purgeRecord(u.t, u.ref, limit)
			if !slices.Contains(tables, u.t) {
				tables = append(tables, u.t)
			}
		}
	}
	for _, t := range tables {
		t.mu.Lock()
		if n := t.compact(); n > 0 {
			stat.AddU(&e.stats.SlabChunksCompacted, uint64(n))
		}
		t.mu.Unlock()
	}
	stat.Add(&e.stats.HistoryLength, int64(-len(ready)))
	return len(ready)
}

// purgeRecord drops the versions of row ref of t no view needs: the
// newest version every view sees becomes the row's base (folded into the
// slot and the slab, rows.go), the versions below it go with the index
// entries only they had, and a row whose base is then its only version and
// a delete-mark leaves the table.
func (e *Engine) purgeRecord(t *Table, ref rref, limit txn.ID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.holds(ref) {
		return // truncated, dropped or already removed: not ours to touch
	}
	s := ref.slot()
	// keep: the newest version every view sees; newer: the chain version
	// just above it (nil: keep is the chain's head).
	var keep, newer *version
	for v := t.chain(s); v != nil; v = v.prev {
		if v.trx < limit {
			keep = v
			break
		}
		newer = v
	}
	if keep == nil {
		// Only the base can be kept, and the chain above it stays.
		sl := t.sl(s)
		if sl.trx < limit && sl.flags&slotChain == 0 && sl.flags&slotDel != 0 {
			t.removeRow(s) // a delete-mark every view sees: the row is gone
			stat.IncU(&e.stats.PurgedRecords)
			stat.IncU(&e.stats.PurgedVersion)
		}
		return
	}
	// Fold keep into the base; the old base and the chain below keep are
	// dropped. Their entries go once the row's remaining versions are
	// what they will be (dropVersionEntries keeps the keys those have).
	old, below := t.base(s), keep.prev
	t.setBase(s, keep) // old.row stays readable: slab items are never reused
	if newer == nil {
		t.dropChain(s)
	} else {
		newer.prev = nil
	}
	keep.prev = nil
	gone := newer == nil && keep.del
	nv := 1 // the old base
	if !old.del {
		t.dropVersionEntries(s, old.row, gone)
	}
	for v := below; v != nil; v = v.prev {
		nv++
		if !v.del {
			t.dropVersionEntries(s, v.row, gone)
		}
	}
	if gone {
		t.removeRow(s)
		stat.IncU(&e.stats.PurgedRecords)
		nv++
	}
	stat.AddU(&e.stats.PurgedVersion, uint64(nv))
}
