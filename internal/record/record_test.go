package record

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestTxnRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		txn  Txn
	}{
		{"empty", Txn{Position: Position{Seq: 1, GNO: 1}}},
		{"full images", Txn{
			Position: Position{Seq: 7, GNO: 9, LastCommitted: 3},
			Changes: []Change{
				{Op: OpInsert, Table: 4, Version: 1, PK: []byte("k1"), After: []byte("row1")},
				{Op: OpUpdate, Table: 4, Version: 2, PK: []byte("k2"), Before: []byte("old"), After: []byte("new")},
				{Op: OpDelete, Table: 1 << 40, Version: 3, PK: []byte{0, 1}, Before: []byte("gone")},
			},
			Writeset: []uint64{1, 1<<64 - 1, 42},
		}},
		{"minimal images", Txn{
			Position: Position{Seq: 8, GNO: 10, LastCommitted: 7},
			Minimal:  true,
			Changes: []Change{
				{Op: OpUpdate, Table: 4, Version: 2, PK: []byte("k2"), After: []byte("new")},
				{Op: OpDelete, Table: 4, Version: 2, PK: []byte("k3")},
			},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := AppendTxn(nil, &c.txn)
			if k, err := PeekKind(b); err != nil || k != KindTxn {
				t.Fatalf("PeekKind = %v, %v", k, err)
			}
			got, err := DecodeTxn(b)
			if err != nil {
				t.Fatal(err)
			}
			norm(got)
			want := c.txn
			norm(&want)
			if !reflect.DeepEqual(*got, want) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", *got, want)
			}
			if _, err := DecodeDDL(b); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("DecodeDDL of a transaction: %v", err)
			}
		})
	}
}

// norm makes empty byte strings and slices nil for comparison.
func norm(t *Txn) {
	for i := range t.Changes {
		c := &t.Changes[i]
		for _, p := range []*[]byte{&c.PK, &c.Before, &c.After} {
			if len(*p) == 0 {
				*p = nil
			}
		}
	}
	if len(t.Changes) == 0 {
		t.Changes = nil
	}
	if len(t.Writeset) == 0 {
		t.Writeset = nil
	}
}

func TestDDLRoundTrip(t *testing.T) {
	d := DDL{Position: Position{Seq: 5, GNO: 5, LastCommitted: 4}, NextTableID: 12, Database: "shop", Query: "CREATE TABLE t (id INT PRIMARY KEY)"}
	got, err := DecodeDDL(AppendDDL(nil, &d))
	if err != nil || *got != d {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestAccountsRoundTrip(t *testing.T) {
	a := Accounts{Position: Position{Seq: 9, GNO: 9, LastCommitted: 8}, Data: []byte("\x00serialised\xffusers")}
	b := AppendAccounts(nil, &a)
	if k, err := PeekKind(b); err != nil || k != KindAccounts {
		t.Fatalf("PeekKind = %v, %v", k, err)
	}
	got, err := DecodeAccounts(b)
	if err != nil || got.Position != a.Position || !bytes.Equal(got.Data, a.Data) {
		t.Fatalf("got %+v, %v", got, err)
	}
	for cut := 0; cut < len(b); cut++ {
		if _, err := DecodeAccounts(b[:cut]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated at %d: err %v", cut, err)
		}
	}
	if _, err := DecodeDDL(b); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("an accounts record decoded as DDL: %v", err)
	}
	if _, err := DecodeAccounts(AppendDDL(nil, &DDL{Query: "x"})); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a DDL record decoded as accounts: %v", err)
	}
}

func TestDecodeRejectsDamage(t *testing.T) {
	b := AppendTxn(nil, &Txn{Position: Position{Seq: 1}, Changes: []Change{{Op: OpInsert, Table: 1, PK: []byte("k"), After: []byte("v")}}, Writeset: []uint64{5}})
	for cut := 0; cut < len(b); cut++ {
		if _, err := DecodeTxn(b[:cut]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated at %d: err %v", cut, err)
		}
	}
	if _, err := DecodeTxn(append(append([]byte(nil), b...), 0)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("trailing byte accepted: %v", err)
	}
	bad := append([]byte(nil), b...)
	bad[1] = 99
	if _, err := DecodeTxn(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("unknown format accepted: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(AppendTxn(nil, &Txn{Position: Position{Seq: 3}, Changes: []Change{{Op: OpUpdate, Table: 2, PK: []byte("a"), Before: []byte("b"), After: []byte("c")}}}))
	f.Add(AppendDDL(nil, &DDL{Database: "d", Query: "DROP TABLE t"}))
	f.Add(AppendTxn(nil, &Txn{Position: Position{Seq: 4}, Changes: []Change{{Op: OpInsert, Table: 2, PK: []byte("a"), After: []byte("c")}}, AutoInc: []AutoInc{{Table: 2, Next: 9}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Must never panic; what decodes must survive a re-encoding (varints
		// need not be canonical in b, so compare decoded values).
		if tx, err := DecodeTxn(b); err == nil {
			again, err := DecodeTxn(AppendTxn(nil, tx))
			norm(tx)
			if err != nil {
				t.Fatal(err)
			}
			norm(again)
			if !reflect.DeepEqual(tx, again) {
				t.Fatalf("re-encoding differs: %+v vs %+v", tx, again)
			}
		}
		if a, err := DecodeAccounts(b); err == nil {
			again, err := DecodeAccounts(AppendAccounts(nil, a))
			if err != nil || again.Position != a.Position || !bytes.Equal(again.Data, a.Data) {
				t.Fatalf("re-encoding differs: %+v vs %+v (%v)", a, again, err)
			}
		}
		if d, err := DecodeDDL(b); err == nil {
			again, err := DecodeDDL(AppendDDL(nil, d))
			if err != nil || *again != *d {
				t.Fatalf("re-encoding differs: %+v vs %+v (%v)", d, again, err)
			}
		}
	})
}
