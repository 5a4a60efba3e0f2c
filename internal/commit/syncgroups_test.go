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

// syncGroups is a pipeline with a gated log and the names of the
// transactions it published, in order.
type syncGroups struct {
	p   *Pipeline
	log *gatedLog

	mu        sync.Mutex
	published []string
}

func newSyncGroups(t *testing.T, groups int) *syncGroups {
	t.Helper()
	log := newGatedLog()
	p, err := New(Options{Log: log, SyncGroups: groups})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return &syncGroups{p: p, log: log}
}

// commit commits a transaction in a goroutine; its result arrives on the
// returned channel, its Publish records name.
func (s *syncGroups) commit(key uint64, name string) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := s.p.Commit(&Txn{
			Writeset: []uint64{mix(key)},
			Encode:   func(pos Position) ([]byte, error) { return payload(pos.Seq, pos.LastCommitted), nil },
			Publish: func() {
				s.mu.Lock()
				s.published = append(s.published, name)
				s.mu.Unlock()
			},
		})
		done <- err
	}()
	return done
}

func (s *syncGroups) publishedNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.published...)
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
	s := newSyncGroups(t, 2)
	log := s.log
	a := s.commit(1, "a")
	wa := log.next(t)
	b := s.commit(2, "b")
	wb := log.next(t)
	if wb.lsn <= wa.lsn {
		t.Fatalf("second group waits for LSN %d, first for %d", wb.lsn, wa.lsn)
	}
	c := s.commit(3, "c")
	pending(t, c, "a commit with both sync slots taken")
	if n := log.appends.Load(); n != 2 {
		t.Fatalf("%d appends with two groups in flight, want 2", n)
	}

	wb.verdict <- nil // the later group is durable first
	pending(t, b, "the later group")
	if published := s.publishedNames(); len(published) != 0 {
		t.Fatalf("published %v before the first group was durable", published)
	}

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
	if published := s.publishedNames(); len(published) != 3 || published[0] != "a" || published[1] != "b" || published[2] != "c" {
		t.Fatalf("published %v, want [a b c]", published)
	}
	if st := s.p.Stats(); st.TurnWaits != 1 || st.Groups != 3 || st.Commits != 3 {
		t.Fatalf("stats: %v, want 1 turn wait, 3 groups, 3 commits", st)
	}
}

// TestSyncGroupsEarlierFails: the first group's durability wait fails
// after the second's succeeded: neither is published, both get an
// uncertain outcome, and the pipeline takes no more commits.
func TestSyncGroupsEarlierFails(t *testing.T) {
	s := newSyncGroups(t, 2)
	log := s.log
	a := s.commit(1, "a")
	wa := log.next(t)
	b := s.commit(2, "b")
	wb := log.next(t)
	wb.verdict <- nil
	pending(t, b, "the later group")
	wa.verdict <- syscall.EIO
	for name, done := range map[string]chan error{"a": a, "b": b} {
		if err := commitResult(t, done); !errors.Is(err, ErrUncertain) || !errors.Is(err, syscall.EIO) {
			t.Fatalf("%s: %v, want an uncertain outcome wrapping EIO", name, err)
		}
	}
	if published := s.publishedNames(); len(published) != 0 {
		t.Fatalf("published %v after the first group failed", published)
	}
	if _, err := s.p.Commit(&Txn{Writeset: []uint64{9}, Encode: func(pos Position) ([]byte, error) { return payload(pos.Seq, pos.LastCommitted), nil }}); !errors.Is(err, ErrUncertain) {
		t.Fatalf("a commit after the failure: %v", err)
	}
}

// TestSyncGroupsOne: with one sync group (the default) a second leader
// appends only after the first group's durability wait ended.
func TestSyncGroupsOne(t *testing.T) {
	s := newSyncGroups(t, 0) // the default: one
	log := s.log
	a := s.commit(1, "a")
	wa := log.next(t)
	b := s.commit(2, "b")
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
