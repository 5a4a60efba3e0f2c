package certify

import (
	"testing"
)

// FuzzEntryRoundTrip checks the packed entry: the 48-bit remainder and the
// 16-bit relative number come back unchanged, and the match used by the scan
// (xor, then mask) holds exactly when the remainders are equal.
func FuzzEntryRoundTrip(f *testing.F) {
	f.Add(uint64(0), uint16(0), uint64(0))
	f.Add(uint64(1)<<48, uint16(1), uint64(0))
	f.Add(^uint64(0), uint16(0xffff), keyMask)
	f.Add(uint64(0x0000_8000_0000_0000), uint16(0x8000), uint64(0x8000_0000_0000_0000))
	f.Fuzz(func(t *testing.T, key uint64, rel uint16, other uint64) {
		e := encodeEntry(key, uint64(rel))
		if got := entryKey(e); got != key&keyMask {
			t.Fatalf("entryKey(encode(%#x, %d)) = %#x", key, rel, got)
		}
		if got := entryRel(e); got != uint64(rel) {
			t.Fatalf("entryRel(encode(%#x, %d)) = %d", key, rel, got)
		}
		if got, want := (e^other)&keyMask == 0, key&keyMask == other&keyMask; got != want {
			t.Fatalf("match(%#x, %#x) = %v, want %v", e, other, got, want)
		}
		if encodeEntry(entryKey(e), entryRel(e)) != e {
			t.Fatalf("re-encoding %#x changed it", e)
		}
	})
}

// FuzzCertifyOracle drives a small Static, a tiny HashMap and a CertDB that
// collects often with an arbitrary script and holds all to the oracle. Script bytes, per
// transaction: a header byte (low 3 bits: writeset size, 0 = DDL; bit 3: a
// sequence gap of 40,000; bits 4..7: extra gap), then one byte per key
// choosing among 64 hashes that collide heavily in the small geometry.
func FuzzCertifyOracle(f *testing.F) {
	f.Add(byte(2), byte(5), []byte{0x03, 1, 2, 3, 0x01, 1, 0x00, 0x02, 3, 3})
	f.Add(byte(0), byte(0), []byte{0x07, 0, 1, 2, 3, 4, 5, 6, 0x0f, 9, 9, 9, 9, 9, 9, 9})
	f.Add(byte(4), byte(2), []byte{0x19, 1, 0x09, 1, 0x09, 1, 0x01, 1})
	f.Fuzz(func(t *testing.T, logBuckets, entries byte, script []byte) {
		if len(script) > 4096 {
			return
		}
		var keys [64]uint64
		for i := range keys {
			// Eight values of the top 6 bits (so buckets are shared) and the
			// whole index in the low 48 bits, so no two keys alias in any
			// geometry (aliasing is tested in TestStaticAliasingIsConservative).
			top := uint64(i%8 + 16*(i%2))
			keys[i] = top<<58 | uint64(i)<<20 | uint64(i%3)
		}
		cfg := Config{Buckets: 1 << (logBuckets % 7), EntriesPerBucket: 1 + int(entries%24)}
		st, err := NewStatic(cfg)
		if err != nil {
			t.Fatal(err)
		}
		subjects := []Certifier{st, NewHashMap(HashMapConfig{HistorySize: 1 + int(entries%7)}),
			NewCertDB(CertDBConfig{GCEvery: 1 + int64(entries%5), GCKeep: int64(logBuckets % 4)})}
		oracles := []*oracle{newOracle(0), newOracle(0), newOracle(0)}
		seq := int64(0)
		var ws []uint64
		for i := 0; i < len(script); {
			h := script[i]
			i++
			seq += 1 + int64(h>>4)
			if h&0x08 != 0 {
				seq += 40000
			}
			ws = ws[:0]
			for n := int(h & 7); n > 0 && i < len(script); n-- {
				ws = append(ws, keys[script[i]%64])
				i++
			}
			for j, c := range subjects {
				if !oracles[j].step(t, c, seq, ws) {
					t.Fatalf("subject %d failed at seq %d", j, seq)
				}
			}
		}
	})
}
