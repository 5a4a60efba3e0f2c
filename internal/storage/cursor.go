package storage

import (
	"bytes"
	"context"
	"fmt"

	"lockstep/internal/stat"
	"lockstep/internal/storage/slab"
	"lockstep/internal/txn"
)

const scanBatch = 128

// Cursor walks the rows of one index range in key order (or reverse). It
// collects up to scanBatch candidates under the table latch, releases it,
// and only then takes row locks (locking reads) and hands rows out, so the
// latch is never held while the caller works or a lock is awaited.
type Cursor struct {
	ctx     context.Context
	tx      *Tx
	t       *Table
	idx     int
	rng     Range
	reverse bool
	mode    txn.LockMode
	epoch   uint32 // consistent reads: own versions below it are seen

	batch     []cand
	box       *[]cand // batch's pool holder (nil: batch is not pooled)
	pos       int
	last      []byte // last index key collected (exclusive continuation)
	started   bool
	exhausted bool

	// Gap locking (gap.go): gap says the cursor takes next-key locks;
	// limit is the batch size, which for such a cursor starts at 1 and
	// doubles, so a cursor abandoned early (LIMIT) has locked few gaps
	// past its last row. past is the first entry after the range (nil:
	// the supremum) once a forward scan reached it; uniq marks a unique
	// equality range, hit that it found its row (no gap locks).
	gap, uniq, hit bool
	limit          int
	past           []byte
}

type cand struct {
	ref   rref
	pk    []byte // the row's primary key
	ekey  []byte // the entry's key in the index (gap locking)
	ikey  []byte // index key part (secondary scans)
	row   []byte // consistent reads: the visible row
	found bool
	hit   bool // a unique equality's row: locked without its gap
}

// Cursor opens a cursor over index idx (PrimaryIndex or a secondary index
// number) for keys in rng. mode 0 is a consistent read; LockS/LockX lock each
// row's primary key before reading its latest committed version.
func (tx *Tx) Cursor(ctx context.Context, t *Table, idx int, rng Range, reverse bool, mode txn.LockMode) *Cursor {
	c := new(Cursor)
	tx.CursorIn(c, ctx, t, idx, rng, reverse, mode)
	return c
}

// CursorIn is Cursor in the caller's memory: c is a Cursor nothing else
// uses (a field of an object the caller allocates once per statement, so
// the cursor costs no allocation of its own). A cursor keeps nothing
// after Close, and nothing outside it points at it.
func (tx *Tx) CursorIn(c *Cursor, ctx context.Context, t *Table, idx int, rng Range, reverse bool, mode txn.LockMode) {
	*c = Cursor{ctx: ctx, tx: tx, t: t, idx: idx, rng: rng, reverse: reverse, mode: mode, limit: scanBatch}
	if tx.gapLocking(mode) {
		c.gap, c.limit = true, 1
	}
	if mode == 0 {
		tx.trx.ReadView() // REPEATABLE READ: the first consistent read fixes the snapshot
	}
	// A locking cursor too never returns what its own transaction wrote
	// after it opened (tx.currentBefore): an UPDATE that moves a row's key
	// ahead of its own scan must not reach the row again, even when a
	// trigger's statement has started a new statement number meanwhile.
	c.epoch = tx.readEpoch()
}

// Next returns the next row's primary key and row; ok is false at the end.
func (c *Cursor) Next() (pk, row []byte, ok bool, err error) {
	for {
		for c.pos < len(c.batch) {
			cd := &c.batch[c.pos]
			c.pos++
			row, found := cd.row, cd.found
			if c.mode != 0 {
				if err := c.tx.lockRead(c.ctx, c.t, PrimaryIndex, cd.pk, c.mode); err == errSkipLocked {
					continue
				} else if err != nil {
					return nil, nil, false, err
				}
				if c.mode == txn.LockX {
					c.tx.lockedX(c.t, cd.pk)
				}
				c.t.mu.RLock()
				if c.t.holds(cd.ref) {
					if v, ok := c.tx.currentBefore(c.t, cd.ref.slot(), c.epoch); ok && !v.del && (c.idx == PrimaryIndex || c.t.secs[c.idx].hasKey(v.row, cd.ikey)) {
						row, found = v.row, true
					}
				}
				if cd.hit && !found && !c.t.dropped {
					// The unique equality's row went away before its lock
					// was granted: lock the gap where its key would be.
					c.tx.lockGap(c.t, c.idx, c.t.succEntry(c.idx, cd.ekey, true), c.mode)
				}
				c.t.mu.RUnlock()
			}
			if found {
				stat.IncU(&c.tx.e.stats.RowsRead)
				return cd.pk, row, true, nil
			}
		}
		if c.exhausted {
			c.Close()
			return nil, nil, false, nil
		}
		if c.tx.done {
			return nil, nil, false, ErrTxDone
		}
		if err := c.ctx.Err(); err != nil {
			return nil, nil, false, err
		}
		if err := c.fill(); err != nil {
			return nil, nil, false, err
		}
	}
}

// Close gives the cursor's candidate buffer back to the engine; Next then
// reports the end. A cursor read to its end closes itself; Close is for one
// abandoned early (LIMIT, an error), and may be called more than once.
func (c *Cursor) Close() {
	if c.box != nil {
		clear(c.batch) // no key or row kept alive by the pool
		*c.box = c.batch[:0]
		c.t.e.batches.Put(c.box)
	}
	c.batch, c.box, c.pos, c.exhausted = nil, nil, 0, true
}

// fill collects the next batch of candidates under the table latch.
func (c *Cursor) fill() error {
	if c.box == nil {
		// One buffer of scanBatch candidates per cursor, reused across
		// cursors through the engine's pool: growing a fresh slice cost
		// several allocations per short range read.
		if b, ok := c.t.e.batches.Get().(*[]cand); ok {
			c.box = b
		} else {
			b := make([]cand, 0, scanBatch)
			c.box = &b
		}
		c.batch = *c.box
	}
	c.batch = c.batch[:0]
	c.pos = 0
	t := c.t
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.dropped {
		return ErrTableDropped
	}
	visit := func(key []byte, pk []byte, s uint32) bool {
		if c.started && bytes.Equal(key, c.last) {
			return true
		}
		if !c.reverse && c.rng.Hi != nil && bytes.Compare(key, c.rng.Hi) >= 0 {
			c.exhausted = true
			c.past = key
			return false
		}
		if c.reverse && c.rng.Lo != nil && bytes.Compare(key, c.rng.Lo) < 0 {
			c.exhausted = true
			return false
		}
		cd := cand{ref: t.ref(s), pk: pk, ekey: key}
		if c.idx != PrimaryIndex {
			cd.ikey = key[:len(key)-len(pk)]
		}
		if c.mode == 0 {
			if v, ok := c.tx.visible(t, s, c.epoch); ok && !v.del {
				if c.idx == PrimaryIndex || t.secs[c.idx].hasKey(v.row, cd.ikey) {
					cd.row, cd.found = v.row, true
				}
			}
		}
		c.batch = append(c.batch, cd)
		c.last = key
		c.started = true
		return len(c.batch) < c.limit
	}
	// start is where this batch begins: the previous batch's last key or
	// the range bound.
	if c.idx != PrimaryIndex && (c.idx < 0 || c.idx >= len(t.secs)) {
		return fmt.Errorf("storage: table %s has no index %d", t.name, c.idx)
	}
	first := !c.started
	if c.gap && first {
		if c.uniq = c.uniqueEq(); c.uniq {
			c.limit = scanBatch // decide hit or miss on the whole range at once
		}
	}
	var start []byte
	switch {
	case c.started:
		start = c.last
	case !c.reverse:
		start = c.rng.Lo
	default:
		start = c.rng.Hi
	}
	if c.idx == PrimaryIndex {
		iter := func(ref uint64) bool {
			k := t.pkOf(uint32(ref))
			return visit(k, k, uint32(ref))
		}
		switch {
		case !c.reverse && start == nil:
			t.pk.Scan(iter)
		case !c.reverse:
			t.pk.Ascend(start, iter)
		case start == nil:
			t.pk.Reverse(iter)
		default:
			excl := !c.started // Hi is exclusive
			t.pk.Descend(start, func(ref uint64) bool {
				if excl && bytes.Equal(t.pkOf(uint32(ref)), start) {
					return true
				}
				return iter(ref)
			})
		}
	} else {
		tree := t.secs[c.idx].tree
		iter := func(ref uint64) bool {
			ek, s := t.entryAt(slab.Loc(ref))
			return visit(ek, t.pkOf(s), s)
		}
		switch {
		case !c.reverse && start == nil:
			tree.Scan(iter)
		case !c.reverse:
			tree.Ascend(start, iter)
		case start == nil:
			tree.Reverse(iter)
		default:
			excl := !c.started
			tree.Descend(start, func(ref uint64) bool {
				if excl && bytes.Equal(t.item(slab.Loc(ref)), start) {
					return true
				}
				return iter(ref)
			})
		}
	}
	if len(c.batch) < c.limit {
		c.exhausted = true
	}
	if c.gap && first && c.uniq && !c.exactIn() && len(c.batch) > 1 {
		// The range's shape is a unique equality's, but no entry has the
		// key itself: the range is a prefix of longer keys (`WHERE a = 1`
		// over PRIMARY KEY (a, b) has the same bounds as a whole key). Read
		// it as any range, from its first entry, so a LIMIT 1 locks one
		// entry's gap and not a batch's (128 gaps for Delivery's `ORDER BY
		// no_o_id LIMIT 1 FOR UPDATE`). A unique equality that misses has
		// no entry in its range, or only entries of its own key.
		c.uniq = false
		c.batch = c.batch[:1]
		c.last = c.batch[0].ekey
		c.exhausted, c.past, c.limit = false, nil, 1
	}
	if c.gap {
		c.lockBatchGaps(first)
		c.limit = min(2*c.limit, scanBatch)
	}
	return nil
}

// exactIn reports whether the batch holds an entry whose key (a secondary
// index's key part) is the range's low bound itself. Caller holds t.mu.
func (c *Cursor) exactIn() bool {
	for i := range c.batch {
		k := c.batch[i].ekey
		if c.idx != PrimaryIndex {
			k = c.batch[i].ikey
		}
		if bytes.Equal(k, c.rng.Lo) {
			return true
		}
	}
	return false
}

// Scan calls fn for every row of a cursor over the same arguments; fn
// returning false stops the scan.
func (tx *Tx) Scan(ctx context.Context, t *Table, idx int, rng Range, reverse bool, mode txn.LockMode,
	fn func(pk, row []byte) (bool, error)) error {
	c := tx.Cursor(ctx, t, idx, rng, reverse, mode)
	defer c.Close()
	for {
		pk, row, ok, err := c.Next()
		if err != nil || !ok {
			return err
		}
		more, err := fn(pk, row)
		if err != nil || !more {
			return err
		}
	}
}
