package sqlfront

import (
	"context"
	"errors"
	"math/rand"
	"strconv"
	"testing"
)

// TestStmtContext: a fast statement's context is stopped only while the
// statement runs, by a stop naming it or any; the next statement starts
// unstopped, with a fresh Done channel.
func TestStmtContext(t *testing.T) {
	var c stmtContext
	if c.stop(0) || c.Err() != nil {
		t.Fatal("a stop with no statement running took effect")
	}
	first := c.begin()
	done := c.Done()
	if c.stop(first+1) || c.Err() != nil {
		t.Fatal("a stop naming another statement took effect")
	}
	if !c.stop(first) || !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("the running statement was not stopped: %v", c.Err())
	}
	select {
	case <-done:
	default:
		t.Fatal("Done was not closed by the stop")
	}
	if c.stop(0) {
		t.Error("a second stop took effect")
	}
	c.end()
	if c.Err() != nil {
		t.Error("the stop outlived its statement")
	}
	if c.stop(first) || c.stop(0) {
		t.Error("a stop after the statement ended took effect")
	}
	second := c.begin()
	if c.Err() != nil {
		t.Error("the next statement began stopped")
	}
	d2 := c.Done()
	if d2 == done {
		t.Error("the next statement reuses the closed Done channel")
	}
	if c.stop(first) {
		t.Error("a stop naming the ended statement stopped the next one")
	}
	if !c.stop(0) {
		t.Error("KILL's stop (any statement) did not stop the running one")
	}
	<-d2
	if second == first {
		t.Error("statements share a number")
	}
	c.end()
}

// BenchmarkFastStop: what making a fast statement stoppable costs per
// statement (begin and end of its context, the max_execution_time read),
// beside a whole prepared point select on the fast path in the same run.
func BenchmarkFastStop(b *testing.B) {
	const n = 10000
	exec, s := preparedPointSelectSession(b, n)
	ids := make([][]byte, 1024)
	for i := range ids {
		ids[i] = []byte(strconv.Itoa(rand.Intn(n) + 1))
	}
	b.Run("point-select", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			exec(ids[i%len(ids)])
		}
	})
	b.Run("begin-end", func(b *testing.B) {
		p := &fastPlan{}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			s.beginFast(p)
			s.endFast()
		}
	})
}
