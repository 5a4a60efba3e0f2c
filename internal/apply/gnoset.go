package apply

import (
	"sort"
	"strconv"
	"strings"
)

// gnoSet is a set of GTID numbers of one source, as sorted disjoint closed
// ranges (MySQL's GTID set intervals for one server_uuid).
type gnoSet struct{ r []gnoRange }

type gnoRange struct{ lo, hi int64 }

// has reports whether g is in the set.
func (s *gnoSet) has(g int64) bool {
	i := sort.Search(len(s.r), func(i int) bool { return s.r[i].hi >= g })
	return i < len(s.r) && s.r[i].lo <= g
}

// add adds [lo, hi] to the set. Adding just past the last range (the
// usual case: GNOs arrive in order) is O(1).
func (s *gnoSet) add(lo, hi int64) {
	if lo > hi {
		return
	}
	if n := len(s.r); n > 0 && s.r[n-1].hi+1 >= lo && s.r[n-1].lo <= lo {
		s.r[n-1].hi = max(s.r[n-1].hi, hi)
		return
	}
	// General case: insert and merge.
	i := sort.Search(len(s.r), func(i int) bool { return s.r[i].hi+1 >= lo })
	j := i
	for j < len(s.r) && s.r[j].lo <= hi+1 {
		lo, hi = min(lo, s.r[j].lo), max(hi, s.r[j].hi)
		j++
	}
	s.r = append(s.r[:i], append([]gnoRange{{lo, hi}}, s.r[j:]...)...)
}

// max returns the highest GNO in the set (0: empty).
func (s *gnoSet) max() int64 {
	if len(s.r) == 0 {
		return 0
	}
	return s.r[len(s.r)-1].hi
}

// String writes the intervals as MySQL does after a server_uuid:
// "1-5:7:9-10".
func (s *gnoSet) String() string {
	var b strings.Builder
	for i, r := range s.r {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strconv.FormatInt(r.lo, 10))
		if r.hi != r.lo {
			b.WriteByte('-')
			b.WriteString(strconv.FormatInt(r.hi, 10))
		}
	}
	return b.String()
}
