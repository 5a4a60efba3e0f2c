package certify

// An entry is one 8-byte slot of a Static bucket:
//
//	bits 63..48  relative sequence number (seq - base), 0..65535
//	bits 47..0   low 48 bits of the key hash
//
// The top bits of the hash are implied by the bucket the entry lives in. An
// empty slot needs no sentinel value: a bucket's count says how many leading
// slots are in use, so a key whose low 48 bits are zero, stored with relative
// number zero, is the all-zero word and still a valid entry.
const (
	keyBits = 48
	keyMask = uint64(1)<<keyBits - 1

	// MaxRelative is the largest sequence number distance from the base that
	// an entry can hold. A transaction further away forces a reset.
	MaxRelative = 1<<(64-keyBits) - 1
)

// encodeEntry packs a key remainder and a relative sequence number. Bits of
// key above 48 and of rel above 16 are dropped.
func encodeEntry(key, rel uint64) uint64 {
	return rel<<keyBits | key&keyMask
}

// entryKey is the 48-bit key remainder of an entry.
func entryKey(e uint64) uint64 { return e & keyMask }

// entryRel is the relative sequence number of an entry.
func entryRel(e uint64) uint64 { return e >> keyBits }
