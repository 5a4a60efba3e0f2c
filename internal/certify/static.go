package certify

import (
	"fmt"
	"math/bits"
)

// Default geometry: 65,536 buckets of 511 entries plus one count word, that
// is 512 words or 4 KiB per bucket and 256 MiB in all.
const (
	DefaultBuckets          = 1 << 16
	DefaultEntriesPerBucket = 511

	maxEntriesPerBucket = 1 << 20
	maxBytes            = 4 << 30 // 16 times the default
)

// Config sizes a Static certifier. The zero value means the defaults.
type Config struct {
	// Buckets is the number of buckets, a power of two from 1 to 65,536.
	// The bucket of a hash is its top log2(Buckets) bits. 0 means 65,536.
	// With fewer than 65,536 buckets, the bits between the bucket index and
	// the stored low 48 bits are not kept, so two different hashes can share
	// an entry; that can only add a dependency, never lose one.
	Buckets int
	// EntriesPerBucket is the capacity of each bucket, 1 to 1<<20.
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
	if size := uint64(c.Buckets) * (uint64(c.EntriesPerBucket) + 1) * 8; size > maxBytes {
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
// All buckets live in one flat, pointer-free []uint64 allocated by NewStatic
// (outside the Go heap when large, see allocWords), so the garbage collector
// never scans it and certification never allocates. With stride =
// EntriesPerBucket+1, bucket b is words[b*stride : (b+1)*stride], used as a
// ring: its count word sits a whole number of cache lines into the bucket
// (see rotation) and its entries follow it, wrapping to the start of the
// bucket. Rotating the count line from bucket to bucket matters because
// buckets are 4 KiB: were every count at offset 0, all the hot lines would
// fall in the same few cache sets.
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
	words    []uint64
	stride   uint64 // words per bucket: EntriesPerBucket + 1
	shift    uint   // hash >> shift is the bucket index
	entries  uint64 // EntriesPerBucket
	rotLines uint64 // power of two <= stride/8: the count line offsets in use

	base  int64 // entries store seq - base
	floor int64 // answer when nothing conflicts: last reset or DDL
	prev  int64 // last accepted sequence number

	cfg       Config
	hugePages bool   // the array was advised to use transparent huge pages
	sink      uint64 // keeps the touch pass of certify from being optimised away
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
	stride := uint64(cfg.EntriesPerBucket) + 1
	rotLines := uint64(1)
	if stride >= 16 {
		rotLines = uint64(1) << (bits.Len64(stride/8) - 1)
	}
	s := &Static{
		stride:   stride,
		shift:    uint(64 - bits.TrailingZeros(uint(cfg.Buckets))),
		entries:  uint64(cfg.EntriesPerBucket),
		rotLines: rotLines,
		base:     cfg.Base,
		floor:    cfg.Base,
		prev:     cfg.Base,
		cfg:      cfg,
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

// SizeBytes is the size of the bucket array, fixed at construction.
func (s *Static) SizeBytes() int64 { return int64(len(s.words)) * 8 }

// Stats implements Certifier.
func (s *Static) Stats() Stats { return s.snapshot() }

// CertifyChecked implements Certifier.
func (s *Static) CertifyChecked(seq int64, writeset []uint64) (int64, error) {
	if seq <= s.prev {
		s.rejected.Add(1)
		return predecessor(seq), orderError(seq, s.prev)
	}
	return s.certify(seq, writeset), nil
}

// Certify implements Certifier.
func (s *Static) Certify(seq int64, writeset []uint64) int64 {
	if seq <= s.prev {
		s.rejected.Add(1)
		return predecessor(seq)
	}
	return s.certify(seq, writeset)
}

// touchAhead is how many keys the touch pass runs ahead of the update pass.
const touchAhead = 16

// certify requires seq > s.prev.
func (s *Static) certify(seq int64, writeset []uint64) int64 {
	s.prev = seq
	if len(writeset) == 0 {
		// DDL: wait for everything before, and make everything after wait
		// for this one. No reset is needed: entries older than the new floor
		// simply lose to it in the max below.
		s.floor = seq
		s.serialDDL.Add(1)
		s.done(seq, seq-1)
		return seq - 1
	}
	d := seq - s.base // > 0 because seq > prev >= base
	if d > MaxRelative {
		s.resetsRelOverflow.Add(1)
		return s.serial(seq)
	}
	cur := uint64(d)
	words := s.words
	stride, shift, capacity, rotMask := s.stride, s.shift, s.entries, s.rotLines-1
	var best uint64 // largest relative number found, excluding this transaction
	var touched uint64
	for len(writeset) > 0 {
		chunk := writeset[:min(len(writeset), touchAhead)]
		writeset = writeset[len(chunk):]
		// Touch pass: load every count word of the chunk first. The loads
		// are independent, so their cache and TLB misses overlap instead of
		// being paid one after another in the update pass.
		for _, h := range chunk {
			b := h >> shift
			touched += words[b*stride+rotation(b, rotMask)]
		}
		for _, h := range chunk {
			b := h >> shift
			start := b * stride
			bucket := words[start : start+stride : start+stride]
			rot := rotation(b, rotMask)
			n := bucket[rot]
			key := h & keyMask
			// The n entries are bucket[rot+1 : rot+1+n], wrapping past the
			// end of the bucket; rot+1 < stride always.
			first := rot + 1
			end := first + n
			slot := -1
			if end <= stride {
				for i, e := range bucket[first:end] {
					if (e^key)&keyMask == 0 {
						slot = int(first) + i
						break
					}
				}
			} else {
				slot = findWrapped(bucket, first, end-stride, key)
			}
			if slot >= 0 {
				// An entry carrying cur was written by this very
				// transaction (a duplicate key in the writeset) and is not
				// a dependency.
				if r := entryRel(bucket[slot]); r != cur && r > best {
					best = r
				}
				bucket[slot] = encodeEntry(key, cur)
				continue
			}
			if n == capacity {
				s.sink = touched
				s.resetsBucketFull.Add(1)
				return s.serial(seq)
			}
			if end >= stride {
				end -= stride
			}
			bucket[end] = encodeEntry(key, cur)
			bucket[rot] = n + 1
		}
	}
	s.sink = touched
	lc := s.base + int64(best)
	if lc < s.floor {
		lc = s.floor
	}
	s.done(seq, lc)
	return lc
}

// findWrapped finds key among bucket[first:] and bucket[:tail], the
// entries of a bucket whose ring wraps; -1 if absent.
func findWrapped(bucket []uint64, first, tail, key uint64) int {
	for i, e := range bucket[first:] {
		if (e^key)&keyMask == 0 {
			return int(first) + i
		}
	}
	for i, e := range bucket[:tail] {
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
	s.serialReset.Add(1)
	s.done(seq, seq-1)
	return seq - 1
}

// reset forgets every entry by zeroing the bucket counts (one word per
// bucket is written) and moves base and floor to seq.
func (s *Static) reset(seq int64) {
	words, stride, rotMask := s.words, s.stride, s.rotLines-1
	for b, i := uint64(0), uint64(0); i < uint64(len(words)); b, i = b+1, i+stride {
		words[i+rotation(b, rotMask)] = 0
	}
	s.base = seq
	s.floor = seq
}

// rotation is the offset, in words, of bucket b's count word inside the
// bucket: a whole number of cache lines below rotLines (mask = rotLines-1).
// It mixes bits 4..9 and 10..15 of b so that for any power-of-two cache size
// the count lines of buckets that would share a cache set without rotation
// are spread over all rotLines line offsets.
func rotation(b, mask uint64) uint64 { return ((b>>4 ^ b>>10) & mask) << 3 }

// countIndex is the index in words of bucket b's count word.
func (s *Static) countIndex(b uint64) uint64 {
	return b*s.stride + rotation(b, s.rotLines-1)
}

// count is the number of entries in bucket b (for tests).
func (s *Static) count(b uint64) uint64 { return s.words[s.countIndex(b)] }
