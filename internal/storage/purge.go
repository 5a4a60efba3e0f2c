package storage

import (
	"time"

	"lockstep/internal/stat"
	"lockstep/internal/txn"
)

// purgeItem is one committed transaction's touched records, kept until no
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
// every record touched by a transaction below the purge limit, the chain is
// cut after the newest version below the limit, index entries only cut
// versions had are removed, and records whose surviving version is a
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
	for _, it := range ready {
		for _, u := range it.undo {
			e.purgeRecord(u.t, u.rec, limit)
		}
	}
	stat.Add(&e.stats.HistoryLength, int64(-len(ready)))
	return len(ready)
}

func (e *Engine) purgeRecord(t *Table, r *record, limit txn.ID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.holds(r) {
		return // truncated, dropped or already removed: not ours to touch
	}
	// The newest version every view sees.
	var keep *version
	for v := r.head; v != nil; v = v.prev {
		if v.trx < limit {
			keep = v
			break
		}
	}
	if keep == nil {
		return
	}
	cut := keep.prev
	keep.prev = nil
	var dropped []*version
	for v := cut; v != nil; v = v.prev {
		dropped = append(dropped, v)
	}
	if keep == r.head && keep.del {
		// The row is gone for everyone: remove it and all its entries.
		dropped = append(dropped, keep)
		r.head = nil
		t.pk.Delete(r) // still t's record: checked above, under the same latch
		t.gapRemoved(PrimaryIndex, r.key)
		stat.IncU(&e.stats.PurgedRecords)
	}
	stat.AddU(&e.stats.PurgedVersion, uint64(len(dropped)))
	for _, v := range dropped {
		if v.del {
			continue
		}
		for i, s := range t.secs {
			if k, _, err := s.key(v.row); err == nil {
				t.dropEntryUnlessUsed(i, r, k)
			}
		}
	}
}
