package sqlfront

import (
	"strconv"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"lockstep/internal/storage/rowenc"
)

// Output values written straight from a stored row.
//
// A fast read used to decode every row into Go values (a string copied
// out of the row, an integer boxed) and then ask each column's type for
// its wire form (the string copied again). That was most of what a range
// read allocated — sysbench's oltp_read_only, 4 ranges of 100 rows per
// transaction, allocated ~160 KB per transaction, and the garbage
// collector ran every second with 150–350 ms mark phases (issue 35, the
// tails). For the columns whose wire form is known without the type, the
// value is now written from the row's own bytes:
//
//   - a non-binary string column in utf8mb4, with results in utf8mb4: the
//     stored bytes are the wire bytes, shared, not copied (a stored row is
//     never changed once written: docs/storage.md, and the result is
//     written to the client before the statement ends);
//   - an integer column: its decimal text.
//
// Anything else — another type, another character set, a stored value of
// an unexpected kind, a string that is not valid UTF-8 (the type's SQL
// reports the error) — goes through DecodeValue and the type's SQL as
// before, one column at a time, so the bytes a client receives are the
// same either way (TestDirectMatchesTypeSQL).

// directKind says how one output column is written.
type directKind uint8

const (
	directNo   directKind = iota // a Go value, then the type's SQL
	directText                   // the stored string's bytes
	directInt                    // the stored integer's decimal text
)

// directKindOf is the way a column of type t is written when results are
// in character set results.
func directKindOf(t sql.Type, results sql.CharacterSetID) directKind {
	switch t.Type() {
	case sqltypes.Int8, sqltypes.Uint8, sqltypes.Int16, sqltypes.Uint16, sqltypes.Int24, sqltypes.Uint24,
		sqltypes.Int32, sqltypes.Uint32, sqltypes.Int64, sqltypes.Uint64:
		if types.IsInteger(t) {
			return directInt
		}
	case sqltypes.Char, sqltypes.VarChar, sqltypes.Text:
		st, ok := t.(sql.StringType)
		if !ok || st.CharacterSet() != sql.CharacterSet_utf8mb4 {
			return directNo
		}
		switch results {
		case sql.CharacterSet_utf8mb4, sql.CharacterSet_Unspecified, sql.CharacterSet_binary:
			return directText
		}
	}
	return directNo
}

// directKinds returns, per output column, how it is written (computed
// once per plan: the plan's table definition and results character set
// are fixed, runFast checks both before it runs the plan).
func (p *fastPlan) directKinds() []directKind {
	if p.direct == nil {
		kinds := make([]directKind, len(p.cols))
		for i, ord := range p.cols {
			kinds[i] = directKindOf(p.meta.schema.Schema[ord].Type, p.charset)
		}
		p.direct = kinds
	}
	return p.direct
}

// rowWriter writes stored rows as output values, sharing its allocations
// across the rows of one statement: the values of many rows in one slab,
// integers' text in one byte arena. Neither is reused after the statement:
// the rows it returns keep pointing into them.
type rowWriter struct {
	p     *fastPlan
	ctx   *sql.Context
	kinds []directKind
	slab  []sqltypes.Value
	arena []byte
}

func (p *fastPlan) newRowWriter(ctx *sql.Context) *rowWriter {
	return &rowWriter{p: p, ctx: ctx, kinds: p.directKinds()}
}

// expect sizes the first slab for rows rows (a range's width, at most
// 256).
func (w *rowWriter) expect(rows int) {
	if rows > 1 && len(w.slab) == 0 {
		w.slab = make([]sqltypes.Value, 0, min(rows, 256)*len(w.p.cols))
	}
}

// row converts one stored row to the plan's output values.
func (w *rowWriter) row(stored []byte) ([]sqltypes.Value, error) {
	p := w.p
	n := len(p.cols)
	if cap(w.slab)-len(w.slab) < n {
		// One row first (a point read), then twice the last slab, up to 64
		// rows a slab.
		size := min(max(2*cap(w.slab), n), 64*n)
		w.slab = make([]sqltypes.Value, 0, size)
	}
	out := w.slab[len(w.slab) : len(w.slab)+n : len(w.slab)+n]
	w.slab = w.slab[:len(w.slab)+n]
	b := stored
	for ord := 0; ord <= p.maxOrd; ord++ {
		kind, s, num, rest, err := rowenc.NextRaw(b)
		if err != nil {
			return nil, err
		}
		for i, c := range p.cols {
			if c != ord {
				continue
			}
			if out[i], err = w.cell(i, ord, b, kind, s, num); err != nil {
				return nil, err
			}
		}
		if rest == nil { // RawOther: find the next column's start
			if rest, err = rowenc.SkipValue(b); err != nil {
				return nil, err
			}
		}
		b = rest
	}
	return out, nil
}

// cell writes output column i (stored ordinal ord, its value at the start
// of b, read by NextRaw as kind, s, num).
func (w *rowWriter) cell(i, ord int, b []byte, kind rowenc.RawKind, s []byte, num uint64) (sqltypes.Value, error) {
	if kind == rowenc.RawNull {
		return sqltypes.NULL, nil
	}
	typ := w.p.meta.schema.Schema[ord].Type
	switch w.kinds[i] {
	case directText:
		if kind == rowenc.RawString && utf8.Valid(s) {
			return sqltypes.MakeTrusted(typ.Type(), s), nil
		}
	case directInt:
		start := len(w.arena)
		switch kind {
		case rowenc.RawInt:
			w.arena = strconv.AppendInt(w.arena, int64(num), 10)
		case rowenc.RawUint:
			w.arena = strconv.AppendUint(w.arena, num, 10)
		}
		if len(w.arena) > start {
			return sqltypes.MakeTrusted(typ.Type(), w.arena[start:len(w.arena):len(w.arena)]), nil
		}
	}
	v, _, err := rowenc.DecodeValue(b)
	if err != nil || v == nil {
		return sqltypes.NULL, err
	}
	return typ.SQL(w.ctx, nil, v)
}
