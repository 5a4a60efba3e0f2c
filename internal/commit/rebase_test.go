package commit

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
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
			pos.CommitTime = 0 // TestCommitTime's subject
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

// notCommittedLog fails the durability wait of chosen appends with
// ErrNotCommitted.
type notCommittedLog struct {
	nullLog
	mu   sync.Mutex
	fail map[uint64]bool
}

func (l *notCommittedLog) WaitDurable(lsn uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail[lsn] {
		return fmt.Errorf("entry replaced: %w", ErrNotCommitted)
	}
	return nil
}

// TestNotCommitted: a group whose wait fails with ErrNotCommitted fails
// without publishing, and so does every group after it, without the
// pipeline entering the failed state; Rebase starts a new chain.
func TestNotCommitted(t *testing.T) {
	log := &notCommittedLog{fail: map[uint64]bool{2: true}}
	p, err := New(Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	published := 0
	commit := func() error {
		_, err := p.Commit(&Txn{Writeset: []uint64{1},
			Encode:  func(Position) ([]byte, error) { return []byte("x"), nil },
			Publish: func() { published++ }})
		return err
	}
	if err := commit(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the failed group, and one after it
		if err := commit(); !errors.Is(err, ErrNotCommitted) || errors.Is(err, ErrUncertain) {
			t.Fatalf("commit %d after the replaced entry: %v", i, err)
		}
	}
	if p.Err() != nil || published != 1 {
		t.Fatalf("pipeline error %v, %d published; want none and 1", p.Err(), published)
	}
	if err := p.Rebase(2, 2); err != nil {
		t.Fatal(err)
	}
	if err := commit(); err != nil {
		t.Fatalf("after rebase: %v", err)
	}
	if published != 2 || p.LastPublished() != 2 {
		t.Fatalf("published %d, last %d; want 2 and 2", published, p.LastPublished())
	}
}

// TestWaitPublished: a waiter returns once its sequence number is
// published, at once when it already is, and with ErrClosed when told to
// stop.
func TestWaitPublished(t *testing.T) {
	p, err := New(Options{Log: &nullLog{}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	done := make(chan error, 1)
	go func() { done <- p.WaitPublished(2, nil) }()
	for i := 0; i < 2; i++ {
		if _, err := p.Commit(&Txn{Writeset: []uint64{1}, Encode: func(Position) ([]byte, error) { return []byte("x"), nil }}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not woken by the publish of sequence number 2")
	}
	if err := p.WaitPublished(1, nil); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	close(stop)
	if err := p.WaitPublished(3, stop); !errors.Is(err, ErrClosed) {
		t.Fatalf("a stopped wait: %v", err)
	}
}
