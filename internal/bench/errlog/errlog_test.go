package errlog

import (
	"fmt"
	"testing"
)

// TestLog: messages are counted in first-seen order; past MaxDistinct,
// new messages are counted on one overflow line.
func TestLog(t *testing.T) {
	var l Log
	for i := 0; i < MaxDistinct+5; i++ {
		l.Add(fmt.Sprintf("m%d", i))
	}
	l.Add("m0")
	l.Add("m30")
	got := l.List()
	if len(got) != MaxDistinct+1 {
		t.Fatalf("%d lines, want %d", len(got), MaxDistinct+1)
	}
	if got[0] != (Count{"m0", 2}) || got[1] != (Count{"m1", 1}) {
		t.Errorf("first lines %v", got[:2])
	}
	if last := got[MaxDistinct]; last != (Count{overflow, 6}) {
		t.Errorf("overflow line %v, want 6 counted", last)
	}
}
