package commit

import (
	"strings"
	"testing"
)

// TestRebase: after Rebase the next transaction gets the new sequence
// number and GNO and depends on everything before it; numbers never go
// back.
func TestRebase(t *testing.T) {
	p, err := New(Options{Log: &nullLog{}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var got []Position
	commit := func(ws ...uint64) {
		t.Helper()
		if _, err := p.Commit(&Txn{Writeset: ws, Encode: func(pos Position) ([]byte, error) {
			got = append(got, pos)
			return []byte("x"), nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	commit(1)
	commit(2)
	if err := p.Rebase(10, 20); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.LastSeq != 9 || s.LastGNO != 19 {
		t.Fatalf("after rebase: last seq %d GNO %d, want 9 and 19", s.LastSeq, s.LastGNO)
	}
	commit(3)
	commit(4)
	want := Position{Seq: 10, GNO: 20, LastCommitted: 9}
	if got[2] != want || got[3].Seq != 11 || got[3].GNO != 21 || got[3].LastCommitted != 9 {
		t.Fatalf("positions after rebase: %+v, want %+v then 11/21 depending on 9", got[2:], want)
	}
	if p.LastPublished() != 11 {
		t.Fatalf("LastPublished = %d, want 11", p.LastPublished())
	}
	if err := p.Rebase(11, 30); err == nil || !strings.Contains(err.Error(), "is published") {
		t.Fatalf("rebase backwards: %v", err)
	}
}
