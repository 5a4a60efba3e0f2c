package sqlfront

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Stopping a fast-path statement: KILL QUERY, KILL and max_execution_time.
//
// Most fast-path statements take microseconds, but not all: a primary key
// range (fast_range.go), an index prefix (fast_prefix.go) or a counting
// join (fast_join.go) reads as many rows as the range holds, and a locking
// read or a write waits for a row lock up to innodb_lock_wait_timeout.
// go-mysql-server's statements run under a context the process list
// cancels; the fast path's ran under context.Background(), so neither KILL
// QUERY nor max_execution_time stopped them.
//
// Each session has one stmtContext, the context of its fast-path
// statements (its fastContext wraps it, and the reads and writes are given
// it). A statement begins and ends it; stopping it in between makes the
// storage cursors (which look at the context between batches of rows) and
// lock waits return context.Canceled, which is 1317, or 3024 when the
// statement timer stopped it. A stop while no fast statement runs does
// nothing, as MySQL's KILL QUERY of an idle connection. Reads (the SELECTs
// MySQL times) arm the session's statement timer (interrupt.go) from
// max_execution_time; a statement text with the MAX_EXECUTION_TIME hint is
// not given a fast plan (recognise), so go-mysql-server times it. A write
// can be stopped until its rows are written: its commit is not.

// stmtContext is a context.Context that a session's fast-path statements
// run under; it is never cancelled outside one.
type stmtContext struct {
	mu      sync.Mutex
	seq     uint64        // the statement running; 0: none
	last    uint64        // the last statement begun
	done    chan struct{} // made on demand for the statement running
	stopped atomic.Bool   // the statement running was stopped
}

var _ context.Context = (*stmtContext)(nil)

func (c *stmtContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *stmtContext) Value(any) any               { return nil }

func (c *stmtContext) Err() error {
	if c.stopped.Load() {
		return context.Canceled
	}
	return nil
}

func (c *stmtContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.stopped.Load() {
			close(c.done)
		}
	}
	return c.done
}

// begin starts a statement and returns its number.
func (c *stmtContext) begin() uint64 {
	c.mu.Lock()
	c.last++
	c.seq = c.last
	c.reset()
	c.mu.Unlock()
	return c.seq
}

// end ends the statement running: stops after it do nothing.
func (c *stmtContext) end() {
	c.mu.Lock()
	c.seq = 0
	c.reset()
	c.mu.Unlock()
}

// reset forgets the last statement's stop and channel; c.mu is held.
func (c *stmtContext) reset() {
	c.stopped.Store(false)
	c.done = nil
}

// stop stops statement seq if it is running (seq 0: whichever is) and
// reports whether it did.
func (c *stmtContext) stop(seq uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seq == 0 || (seq != 0 && seq != c.seq) || c.stopped.Load() {
		return false
	}
	c.stopped.Store(true)
	if c.done != nil {
		close(c.done)
	}
	return true
}

// fastPidBit marks the statement timer's pid of a fast-path statement
// (go-mysql-server's process ids are small counters).
const fastPidBit = 1 << 63

// beginFast starts a fast-path statement of plan p: reads are timed by
// max_execution_time. The returned function ends it.
func (s *Session) beginFast(p *fastPlan) func() {
	seq := s.stmt.begin()
	if p.write == nil {
		if ms := s.maxExecutionTime(); ms > 0 {
			s.timer.arm(fastPidBit|seq, time.Duration(ms)*time.Millisecond, func() { s.stmt.stop(seq) })
			return func() {
				s.timer.disarm()
				s.stmt.end()
			}
		}
	}
	return s.stmt.end
}

// maxExecutionTime is the session's max_execution_time (0: none).
func (s *Session) maxExecutionTime() int64 {
	v, err := s.GetSessionVariable(s.fastContext(), "max_execution_time")
	if err != nil {
		return 0
	}
	ms, _ := sessionInt(v)
	return ms
}

// StopFastStatement stops the fast-path statement connection connID is
// running, if any (KILL QUERY and KILL, once the caller was allowed to).
func (fe *Frontend) StopFastStatement(connID uint32) {
	if s := fe.session(connID); s != nil {
		s.stmt.stop(0)
	}
}
