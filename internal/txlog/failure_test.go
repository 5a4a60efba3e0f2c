package txlog

import (
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestFsyncFailure(t *testing.T) {
	fs := &faultFS{}
	opts := smallOpts(t)
	opts.FS = fs
	l, _ := mustOpen(t, opts)
	good := [][]byte{[]byte("one"), []byte("two"), []byte("three")}
	durableLSN := appendAll(t, l, 1, good)

	fs.failSyncs(syscall.EIO)
	// Several waiters at once: each gets the error, nothing retries.
	const waiters = 8
	var wg sync.WaitGroup
	errs := make([]error, waiters)
	for i := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lsn, err := l.Append(1, []byte("after the failure"))
			if err == nil {
				err = l.WaitDurable(lsn)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrLogFailed) {
			t.Fatalf("waiter %d: %v, want ErrLogFailed", i, err)
		}
	}
	err := l.Err()
	if !errors.Is(err, ErrLogFailed) || !errors.Is(err, syscall.EIO) ||
		!strings.HasPrefix(err.Error(), "txlog: fsync log-00000000000000000001.seg: ") ||
		!strings.HasSuffix(err.Error(), "; the log is closed for writes") {
		t.Fatalf("failure: %v", err)
	}
	syncs := fs.syncCalls.Load()

	// Later appends fail at once; durable records still report durable.
	if _, err := l.Append(1, []byte("later")); !errors.Is(err, ErrLogFailed) {
		t.Fatalf("Append after the failure: %v", err)
	}
	if err := l.WaitDurable(durableLSN); err != nil {
		t.Fatalf("WaitDurable of an LSN durable before the failure: %v", err)
	}
	if err := l.TruncateSuffix(2); !errors.Is(err, ErrLogFailed) {
		t.Fatalf("TruncateSuffix after the failure: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := l.Close(); !errors.Is(err, ErrLogFailed) {
		t.Fatalf("Close: %v", err)
	}
	if got := fs.syncCalls.Load(); got != syncs {
		t.Fatalf("fsync was retried: %d Sync calls after the failure, %d before", got, syncs)
	}
	if got := fs.syncCalls.Load(); got == 0 {
		t.Fatal("no Sync call counted")
	}
	st := l.Stats()
	if st.Wakeups != st.WakeupsDone {
		t.Errorf("wake-ups %d, done %d", st.Wakeups, st.WakeupsDone)
	}

	// What was durable before is intact.
	opts.FS = nil
	l, _ = mustOpen(t, opts)
	defer mustClose(t, l)
	got := readAll(t, l)
	if len(got) < len(good) {
		t.Fatalf("%d records after reopen, want at least %d", len(got), len(good))
	}
	checkPrefix(t, got, entries(1, good))
}

func checkPrefix(t *testing.T, got, want []Entry) {
	t.Helper()
	for i, w := range want {
		if got[i].Index != uint64(i+1) || string(got[i].Payload) != string(w.Payload) {
			t.Fatalf("entry %d: %d %q, want %q", i, got[i].Index, got[i].Payload, w.Payload)
		}
	}
}

func TestDiskFull(t *testing.T) {
	for _, mode := range []SyncMode{SyncAlways, SyncPeriodic} {
		t.Run(mode.String(), func(t *testing.T) {
			fs := &faultFS{}
			opts := smallOpts(t)
			opts.FS, opts.SyncMode, opts.SyncInterval = fs, mode, 10*time.Millisecond
			l, _ := mustOpen(t, opts)
			var good [][]byte
			for i := range 30 {
				good = append(good, payload(uint64(i), 200, false))
			}
			appendAll(t, l, 1, good)
			if mode == SyncPeriodic {
				// Make them durable too: the test checks them after reopen.
				for l.Stats().DurableLSN < l.Stats().WrittenLSN {
					time.Sleep(10 * time.Millisecond)
				}
			}

			fs.limitSpace(100) // the next record (232 bytes) does not fit
			lsn, err := l.Append(1, payload(99, 200, false))
			if err != nil {
				t.Fatalf("Append: %v", err)
			}
			err = l.WaitDurable(lsn)
			if !errors.Is(err, ErrDiskFull) || !errors.Is(err, ErrLogFailed) || !errors.Is(err, syscall.ENOSPC) ||
				!strings.Contains(err.Error(), "write log-00000000000000000001.seg at offset ") {
				t.Fatalf("WaitDurable: %v, want ErrDiskFull", err)
			}
			if _, err := l.Append(1, []byte("later")); !errors.Is(err, ErrDiskFull) {
				t.Fatalf("Append after disk full: %v", err)
			}
			l.Close()

			opts.FS = nil
			l, rec := mustOpen(t, opts)
			defer mustClose(t, l)
			if rec.LastIndex != uint64(len(good)) || rec.Dropped != "" {
				t.Fatalf("recovery %+v, want %d records", rec, len(good))
			}
			checkEntries(t, l, 1, entries(1, good))
		})
	}
}

// Records written before a write failure still become durable; only those
// after it fail.
func TestDiskFullKeepsWrittenRecords(t *testing.T) {
	fs := &faultFS{}
	opts := smallOpts(t)
	opts.FS = fs
	l, _ := mustOpen(t, opts)
	first := appendAll(t, l, 1, [][]byte{payload(1, 100, false)})
	_ = first
	fs.limitSpace(int64(recHeaderSize+100) + 10) // one more record fits, not two
	lsn1, err := l.Append(1, payload(2, 100, false))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WaitDurable(lsn1); err != nil {
		t.Fatalf("record that fit: %v", err)
	}
	lsn2, err := l.Append(1, payload(3, 100, false))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WaitDurable(lsn2); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("record that did not fit: %v", err)
	}
	if err := l.WaitDurable(lsn1); err != nil {
		t.Fatalf("earlier record after the failure: %v", err)
	}
	l.Close()
	opts.FS = nil
	l, rec := mustOpen(t, opts)
	defer mustClose(t, l)
	if rec.LastIndex != 2 {
		t.Fatalf("recovery %+v", rec)
	}
}
