package txn

import "testing"

func BenchmarkDbgLongView(b *testing.B) {
	s := NewSys()
	var keep []*Trx
	for i := 0; i < 1000; i++ {
		x := s.Begin()
		x.AssignID()
		keep = append(keep, x)
	}
	for i := 0; i < 300000; i++ {
		x := s.Begin()
		x.AssignID()
		x.Finish()
	}
	s.PurgeLimit()
	w := s.as.win.Load()
	b.Logf("long %d lo %d next %d", len(w.long), w.lo, s.as.next.Load())
	v := &ReadView{}
	b.Run("collect", func(b *testing.B) {
		for b.Loop() {
			s.as.collect(v)
		}
		b.Logf("bits %d long %d", len(v.bits), len(v.long))
	})
	b.Run("scanlong", func(b *testing.B) {
		n := 0
		for b.Loop() {
			for _, e := range w.long {
				if !e.blk.finished(e.id) {
					n++
				}
			}
		}
	})
}
