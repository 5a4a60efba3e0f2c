package commit

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// commitAll commits txns concurrently and waits for all of them.
func commitAll(t *testing.T, p *Pipeline, txns []*Txn) []result {
	t.Helper()
	res := make([]result, len(txns))
	var wg sync.WaitGroup
	for i, tx := range txns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seq, err := p.Commit(tx)
			res[i] = result{seq, err}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("commits did not finish: %v", p.Stats())
	}
	for i, r := range res {
		if r.err != nil {
			t.Fatalf("commit %d: %v", i, r.err)
		}
	}
	return res
}

func TestSyncDelaySettings(t *testing.T) {
	tests := []struct {
		d     time.Duration
		n     int
		wantD time.Duration
		wantN int
	}{
		{0, 0, 0, 0},
		{300 * time.Microsecond, 16, 300 * time.Microsecond, 16},
		{2 * time.Second, 5, MaxSyncDelay, 5},
		{-time.Second, -3, 0, 0},
	}
	p := newTestPipeline(t, newFakeLog(0), Targeted)
	for _, tc := range tests {
		p.SetSyncDelay(tc.d, tc.n)
		if d, n := p.SyncDelay(); d != tc.wantD || n != tc.wantN {
			t.Errorf("SetSyncDelay(%v, %d): SyncDelay() = %v, %d; want %v, %d", tc.d, tc.n, d, n, tc.wantD, tc.wantN)
		}
	}
	q, err := New(Options{Log: newFakeLog(0), SyncDelay: time.Millisecond, SyncNoDelayCount: 7})
	if err != nil {
		t.Fatal(err)
	}
	if d, n := q.SyncDelay(); d != time.Millisecond || n != 7 {
		t.Errorf("Options{SyncDelay: 1ms, SyncNoDelayCount: 7}: SyncDelay() = %v, %d", d, n)
	}
}

// TestSyncDelayWaits: a leader waits out the delay before it takes the
// queue, and does not wait once the delay is set back to 0.
func TestSyncDelayWaits(t *testing.T) {
	log := newFakeLog(0)
	p := newTestPipeline(t, log, Targeted)
	r := newRecorder(t, log)
	const d = 30 * time.Millisecond
	p.SetSyncDelay(d, 0)
	start := time.Now()
	commitAll(t, p, []*Txn{r.txn([]uint64{1}, nil)})
	if el := time.Since(start); el < d {
		t.Errorf("commit with a %v sync delay took %v", d, el)
	}
	s := p.Stats()
	if s.Delays != 1 || s.DelaysCut != 0 || s.DelayTime < d {
		t.Errorf("after one delayed commit: %v", s)
	}
	p.SetSyncDelay(0, 0)
	commitAll(t, p, []*Txn{r.txn([]uint64{2}, nil)})
	if s := p.Stats(); s.Delays != 1 || s.Commits != 2 {
		t.Errorf("after a commit without delay: %v", s)
	}
}

// TestSyncDelayEndsAtCount: with a delay far longer than the test, the
// leader's wait ends when no_delay_count commits are queued, and they form
// one group: one append, one durability wait.
func TestSyncDelayEndsAtCount(t *testing.T) {
	for _, n := range []int{2, 4, 9} {
		log := newFakeLog(0)
		p := newTestPipeline(t, log, Targeted)
		r := newRecorder(t, log)
		p.SetSyncDelay(MaxSyncDelay, n)
		// Leaders wait up to a second: a count that did not end the wait
		// shows as one group per commit and a second per group.
		txns := make([]*Txn, n)
		for i := range txns {
			txns[i] = r.txn([]uint64{uint64(i + 1)}, nil)
		}
		start := time.Now()
		res := commitAll(t, p, txns)
		el := time.Since(start)
		seqs := make([]int64, len(res))
		for i := range res {
			seqs[i] = res[i].seq
		}
		r.checkDense(t, slices.Sorted(slices.Values(seqs)), 1)
		s := p.Stats()
		if s.Groups != 1 || s.Appended != int64(n) || s.Delays != 1 || s.DelaysCut != 1 {
			t.Errorf("n=%d: want one group of %d whose wait the count cut short; %v (took %v)", n, n, s, el)
		}
		if log.waits.Load() != 1 {
			t.Errorf("n=%d: %d durability waits, want 1", n, log.waits.Load())
		}
	}
}

// TestSyncDelaySkippedWhenQueueFull: a leader that finds no_delay_count
// commits already queued (they queued while the previous group held the
// flush stage) does not wait at all.
func TestSyncDelaySkippedWhenQueueFull(t *testing.T) {
	log := newFakeLog(0)
	g := newGate()
	var p *Pipeline
	const behind = 3
	log.appendFn = func(call int64, _ [][]byte) error {
		if call == 1 {
			// The first commit led with no delay; the delay applies to
			// the group that queues behind it.
			p.SetSyncDelay(MaxSyncDelay, behind)
			g.block()
		}
		return nil
	}
	p = newTestPipeline(t, log, Targeted)
	r := newRecorder(t, log)
	txns := make([]*Txn, behind)
	for i := range txns {
		txns[i] = r.txn([]uint64{uint64(i + 2)}, nil)
	}
	start := time.Now()
	res := formGroup(t, p, g, r.txn([]uint64{1}, nil), txns)
	for i, x := range res {
		if x.err != nil || x.seq != int64(i+1) {
			t.Errorf("commit %d: seq %d, err %v", i, x.seq, x.err)
		}
	}
	s := p.Stats()
	if s.Groups != 2 || s.DelaysSkipped != 1 || s.Delays != 0 {
		t.Errorf("want two groups, the second led without waiting: %v (took %v)", s, time.Since(start))
	}
}
