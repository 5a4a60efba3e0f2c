package commit

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"lockstep/internal/certify"
)

var errEncode = errors.New("encode failed")

func mustStatic(t testing.TB, cfg certify.Config) *certify.Static {
	t.Helper()
	c, err := certify.NewStatic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// seqTxn is a Txn for sequencer tests; fail makes its Encode fail.
func seqTxn(ws []uint64, fail bool) *Txn {
	return &Txn{Writeset: ws, Encode: func(pos Position) ([]byte, error) {
		seq, lc := pos.Seq, pos.LastCommitted
		if fail {
			return nil, errEncode
		}
		return payload(seq, lc), nil
	}}
}

func slotsFor(txns []*Txn) []slot {
	s := make([]slot, len(txns))
	for i, t := range txns {
		s[i].txn = t
	}
	return s
}

// TestSequencerMatchesCertify: with no failures, groups of any size get
// dense numbers and exactly the last_committed a certifier computes one
// transaction at a time, DDL included.
func TestSequencerMatchesCertify(t *testing.T) {
	for _, cfg := range []certify.Config{
		{Buckets: 256, EntriesPerBucket: 31},
		{Buckets: 16, EntriesPerBucket: 3}, // resets often
	} {
		t.Run(fmt.Sprintf("%dx%d", cfg.Buckets, cfg.EntriesPerBucket), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			sq := newSequencer(mustStatic(t, cfg), 1)
			ref := mustStatic(t, cfg)
			next := int64(1)
			for range 500 {
				txns := make([]*Txn, 1+r.IntN(40))
				for i := range txns {
					txns[i] = seqTxn(randomWriteset(r, 300, 5), false)
				}
				slots := slotsFor(txns)
				if ok := sq.assign(slots); ok != len(slots) {
					t.Fatalf("%d of %d encoded", ok, len(slots))
				}
				for _, sl := range slots {
					if sl.seq != next {
						t.Fatalf("seq %d, want %d", sl.seq, next)
					}
					if want := ref.Certify(next, sl.txn.Writeset); sl.lastCommitted != want {
						t.Fatalf("seq %d: last_committed %d, certifier alone %d", next, sl.lastCommitted, want)
					}
					if s, lc := decode(sl.payload); s != sl.seq || lc != sl.lastCommitted {
						t.Fatalf("payload (%d, %d) for seq %d lc %d", s, lc, sl.seq, sl.lastCommitted)
					}
					next++
				}
			}
			if sq.skipped != 0 || len(sq.holes) != 0 {
				t.Errorf("holes without failures: %d %v", sq.skipped, sq.holes)
			}
		})
	}
}

// TestSequencerFailuresProperty drives the sequencer with Encode failures
// and aborted groups (failed appends) and checks, against an exact oracle
// over the transactions that reached the log: sequence numbers stay dense,
// last_committed is below seq and covers every real dependency (the last
// earlier writer of a shared key, and the last DDL), and DDL is serial.
func TestSequencerFailuresProperty(t *testing.T) {
	tests := []struct {
		name     string
		cfg      certify.Config
		failPct  int // Encode failures, per transaction
		abortPct int // failed appends, per group
		ddlPct   int
		space    uint64
		maxGroup int
	}{
		{"encode-failures", certify.Config{Buckets: 256, EntriesPerBucket: 63}, 10, 0, 0, 200, 30},
		{"aborts", certify.Config{Buckets: 256, EntriesPerBucket: 63}, 0, 15, 0, 200, 30},
		{"both", certify.Config{Buckets: 256, EntriesPerBucket: 63}, 10, 10, 0, 100, 20},
		{"both+ddl", certify.Config{Buckets: 256, EntriesPerBucket: 63}, 10, 10, 3, 100, 20},
		{"both+resets", certify.Config{Buckets: 16, EntriesPerBucket: 5}, 10, 10, 0, 1000, 20},
		{"heavy", certify.Config{Buckets: 64, EntriesPerBucket: 15}, 40, 30, 5, 50, 10},
		{"singletons", certify.Config{Buckets: 64, EntriesPerBucket: 15}, 20, 20, 2, 30, 1},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 99))
			const start = 10
			sq := newSequencer(mustStatic(t, certify.Config{
				Buckets: tc.cfg.Buckets, EntriesPerBucket: tc.cfg.EntriesPerBucket, Base: start - 1,
			}), start)
			last := map[uint64]int64{} // key -> last seq in the log that wrote it
			floor := int64(start - 1)
			next := int64(start)
			maxHoles := 0
			for range 3000 {
				txns := make([]*Txn, 1+r.IntN(tc.maxGroup))
				for i := range txns {
					txns[i] = seqTxn(randomWriteset(r, tc.space, tc.ddlPct), r.IntN(100) < tc.failPct)
				}
				slots := slotsFor(txns)
				ok := sq.assign(slots)
				maxHoles = max(maxHoles, len(sq.holes))
				if r.IntN(100) < tc.abortPct {
					sq.abort(slots)
					if sq.nextSeq != next {
						t.Fatalf("after abort next seq %d, want %d", sq.nextSeq, next)
					}
					continue
				}
				n := 0
				for _, sl := range slots {
					if sl.err != nil {
						if !errors.Is(sl.err, errEncode) || sl.seq != 0 {
							t.Fatalf("failed slot: %+v", sl)
						}
						continue
					}
					n++
					ws := sl.txn.Writeset
					if sl.seq != next {
						t.Fatalf("seq %d, want %d (not dense)", sl.seq, next)
					}
					need := floor
					for _, k := range ws {
						need = max(need, last[k])
					}
					if sl.lastCommitted >= sl.seq || sl.lastCommitted < need {
						t.Fatalf("seq %d: last_committed %d, want in [%d, %d)", sl.seq, sl.lastCommitted, need, sl.seq)
					}
					if len(ws) == 0 {
						if sl.lastCommitted != sl.seq-1 {
							t.Fatalf("DDL seq %d got %d", sl.seq, sl.lastCommitted)
						}
						floor = sl.seq
					}
					for _, k := range ws {
						last[k] = sl.seq
					}
					next++
				}
				if n != ok {
					t.Fatalf("assign said %d, %d slots succeeded", ok, n)
				}
				if sq.nextSeq != sq.nextCert-sq.skipped {
					t.Fatalf("next seq %d != next certifier number %d - skipped %d", sq.nextSeq, sq.nextCert, sq.skipped)
				}
			}
			st := sq.cert.Stats()
			t.Logf("seqs %d..%d, certifier numbers to %d, holes listed %d (max %d) of %d; certifier %v",
				start, next-1, sq.nextCert-1, len(sq.holes), maxHoles, sq.skipped, st)
			if st.SerialFallbacks() > 20 && tc.failPct+tc.abortPct > 0 && maxHoles > 2000 {
				t.Errorf("holes are not forgotten after floors: max %d listed", maxHoles)
			}
		})
	}
}

// TestSequencerToSeq checks the mapping from certifier numbers to sequence
// numbers against holes placed by hand.
func TestSequencerToSeq(t *testing.T) {
	tests := []struct {
		name    string
		holes   []int64 // added in this order
		dropped int64   // holes already forgotten (all below the numbers mapped)
		in      []int64
		want    []int64
	}{
		{"none", nil, 0, []int64{0, 1, 7}, []int64{0, 1, 7}},
		{"one", []int64{5}, 0, []int64{3, 4, 5, 6, 9}, []int64{3, 4, 4, 5, 8}},
		{"run", []int64{5, 6, 7}, 0, []int64{4, 5, 6, 7, 8, 20}, []int64{4, 4, 4, 4, 5, 17}},
		{"two-runs", []int64{2, 3, 8}, 0, []int64{1, 2, 3, 4, 7, 8, 9}, []int64{1, 1, 1, 2, 5, 5, 6}},
		{"out-of-order", []int64{4, 9, 6, 5, 7}, 0, []int64{3, 4, 5, 8, 9, 10}, []int64{3, 3, 3, 4, 4, 5}},
		{"dropped", []int64{20}, 3, []int64{19, 20, 21}, []int64{16, 16, 17}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sq := newSequencer(nil, 1)
			sq.skipped = tc.dropped
			for _, h := range tc.holes {
				sq.addHole(h)
			}
			for i, x := range tc.in {
				if got := sq.toSeq(x); got != tc.want[i] {
					t.Errorf("toSeq(%d) = %d, want %d (holes %v)", x, got, tc.want[i], sq.holes)
				}
			}
			for i := 1; i < len(sq.holes); i++ {
				if sq.holes[i].lo <= sq.holes[i-1].hi+1 {
					t.Errorf("holes not sorted and merged: %v", sq.holes)
				}
			}
		})
	}
}

// TestSequencerForgetsHoles: once the certifier sets a floor (DDL) past the
// holes, they leave the list and the mapping stays right.
func TestSequencerForgetsHoles(t *testing.T) {
	sq := newSequencer(mustStatic(t, certify.Config{Buckets: 64, EntriesPerBucket: 15}), 1)
	k := []uint64{mix(1)}
	// Group 1: seq 1 ok, the second fails -> certifier number 2 is a hole.
	s := slotsFor([]*Txn{seqTxn(k, false), seqTxn(k, true)})
	sq.assign(s)
	if len(sq.holes) != 1 || sq.skipped != 1 {
		t.Fatalf("holes %v skipped %d", sq.holes, sq.skipped)
	}
	// Group 2: a write to k (depends on seq 1), then DDL.
	s = slotsFor([]*Txn{seqTxn(k, false), seqTxn(nil, false)})
	sq.assign(s)
	if s[0].seq != 2 || s[0].lastCommitted != 1 || s[1].seq != 3 || s[1].lastCommitted != 2 {
		t.Fatalf("group 2: %+v", s)
	}
	// The DDL happened in group 2, after the hole: the hole is forgotten.
	if len(sq.holes) != 0 || sq.skipped != 1 {
		t.Fatalf("after DDL: holes %v skipped %d", sq.holes, sq.skipped)
	}
	s = slotsFor([]*Txn{seqTxn(k, false), seqTxn([]uint64{mix(2)}, false)})
	sq.assign(s)
	if s[0].seq != 4 || s[0].lastCommitted != 3 || s[1].seq != 5 || s[1].lastCommitted != 3 {
		t.Fatalf("group 3: %+v", s)
	}
}
