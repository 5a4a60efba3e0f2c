package certify

import (
	"encoding/base64"
	"encoding/binary"
)

// CertDB is a second baseline, shaped after group replication's
// certification database rather than after the writeset history: a hash map
// from the writeset item as a string (the base64 text of the 8-byte hash,
// 12 characters, as group replication sends them) to a per-transaction
// snapshot object that every key the transaction wrote points to. Garbage collection runs every GCEvery transactions,
// drops the entries of transactions at least GCKeep behind, and, not knowing
// which keys it dropped, moves the floor to the current transaction (as
// group replication does after purging its certification info).
//
// Compared with HashMap it pays for string keys (hashing 12 bytes, a heap
// string for every new key), a pointer chase to the snapshot for every
// conflict check, an allocation per transaction, and a heap full of
// pointers for the garbage collector to trace. It exists to be measured
// against Static; it is as exact as HashMap between collections.
type CertDB struct {
	m       map[string]*certItem
	gcEvery int64
	gcKeep  int64
	nextGC  int64
	floor   int64
	prev    int64
	key     [12]byte
	counters
}

// certSnapshot is what the map's values point to: one per transaction
// (group replication's reference-counted GTID set; here the garbage
// collector does the counting).
type certSnapshot struct {
	seq int64
}

// certItem is the map's value: a pointer to the snapshot of the last
// transaction that wrote the key. It is a separate, mutable object so that
// a key already present is updated without storing a new key string, as
// group replication updates the value in place.
type certItem struct {
	snap *certSnapshot
}

// CertDBConfig sizes the certification-database baseline.
type CertDBConfig struct {
	// GCEvery is the number of transactions between garbage collections;
	// 0 means never (group replication collects once a minute).
	GCEvery int64
	// GCKeep is how far behind the current transaction an entry's writer
	// must be for a collection to drop it (the stable set lags the group).
	GCKeep int64
	// Base: see Config.Base (a negative value counts as 0).
	Base int64
	// SizeHint, if positive, preallocates room for that many keys.
	SizeHint int
}

var _ Certifier = (*CertDB)(nil)

// NewCertDB returns an empty certification-database baseline.
func NewCertDB(cfg CertDBConfig) *CertDB {
	base := max(cfg.Base, 0)
	c := &CertDB{
		m:       make(map[string]*certItem, max(cfg.SizeHint, 0)),
		gcEvery: max(cfg.GCEvery, 0),
		gcKeep:  max(cfg.GCKeep, 0),
		floor:   base,
		prev:    base,
	}
	c.nextGC = base + c.gcEvery
	return c
}

// Len is the number of keys currently held.
func (c *CertDB) Len() int { return len(c.m) }

// Stats implements Certifier.
func (c *CertDB) Stats() Stats { return c.snapshot() }

// CertifyChecked implements Certifier.
func (c *CertDB) CertifyChecked(seq int64, writeset []uint64) (int64, error) {
	if seq <= c.prev {
		c.reject()
		return predecessor(seq), orderError(seq, c.prev)
	}
	return c.certify(seq, writeset), nil
}

// Certify implements Certifier.
func (c *CertDB) Certify(seq int64, writeset []uint64) int64 {
	if seq <= c.prev {
		c.reject()
		return predecessor(seq)
	}
	return c.certify(seq, writeset)
}

// CertifyBatch implements Certifier: Certify for each transaction in turn.
func (c *CertDB) CertifyBatch(first int64, writesets [][]uint64, out []int64) {
	for i, ws := range writesets {
		out[i] = c.Certify(first+int64(i), ws)
	}
	c.publish()
}

func (c *CertDB) certify(seq int64, writeset []uint64) int64 {
	c.prev = seq
	if len(writeset) == 0 {
		// Like group replication, a transaction without a writeset moves
		// the floor and keeps the certification info.
		c.floor = seq
		c.serialDDL++
		c.done(seq, seq-1)
		c.publish()
		return seq - 1
	}
	snap := &certSnapshot{seq: seq}
	lc := c.floor
	var raw [8]byte
	for _, h := range writeset {
		binary.BigEndian.PutUint64(raw[:], h)
		base64.StdEncoding.Encode(c.key[:], raw[:])
		item, ok := c.m[string(c.key[:])]
		if !ok {
			c.m[string(c.key[:])] = &certItem{snap: snap}
			continue
		}
		// A duplicate key in the writeset finds this very snapshot.
		if old := item.snap; old != snap && old.seq > lc {
			lc = old.seq
		}
		item.snap = snap
	}
	c.done(seq, lc)
	if c.gcEvery > 0 && seq >= c.nextGC {
		c.collect(seq)
	}
	return lc
}

// collect drops the entries of transactions at least gcKeep behind seq and
// moves the floor to seq.
func (c *CertDB) collect(seq int64) {
	stable := seq - c.gcKeep
	for k, item := range c.m {
		if item.snap.seq <= stable {
			delete(c.m, k)
		}
	}
	c.floor = seq
	c.nextGC = seq + c.gcEvery
	c.resetsCapacity++
	c.publish()
}
