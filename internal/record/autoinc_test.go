package record

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"
)

// The AUTO_INCREMENT counters of a transaction record (format 2).

func TestTxnAutoIncRoundTrip(t *testing.T) {
	for _, tx := range []Txn{
		{Position: Position{Seq: 1, GNO: 1}, AutoInc: []AutoInc{{Table: 3, Next: 7}}},
		{
			Position: Position{Seq: 9, GNO: 9, LastCommitted: 8},
			Changes:  []Change{{Op: OpDelete, Table: 3, Version: 2, PK: []byte("k"), Before: []byte("r")}},
			Writeset: []uint64{11},
			AutoInc:  []AutoInc{{Table: 3, Next: 1<<64 - 1}, {Table: 1 << 32, Next: 1}},
		},
	} {
		b := AppendTxn(nil, &tx)
		got, err := DecodeTxn(b)
		if err != nil {
			t.Fatal(err)
		}
		norm(got)
		want := tx
		norm(&want)
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", *got, want)
		}
		for cut := 0; cut < len(b); cut++ {
			if _, err := DecodeTxn(b[:cut]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("truncated at %d of %d: err %v", cut, len(b), err)
			}
		}
	}
}

// pinnedV1 is a format 1 transaction record, as the binaries before
// format 2 wrote it: seq 7, gno 7, last_committed 3, one insert into table
// 4 (version 1, pk "k", row "v"), writeset {5}.
const pinnedV1 = "01" + "01" + "070703" + "00" + "01" + "01" + "04" + "01" + "016b" + "0176" + "01" + "0500000000000000"

// TestTxnFormatPinned: format 1 records are still read (no counters), and
// the bytes format 2 writes are pinned: format 1's with the format byte 2
// and the counters appended.
func TestTxnFormatPinned(t *testing.T) {
	v1, _ := hex.DecodeString(pinnedV1)
	got, err := DecodeTxn(v1)
	if err != nil {
		t.Fatalf("format 1 record: %v", err)
	}
	want := Txn{
		Position: Position{Seq: 7, GNO: 7, LastCommitted: 3},
		Changes:  []Change{{Op: OpInsert, Table: 4, Version: 1, PK: []byte("k"), After: []byte("v")}},
		Writeset: []uint64{5},
	}
	norm(got)
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("format 1 record decoded as %+v, want %+v", *got, want)
	}
	// Counter bytes after a format 1 record are damage, not counters.
	if _, err := DecodeTxn(append(append([]byte(nil), v1...), 1, 4, 6)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("format 1 record with trailing counters: %v", err)
	}

	// Format 2: format 1's bytes with the format byte 2 and the counters
	// appended, as the binaries before format 3 wrote them.
	want.AutoInc = []AutoInc{{Table: 4, Next: 6}}
	v2, _ := hex.DecodeString("01" + "02" + pinnedV1[4:] + "01" + "04" + "06")
	got, err = DecodeTxn(v2)
	if err != nil {
		t.Fatalf("format 2 record: %v", err)
	}
	norm(got)
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("format 2 record decoded as %+v, want %+v", *got, want)
	}
	// Format 3 (written now): format 2's with the commit time after
	// last_committed.
	want.CommitTime = 1700000000123456
	v3 := AppendTxn(nil, &want)
	wantHex := "01" + "03" + "070703" + "c0c480c1c1c48203" + pinnedV1[10:] + "01" + "04" + "06"
	if hex.EncodeToString(v3) != wantHex {
		t.Fatalf("format 3 bytes changed:\n got %x\nwant %s", v3, wantHex)
	}
	// Without counters: one byte (a zero count) more than format 1, and
	// the commit time (one zero byte when unknown).
	want.AutoInc, want.CommitTime = nil, 0
	if b := AppendTxn(nil, &want); !bytes.Equal(b[2:], append(append(append([]byte(nil), v1[2:5]...), append([]byte{0}, v1[5:]...)...), 0)) || b[1] != 3 {
		t.Fatalf("format 3 without counters: %x", b)
	}

	// DDL and accounts records are the same in formats 1 and 2.
	ddl, _ := hex.DecodeString("02" + "01" + "020201" + "05" + "0164" + "10" + hex.EncodeToString([]byte("TRUNCATE TABLE t")))
	if d, err := DecodeDDL(ddl); err != nil || d.Query != "TRUNCATE TABLE t" || d.NextTableID != 5 {
		t.Fatalf("format 1 DDL record: %+v, %v", d, err)
	}
	for _, f := range []byte{0, 4, 255} {
		b := append([]byte(nil), v1...)
		b[1] = f
		if _, err := PeekKind(b); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("format %d accepted: %v", f, err)
		}
	}
}
