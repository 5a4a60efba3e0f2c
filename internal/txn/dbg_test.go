package txn

import (
	"testing"
	"time"
)

func TestDbgParallel(t *testing.T) {
	s, _ := setupActive(1000)
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				done <- n
				return
			default:
				x := s.Begin()
				x.AssignID()
				x.Finish()
				n++
			}
		}
	}()
	tr := s.Begin()
	t0 := time.Now()
	views := 0
	var maxd, tot time.Duration
	var words, longs int
	for time.Since(t0) < 300*time.Millisecond {
		t1 := time.Now()
		v := tr.ReadView()
		if d := time.Since(t1); d > maxd {
			maxd = d
		}
		tot += time.Since(t1)
		words += len(v.bits)
		longs += len(v.long)
		tr.CloseReadView()
		views++
	}
	close(stop)
	n := <-done
	st := s.Stats()
	t.Logf("views %d commits %d retries %d barrier %d avgwords %d avglong %d longActive %d max %v tot %v", views, n, st.ViewRetries, st.ViewBarrier, words/views, longs/views, st.LongActive, maxd, tot)
}
