package apply

import (
	"slices"
	"testing"

	"lockstep/internal/record"
)

// wsTxn is a transaction record writing keys ws that claims last_committed
// lc (what a source without the field would leave: 0).
func wsTxn(seq, lc int64, ws ...uint64) []byte {
	return record.AppendTxn(nil, &record.Txn{Position: record.Position{Seq: seq, GNO: seq, LastCommitted: lc}, Writeset: ws})
}

// Key hashes in different buckets of the certifier (top 16 bits).
const (
	keyA = 1 << 60
	keyB = 2 << 60
	keyC = 3 << 60
)

// TestRecertify: with Options.Recertify the machine ignores the records'
// last_committed and computes it from their writesets in sequence order:
// a transaction depends on the last one that wrote one of its keys, DDL
// and accounts are serial and everything after them depends on them, and
// from a checkpoint the certifier starts at its sequence number.
func TestRecertify(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		entries []entry
		want    []int64 // last_committed of each step handed out, in order
		serial  int64   // Stats.SerialDeps
	}{
		{
			name: "conflicts found, claims of independence ignored",
			entries: []entry{{1, [][]byte{wsTxn(1, 0, keyA), wsTxn(2, 0, keyB), wsTxn(3, 0, keyA)}},
				{2, [][]byte{wsTxn(4, 0, keyC)}}, {3, [][]byte{wsTxn(5, 0, keyB, keyC)}}, {4, [][]byte{wsTxn(6, 0, keyA, keyB)}}},
			want: []int64{0, 0, 1, 0, 4, 5},
		},
		{
			name: "a claimed dependency that is not one is dropped too",
			entries: []entry{{1, [][]byte{wsTxn(1, 0, keyA)}}, {2, [][]byte{wsTxn(2, 1, keyB)}},
				{3, [][]byte{wsTxn(3, 7, keyC)}}}, // 7 >= 3: unusable, not counted as serial
			want: []int64{0, 0, 0},
		},
		{
			name: "DDL and accounts are serial and a floor",
			entries: []entry{{1, [][]byte{wsTxn(1, 0, keyA), wsTxn(2, 0, keyB)}}, {2, [][]byte{ddl(3, 3, "create t")}},
				{3, [][]byte{wsTxn(4, 0, keyC), accounts(5, 5), wsTxn(6, 0, keyA)}}},
			want: []int64{0, 0, 2, 3, 4, 5},
		},
		{
			name: "from a checkpoint: skipped records are not certified, the floor is the checkpoint",
			opts: Options{Applied: Position{Seq: 2}, ExecutedGNO: 2},
			entries: []entry{{1, [][]byte{wsTxn(1, 0, keyA), wsTxn(2, 0, keyB)}},
				{2, [][]byte{wsTxn(3, 0, keyA), wsTxn(4, 0, keyC), wsTxn(5, 0, keyA)}}},
			want: []int64{2, 2, 3},
		},
		{
			name:    "without Recertify the records' values are used",
			opts:    Options{},
			entries: []entry{{1, [][]byte{wsTxn(1, 0, keyA), wsTxn(2, 0, keyA), wsTxn(3, 5, keyB)}}},
			want:    []int64{0, 0, 2},
			serial:  1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name != "without Recertify the records' values are used" {
				tc.opts.Recertify = true
			}
			tc.opts.FailedDDL = failedMark
			m := New(tc.opts)
			var got []int64
			for _, e := range tc.entries {
				if err := m.Entry(e.index, payload(e)); err != nil {
					t.Fatal(err)
				}
				for {
					s, ok := m.Next()
					if !ok {
						break
					}
					got = append(got, s.Pos.LastCommitted)
					var inRecord int64
					switch {
					case s.Txn != nil:
						inRecord = s.Txn.LastCommitted
					case s.DDL != nil:
						inRecord = s.DDL.LastCommitted
					case s.Accounts != nil:
						inRecord = s.Accounts.LastCommitted
					}
					if tc.opts.Recertify && inRecord != s.Pos.LastCommitted {
						t.Errorf("sequence number %d: the step says %d, its record %d", s.Pos.Seq, s.Pos.LastCommitted, inRecord)
					}
					if !m.Ready(s) {
						t.Fatalf("sequence number %d not ready when handed out alone", s.Pos.Seq)
					}
					m.Done(s, nil)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("last_committed %v, want %v", got, tc.want)
			}
			st := m.Stats()
			if st.SerialDeps != tc.serial {
				t.Errorf("SerialDeps %d, want %d", st.SerialDeps, tc.serial)
			}
			wantCertified := int64(0)
			if tc.opts.Recertify {
				wantCertified = int64(len(tc.want))
			}
			if st.Certified != wantCertified {
				t.Errorf("Certified %d, want %d", st.Certified, wantCertified)
			}
			if _, ok := m.CertifyStats(); ok != tc.opts.Recertify {
				t.Errorf("CertifyStats ok %v", ok)
			}
		})
	}
}
