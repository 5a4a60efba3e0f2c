package storage

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"lockstep/internal/txn"
)

// TestApplyTxnChunks: a transaction installed chunk by chunk (BeginApply,
// Apply per chunk) is seen by no view until it is published — not after
// any chunk — and then whole, as the source has it; one whose last chunk
// fails leaves nothing of the chunks before it (rows, the secondary
// index, the row count), and Publish after that publishes nothing.
func TestApplyTxnChunks(t *testing.T) {
	fc := &fakeCommitter{}
	src := New(Options{PurgeInterval: -1, Committer: fc})
	defer src.Close()
	st := newKTable(src, true)
	seed(t, src, st, 10, func(id int) int { return id })
	tx := src.Begin(txn.RepeatableRead)
	for id := 1; id <= 10; id++ {
		switch id % 3 {
		case 0:
			del(t, tx, st, id)
		default:
			upd(t, tx, st, id, 100+id, "u")
		}
	}
	for id := 11; id <= 40; id++ {
		ins(t, tx, st, id, id, "n")
	}
	commit(t, tx)
	seedRec, big := fc.recs[0], fc.recs[1].Changes
	if len(big) != 40 {
		t.Fatalf("the transaction has %d changes, want 40", len(big))
	}
	const chunk = 7

	dst := newTestEngine(t)
	dt := newKTable(dst, true)
	if _, err := dst.ApplyTxn(seedRec.Changes); err != nil {
		t.Fatal(err)
	}
	rows := func() string {
		r := dst.Begin(txn.RepeatableRead)
		defer r.Rollback()
		return strings.Join(scan(t, r, dt, PrimaryIndex, Range{}, false, 0), ",") + " | " +
			strings.Join(scan(t, r, dt, 0, Range{}, false, 0), ",")
	}
	state := func() string { return rows() + " | " + strconv.FormatInt(dt.rows.Load(), 10) }
	before, beforeRows := state(), rows()

	// The last chunk fails: nothing of the earlier chunks is left.
	bad := slices.Clone(big)
	bad[len(bad)-1].Version = 99
	h := dst.BeginApply(len(bad))
	var err error
	for lo := 0; lo < len(bad) && err == nil; lo += chunk {
		_, err = h.Apply(bad[lo:min(lo+chunk, len(bad))])
		if err == nil && rows() != beforeRows {
			t.Fatalf("a view sees part of a held transaction after the chunk at %d: %q", lo, rows())
		}
	}
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("(change %d of %d)", len(bad), len(bad))) {
		t.Fatalf("the last change bad: %v", err)
	}
	h.Publish() // ended by the failure: publishes nothing
	h.Rollback()
	if got := state(); got != before {
		t.Fatalf("the last chunk failed and left %q, want %q", got, before)
	}
	if _, err := h.Apply(big[:1]); err == nil {
		t.Fatal("Apply after the transaction ended: no error")
	}

	// Whole, chunk by chunk: invisible until published, then the source's.
	h = dst.BeginApply(len(big))
	applied := 0
	for lo := 0; lo < len(big); lo += chunk {
		n, err := h.Apply(big[lo:min(lo+chunk, len(big))])
		if err != nil {
			t.Fatal(err)
		}
		applied += n
		if rows() != beforeRows {
			t.Fatalf("a view sees part of a held transaction after the chunk at %d: %q", lo, rows())
		}
	}
	if applied != len(big) {
		t.Fatalf("applied %d of %d", applied, len(big))
	}
	h.Publish()
	r1 := src.Begin(txn.RepeatableRead)
	defer r1.Rollback()
	want := strings.Join(scan(t, r1, st, PrimaryIndex, Range{}, false, 0), ",") + " | " +
		strings.Join(scan(t, r1, st, 0, Range{}, false, 0), ",") + " | " + strconv.FormatInt(st.rows.Load(), 10)
	if got := state(); got != want {
		t.Fatalf("published: %q, want %q", got, want)
	}
}
