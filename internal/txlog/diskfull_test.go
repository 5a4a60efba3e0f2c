package txlog

import (
	"errors"
	"testing"
	"time"
)

// A write that finds the disk full fails the appends it did not write;
// ResumeAfterDiskFull discards them (and the part of one that reached the
// file) and the log takes appends again, dense, once there is space.
func TestResumeAfterDiskFull(t *testing.T) {
	for _, mode := range []SyncMode{SyncAlways, SyncPeriodic} {
		t.Run(mode.String(), func(t *testing.T) {
			fs := &faultFS{}
			opts := smallOpts(t)
			opts.FS, opts.SyncMode, opts.SyncInterval = fs, mode, 10*time.Millisecond
			l, _ := mustOpen(t, opts)
			var want [][]byte
			for i := range 30 {
				want = append(want, payload(uint64(i), 200, false))
			}
			appendAll(t, l, 1, want)

			if err := l.ResumeAfterDiskFull(); err != nil {
				t.Fatalf("ResumeAfterDiskFull on a healthy log: %v", err)
			}
			fs.limitSpace(100) // 100 bytes of the next 232-byte record land: a torn record
			for round := range 2 {
				lsn, err := l.Append(1, payload(900, 200, false), payload(901, 200, false))
				if err != nil {
					t.Fatalf("Append: %v", err)
				}
				if err := l.WaitDurable(lsn); !errors.Is(err, ErrDiskFull) {
					t.Fatalf("round %d: WaitDurable: %v, want ErrDiskFull", round, err)
				}
				if got := l.LastIndex(); got != 30 {
					t.Fatalf("round %d: LastIndex %d after the failed write, want 30", round, got)
				}
				if err := l.ResumeAfterDiskFull(); err != nil {
					t.Fatalf("round %d: ResumeAfterDiskFull: %v", round, err)
				}
				if err := l.Err(); err != nil {
					t.Fatalf("round %d: Err after resuming: %v", round, err)
				}
			}
			fs.limited.Store(false) // space again
			var more [][]byte
			for i := range 100 { // crosses segments
				more = append(more, payload(uint64(100+i), 200, false))
			}
			appendAll(t, l, 2, more)
			if got := l.LastIndex(); got != 130 {
				t.Fatalf("LastIndex %d, want 130", got)
			}
			if n := l.Stats().DiskFullResumes; n != 2 {
				t.Errorf("DiskFullResumes = %d, want 2", n)
			}
			all := append(entries(1, want), entries(2, more)...)
			checkEntries(t, l, 1, all)
			mustClose(t, l)

			opts.FS = nil
			l, rec := mustOpen(t, opts)
			defer mustClose(t, l)
			if rec.LastIndex != 130 || rec.TornBytes != 0 || rec.Dropped != "" {
				t.Fatalf("recovery %+v, want 130 records and nothing torn", rec)
			}
			checkEntries(t, l, 1, all)
		})
	}
}

// A failed fsync is never retried: the log stays failed.
func TestResumeRefusesFsyncFailure(t *testing.T) {
	fs := &faultFS{}
	opts := smallOpts(t)
	opts.FS = fs
	l, _ := mustOpen(t, opts)
	defer l.Close()
	appendAll(t, l, 1, [][]byte{payload(1, 100, false)})
	fs.failSyncs(errors.New("EIO"))
	lsn, err := l.Append(1, payload(2, 100, false))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WaitDurable(lsn); !errors.Is(err, ErrLogFailed) {
		t.Fatalf("WaitDurable: %v", err)
	}
	if err := l.ResumeAfterDiskFull(); !errors.Is(err, ErrLogFailed) || errors.Is(err, ErrDiskFull) {
		t.Fatalf("ResumeAfterDiskFull after a failed fsync: %v, want the fsync failure", err)
	}
	if l.Err() == nil {
		t.Fatal("the log no longer reports its failure")
	}
}
