package record

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

// TestCommitTimeRoundTrip: every kind of record carries its commit time
// (format 3), PeekPosition reads it, and a record cut anywhere is corrupt.
func TestCommitTimeRoundTrip(t *testing.T) {
	pos := Position{Seq: 12, GNO: 40, LastCommitted: 9, CommitTime: 1712345678901234}
	for _, tc := range []struct {
		name   string
		b      []byte
		decode func([]byte) (Position, error)
	}{
		{"transaction", AppendTxn(nil, &Txn{Position: pos, Writeset: []uint64{3}}), func(b []byte) (Position, error) {
			r, err := DecodeTxn(b)
			if err != nil {
				return Position{}, err
			}
			return r.Position, nil
		}},
		{"DDL", AppendDDL(nil, &DDL{Position: pos, Database: "d", Query: "CREATE TABLE t (a INT)"}), func(b []byte) (Position, error) {
			r, err := DecodeDDL(b)
			if err != nil {
				return Position{}, err
			}
			return r.Position, nil
		}},
		{"accounts", AppendAccounts(nil, &Accounts{Position: pos, Data: []byte("u")}), func(b []byte) (Position, error) {
			r, err := DecodeAccounts(b)
			if err != nil {
				return Position{}, err
			}
			return r.Position, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.b[1] != 3 {
				t.Fatalf("format %d written, want 3", tc.b[1])
			}
			got, err := tc.decode(tc.b)
			if err != nil || got != pos {
				t.Fatalf("decoded %+v, %v; want %+v", got, err, pos)
			}
			if _, p, err := PeekPosition(tc.b); err != nil || p != pos {
				t.Fatalf("PeekPosition %+v, %v; want %+v", p, err, pos)
			}
			for cut := 2; cut < len(tc.b); cut++ {
				if _, err := tc.decode(tc.b[:cut]); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("cut at %d of %d: %v", cut, len(tc.b), err)
				}
			}
		})
	}
}

// TestOldFormatsHaveNoCommitTime: records of formats 1 and 2 (pinned bytes,
// as older binaries wrote them) read with CommitTime 0, unknown, and the
// rest of their position intact; a batch may mix formats.
func TestOldFormatsHaveNoCommitTime(t *testing.T) {
	v1, _ := hex.DecodeString(pinnedV1)
	v2, _ := hex.DecodeString("01" + "02" + pinnedV1[4:] + "00")
	acct2, _ := hex.DecodeString("03" + "02" + "080807" + "0178")
	v3 := AppendTxn(nil, &Txn{Position: Position{Seq: 9, GNO: 9, LastCommitted: 8, CommitTime: 5}})
	recs, err := EntryRecords(AppendBatch(nil, v1, v2, acct2, v3))
	if err != nil {
		t.Fatal(err)
	}
	want := []Position{
		{Seq: 7, GNO: 7, LastCommitted: 3},
		{Seq: 7, GNO: 7, LastCommitted: 3},
		{Seq: 8, GNO: 8, LastCommitted: 7},
		{Seq: 9, GNO: 9, LastCommitted: 8, CommitTime: 5},
	}
	for i, r := range recs {
		_, p, err := PeekPosition(r)
		if err != nil || p != want[i] {
			t.Errorf("record %d: %+v, %v; want %+v", i, p, err, want[i])
		}
	}
	tx, err := DecodeTxn(v2)
	if err != nil || tx.Position != want[1] {
		t.Fatalf("format 2 transaction: %+v, %v", tx, err)
	}
	a, err := DecodeAccounts(acct2)
	if err != nil || a.Position != want[2] || !bytes.Equal(a.Data, []byte("x")) {
		t.Fatalf("format 2 accounts: %+v, %v", a, err)
	}
}
