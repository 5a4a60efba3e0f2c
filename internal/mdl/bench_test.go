package mdl

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkStatement is one autocommit statement's metadata locking on the
// fast path: TryShared on its table, then ReleaseAll; owners spread over
// tables names (1 = every session on one table, sysbench's worst case).
func BenchmarkStatement(b *testing.B) {
	for _, tables := range []int{1, 8} {
		b.Run("tables="+strconv.Itoa(tables), func(b *testing.B) {
			m := NewManager()
			var next atomic.Uint64
			b.RunParallel(func(pb *testing.PB) {
				i := next.Add(1)
				o := m.NewOwner(i)
				k := Key{"sbtest", "sbtest" + strconv.Itoa(int(i)%tables)}
				for pb.Next() {
					if !o.TryShared(k, SharedRead, Transaction) {
						b.Fatal("not granted")
					}
					o.ReleaseAll()
				}
			})
		})
	}
}

// BenchmarkAcquire is the planned path: Acquire of one shared request and
// ReleaseAll.
func BenchmarkAcquire(b *testing.B) {
	m := NewManager()
	var next atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		o := m.NewOwner(next.Add(1))
		reqs := []Request{{Key: Key{"sbtest", "sbtest1"}, Mode: Shared, Duration: Transaction}}
		for pb.Next() {
			if err := o.Acquire(context.Background(), reqs, time.Second); err != nil {
				b.Fatal(err)
			}
			o.ReleaseAll()
		}
	})
}
