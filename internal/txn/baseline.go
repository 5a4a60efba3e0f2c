package txn

import (
	"slices"
	"sync"
)

// sortedSys is the baseline the hybrid active set is measured against: the
// classic InnoDB design. A mutex protects a sorted list of active ids (ids
// are allocated under the mutex, so appending keeps it sorted) and the list
// of open views; creating a view copies the whole id list, and closing a
// view and finishing a transaction take the same mutex. It is used by the
// benchmarks and by the randomized visibility test as a reference.
type sortedSys struct {
	mu     sync.Mutex
	next   ID
	active []ID
	views  map[*sortedView]struct{}
}

type sortedView struct {
	low, up ID
	ids     []ID // sorted active ids in [low, up)
}

func newSortedSys() *sortedSys { return &sortedSys{views: map[*sortedView]struct{}{}} }

func (s *sortedSys) assign() ID {
	s.mu.Lock()
	s.next++
	id := s.next
	s.active = append(s.active, id)
	s.mu.Unlock()
	return id
}

func (s *sortedSys) finish(id ID) {
	s.mu.Lock()
	if i, ok := slices.BinarySearch(s.active, id); ok {
		s.active = append(s.active[:i], s.active[i+1:]...)
	}
	s.mu.Unlock()
}

func (s *sortedSys) openView() *sortedView {
	s.mu.Lock()
	v := &sortedView{up: s.next + 1, ids: make([]ID, len(s.active))}
	copy(v.ids, s.active)
	v.low = v.up
	if len(v.ids) > 0 {
		v.low = v.ids[0]
	}
	s.views[v] = struct{}{}
	s.mu.Unlock()
	return v
}

func (s *sortedSys) closeView(v *sortedView) {
	s.mu.Lock()
	delete(s.views, v)
	s.mu.Unlock()
}

func (s *sortedSys) purgeLimit() ID {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.next + 1
	if len(s.active) > 0 {
		l = s.active[0]
	}
	for v := range s.views {
		if v.low < l {
			l = v.low
		}
	}
	return l
}

func (v *sortedView) sees(id ID) bool {
	if id < v.low {
		return true
	}
	if id >= v.up {
		return false
	}
	_, found := slices.BinarySearch(v.ids, id)
	return !found
}
