package txlog

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// gatedFS holds every segment fsync until the test releases it: each Sync
// announces itself on started and waits for its verdict (nil: sync; an
// error: fail with it).
type gatedFS struct {
	OSFS
	armed   atomic.Bool // off while Open creates the first segment
	started chan *gatedSync
}

type gatedSync struct {
	fd      *os.File
	verdict chan error
}

func newGatedFS() *gatedFS { return &gatedFS{started: make(chan *gatedSync, 16)} }

func (fs *gatedFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return gatedFile{f, fs}, nil
}

type gatedFile struct {
	*os.File
	fs *gatedFS
}

func (f gatedFile) Sync() error {
	if !f.fs.armed.Load() {
		return f.File.Sync()
	}
	g := &gatedSync{fd: f.File, verdict: make(chan error)}
	f.fs.started <- g
	if err := <-g.verdict; err != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: err}
	}
	return f.File.Sync()
}

// next waits for the next fsync to start.
func (fs *gatedFS) next(t *testing.T) *gatedSync {
	t.Helper()
	select {
	case g := <-fs.started:
		return g
	case <-time.After(5 * time.Second):
		t.Fatal("no fsync started")
		return nil
	}
}

// passAll lets every later fsync through (for Close); the returned stop
// ends that once nothing can fsync any more.
func (fs *gatedFS) passAll() (stop func()) {
	fs.armed.Store(false) // new fsyncs skip the gate; one already at it is let go below
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for g := range fs.started {
			g.verdict <- nil
		}
	}()
	return func() {
		close(fs.started)
		wg.Wait()
	}
}

// noneStarted checks that no fsync starts for a while.
func (fs *gatedFS) noneStarted(t *testing.T) {
	t.Helper()
	select {
	case g := <-fs.started:
		t.Fatalf("an unexpected fsync started (fd %d)", g.fd.Fd())
	case <-time.After(50 * time.Millisecond):
	}
}

// appendWait appends p and waits for it to be durable in a goroutine; the
// channel gets WaitDurable's result.
func appendWait(t *testing.T, l *Log, p string) (lsn uint64, done chan error) {
	t.Helper()
	lsn, err := l.Append(1, []byte(p))
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	done = make(chan error, 1)
	go func() { done <- l.WaitDurable(lsn) }()
	return lsn, done
}

func waitResult(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("WaitDurable did not return")
		return nil
	}
}

func stillWaiting(t *testing.T, done chan error) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("WaitDurable returned %v while an earlier fsync is in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
}

func gatedLog(t *testing.T, flushers int) (*Log, *gatedFS) {
	fs := newGatedFS()
	opts := smallOpts(t)
	opts.FS, opts.Flushers, opts.Preallocate = fs, flushers, false
	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	fs.armed.Store(true)
	return l, fs
}

// TestFlushersOverlap: with two flushers a second fsync starts while the
// first is in flight, through another file description, and a later fsync
// that ends first publishes nothing until the earlier one has.
func TestFlushersOverlap(t *testing.T) {
	l, fs := gatedLog(t, 2)
	lsn1, done1 := appendWait(t, l, "one")
	g1 := fs.next(t)
	lsn2, done2 := appendWait(t, l, "two")
	g2 := fs.next(t)
	if g1.fd.Fd() == g2.fd.Fd() {
		t.Fatalf("both fsyncs went through fd %d; each flusher needs its own file description", g1.fd.Fd())
	}
	fs.noneStarted(t) // two in flight: nothing new to sync

	g2.verdict <- nil // the later fsync ends first
	stillWaiting(t, done2)
	stillWaiting(t, done1)
	if d := l.Stats().DurableLSN; d >= lsn1 {
		t.Fatalf("durable %d >= %d before the first fsync ended", d, lsn1)
	}
	g1.verdict <- nil
	for _, d := range []chan error{done1, done2} {
		if err := waitResult(t, d); err != nil {
			t.Fatal(err)
		}
	}
	if d := l.Stats().DurableLSN; d != lsn2 {
		t.Fatalf("durable %d, want %d", d, lsn2)
	}
	st := l.Stats()
	if st.FsyncsOverlapped != 1 || st.FsyncsHeldBack != 1 {
		t.Fatalf("overlapped %d held back %d, want 1 and 1", st.FsyncsOverlapped, st.FsyncsHeldBack)
	}
	stop := fs.passAll()
	mustClose(t, l)
	stop()
}

// TestFlushersEarlierFails: an earlier fsync fails after a later one
// succeeded: neither waiter is told its record is durable, and the log
// is failed at the position durable before both.
func TestFlushersEarlierFails(t *testing.T) {
	l, fs := gatedLog(t, 2)
	_, done0 := appendWait(t, l, "zero")
	fs.next(t).verdict <- nil
	if err := waitResult(t, done0); err != nil {
		t.Fatal(err)
	}
	before := l.Stats().DurableLSN

	_, done1 := appendWait(t, l, "one")
	g1 := fs.next(t)
	_, done2 := appendWait(t, l, "two")
	g2 := fs.next(t)
	g2.verdict <- nil
	stillWaiting(t, done2)
	g1.verdict <- syscall.EIO
	for i, d := range []chan error{done1, done2} {
		if err := waitResult(t, d); !errors.Is(err, ErrLogFailed) || !errors.Is(err, syscall.EIO) {
			t.Fatalf("waiter %d: %v, want the fsync failure", i+1, err)
		}
	}
	if d := l.Stats().DurableLSN; d != before {
		t.Fatalf("durable %d after the failure, want %d", d, before)
	}
	if err := l.Close(); !errors.Is(err, ErrLogFailed) {
		t.Fatalf("Close: %v", err)
	}
}

// TestFlushersOne: with one flusher (the default) no second fsync starts
// while one is in flight, and it goes through the segment's own file.
func TestFlushersOne(t *testing.T) {
	l, fs := gatedLog(t, 1)
	_, done1 := appendWait(t, l, "one")
	g1 := fs.next(t)
	_, done2 := appendWait(t, l, "two")
	fs.noneStarted(t)
	g1.verdict <- nil
	if err := waitResult(t, done1); err != nil {
		t.Fatal(err)
	}
	stillWaiting(t, done2)
	fs.next(t).verdict <- nil
	if err := waitResult(t, done2); err != nil {
		t.Fatal(err)
	}
	stop := fs.passAll()
	mustClose(t, l)
	stop()
}
