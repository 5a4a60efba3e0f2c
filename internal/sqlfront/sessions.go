package sqlfront

import (
	"sync"
	"sync/atomic"
)

// sessionTable maps connection ids to their sessions for the protocol
// handler. Every statement looks its session up, often several times
// (the fast path, the status flags, the diagnostics), while sessions are
// added and removed only at connect and disconnect: lookups take no lock
// (sync.Map's read-mostly case), where a mutex shared by every connection
// was taken for each.
type sessionTable struct {
	m sync.Map     // uint32 → *Session
	n atomic.Int64 // entries, for Threads_connected
}

// get returns connection connID's session, or nil.
func (t *sessionTable) get(connID uint32) *Session {
	s, _ := t.m.Load(connID)
	s2, _ := s.(*Session)
	return s2
}

// put makes s connection connID's session and reports whether it replaced
// one (COM_RESET_CONNECTION does).
func (t *sessionTable) put(connID uint32, s *Session) (replaced bool) {
	if _, replaced = t.m.Swap(connID, s); !replaced {
		t.n.Add(1)
	}
	return replaced
}

// remove drops connection connID's entry if it is still s.
func (t *sessionTable) remove(connID uint32, s *Session) {
	if t.m.CompareAndDelete(connID, s) {
		t.n.Add(-1)
	}
}

// len is the number of sessions.
func (t *sessionTable) len() int64 { return t.n.Load() }
