package certify

import "math"

// DefaultHistorySize mirrors MySQL's default writeset history size
// (binlog_transaction_dependency_history_size = 25000).
const DefaultHistorySize = 25000

// HashMapConfig sizes the baseline.
type HashMapConfig struct {
	// HistorySize is the number of keys the map may hold. When adding a
	// writeset could take it past this size, keys not yet present are not
	// added, and after the transaction the map is cleared and the floor moves
	// to that transaction. 0 means DefaultHistorySize; negative means no
	// limit (a certification database that only garbage collection shrinks).
	HistorySize int
	// Base: see Config.Base (a negative value counts as 0).
	Base int64
	// SizeHint, if positive, preallocates room for that many keys.
	SizeHint int
}

// HashMap is the baseline: a map from key hash to the last sequence number
// that wrote it, with MySQL-style clearing. It exists to be measured against
// Static and is equally exact apart from when it forgets history.
type HashMap struct {
	m       map[uint64]int64
	history int
	floor   int64
	prev    int64
	counters
}

var _ Certifier = (*HashMap)(nil)

// NewHashMap returns an empty baseline certifier.
func NewHashMap(cfg HashMapConfig) *HashMap {
	h := cfg.HistorySize
	switch {
	case h == 0:
		h = DefaultHistorySize
	case h < 0:
		h = math.MaxInt
	}
	base := max(cfg.Base, 0)
	return &HashMap{m: make(map[uint64]int64, max(cfg.SizeHint, 0)), history: h, floor: base, prev: base}
}

// Len is the number of keys currently held.
func (c *HashMap) Len() int { return len(c.m) }

// Stats implements Certifier.
func (c *HashMap) Stats() Stats { return c.snapshot() }

// CertifyChecked implements Certifier.
func (c *HashMap) CertifyChecked(seq int64, writeset []uint64) (int64, error) {
	if seq <= c.prev {
		c.reject()
		return predecessor(seq), orderError(seq, c.prev)
	}
	return c.certify(seq, writeset), nil
}

// Certify implements Certifier.
func (c *HashMap) Certify(seq int64, writeset []uint64) int64 {
	if seq <= c.prev {
		c.reject()
		return predecessor(seq)
	}
	return c.certify(seq, writeset)
}

func (c *HashMap) certify(seq int64, writeset []uint64) int64 {
	c.prev = seq
	if len(writeset) == 0 {
		clear(c.m)
		c.floor = seq
		c.serialDDL++
		c.done(seq, seq-1)
		c.publish()
		return seq - 1
	}
	full := len(writeset) > c.history-len(c.m)
	lc := c.floor
	for _, k := range writeset {
		if last, ok := c.m[k]; ok {
			if last < seq && last > lc {
				lc = last
			}
			c.m[k] = seq
		} else if !full {
			c.m[k] = seq
		}
	}
	if full {
		clear(c.m)
		c.floor = seq
		c.resetsCapacity++
	}
	c.done(seq, lc)
	if full {
		c.publish()
	}
	return lc
}

// CertifyBatch implements Certifier: Certify for each transaction in turn.
func (c *HashMap) CertifyBatch(first int64, writesets [][]uint64, out []int64) {
	for i, ws := range writesets {
		out[i] = c.Certify(first+int64(i), ws)
	}
	c.publish()
}
