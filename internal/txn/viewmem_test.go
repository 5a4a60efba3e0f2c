package txn

import "testing"

// TestFirstViewNotReused: a transaction's first read view lives in the
// Trx's own memory; a later view (READ COMMITTED's next statement) must be
// new memory, or a holder of the first view would see its snapshot change
// under it.
func TestFirstViewNotReused(t *testing.T) {
	s := NewSys()
	w := s.Begin()
	wid := w.AssignID()
	r := s.Begin()
	v1 := r.ReadView()
	if v1.Sees(wid) {
		t.Fatal("the first view sees an active transaction")
	}
	r.CloseReadView()
	w.Finish()
	v2 := r.ReadView()
	if v2 == v1 {
		t.Fatal("the second view reuses the first view's memory")
	}
	if !v2.Sees(wid) || v1.Sees(wid) {
		t.Fatalf("v2 sees %d: %v (want true); v1: %v (want false)", wid, v2.Sees(wid), v1.Sees(wid))
	}
	r.Finish()
}

// TestReadOnlyTrxAllocs: a read-only transaction with one view costs one
// allocation (the Trx, its view and the view's bits together; issue 35).
func TestReadOnlyTrxAllocs(t *testing.T) {
	s := NewSys()
	for i := 0; i < 100; i++ { // some finished ids behind the window start
		w := s.Begin()
		w.AssignID()
		w.Finish()
	}
	got := testing.AllocsPerRun(100, func() {
		r := s.Begin()
		r.ReadView()
		r.Finish()
	})
	if got != 1 {
		t.Fatalf("%v allocations per read-only transaction, want 1", got)
	}
}
