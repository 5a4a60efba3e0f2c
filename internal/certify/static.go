package certify

import (
	"fmt"
	"math/bits"
)

// Default geometry: 65,536 buckets of 511 eight-byte entries (4,088 bytes
// each, 255.5 MiB in all) and a 16-bit count per bucket (128 KiB).
const (
	DefaultBuckets          = 1 << 16
	DefaultEntriesPerBucket = 511

	maxEntriesPerBucket = 1<<16 - 1 // counts are uint16
	maxBytes            = 4 << 30   // 16 times the default
)

// Config sizes a Static certifier. The zero value means the defaults.
type Config struct {
	// Buckets is the number of buckets, a power of two from 1 to 65,536.
	// The bucket of a hash is its top log2(Buckets) bits. 0 means 65,536.
	// With fewer than 65,536 buckets, the bits between the bucket index and
	// the stored low 48 bits are not kept, so two different hashes can share
	// an entry; that can only add a dependency, never lose one.
	Buckets int
	// EntriesPerBucket is the capacity of each bucket, 1 to 65,535.
	// 0 means 511.
	EntriesPerBucket int
	// Base is the sequence number already known to be committed when the
	// certifier starts (for instance the last one recovered from the log);
	// the first transaction must have a larger sequence number, and one
	// that conflicts with nothing gets Base. Must not be negative.
	Base int64
}

// DefaultConfig is the production geometry: 65,536 x 511, 256 MiB.
func DefaultConfig() Config {
	return Config{Buckets: DefaultBuckets, EntriesPerBucket: DefaultEntriesPerBucket}
}

func (c Config) withDefaults() Config {
	if c.Buckets == 0 {
		c.Buckets = DefaultBuckets
	}
	if c.EntriesPerBucket == 0 {
		c.EntriesPerBucket = DefaultEntriesPerBucket
	}
	return c
}

// Validate reports whether the configuration (after defaults) is usable.
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.Buckets < 1 || c.Buckets > DefaultBuckets || c.Buckets&(c.Buckets-1) != 0 {
		return fmt.Errorf("certify: Buckets = %d, want a power of two from 1 to %d", c.Buckets, DefaultBuckets)
	}
	if c.EntriesPerBucket < 1 || c.EntriesPerBucket > maxEntriesPerBucket {
		return fmt.Errorf("certify: EntriesPerBucket = %d, want 1 to %d", c.EntriesPerBucket, maxEntriesPerBucket)
	}
	if size := uint64(c.Buckets) * (uint64(c.EntriesPerBucket)*8 + 2); size > maxBytes {
		return fmt.Errorf("certify: %d buckets of %d entries take %d bytes, more than the limit of %d",
			c.Buckets, c.EntriesPerBucket, size, uint64(maxBytes))
	}
	if c.Base < 0 {
		return fmt.Errorf("certify: Base = %d, want >= 0", c.Base)
	}
	return nil
}

// Static is the fixed-array certifier. See the package documentation and
// docs/certify.md for the layout and its invariants.
//
// The entries of all buckets live in one flat, pointer-free []uint64
// allocated by NewStatic (outside the Go heap when large, see allocWords):
// bucket b is words[b*stride : b*stride+EntriesPerBucket], and its first
// counts[b] entries are in use. The counts are a separate dense []uint16
// (128 KiB at the default size) rather than a word inside each bucket: they
// stay in the CPU's L2 cache, a bucket with no entries is never touched to
// look a key up, and a reset zeroes 128 KiB instead of touching 65,536
// scattered cache lines. The garbage collector never scans either array and
// certification never allocates.
//
// Invariants between calls:
//   - base <= floor <= prev;
//   - every entry's relative number is at most MaxRelative (a transaction
//     further than that from base resets instead of being stored);
//   - an entry in use holds, for its key, the latest sequence number in
//     (base, prev] that wrote the key, as seq - base; keys not written since
//     base have no entry;
//   - every key written by a transaction <= floor is covered by floor itself,
//     whether or not it still has an entry.
type Static struct {
	words  []uint64
	counts []uint16
	stride uint64 // words per bucket: EntriesPerBucket
	shift  uint   // hash >> shift is the bucket index
	limit  uint16 // EntriesPerBucket

	base  int64 // entries store seq - base
	floor int64 // answer when nothing conflicts: last reset or DDL
	prev  int64 // last accepted sequence number

	cfg       Config
	hugePages bool // the array was advised to use transparent huge pages
	counters
}

var _ Certifier = (*Static)(nil)

// NewStatic allocates the whole structure once. The default configuration
// takes 256 MiB of address space; pages become resident as buckets are used.
func NewStatic(cfg Config) (*Static, error) { return newStatic(cfg, true) }

// newStatic is NewStatic; with largePages false the array is an ordinary
// heap slice with the default page size (for measuring what huge pages buy).
func newStatic(cfg Config, largePages bool) (*Static, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// Buckets are packed with no padding: with 511 entries a bucket is 4,088
	// bytes, so bucket starts drift by 8 bytes from one page to the next.
	// That matters: only the first line or two of a bucket are hot between
	// resets, and were buckets 4 KiB apart those lines would all fall into
	// the same few sets of every cache (measured: 28 against 18 ns per key
	// with all buckets cached).
	stride := uint64(cfg.EntriesPerBucket)
	s := &Static{
		counts: make([]uint16, cfg.Buckets),
		stride: stride,
		shift:  uint(64 - bits.TrailingZeros(uint(cfg.Buckets))),
		limit:  uint16(cfg.EntriesPerBucket),
		base:   cfg.Base,
		floor:  cfg.Base,
		prev:   cfg.Base,
		cfg:    cfg,
	}
	if largePages {
		s.words, s.hugePages = allocWords(s, cfg.Buckets*int(stride))
	} else {
		s.words = make([]uint64, cfg.Buckets*int(stride))
	}
	return s, nil
}

// Config returns the configuration in use, defaults filled in.
func (s *Static) Config() Config { return s.cfg }

// SizeBytes is the size of the bucket array and the counts, fixed at
// construction.
func (s *Static) SizeBytes() int64 { return int64(len(s.words))*8 + int64(len(s.counts))*2 }

// Stats implements Certifier.
func (s *Static) Stats() Stats { return s.snapshot() }

// CertifyChecked implements Certifier.
func (s *Static) CertifyChecked(seq int64, writeset []uint64) (int64, error) {
	if seq <= s.prev {
		s.reject()
		return predecessor(seq), orderError(seq, s.prev)
	}
	return s.certify(seq, writeset), nil
}

// Certify implements Certifier.
func (s *Static) Certify(seq int64, writeset []uint64) int64 {
	if seq <= s.prev {
		s.reject()
		return predecessor(seq)
	}
	s.prefetch(writeset)
	return s.certify(seq, writeset)
}

// batchAhead is how many transactions CertifyBatch prefetches ahead of the
// one it certifies: enough to cover a memory latency with the work of the
// transactions in between, few enough that the prefetched lines are still
// in the L1/L2 cache when they are used.
const batchAhead = 2

// CertifyBatch implements Certifier. While it certifies one transaction, it
// has the CPU fetch the buckets of the next ones, so the cache misses of a
// batch overlap with its work instead of being paid one transaction at a
// time.
func (s *Static) CertifyBatch(first int64, writesets [][]uint64, out []int64) {
	out = out[:len(writesets)]
	for i := range min(batchAhead, len(writesets)) {
		s.prefetch(writesets[i])
	}
	for i, ws := range writesets {
		if j := i + batchAhead; j < len(writesets) {
			s.prefetch(writesets[j])
		}
		seq := first + int64(i)
		if seq <= s.prev {
			s.reject()
			out[i] = predecessor(seq)
			continue
		}
		out[i] = s.certify(seq, ws)
	}
	s.publish()
}

// prefetch asks for the entries in use of the bucket of each key, up to
// the first eight (one or two cache lines, as buckets are not line-aligned).
// Buckets with no entries need no read.
func (s *Static) prefetch(writeset []uint64) {
	counts, words, stride, shift := s.counts, s.words, s.stride, s.shift
	for _, h := range writeset {
		b := h >> shift
		if n := uint64(counts[b]); n != 0 {
			start := b * stride
			prefetchLine(&words[start])
			if n > 1 {
				prefetchLine(&words[start+min(n, 8)-1])
			}
		}
	}
}

// certify requires seq > s.prev.
func (s *Static) certify(seq int64, writeset []uint64) int64 {
	s.prev = seq
	if len(writeset) == 0 {
		// DDL: wait for everything before, and make everything after wait
		// for this one. No reset is needed: entries older than the new floor
		// simply lose to it in the max below.
		s.floor = seq
		s.serialDDL++
		s.done(seq, seq-1)
		s.publish()
		return seq - 1
	}
	d := seq - s.base // > 0 because seq > prev >= base
	if d > MaxRelative {
		s.resetsRelOverflow++
		return s.serial(seq)
	}
	cur := uint64(d)
	counts, words, stride, shift, limit := s.counts, s.words, s.stride, s.shift, s.limit
	var best uint64 // largest relative number found, excluding this transaction
	for _, h := range writeset {
		b := h >> shift
		n := counts[b]
		start := b * stride
		key := h & keyMask
		if i := find(words, start, uint64(n), key); i >= 0 {
			// An entry carrying cur was written by this very transaction
			// (a duplicate key in the writeset) and is not a dependency.
			if r := entryRel(words[start+uint64(i)]); r != cur && r > best {
				best = r
			}
			words[start+uint64(i)] = encodeEntry(key, cur)
			continue
		}
		if n == limit {
			s.resetsBucketFull++
			return s.serial(seq)
		}
		words[start+uint64(n)] = encodeEntry(key, cur)
		counts[b] = n + 1
	}
	lc := s.base + int64(best)
	if lc < s.floor {
		lc = s.floor
	}
	s.done(seq, lc)
	return lc
}

// find returns the index, from start, of the entry for key among the n
// entries in use at words[start:], or -1. A key has at most one entry.
// (Comparing a fixed eight entries without branches was tried: slower,
// because it reads a bucket's lines even when few or none are in use.)
func find(words []uint64, start, n, key uint64) int {
	for i, e := range words[start : start+n] {
		if (e^key)&keyMask == 0 {
			return i
		}
	}
	return -1
}

// serial resets the structure at seq and answers seq-1. The keys of seq need
// not be stored: with floor = base = seq, every later transaction gets at
// least seq, which already orders it after this one.
func (s *Static) serial(seq int64) int64 {
	s.reset(seq)
	s.serialReset++
	s.done(seq, seq-1)
	s.publish()
	return seq - 1
}

// reset forgets every entry by zeroing the bucket counts and moves base and
// floor to seq. The entries themselves are not touched.
func (s *Static) reset(seq int64) {
	clear(s.counts)
	s.base = seq
	s.floor = seq
}

// count is the number of entries in bucket b (for tests).
func (s *Static) count(b uint64) uint64 { return uint64(s.counts[b]) }
