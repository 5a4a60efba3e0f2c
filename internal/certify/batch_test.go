package certify

import (
	"math/rand/v2"
	"testing"
)

// TestCertifyBatchMatchesCertify: CertifyBatch on one Static gives exactly
// what Certify gives one transaction at a time on another, over batches of
// every size from 1 to 100 mixing shared keys, duplicate keys within a
// writeset, DDL (empty writesets) and small geometries that fill buckets
// and force resets; and no value misses a dependency the exact oracle
// knows of.
func TestCertifyBatchMatchesCertify(t *testing.T) {
	geometries := []Config{
		{},                                 // production: 65,536 x 511
		{Buckets: 16, EntriesPerBucket: 4}, // buckets fill: resets
		{Buckets: 1, EntriesPerBucket: 1},  // every other transaction resets
		{Buckets: 256, EntriesPerBucket: 64, Base: 1000},
	}
	for gi, cfg := range geometries {
		batch, err := newStatic(cfg, false)
		if err != nil {
			t.Fatal(err)
		}
		single, err := newStatic(cfg, false)
		if err != nil {
			t.Fatal(err)
		}
		o := newOracle(cfg.Base)
		r := rand.New(rand.NewPCG(uint64(gi), 7))
		seq := cfg.Base + 1
		keys := make([]uint64, 50) // a small key space: many conflicts
		for i := range keys {
			keys[i] = r.Uint64()
		}
		for size := 1; size <= 100; size++ {
			ws := make([][]uint64, size)
			for i := range ws {
				switch n := r.IntN(10); {
				case n == 0:
					ws[i] = nil // DDL
				default:
					for j := 0; j < n; j++ {
						if r.IntN(3) == 0 {
							ws[i] = append(ws[i], r.Uint64()) // a fresh key
						} else {
							ws[i] = append(ws[i], keys[r.IntN(len(keys))])
						}
					}
					if r.IntN(4) == 0 {
						ws[i] = append(ws[i], ws[i][0]) // duplicate within the writeset
					}
				}
			}
			out := make([]int64, size+3) // longer than needed is allowed
			batch.CertifyBatch(seq, ws, out)
			for i, w := range ws {
				s := seq + int64(i)
				want := single.Certify(s, w)
				if out[i] != want {
					t.Fatalf("geometry %d batch size %d txn %d (seq %d): batch %d, one by one %d", gi, size, i, s, out[i], want)
				}
				if out[i] >= s {
					t.Fatalf("seq %d: last_committed %d not below seq", s, out[i])
				}
				if exact := o.exact(w); out[i] < exact {
					t.Fatalf("seq %d: last_committed %d misses the dependency on %d", s, out[i], exact)
				}
				if len(w) == 0 && out[i] != s-1 {
					t.Fatalf("seq %d: DDL got %d, want serial %d", s, out[i], s-1)
				}
				o.record(s, w)
			}
			seq += int64(size)
		}
		bs, ss := batch.Stats(), single.Stats()
		// Stats of the one-by-one certifier may lag by up to 63 calls (see
		// Certifier.Stats); after CertifyBatch they are exact.
		if want := seq - cfg.Base - 1; bs.Certifications != want || ss.Certifications > want || ss.Certifications < want-63 ||
			bs.Resets != ss.Resets || bs.SerialDDL != ss.SerialDDL {
			t.Fatalf("geometry %d: counters differ: batch %v, single %v", gi, bs, ss)
		}
		if gi == 1 && bs.Resets == 0 {
			t.Fatalf("geometry %d never reset: %v", gi, bs)
		}
	}
}
