package storage

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"lockstep/internal/txn"
)

// TestLayoutSizes pins the per-row objects' sizes: every row version and
// every index entry pays them (docs/benchmarks/notes.md, bytes per row).
func TestLayoutSizes(t *testing.T) {
	tests := []struct {
		name      string
		got, want uintptr
	}{
		{"version", unsafe.Sizeof(version{}), 48},
		{"slot", unsafe.Sizeof(slot{}), 40},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("sizeof(%s) = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

// TestRowHeapObjects pins how many heap objects a loaded row keeps alive
// (issue 35 item 3). Rows live by slot (rows.go): the slot in a chunk of
// slots, the key, row and entry bytes in slab chunks, the trees' leaves
// pointer-free — so a row that nobody changes is no heap object of its
// own, only a share of chunks and tree nodes (0.06 per row measured). It
// was 3 with a record per row (and 5 before that).
func TestRowHeapObjects(t *testing.T) {
	const rows = 20_000
	before := readHeapObjs()
	e := New(Options{PurgeInterval: -1})
	defer e.Close()
	tb := loadSysbench(t, e, rows, true)
	after := readHeapObjs()
	perRow := float64(after.objects-before.objects) / rows
	t.Logf("%.3f heap objects per row", perRow)
	if perRow > 0.1 {
		t.Errorf("%.3f heap objects per row, want at most 0.1", perRow)
	}
	runtime.KeepAlive(tb)
}

// TestRecordKeyAppendSafe: a primary key handed out shares its allocation
// with the row's secondary entry keys, so it must be capped: a caller that
// appends to it gets a copy and changes nothing in the table.
func TestRecordKeyAppendSafe(t *testing.T) {
	e := New(Options{PurgeInterval: -1})
	defer e.Close()
	tb, err := e.NewTable("sbtest1", sbDesc(true))
	must(t, err)
	rng := rand.New(rand.NewPCG(1, 1))
	tx := e.Begin(txn.RepeatableRead)
	must(t, tx.Insert(bg, tb, 0, sbKey(1), sbRow(rng, 1, 7)))
	must(t, tx.Commit())
	tx = e.Begin(txn.RepeatableRead)
	defer tx.Rollback()
	must(t, tx.Scan(bg, tb, PrimaryIndex, Range{}, false, 0, func(pk, row []byte) (bool, error) {
		_ = append(pk, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
		return true, nil
	}))
	found := 0
	must(t, tx.Scan(bg, tb, 0, Range{Lo: sbKey(7), Hi: sbKey(8)}, false, 0, func(pk, row []byte) (bool, error) {
		found++
		if !bytes.Equal(pk, sbKey(1)) {
			t.Errorf("k index returned pk %x, want %x", pk, sbKey(1))
		}
		return true, nil
	}))
	if found != 1 {
		t.Errorf("k index found %d rows for k=7, want 1", found)
	}
}
