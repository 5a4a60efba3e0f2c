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
// run under; it is never cancelled outside one. Beginning and ending a
// statement are two atomic stores (every fast statement pays them); the
// Done channel is made only for a statement that asks for it (a lock
// wait).
type stmtContext struct {
	// state is the statement running, shifted left by one, with the low
	// bit set once it is stopped; 0: none.
	state atomic.Uint64
	last  uint64 // the last statement begun (its session's goroutine only)
	timed bool   // the statement timer runs for it (idem)

	mu      sync.Mutex
	done    chan struct{} // the running statement's, made on demand
	closed  bool          // done is closed
	hasDone atomic.Bool   // done is not nil
}

var _ context.Context = (*stmtContext)(nil)

func (c *stmtContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *stmtContext) Value(any) any               { return nil }

func (c *stmtContext) Err() error {
	if c.state.Load()&1 != 0 {
		return context.Canceled
	}
	return nil
}

func (c *stmtContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done, c.closed = make(chan struct{}), false
		c.hasDone.Store(true)
	}
	if !c.closed && c.state.Load()&1 != 0 {
		close(c.done)
		c.closed = true
	}
	return c.done
}

// begin starts a statement and returns its number.
func (c *stmtContext) begin() uint64 {
	c.last++
	c.dropDone()
	c.state.Store(c.last << 1)
	return c.last
}

// end ends the statement running: stops after it do nothing.
func (c *stmtContext) end() {
	c.state.Store(0)
	c.dropDone()
}

// dropDone forgets the last statement's Done channel.
func (c *stmtContext) dropDone() {
	if !c.hasDone.Load() {
		return
	}
	c.mu.Lock()
	c.done, c.closed = nil, false
	c.hasDone.Store(false)
	c.mu.Unlock()
}

// stop stops statement seq if it is running (seq 0: whichever is) and
// reports whether it did.
func (c *stmtContext) stop(seq uint64) bool {
	for {
		st := c.state.Load()
		if st == 0 || st&1 != 0 || (seq != 0 && st>>1 != seq) {
			return false
		}
		if !c.state.CompareAndSwap(st, st|1) {
			continue
		}
		c.mu.Lock()
		// The statement may have ended meanwhile: its successor's
		// channel is not closed.
		if c.done != nil && !c.closed && c.state.Load() == st|1 {
			close(c.done)
			c.closed = true
		}
		c.mu.Unlock()
		return true
	}
}

// fastPidBit marks the statement timer's pid of a fast-path statement
// (go-mysql-server's process ids are small counters).
const fastPidBit = 1 << 63

// beginFast starts a fast-path statement of plan p: reads are timed by
// max_execution_time. endFast ends it.
func (s *Session) beginFast(p *fastPlan) {
	seq := s.stmt.begin()
	if p.write == nil {
		if ms := s.maxExecutionTime(); ms > 0 {
			s.stmt.timed = true
			s.timer.arm(fastPidBit|seq, time.Duration(ms)*time.Millisecond, func() { s.stmt.stop(seq) })
		}
	}
}

// endFast ends the fast-path statement beginFast started (again: nothing).
func (s *Session) endFast() {
	if s.stmt.timed {
		s.stmt.timed = false
		s.timer.disarm()
	}
	s.stmt.end()
}

// maxExecutionTime is the session's max_execution_time (0: none): the
// session's own value, read without Session.GetSessionVariable's checks
// for the variables lockstep answers itself (it is not one of them).
func (s *Session) maxExecutionTime() int64 {
	v, err := s.BaseSession.GetSessionVariable(s.fastContext(), "max_execution_time")
	if err != nil {
		return 0
	}
	ms, _ := sessionInt(v)
	return ms
}

// StopFastStatement stops the fast-path statement connection connID is
// running, if any (KILL QUERY and KILL, once the caller was allowed to),
// and a COM_STMT_PREPARE the protocol layer is parsing (planning.go):
// parsing reports the latter.
func (fe *Frontend) StopFastStatement(connID uint32) (parsing bool) {
	if s := fe.session(connID); s != nil {
		s.stmt.stop(0)
		return s.killPrepareParse()
	}
	return false
}
