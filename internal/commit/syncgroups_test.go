package commit

import (
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// gatedLog is a Log whose durability waits end when the test says so, in
// any order: each WaitDurable announces itself on waits and returns the
// verdict it is sent.
type gatedLog struct {
	mu      sync.Mutex
	lsn     uint64
	appends atomic.Int64
	waits   chan *gatedWait
}

type gatedWait struct {
	lsn     uint64
	verdict chan error
}

func newGatedLog() *gatedLog { return &gatedLog{waits: make(chan *gatedWait, 16)} }

func (l *gatedLog) Append(_ uint64, payloads ...[]byte) (uint64, error) {
	l.appends.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lsn += uint64(len(payloads))
	return l.lsn, nil
}

func (l *gatedLog) WaitDurable(lsn uint64) error {
	w := &gatedWait{lsn: lsn, verdict: make(chan error)}
	l.waits <- w
	return <-w.verdict
}

func (l *gatedLog) next(t *testing.T) *gatedWait {
	t.Helper()
	select {
	case w := <-l.waits:
		return w
	case <-time.After(5 * time.Second):
		t.Fatal("no durability wait began")
		return nil
	}
}

// syncGroupsTxn commits a transaction in a goroutine; its result arrives
// on the returned channel, its Publish appends name to published.
func syncGroupsTxn(p *Pipeline, key uint64, name string, mu *sync.Mutex, published *[]string) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := p.Commit(&Txn{
			Writeset: []uint64{mix(key)},
			Encode:   func(seq, lc int64) ([]byte, error) { return payload(seq, lc), nil },
			Publish: func() {
				mu.Lock()
				*published = append(*published, name)
				mu.Unlock()
			},
		})
		done <- err
	}()
	return done
}

func commitResult(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("Commit did not return")
		return nil
	}
}

func pending(t *testing.T, done chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s returned (%v) too early", what, err)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestSyncGroupsOverlap: with two sync groups a second group appends and
// waits for durability while the first waits; a third waits for a slot
// without appending; the second, durable first, still joins the commit
// stage after the first, so publication stays in log order.
func TestSyncGroupsOverlap(t *testing.T) {
	log := newGatedLog()
	p, err := New(Options{Log: log, SyncGroups: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var mu sync.Mutex
	var published []string

	a := syncGroupsTxn(p, 1, "a", &mu, &published)
	wa := log.next(t)
	b := syncGroupsTxn(p, 2, "b", &mu, &published)
	wb := log.next(t)
	if wb.lsn <= wa.lsn {
		t.Fatalf("second group waits for LSN %d, first for %d", wb.lsn, wa.lsn)
	}
	c := syncGroupsTxn(p, 3, "c", &mu, &published)
	pending(t, c, "a commit with both sync slots taken")
	if n := log.appends.Load(); n != 2 {
		t.Fatalf("%d appends with two groups in flight, want 2", n)
	}

	wb.verdict <- nil // the later group is durable first
	pending(t, b, "the later group")
	mu.Lock()
	if len(published) != 0 {
		t.Fatalf("published %v before the first group was durable", published)
	}
	mu.Unlock()

	wa.verdict <- nil
	if err := commitResult(t, a); err != nil {
		t.Fatal(err)
	}
	if err := commitResult(t, b); err != nil {
		t.Fatal(err)
	}
	log.next(t).verdict <- nil // c's group, appended once a slot freed
	if err := commitResult(t, c); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(published) != 3 || published[0] != "a" || published[1] != "b" || published[2] != "c" {
		t.Fatalf("published %v, want [a b c]", published)
	}
	if st := p.Stats(); st.TurnWaits != 1 || st.Groups != 3 || st.Commits != 3 {
		t.Fatalf("stats: %v, want 1 turn wait, 3 groups, 3 commits", st)
	}
}

// TestSyncGroupsEarlierFails: the first group's durability wait fails
// after the second's succeeded: neither is published, both get an
// uncertain outcome, and the pipeline takes no more commits.
func TestSyncGroupsEarlierFails(t *testing.T) {
	log := newGatedLog()
	p, err := New(Options{Log: log, SyncGroups: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var mu sync.Mutex
	var published []string

	a := syncGroupsTxn(p, 1, "a", &mu, &published)
	wa := log.next(t)
	b := syncGroupsTxn(p, 2, "b", &mu, &published)
	wb := log.next(t)
	wb.verdict <- nil
	pending(t, b, "the later group")
	wa.verdict <- syscall.EIO
	for name, done := range map[string]chan error{"a": a, "b": b} {
		if err := commitResult(t, done); !errors.Is(err, ErrUncertain) || !errors.Is(err, syscall.EIO) {
			t.Fatalf("%s: %v, want an uncertain outcome wrapping EIO", name, err)
		}
	}
	mu.Lock()
	if len(published) != 0 {
		t.Fatalf("published %v after the first group failed", published)
	}
	mu.Unlock()
	if _, err := p.Commit(&Txn{Writeset: []uint64{9}, Encode: func(seq, lc int64) ([]byte, error) { return payload(seq, lc), nil }}); !errors.Is(err, ErrUncertain) {
		t.Fatalf("a commit after the failure: %v", err)
	}
}

// TestSyncGroupsOne: with one sync group (the default) a second leader
// appends only after the first group's durability wait ended.
func TestSyncGroupsOne(t *testing.T) {
	log := newGatedLog()
	p, err := New(Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var mu sync.Mutex
	var published []string
	a := syncGroupsTxn(p, 1, "a", &mu, &published)
	wa := log.next(t)
	b := syncGroupsTxn(p, 2, "b", &mu, &published)
	pending(t, b, "a commit behind a group waiting for durability")
	if n := log.appends.Load(); n != 1 {
		t.Fatalf("%d appends while the first group waits, want 1", n)
	}
	wa.verdict <- nil
	if err := commitResult(t, a); err != nil {
		t.Fatal(err)
	}
	log.next(t).verdict <- nil
	if err := commitResult(t, b); err != nil {
		t.Fatal(err)
	}
}
