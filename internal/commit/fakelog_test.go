package commit

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"
)

// fakeLog is an in-memory Log. The LSN of a record is its 1-based index.
// WaitDurable simulates one fsync at a time: a caller whose position is not
// yet durable takes the sync lock, "fsyncs" everything appended so far
// (sleeping syncLatency) and so covers every later caller whose records were
// appended before the fsync began — the way a real log's flusher does.
type fakeLog struct {
	syncLatency time.Duration

	mu       sync.Mutex
	records  [][]byte
	terms    []uint64
	seqLSN   map[int64]uint64 // sequence number in the payload -> LSN
	appendFn func(call int64, payloads [][]byte) error
	appends  atomic.Int64 // Append calls, failed ones included

	syncMu  sync.Mutex
	syncFn  func(call int64, lsn uint64) error // called before each WaitDurable does anything
	durable atomic.Uint64
	waits   atomic.Int64 // WaitDurable calls
	syncs   atomic.Int64 // simulated fsyncs
}

func newFakeLog(latency time.Duration) *fakeLog {
	return &fakeLog{syncLatency: latency, seqLSN: map[int64]uint64{}}
}

// payload is what the tests' Encode produces: seq and last_committed.
func payload(seq, lc int64) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, uint64(seq))
	binary.LittleEndian.PutUint64(b[8:], uint64(lc))
	return b
}

func decode(b []byte) (seq, lc int64) {
	return int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
}

func (l *fakeLog) Append(term uint64, payloads ...[]byte) (uint64, error) {
	call := l.appends.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.appendFn != nil {
		if err := l.appendFn(call, payloads); err != nil {
			return 0, err
		}
	}
	for _, p := range payloads {
		l.records = append(l.records, p)
		l.terms = append(l.terms, term)
		if len(p) >= 16 {
			seq, _ := decode(p)
			l.seqLSN[seq] = uint64(len(l.records))
		}
	}
	return uint64(len(l.records)), nil
}

func (l *fakeLog) WaitDurable(lsn uint64) error {
	call := l.waits.Add(1)
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if l.syncFn != nil {
		if err := l.syncFn(call, lsn); err != nil {
			return err
		}
	}
	for l.durable.Load() < lsn {
		l.mu.Lock()
		target := uint64(len(l.records))
		l.mu.Unlock()
		if l.syncLatency > 0 {
			time.Sleep(l.syncLatency)
		}
		l.durable.Store(target)
		l.syncs.Add(1)
	}
	return nil
}

// lsnOf is the LSN of the record carrying seq, 0 if there is none.
func (l *fakeLog) lsnOf(seq int64) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seqLSN[seq]
}

// snapshot returns the records appended so far.
func (l *fakeLog) snapshot() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]byte(nil), l.records...)
}

// nullLog accepts everything at once, for allocation checks.
type nullLog struct{ lsn atomic.Uint64 }

func (l *nullLog) Append(_ uint64, payloads ...[]byte) (uint64, error) {
	return l.lsn.Add(uint64(len(payloads))), nil
}

func (l *nullLog) WaitDurable(uint64) error { return nil }
