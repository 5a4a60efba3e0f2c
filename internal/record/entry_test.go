package record

import (
	"bytes"
	"errors"
	"testing"
)

// TestEntryRecords: a log entry holds no record (empty), one record (the
// form every entry had before batches), or a batch of them; the records
// keep their own sequence and GTID numbers.
func TestEntryRecords(t *testing.T) {
	txn := AppendTxn(nil, &Txn{Position: Position{Seq: 7, GNO: 107, LastCommitted: 5},
		Changes: []Change{{Op: OpInsert, Table: 1, Version: 1, PK: []byte("k"), After: []byte("v")}}})
	ddl := AppendDDL(nil, &DDL{Position: Position{Seq: 8, GNO: 108, LastCommitted: 7}, Database: "d", Query: "CREATE TABLE t (i INT PRIMARY KEY)"})
	acct := AppendAccounts(nil, &Accounts{Position: Position{Seq: 9, GNO: 109, LastCommitted: 8}, Data: []byte("x")})

	for _, tc := range []struct {
		name    string
		payload []byte
		want    [][]byte
	}{
		{"empty", nil, nil},
		{"one record", txn, [][]byte{txn}},
		{"batch", AppendBatch(nil, txn, ddl, acct), [][]byte{txn, ddl, acct}},
		{"empty batch", AppendBatch(nil), [][]byte{}},
	} {
		got, err := EntryRecords(tc.payload)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %d records, want %d", tc.name, len(got), len(tc.want))
		}
		for i := range got {
			if !bytes.Equal(got[i], tc.want[i]) {
				t.Fatalf("%s: record %d differs", tc.name, i)
			}
		}
	}
	k, pos, err := PeekPosition(ddl)
	if err != nil || k != KindDDL || pos != (Position{Seq: 8, GNO: 108, LastCommitted: 7}) {
		t.Fatalf("PeekPosition = %v %+v %v", k, pos, err)
	}

	for _, bad := range [][]byte{
		{byte(KindBatch)},                       // no format
		{byte(KindBatch), 2, 0},                 // unknown batch format
		AppendBatch(nil, []byte{9, 2}),          // a record of unknown kind
		AppendBatch(nil, AppendBatch(nil, txn)), // a batch in a batch
		append(AppendBatch(nil, txn), 0),        // trailing bytes
		{byte(KindBatch), 1, 5, 1},              // count past the end
		{7, 2},                                  // unknown kind
	} {
		if _, err := EntryRecords(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("EntryRecords(%x) = %v, want ErrCorrupt", bad, err)
		}
	}
}
