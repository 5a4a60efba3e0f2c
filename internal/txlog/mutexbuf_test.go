package txlog

import "sync"

// mutexAppender is the measured baseline for the log buffer: MySQL 5.7's
// design, where one mutex is held to reserve the space AND copy the record
// into the buffer. Everything else is the same as Log.Append: the same
// encoding (outside the mutex), the same ring, the same writer and flusher.
type mutexAppender struct {
	l  *Log
	mu sync.Mutex
}

func (m *mutexAppender) Append(term uint64, payloads ...[]byte) (uint64, error) {
	l := m.l
	if err := l.Err(); err != nil {
		return 0, err
	}
	var small [smallBatch]encRec
	recs, size, err := l.encode(small[:0], term, payloads)
	if err != nil {
		return 0, err
	}
	b := &batch{recs: recs, size: size}
	m.mu.Lock()
	defer m.mu.Unlock()
	end := l.reserved.Add(b.size)
	if end&closedBit != 0 {
		return 0, ErrClosed
	}
	if err := l.fill(b, end-b.size, end); err != nil {
		return 0, err
	}
	return end, nil
}
