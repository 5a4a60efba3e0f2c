package sqlfront

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"lockstep/internal/storage"
	"lockstep/internal/storage/rowenc"
	"lockstep/internal/txn"
)

// Range reads written straight from the stored rows (fast_direct.go): the
// rows of a range become output values as they are read, and ORDER BY and
// DISTINCT compare those values. That needs every ORDER BY column to be
// one written as its stored string (directText): its Go value, which the
// column type's Compare takes, is that string, read in place. Any other
// ORDER BY goes through Go values (scanRange, finish).

// directOrder reports whether the range's ORDER BY (if any) can compare
// output values.
func (r *rangeSpec) directOrder(p *fastPlan) bool {
	kinds := p.directKinds()
	for _, o := range r.order {
		if kinds[o.pos] != directText {
			return false
		}
	}
	return true
}

// scanRangeDirect reads the rows of rng in key order as output values.
// width is the range's width when both bounds are known (0 if not): the
// most rows it can hold, to size the result.
// cur is the memory for its cursor.
func scanRangeDirect(ctx *sql.Context, tx *storage.Tx, t *storage.Table, p *fastPlan, rng storage.Range, mode txn.LockMode, width int, cur *storage.Cursor) ([][]sqltypes.Value, error) {
	tx.CursorIn(cur, ctx, t, storage.PrimaryIndex, rng, false, mode)
	defer cur.Close()
	w := p.newRowWriter(ctx)
	w.expect(width)
	out := make([][]sqltypes.Value, 0, min(max(width, 1), 256))
	for {
		_, stored, ok, err := cur.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		vals, err := w.row(stored)
		if err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
}

// finishDirect applies ORDER BY and DISTINCT to output values, as finish
// does to Go values: the same comparison (the column type's, collation
// included, on the same string), NULL first, stable.
func (r *rangeSpec) finishDirect(ctx *sql.Context, p *fastPlan, rows [][]sqltypes.Value) ([][]sqltypes.Value, error) {
	return orderRows(r, rows, func(a, b []sqltypes.Value, pos int) (int, error) {
		switch x, y := a[pos], b[pos]; {
		case x.IsNull() && y.IsNull():
			return 0, nil
		case x.IsNull():
			return -1, nil
		case y.IsNull():
			return 1, nil
		default:
			return compareText(ctx, p.meta.schema.Schema[p.cols[pos]].Type, rawString(x), rawString(y))
		}
	})
}

// compareText compares two values of the string column type t as t's
// Compare does (rune weights of its collation; a shorter prefix first),
// without boxing the strings into interfaces for it: a sort of 100 rows
// made ~1,300 such allocations.
func compareText(ctx *sql.Context, t sql.Type, a, b string) (int, error) {
	st, ok := t.(types.StringType)
	if !ok {
		return t.Compare(ctx, a, b)
	}
	coll := st.Collation()
	ascii := asciiWeightsOf(coll)
	if ascii != nil {
		// Equal leading bytes are equal runes (the character set is
		// ASCII-compatible), so equal weights: skip them, back to the
		// start of the rune the first difference is in.
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		for i > 0 && i < len(a) && a[i]&0xC0 == 0x80 {
			i--
		}
		a, b = a[i:], b[i:]
	}
	enc := coll.CharacterSet().Encoder()
	weight := coll.Sorter()
	for len(a) > 0 && len(b) > 0 {
		if ascii != nil && a[0] < utf8.RuneSelf && b[0] < utf8.RuneSelf {
			if aw, bw := ascii[a[0]], ascii[b[0]]; aw != bw {
				if aw < bw {
					return -1, nil
				}
				return 1, nil
			}
			a, b = a[1:], b[1:]
			continue
		}
		ar, an := enc.NextRune(a)
		br, bn := enc.NextRune(b)
		if an == 0 || bn == 0 || an == utf8.RuneError || bn == utf8.RuneError {
			return t.Compare(ctx, a, b) // its error for a malformed string
		}
		if aw, bw := weight(ar), weight(br); aw != bw {
			if aw < bw {
				return -1, nil
			}
			return 1, nil
		}
		a, b = a[an:], b[bn:]
	}
	switch {
	case len(a) < len(b):
		return -1, nil
	case len(a) > len(b):
		return 1, nil
	}
	return 0, nil
}

// asciiWeightTables caches, per collation, its sorter's weights of the 128
// ASCII runes (a table read where the sorter of utf8mb4_0900_ai_ci looks
// each rune up in a Go map: a quarter of an ORDER BY c over 100 sysbench
// rows). nil: not built yet.
var asciiWeightTables [1 << 16]atomic.Pointer[[utf8.RuneSelf]int32]

// asciiWeightsOf returns coll's ASCII weight table, or nil when its
// character set is not ASCII-compatible (a byte below 0x80 is not always
// that character: UTF-16, UTF-32, UCS-2) — the caller then decodes every
// rune.
func asciiWeightsOf(coll sql.CollationID) *[utf8.RuneSelf]int32 {
	switch coll.CharacterSet() {
	case sql.CharacterSet_utf8mb4, sql.CharacterSet_utf8mb3, sql.CharacterSet_latin1, sql.CharacterSet_ascii, sql.CharacterSet_binary:
	default:
		return nil
	}
	if w := asciiWeightTables[coll].Load(); w != nil {
		return w
	}
	weight := coll.Sorter()
	w := new([utf8.RuneSelf]int32)
	for r := range w {
		w[r] = weight(rune(r))
	}
	asciiWeightTables[coll].Store(w)
	return w
}

// rawString is v's bytes as a string, not copied (v's bytes are a stored
// row's, never changed; the string does not outlive the statement).
func rawString(v sqltypes.Value) string {
	b := v.Raw()
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// sumRange is SUM(col) over the rows of rng, read from the stored rows
// without Go values, NULLs skipped: NULL when no value, else the exact sum
// as MySQL's DECIMAL with scale 0 (sumrule.go gives go-mysql-server's plan
// the same type; sumFields the metadata).
// mem holds the cursor and the result row. The sum is kept in an int64
// while it fits and in a big.Int from the first overflow on.
func sumRange(ctx *sql.Context, tx *storage.Tx, t *storage.Table, p *fastPlan, rng storage.Range, mode txn.LockMode, mem *rangeResult) ([][]sqltypes.Value, error) {
	cur := &mem.cur
	tx.CursorIn(cur, ctx, t, storage.PrimaryIndex, rng, false, mode)
	defer cur.Close()
	ord := p.cols[0]
	var acc sumAcc
	for {
		_, stored, ok, err := cur.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		b := stored
		for i := 0; i < ord; i++ {
			if b, err = rowenc.SkipValue(b); err != nil {
				return nil, err
			}
		}
		kind, _, num, _, err := rowenc.NextRaw(b)
		if err != nil {
			return nil, err
		}
		switch kind {
		case rowenc.RawNull:
			continue
		case rowenc.RawInt:
			acc.addInt(int64(num))
		case rowenc.RawUint:
			acc.addUint(num)
		default:
			x, _, err := rowenc.DecodeValue(b)
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("lockstep: SUM over %T", x)
		}
	}
	mem.vals[0] = sqltypes.NULL
	if acc.any {
		mem.vals[0] = sqltypes.MakeTrusted(querypb.Type_DECIMAL, acc.appendText(mem.text[:0]))
	}
	mem.rows[0] = mem.vals[:1:1]
	return mem.rows[:1:1], nil
}

// sumAcc is an exact integer sum: an int64 while it fits (no allocation),
// a big.Int once it does not.
type sumAcc struct {
	any   bool
	small int64
	big   *big.Int // non-nil from the first overflow on
}

func (a *sumAcc) addInt(x int64) {
	a.any = true
	if a.big == nil {
		if r := a.small + x; (x >= 0) == (r >= a.small) {
			a.small = r
			return
		}
		a.big = big.NewInt(a.small)
	}
	var v big.Int
	a.big.Add(a.big, v.SetInt64(x))
}

func (a *sumAcc) addUint(x uint64) {
	if x <= math.MaxInt64 {
		a.addInt(int64(x))
		return
	}
	a.any = true
	if a.big == nil {
		a.big = big.NewInt(a.small)
	}
	var v big.Int
	a.big.Add(a.big, v.SetUint64(x))
}

// appendText appends the sum's decimal text.
func (a *sumAcc) appendText(b []byte) []byte {
	if a.big != nil {
		return a.big.Append(b, 10)
	}
	return strconv.AppendInt(b, a.small, 10)
}
