package record

import (
	"bytes"
	"testing"
)

// TestTxnSize: TxnSize is never less than the record's size, at any
// position, and at most 36 bytes more.
func TestTxnSize(t *testing.T) {
	txns := []*Txn{
		{},
		{Changes: []Change{{Op: OpInsert, Table: 3, Version: 1, PK: []byte("k"), After: bytes.Repeat([]byte("x"), 300)}}},
		{Minimal: true, Changes: []Change{
			{Op: OpUpdate, Table: 1 << 40, Version: 200, PK: []byte("key"), Before: []byte("old"), After: bytes.Repeat([]byte("n"), 1<<16)},
			{Op: OpDelete, Table: 7, PK: []byte("d"), Before: []byte("gone")},
		}, Writeset: []uint64{1, 2, 3}, AutoInc: []AutoInc{{Table: 9, Next: 1 << 33}}},
		{Changes: []Change{
			{Op: OpUpdate, Table: 1, PK: []byte("key"), Before: bytes.Repeat([]byte("b"), 200), After: []byte("a")},
			{Op: OpDelete, Table: 1, PK: []byte("d"), Before: []byte("gone")},
		}},
	}
	positions := []Position{{}, {Seq: 1, GNO: 1}, {Seq: 1 << 62, GNO: 1 << 62, LastCommitted: 1<<62 - 1, CommitTime: 1 << 62}}
	for i, tx := range txns {
		size := TxnSize(tx)
		for _, pos := range positions {
			tx.Position = pos
			n := len(AppendTxn(nil, tx))
			if size < n || size > n+36 {
				t.Errorf("txn %d at %+v: TxnSize %d, record %d bytes", i, pos, size, n)
			}
		}
	}
}
