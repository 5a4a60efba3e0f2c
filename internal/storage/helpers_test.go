package storage

// Shared helpers of the storage tests.
//
// The tests use one table shape, described by testDesc:
//
//	primary key  8-byte big-endian id (given by the test, as for a table
//	             keyed by hidden row ids)
//	row          (k BIGINT NULL, v VARBINARY), encoded by rowenc; rowStr
//	             shows it as "k=<int>;v=<string>" (k may be "NULL")
//	index "k"    rowenc's key of k: 0x01 then 8 big-endian bytes with the
//	             sign bit flipped, or the single byte 0x00 for NULL
//	index "v"    rowenc's key of v: 0x01, v escaped, 0x00 0x01
//
// A few helpers look inside the package (chain length, index entry counts)
// so that purge and undo can be checked directly as well as through
// behaviour; they are the only white-box parts and live here together.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/storage/rowenc"
	"lockstep/internal/txn"
)

var bg = context.Background()

func tpk(id int) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, uint64(id))
	return b
}

func tid(pk []byte) int { return int(binary.BigEndian.Uint64(pk)) }

func encTestRow(k interface{}, v string) []byte {
	b, err := rowenc.EncodeRow(nil, sql.Row{k, []byte(v)})
	if err != nil {
		panic(err) // the values are always encodable
	}
	return b
}

func trow(k int, v string) []byte { return encTestRow(int64(k), v) }

func trowNull(v string) []byte { return encTestRow(nil, v) }

// parseRow decodes a test row into k (null reports k=NULL) and v.
func parseRow(row []byte) (k int, null bool, v string, err error) {
	vals, err := rowenc.DecodeRow(row, 2)
	if err != nil {
		return 0, false, "", err
	}
	vb, ok := vals[1].([]byte)
	if !ok {
		return 0, false, "", fmt.Errorf("bad test row %x", row)
	}
	if vals[0] == nil {
		return 0, true, string(vb), nil
	}
	ki, ok := vals[0].(int64)
	if !ok {
		return 0, false, "", fmt.Errorf("bad test row %x", row)
	}
	return int(ki), false, string(vb), nil
}

// rowStr shows a test row as "k=<int>;v=<string>"; nil is "".
func rowStr(row []byte) string {
	if row == nil {
		return ""
	}
	k, null, v, err := parseRow(row)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	if null {
		return "k=NULL;v=" + v
	}
	return "k=" + strconv.Itoa(k) + ";v=" + v
}

// tik is the index key of k in the "k" index.
func tik(k int) []byte {
	b := make([]byte, 9)
	b[0] = 0x01
	binary.BigEndian.PutUint64(b[1:], uint64(k)^(1<<63))
	return b
}

// tiv is the index key of v in the "v" index.
func tiv(v string) []byte { return rowenc.AppendEscaped([]byte{0x01}, v) }

// testDesc describes the test table with the given secondary indexes.
func testDesc(indexes ...IndexDesc) *TableDesc {
	return &TableDesc{
		Columns: []ColumnDesc{
			{Name: "k", Kind: KindInt, Nullable: true, Type: "bigint"},
			{Name: "v", Kind: KindBinary, Collation: sql.Collation_binary, Type: "varbinary(255)"},
		},
		Indexes: indexes,
	}
}

// kIndex is an index over the k column of a test row.
func kIndex(name string, unique bool) IndexDesc {
	return IndexDesc{Name: name, Unique: unique, Parts: []KeyPart{{Column: 0}}}
}

// vIndex is a non-unique index over the v column.
func vIndex(name string) IndexDesc {
	return IndexDesc{Name: name, Parts: []KeyPart{{Column: 1}}}
}

// newTable creates a test table with the given indexes.
func newTable(e *Engine, name string, indexes ...IndexDesc) *Table {
	tb, err := e.NewTable(name, testDesc(indexes...))
	if err != nil {
		panic(err) // the test descriptors are valid
	}
	return tb
}

func newTestEngine(t testing.TB) *Engine {
	t.Helper()
	e := New(Options{PurgeInterval: -1})
	t.Cleanup(e.Close)
	return e
}

// newKTable creates table "t" with one index "k" (unique or not).
func newKTable(e *Engine, unique bool) *Table {
	return newTable(e, "t", kIndex("k", unique))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func ins(t testing.TB, tx *Tx, tb *Table, id, k int, v string) {
	t.Helper()
	must(t, tx.Insert(bg, tb, 0, tpk(id), trow(k, v)))
}

func upd(t testing.TB, tx *Tx, tb *Table, id, k int, v string) {
	t.Helper()
	must(t, tx.Update(bg, tb, 0, tpk(id), tpk(id), trow(k, v)))
}

func del(t testing.TB, tx *Tx, tb *Table, id int) {
	t.Helper()
	must(t, tx.Delete(bg, tb, 0, tpk(id)))
}

func commit(t testing.TB, tx *Tx) {
	t.Helper()
	must(t, tx.Commit())
}

// autocommit runs fn in its own RR transaction and commits it.
func autocommit(t testing.TB, e *Engine, fn func(tx *Tx)) {
	t.Helper()
	tx := e.Begin(txn.RepeatableRead)
	fn(tx)
	commit(t, tx)
}

// seed inserts ids 1..n with k = kOf(id) and v = "v<id>" in one committed
// transaction.
func seed(t testing.TB, e *Engine, tb *Table, n int, kOf func(id int) int) {
	t.Helper()
	autocommit(t, e, func(tx *Tx) {
		for id := 1; id <= n; id++ {
			ins(t, tx, tb, id, kOf(id), "v"+strconv.Itoa(id))
		}
	})
}

// get reads id's row as a string; "" when not found.
func get(t testing.TB, tx *Tx, tb *Table, id int, mode txn.LockMode) string {
	t.Helper()
	row, ok, err := tx.Get(bg, tb, tpk(id), mode)
	must(t, err)
	if !ok {
		return ""
	}
	return rowStr(row)
}

// scan returns "id:row" for every row a cursor yields.
func scan(t testing.TB, tx *Tx, tb *Table, idx int, rng Range, reverse bool, mode txn.LockMode) []string {
	t.Helper()
	var out []string
	c := tx.Cursor(bg, tb, idx, rng, reverse, mode)
	for {
		pk, row, ok, err := c.Next()
		must(t, err)
		if !ok {
			return out
		}
		out = append(out, strconv.Itoa(tid(pk))+":"+rowStr(row))
	}
}

// scanIDs returns the ids a cursor yields.
func scanIDs(t testing.TB, tx *Tx, tb *Table, idx int, rng Range, reverse bool, mode txn.LockMode) []int {
	t.Helper()
	var out []int
	must(t, tx.Scan(bg, tb, idx, rng, reverse, mode, func(pk, _ []byte) (bool, error) {
		out = append(out, tid(pk))
		return true, nil
	}))
	return out
}

// kRange is the "k" index range [lo, hi).
func kRange(lo, hi int) Range { return Range{Lo: tik(lo), Hi: tik(hi)} }

// kEq is the "k" index range holding exactly k.
func kEq(k int) Range { return kRange(k, k+1) }

// pkRange is the primary key range [lo, hi).
func pkRange(lo, hi int) Range { return Range{Lo: tpk(lo), Hi: tpk(hi)} }

func dupErr(t testing.TB, err error) *DuplicateKeyError {
	t.Helper()
	var d *DuplicateKeyError
	if !errors.As(err, &d) {
		t.Fatalf("got error %v, want *DuplicateKeyError", err)
	}
	return d
}

// --- white-box probes ------------------------------------------------------

// chainLen is the number of versions of id's row, its base included (0:
// no row).
func chainLen(tb *Table, id int) int {
	tb.mu.RLock()
	defer tb.mu.RUnlock()
	s, ok := tb.get(tpk(id))
	if !ok {
		return 0
	}
	n := 0
	w := tb.walk(s)
	for v := w.next(); v != nil; v = w.next() {
		n++
	}
	return n
}

// pkLen is the number of records in the clustered index.
func pkLen(tb *Table) int {
	tb.mu.RLock()
	defer tb.mu.RUnlock()
	return tb.pk.Len()
}

// secLen is the number of entries in secondary index i.
func secLen(tb *Table, i int) int {
	tb.mu.RLock()
	defer tb.mu.RUnlock()
	return tb.secs[i].tree.Len()
}

// hasEntry reports whether index "k" (index 0) has the entry k||pk(id).
func hasEntry(tb *Table, k, id int) bool {
	tb.mu.RLock()
	defer tb.mu.RUnlock()
	_, ok := tb.secs[0].tree.Get(entryKey(tik(k), tpk(id)))
	return ok
}

// --- concurrency helpers ---------------------------------------------------

// waitLockWaiters waits until the lock manager has at least n waiting
// requests.
func waitLockWaiters(t testing.TB, e *Engine, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for e.Locks.Stats().RowLockCurrent < n {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d lock waiters", n)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// result is what a goroutine started by async reports.
type result struct {
	s   string
	err error
}

// async runs fn in a goroutine and returns its result channel.
func async(fn func() (string, error)) <-chan result {
	ch := make(chan result, 1)
	go func() {
		s, err := fn()
		ch <- result{s, err}
	}()
	return ch
}

// notYet checks that ch has not delivered within d.
func notYet(t testing.TB, ch <-chan result, d time.Duration) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("finished early: %q, %v", r.s, r.err)
	case <-time.After(d):
	}
}

// await returns ch's result, failing after 5s.
func await(t testing.TB, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no result after 5s")
		return result{}
	}
}
