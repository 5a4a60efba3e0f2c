package txn

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestBeginAssignFinish(t *testing.T) {
	s := NewSys()
	a := s.Begin()
	if a.ID() != 0 {
		t.Fatalf("new trx has id %d", a.ID())
	}
	id := a.AssignID()
	if id != 1 || a.AssignID() != 1 || a.ID() != 1 {
		t.Fatalf("AssignID not idempotent: %d %d", id, a.ID())
	}
	b := s.Begin()
	if got := b.AssignID(); got != 2 {
		t.Fatalf("second id %d", got)
	}
	st := s.Stats()
	if st.TrxStarted != 2 || st.TrxWithID != 2 || st.Active != 2 || st.NextID != 3 {
		t.Fatalf("stats %+v", st)
	}
	a.Finish()
	a.Finish() // idempotent
	st = s.Stats()
	if st.TrxFinished != 1 || st.Active != 1 {
		t.Fatalf("stats after finish %+v", st)
	}
	ro := s.Begin()
	ro.ReadView()
	ro.Finish()
	if st := s.Stats(); st.TrxFinished != 2 || st.Active != 1 || st.ViewsOpen != 0 || st.ViewsOpened != 1 {
		t.Fatalf("stats after read-only %+v", st)
	}
}

func TestReadViewScenarios(t *testing.T) {
	type step struct {
		op  string // "assign", "finish", "view", "close"
		trx int
	}
	type check struct {
		viewer int
		trx    int
		sees   bool
	}
	tests := []struct {
		name   string
		steps  []step
		checks []check
	}{
		{
			name:   "active at view creation is not seen",
			steps:  []step{{"assign", 0}, {"view", 1}, {"finish", 0}},
			checks: []check{{1, 0, false}},
		},
		{
			name:   "finished before view is seen",
			steps:  []step{{"assign", 0}, {"finish", 0}, {"view", 1}},
			checks: []check{{1, 0, true}},
		},
		{
			name:   "started after view is not seen",
			steps:  []step{{"view", 1}, {"assign", 0}, {"finish", 0}},
			checks: []check{{1, 0, false}},
		},
		{
			name:   "repeatable read keeps its view",
			steps:  []step{{"assign", 0}, {"view", 1}, {"finish", 0}, {"view", 1}},
			checks: []check{{1, 0, false}},
		},
		{
			name:   "read committed takes a new view per statement",
			steps:  []step{{"assign", 0}, {"view", 1}, {"finish", 0}, {"close", 1}, {"view", 1}},
			checks: []check{{1, 0, true}},
		},
		{
			name: "mixed",
			steps: []step{
				{"assign", 0}, {"assign", 1}, {"assign", 2}, {"finish", 1},
				{"view", 3}, {"finish", 0}, {"assign", 4}, {"finish", 4},
			},
			checks: []check{{3, 0, false}, {3, 1, true}, {3, 2, false}, {3, 4, false}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSys()
			trx := make([]*Trx, 5)
			for i := range trx {
				trx[i] = s.Begin()
			}
			for _, st := range tc.steps {
				switch st.op {
				case "assign":
					trx[st.trx].AssignID()
				case "finish":
					trx[st.trx].Finish()
				case "view":
					trx[st.trx].ReadView()
				case "close":
					trx[st.trx].CloseReadView()
				}
			}
			for _, c := range tc.checks {
				if got := trx[c.viewer].ReadView().Sees(trx[c.trx].ID()); got != c.sees {
					t.Errorf("trx %d sees trx %d (id %d) = %v, want %v", c.viewer, c.trx, trx[c.trx].ID(), got, c.sees)
				}
			}
		})
	}
}

// TestHybridMatchesSortedSequential drives the hybrid set, the sorted-vector
// baseline and an exact oracle with the same random sequence and compares
// every answer. Long-running transactions force ids into the long list, and
// the run is long enough to wrap the block ring several times.
func TestHybridMatchesSortedSequential(t *testing.T) {
	cases := []struct {
		name     string
		ops      int
		active   int     // target number of short active trxs
		longProb float64 // chance a new trx is long-running
		longLife int     // ops a long trx stays active
	}{
		{"short only", 30000, 50, 0, 0},
		{"few long", 30000, 100, 0.002, 20000},
		{"many long", 30000, 20, 0.02, 8000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.ops)))
			s := NewSys()
			b := newSortedSys()
			type pair struct {
				h    *Trx
				sid  ID
				long bool
				end  int
			}
			var live []pair
			finished := map[ID]bool{}
			checkView := func(op int) {
				viewer := s.Begin()
				hv := viewer.ReadView()
				sv := b.openView()
				if hv.LowLimit() != sv.up {
					t.Fatalf("op %d: up limit %d vs %d", op, hv.LowLimit(), sv.up)
				}
				if hv.UpLimit() != sv.low {
					t.Fatalf("op %d: low limit %d vs %d", op, hv.UpLimit(), sv.low)
				}
				// check every live id, some finished ones, and ids past the end
				probe := func(id ID) {
					want := finished[id]
					if got := hv.Sees(id); got != want {
						t.Fatalf("op %d: hybrid Sees(%d)=%v want %v", op, id, got, want)
					}
					if got := sv.sees(id); got != want {
						t.Fatalf("op %d: sorted sees(%d)=%v want %v", op, id, got, want)
					}
				}
				for _, p := range live {
					probe(p.sid)
				}
				for k := 0; k < 50; k++ {
					probe(1 + rng.Uint64N(sv.up+5))
				}
				if pl, bpl := s.PurgeLimit(), b.purgeLimit(); pl > bpl {
					t.Fatalf("op %d: purge limit %d above baseline %d", op, pl, bpl)
				}
				viewer.Finish()
				b.closeView(sv)
			}
			for op := 0; op < tc.ops; op++ {
				// finish due long trxs and random short ones
				if len(live) > 0 && (len(live) > tc.active || rng.IntN(2) == 0) {
					i := rng.IntN(len(live))
					if !live[i].long || live[i].end <= op {
						p := live[i]
						p.h.Finish()
						b.finish(p.sid)
						finished[p.sid] = true
						live[i] = live[len(live)-1]
						live = live[:len(live)-1]
					}
				}
				h := s.Begin()
				hid := h.AssignID()
				sid := b.assign()
				if hid != sid {
					t.Fatalf("ids diverged: %d vs %d", hid, sid)
				}
				p := pair{h: h, sid: sid}
				if rng.Float64() < tc.longProb {
					p.long, p.end = true, op+tc.longLife
				}
				live = append(live, p)
				if op%499 == 0 {
					checkView(op)
				}
			}
			checkView(tc.ops)
			for _, p := range live {
				p.h.Finish()
				b.finish(p.sid)
				finished[p.sid] = true
			}
			checkView(tc.ops + 1)
			if pl := s.PurgeLimit(); pl != s.as.next.Load()+1 {
				t.Fatalf("all finished but purge limit %d, next %d", pl, s.as.next.Load()+1)
			}
		})
	}
}

// visibilityOracle records, on one global clock, when each transaction's
// Finish started and ended.
type visibilityOracle struct {
	clock     atomic.Uint64
	finStart  []atomic.Uint64
	finEnd    []atomic.Uint64
	allocated atomic.Uint64
}

func newOracle(maxID int) *visibilityOracle {
	return &visibilityOracle{finStart: make([]atomic.Uint64, maxID+1), finEnd: make([]atomic.Uint64, maxID+1)}
}

func (o *visibilityOracle) tick() uint64 { return o.clock.Add(1) }

func (o *visibilityOracle) noteAlloc(id ID) {
	for {
		cur := o.allocated.Load()
		if id <= cur || o.allocated.CompareAndSwap(cur, id) {
			return
		}
	}
}

// check validates a view created between clock values vs and ve:
// transactions that finished before vs are seen, transactions whose Finish
// had not started by ve are not, and the view is a consistent cut: if it
// sees a transaction whose Finish started at time m, it sees every
// transaction whose Finish ended before m.
func (o *visibilityOracle) check(sees func(ID) bool, vs, ve uint64, hi ID) string {
	var maxSeenStart uint64
	for id := ID(1); id <= hi; id++ {
		fs, fe := o.finStart[id].Load(), o.finEnd[id].Load()
		s := sees(id)
		if fe != 0 && fe < vs && !s {
			return "does not see a transaction finished before the view"
		}
		if (fs == 0 || fs > ve) && s {
			return "sees a transaction that had not finished"
		}
		if s && fs > maxSeenStart {
			maxSeenStart = fs
		}
	}
	for id := ID(1); id <= hi; id++ {
		if fe := o.finEnd[id].Load(); fe != 0 && fe < maxSeenStart && !sees(id) {
			return "not a consistent cut: sees a later commit but not an earlier one"
		}
	}
	return ""
}

type visSystem interface {
	begin() visTrx
	purgeLimit() ID
}

type visTrx interface {
	assign() ID
	view() func(ID) bool
	lowWater() ID
	closeView()
	finish()
}

type hybridSys struct{ s *Sys }
type hybridTrx struct{ t *Trx }

func (h hybridSys) begin() visTrx         { return hybridTrx{h.s.Begin()} }
func (h hybridSys) purgeLimit() ID        { return h.s.PurgeLimit() }
func (h hybridTrx) assign() ID            { return h.t.AssignID() }
func (h hybridTrx) view() func(ID) bool   { return h.t.ReadView().Sees }
func (h hybridTrx) lowWater() ID          { return h.t.ReadView().UpLimit() }
func (h hybridTrx) closeView()            { h.t.CloseReadView() }
func (h hybridTrx) finish()               { h.t.Finish() }
func (b sortedSysAdapter) begin() visTrx  { return &sortedTrx{s: b.s} }
func (b sortedSysAdapter) purgeLimit() ID { return b.s.purgeLimit() }
func (b *sortedTrx) assign() ID           { b.id = b.s.assign(); return b.id }
func (b *sortedTrx) lowWater() ID         { return b.v.low }
func (b *sortedTrx) closeView()           { b.s.closeView(b.v); b.v = nil }
func (b *sortedTrx) finish()              { b.s.finish(b.id) }
func (b *sortedTrx) view() func(ID) bool  { b.v = b.s.openView(); return b.v.sees }

type sortedSysAdapter struct{ s *sortedSys }
type sortedTrx struct {
	s  *sortedSys
	id ID
	v  *sortedView
}

// TestVisibilityConcurrent runs writers (short and long-running), readers
// and a purge loop against each implementation and checks every view and
// every purge limit against the oracle.
func TestVisibilityConcurrent(t *testing.T) {
	impls := []struct {
		name string
		mk   func() visSystem
	}{
		{"hybrid", func() visSystem { return hybridSys{NewSys()} }},
		{"sorted", func() visSystem { return sortedSysAdapter{newSortedSys()} }},
	}
	const (
		writers     = 8
		longWriters = 2
		readers     = 4
		perWriter   = 3000
	)
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			sys := impl.mk()
			maxID := writers*perWriter + longWriters*perWriter + 16
			o := newOracle(maxID)
			var stop atomic.Bool
			var wg, rwg sync.WaitGroup
			errs := make(chan string, 16)
			fail := func(msg string) {
				select {
				case errs <- msg:
				default:
				}
			}
			finish := func(tx visTrx, id ID) {
				o.finStart[id].Store(o.tick())
				tx.finish()
				o.finEnd[id].Store(o.tick())
			}
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func(seed uint64) {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(seed, 7))
					var pending []struct {
						tx visTrx
						id ID
					}
					for i := 0; i < perWriter; i++ {
						tx := sys.begin()
						id := tx.assign()
						o.noteAlloc(id)
						pending = append(pending, struct {
							tx visTrx
							id ID
						}{tx, id})
						// finish in a scrambled order, keeping a few open
						for len(pending) > 4 || (len(pending) > 0 && rng.IntN(3) == 0) {
							k := rng.IntN(len(pending))
							finish(pending[k].tx, pending[k].id)
							pending[k] = pending[len(pending)-1]
							pending = pending[:len(pending)-1]
						}
						if i%64 == 0 {
							runtime.Gosched()
						}
					}
					for _, p := range pending {
						finish(p.tx, p.id)
					}
				}(uint64(w))
			}
			for w := 0; w < longWriters; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < perWriter/100; i++ {
						tx := sys.begin()
						id := tx.assign()
						o.noteAlloc(id)
						time.Sleep(2 * time.Millisecond)
						finish(tx, id)
					}
				}()
			}
			for r := 0; r < readers; r++ {
				rwg.Add(1)
				go func() {
					defer rwg.Done()
					for !stop.Load() {
						tx := sys.begin()
						vs := o.tick()
						sees := tx.view()
						ve := o.tick()
						hi := ID(o.allocated.Load())
						if msg := o.check(sees, vs, ve, hi); msg != "" {
							fail(msg)
						}
						// the purge limit must stay below this open view's
						// low-water mark
						if l := sys.purgeLimit(); l > tx.lowWater() {
							fail("purge limit above an open view's low-water mark")
						}
						tx.closeView()
						// and a view opened after a purge limit was computed
						// sees everything below it
						l := sys.purgeLimit()
						sees = tx.view()
						for id := ID(1); id < l; id++ {
							if !sees(id) {
								fail("a view opened after PurgeLimit misses an id below it")
								break
							}
						}
						tx.closeView()
						tx.finish()
					}
				}()
			}
			rwg.Add(1)
			go func() { // purge loop
				defer rwg.Done()
				for !stop.Load() {
					l := sys.purgeLimit()
					now := o.tick()
					for id := ID(1); id < l; id++ {
						if fs := o.finStart[id].Load(); fs == 0 || fs > now {
							fail("purge limit covers a transaction that had not finished")
							break
						}
					}
					time.Sleep(100 * time.Microsecond)
				}
			}()
			wg.Wait()
			stop.Store(true)
			rwg.Wait()
			close(errs)
			for msg := range errs {
				t.Error(msg)
			}
		})
	}
}

// TestAllocatedButUnregistered checks the race the bitmap of finished ids
// closes: an id whose allocation is visible is active even if its owner has
// not done anything else yet.
func TestAllocatedButUnregistered(t *testing.T) {
	s := NewSys()
	// allocate an id behind the Trx API's back, as a goroutine paused right
	// after the atomic add would leave it
	id := s.as.next.Add(1)
	v := s.Begin().ReadView()
	if v.Sees(id) {
		t.Fatal("view sees an allocated, unfinished id")
	}
	if l := s.PurgeLimit(); l > id {
		t.Fatalf("purge limit %d covers unfinished id %d", l, id)
	}
}

func TestPurgeLimitHeldByViewAndActive(t *testing.T) {
	s := NewSys()
	a, b, c := s.Begin(), s.Begin(), s.Begin()
	a.AssignID() // 1
	b.AssignID() // 2
	r := s.Begin()
	v := r.ReadView() // sees nothing
	a.Finish()
	b.Finish()
	if l := s.PurgeLimit(); l != 1 {
		t.Fatalf("open view must hold the limit at 1, got %d", l)
	}
	if v.Sees(1) || v.Sees(2) {
		t.Fatal("view changed")
	}
	r.CloseReadView()
	if l := s.PurgeLimit(); l != 3 {
		t.Fatalf("limit %d, want 3", l)
	}
	c.AssignID() // 3
	if l := s.PurgeLimit(); l != 3 {
		t.Fatalf("active trx must hold the limit at 3, got %d", l)
	}
	c.Finish()
	if l := s.PurgeLimit(); l != 4 {
		t.Fatalf("limit %d, want 4", l)
	}
}

func TestLongListAndViewSize(t *testing.T) {
	s := NewSys()
	long := s.Begin()
	long.AssignID()
	for i := 0; i < 3*blockIDs; i++ {
		x := s.Begin()
		x.AssignID()
		x.Finish()
	}
	s.PurgeLimit() // runs window maintenance
	st := s.Stats()
	if st.LongActive != 1 {
		t.Fatalf("long list has %d ids, want 1", st.LongActive)
	}
	v := s.Begin().ReadView()
	if v.Sees(long.ID()) || !v.Sees(2) || !v.Sees(ID(3*blockIDs)) {
		t.Fatal("wrong visibility with a long trx")
	}
	if len(v.bits) > 2 {
		t.Fatalf("view copied %d words; the finished range should be skipped", len(v.bits))
	}
	long.Finish()
	v2 := s.Begin().ReadView()
	if !v2.Sees(long.ID()) {
		t.Fatal("finished long trx not seen")
	}
}

// TestRingWrapForcesRetire keeps a dense group of old transactions active
// while more ids than the ring holds are allocated, so the ring must retire
// their block by force and move them all to the long list.
func TestRingWrapForcesRetire(t *testing.T) {
	s := NewSys()
	var old []*Trx
	for i := 0; i < 2*retireMaxActive; i++ {
		x := s.Begin()
		x.AssignID()
		old = append(old, x)
	}
	r0 := s.Begin()
	view0 := r0.ReadView()
	n := ringSize*blockIDs + 3*blockIDs
	for i := 0; i < n; i++ {
		x := s.Begin()
		x.AssignID()
		x.Finish()
	}
	if st := s.Stats(); st.LongActive != int64(len(old)) {
		t.Fatalf("long list %d, want %d", st.LongActive, len(old))
	}
	if w := s.as.win.Load(); w.lo == 0 {
		t.Fatal("window never moved")
	}
	r1 := s.Begin()
	v := r1.ReadView()
	for _, x := range old {
		if v.Sees(x.ID()) || view0.Sees(x.ID()) {
			t.Fatalf("id %d seen while active", x.ID())
		}
	}
	last := s.as.next.Load()
	if !v.Sees(last) || view0.Sees(last) || !v.Sees(ID(len(old)+1)) {
		t.Fatal("wrong visibility of short trxs after wrap")
	}
	for i, x := range old {
		if i%2 == 0 {
			x.Finish()
		}
	}
	v2 := s.Begin().ReadView()
	for i, x := range old {
		if v2.Sees(x.ID()) != (i%2 == 0) {
			t.Fatalf("id %d: sees=%v after finishing every other old trx", x.ID(), v2.Sees(x.ID()))
		}
	}
	if l := s.PurgeLimit(); l != 1 {
		t.Fatalf("purge limit %d, want 1 while the first views are open", l)
	}
	r0.Finish()
	r1.Finish()
	if l := s.PurgeLimit(); l != old[1].ID() {
		t.Fatalf("purge limit %d, want %d", l, old[1].ID())
	}
}

func TestViewSlotsGrow(t *testing.T) {
	s := NewSys()
	w := s.Begin()
	w.AssignID()
	var readers []*Trx
	for i := 0; i < 3*segSlots+5; i++ {
		r := s.Begin()
		r.ReadView()
		readers = append(readers, r)
	}
	if st := s.Stats(); st.ViewsOpen != int64(len(readers)) {
		t.Fatalf("views open %d, want %d", st.ViewsOpen, len(readers))
	}
	w.Finish()
	if l := s.PurgeLimit(); l != 1 {
		t.Fatalf("purge limit %d with old views open", l)
	}
	for _, r := range readers {
		r.Finish()
	}
	if st := s.Stats(); st.ViewsOpen != 0 || st.PurgeLimit != 2 {
		t.Fatalf("after closing: %+v", st)
	}
}
