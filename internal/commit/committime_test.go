package commit

import (
	"sync"
	"testing"
	"time"

	"lockstep/internal/certify"
)

// TestCommitTime: every member of a group gets the group's commit time,
// read from the clock once per group in the flush stage, in microseconds
// since the epoch; later groups get later readings.
func TestCommitTime(t *testing.T) {
	log := newFakeLog(time.Millisecond)
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	var readings int64 // under the pipeline's logMu: the flush stage reads it
	clock := func() time.Time {
		readings++
		return base.Add(time.Duration(readings) * time.Second)
	}
	var mu sync.Mutex
	times := map[int64]int64{} // sequence number -> CommitTime
	var groups [][]int64       // the sequence numbers of each Append
	log.appendFn = func(_ int64, payloads [][]byte) error {
		g := make([]int64, len(payloads))
		for i, p := range payloads {
			g[i], _ = decode(p)
		}
		mu.Lock()
		groups = append(groups, g)
		mu.Unlock()
		return nil
	}
	cert, err := certify.NewStatic(testCertConfig)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Log: log, Certifier: cert, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				_, err := p.Commit(&Txn{Writeset: []uint64{mix(uint64(w*1000 + i))}, Encode: func(pos Position) ([]byte, error) {
					mu.Lock()
					times[pos.Seq] = pos.CommitTime
					mu.Unlock()
					return payload(pos.Seq, pos.LastCommitted), nil
				}})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if int64(len(groups)) != readings {
		t.Fatalf("%d groups, %d clock readings: want one reading per group", len(groups), readings)
	}
	big := false
	for i, g := range groups {
		want := base.Add(time.Duration(i+1) * time.Second).UnixMicro()
		big = big || len(g) > 1
		for _, seq := range g {
			if times[seq] != want {
				t.Fatalf("group %d (%v): sequence number %d has commit time %d, want %d", i, g, seq, times[seq], want)
			}
		}
	}
	if len(times) != 320 {
		t.Fatalf("%d commits encoded, want 320", len(times))
	}
	if !big {
		t.Logf("no group of more than one member formed (%d groups)", len(groups))
	}
}
