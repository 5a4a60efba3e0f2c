package stat

import (
	"sync/atomic"
	"testing"
)

// TestHelpers: each helper adds in the default build and does nothing under
// -tags nocounters.
func TestHelpers(t *testing.T) {
	var i atomic.Int64
	var u atomic.Uint64
	Inc(&i)
	Add(&i, 2)
	IncU(&u)
	AddU(&u, 2)
	want := int64(3)
	if !On {
		want = 0
	}
	if i.Load() != want || int64(u.Load()) != want {
		t.Errorf("On=%v: Int64 %d, Uint64 %d, want %d", On, i.Load(), u.Load(), want)
	}
}
