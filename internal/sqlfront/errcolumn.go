package sqlfront

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// The column in MySQL's conversion errors.
//
// MySQL names the column a value could not be stored in: "Incorrect
// integer value: 'abc' for column 'n' at row 1", "Out of range value for
// column 'ti' at row 1". go-mysql-server's errors say which value and type,
// not which column, and reach the protocol handler as bare messages. So the
// session notes the column while the statement runs, and the handler's
// error mapping (internal/server/errors.go) adds it:
//
//   - INSERT: execOverride puts a convCheck node over the INSERT's source.
//     It keeps a copy of each row's values before go-mysql-server converts
//     them (in place); only when an error or a conversion warning needs
//     the column are they converted again, in go-mysql-server's order, to
//     find it.
//   - UPDATE: go-mysql-server's SET error carries the column's position
//     (sql.WrappedTypeConversionError); the update's iterator is wrapped to
//     note its name.

// convCheck is a pass-through node over an INSERT's source.
type convCheck struct {
	plan.UnaryNode
	dest sql.Schema // the INSERT's target columns, in table order
}

var _ sql.Node = (*convCheck)(nil)

func (c *convCheck) String() string   { return "ConvCheck(" + c.Child.String() + ")" }
func (c *convCheck) IsReadOnly() bool { return c.Child.IsReadOnly() }

func (c *convCheck) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(c, len(children), 1)
	}
	n := *c
	n.Child = children[0]
	return &n, nil
}

// withConvCheck returns n with a convCheck over its source, or nil when it
// has one already.
func withConvCheck(n *plan.InsertInto) *plan.InsertInto {
	if n.Source == nil {
		return nil
	}
	if _, done := n.Source.(*convCheck); done {
		return nil
	}
	dest := n.Destination.Schema()
	return n.WithSource(&convCheck{UnaryNode: plan.UnaryNode{Child: n.Source}, dest: dest})
}

// convCheckIter keeps each row's values for the session (convState).
type convCheckIter struct {
	sql.RowIter
	s    *Session
	dest sql.Schema
}

func (it *convCheckIter) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := it.RowIter.Next(ctx)
	if err == nil && it.s != nil {
		it.s.insertRows++
		if len(row) >= len(it.dest) {
			vals := row[len(row)-len(it.dest):]
			it.s.conv.newRow(it.dest, vals)
			decimalRounding(ctx, it.dest, vals, it.s.insertRows) // numfields.go
		}
	}
	return row, err
}

// updateErrIter notes the column of an UPDATE's conversion error.
type updateErrIter struct {
	sql.RowIter
	s      *Session
	schema sql.Schema // the rows the SET expressions see
}

func (it *updateErrIter) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := it.RowIter.Next(ctx)
	if err != nil && it.s != nil {
		var w sql.WrappedTypeConversionError
		if errors.As(err, &w) && w.OffendingIdx >= 0 && w.OffendingIdx < len(it.schema) {
			c := it.schema[w.OffendingIdx]
			it.s.conv.set(badValue{col: c.Name, val: fmt.Sprint(w.OffendingVal), typ: c.Type})
		}
	}
	return row, err
}

// Out-of-range values in UPDATE.
//
// go-mysql-server's SET converts the new value to the column's type and
// keeps the clamped result of an out-of-range conversion: UPDATE t SET
// ti = 1000 stored 127 in a TINYINT, silently, where MySQL's strict mode
// (the default) fails with 1264 and its other modes store 127 with
// warning 1264. rangeChecked wraps each SET's value so that an
// out-of-range value fails under a strict sql_mode (as a
// sql.WrappedTypeConversionError naming the column) and is stored clamped
// with warning 1264 otherwise, and under UPDATE IGNORE (go-mysql-server
// would store 0 for an IGNOREd conversion error; MySQL clamps).

// rangeChecked is the value of one SET col = expr of a numeric column.
type rangeChecked struct {
	sql.Expression // expr
	col            *expression.GetField
	ignore         bool // UPDATE IGNORE: clamp and warn, as without strict mode
}

func (r *rangeChecked) Eval(ctx *sql.Context, row sql.Row) (interface{}, error) {
	v, err := r.Expression.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	typ := r.col.Type()
	if _, inRange, cerr := typ.Convert(ctx, v); cerr == nil && !inRange {
		if !r.ignore && strictMode(ctx) {
			return nil, sql.NewWrappedTypeConversionError(v, r.col.Index(), sql.ErrValueOutOfRange.New(v, typ))
		}
		row := 1
		if s, ok := ctx.Session.(*Session); ok {
			row = s.rowsWritten + 1
		}
		ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: 1264, Message: OutOfRangeMessage(r.col.Name(), row)})
	}
	return v, nil
}

func (r *rangeChecked) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(r, len(children), 1)
	}
	return &rangeChecked{Expression: children[0], col: r.col, ignore: r.ignore}, nil
}

func (r *rangeChecked) Children() []sql.Expression { return []sql.Expression{r.Expression} }

// strictMode reports whether the session's sql_mode is strict (every
// lockstep table is transactional, so either strict flag counts).
func strictMode(ctx *sql.Context) bool {
	v, err := ctx.GetSessionVariable(ctx, "sql_mode")
	if err != nil {
		return true
	}
	m, _ := v.(string)
	return strings.Contains(m, "STRICT_TRANS_TABLES") || strings.Contains(m, "STRICT_ALL_TABLES")
}

// withRangeChecks returns u with each SET value of a numeric column wrapped
// in rangeChecked, or nil when there is nothing to wrap (or it is wrapped
// already).
func withRangeChecks(u *plan.UpdateSource) sql.Node {
	exprs := make([]sql.Expression, len(u.UpdateExprs))
	changed := false
	for i, e := range u.UpdateExprs {
		exprs[i] = e
		sf, ok := e.(*expression.SetField)
		if !ok {
			continue
		}
		gf, ok := sf.LeftChild.(*expression.GetField)
		if !ok {
			continue
		}
		if _, number := gf.Type().(sql.NumberType); !number {
			continue // only numbers are clamped
		}
		switch sf.RightChild.(type) {
		case *rangeChecked, *sql.ColumnDefaultValue, *expression.Wrapper, *expression.DefaultColumn:
			continue // checked already; SET col = DEFAULT is go-mysql-server's
		}
		exprs[i] = expression.NewSetField(gf, &rangeChecked{Expression: sf.RightChild, col: gf, ignore: u.Ignore})
		changed = true
	}
	if !changed {
		return nil
	}
	out, err := u.WithExpressions(exprs...)
	if err != nil {
		return nil
	}
	return out
}

// badValue is a value that does not convert to its column's type.
type badValue struct {
	col, val string
	typ      sql.Type
}

// convState is what the running statement's conversion errors and
// warnings need to name the column (Session.conv; reset per statement).
type convState struct {
	dest   sql.Schema    // an INSERT's target columns (nil: none)
	row    []interface{} // the current row's values as the source gave them
	bad    []badValue    // those that do not convert, in table order
	fresh  bool          // bad is computed for the current row
	warned int           // entries of bad already worded by a warning
}

func (c *convState) reset() {
	c.dest, c.row, c.bad, c.fresh, c.warned = nil, c.row[:0], c.bad[:0], true, 0
}

// newRow records the values of the INSERT's next row (vals is
// go-mysql-server's row, converted in place afterwards: it is copied).
func (c *convState) newRow(dest sql.Schema, vals []interface{}) {
	c.dest, c.row, c.fresh, c.warned = dest, append(c.row[:0], vals...), false, 0
}

// set records the one value an UPDATE could not convert.
func (c *convState) set(b badValue) {
	c.dest, c.bad, c.fresh, c.warned = nil, append(c.bad[:0], b), true, 0
}

// values returns the current row's values that do not convert, converting
// them as go-mysql-server does the first time they are asked for.
func (c *convState) values(ctx *sql.Context) []badValue {
	if c.fresh {
		return c.bad
	}
	c.bad, c.fresh = c.bad[:0], true
	for i, col := range c.dest {
		if v := c.row[i]; v != nil {
			if _, inRange, err := col.Type.Convert(ctx, v); err != nil || !inRange {
				c.bad = append(c.bad, badValue{col: col.Name, val: fmt.Sprint(v), typ: col.Type})
			}
		}
	}
	return c.bad
}

var reOutOfRange = regexp.MustCompile(`^.+ out of range for .+$`)

// conversionWarning rewrites go-mysql-server's warning for a value INSERT
// IGNORE could not convert into MySQL's (the column, the row), taking the
// row's next such value. ok is false when w is not such a warning.
func (s *Session) conversionWarning(w *sql.Warning) (out sql.Warning, ok bool) {
	outOfRange := (w.Code == 1105 || w.Code == 1264) && reOutOfRange.MatchString(w.Message)
	if !outOfRange && (w.Code != 1366 || !strings.Contains(w.Message, "is not a valid value for")) {
		return out, false
	}
	bad := s.conv.values(s.fastContext())
	if s.conv.warned >= len(bad) {
		return out, false
	}
	b := bad[s.conv.warned]
	s.conv.warned++
	row := s.rowsWritten + 1
	out.Level, out.Code, out.Message = "Warning", 1366, IncorrectValueMessage(b.typ.String(), b.val, b.col, row)
	if outOfRange {
		out.Code, out.Message = 1264, OutOfRangeMessage(b.col, row)
	}
	return out, true
}

// OutOfRangeMessage is MySQL's 1264 for column col at row.
func OutOfRangeMessage(col string, row int) string {
	return fmt.Sprintf("Out of range value for column '%s' at row %d", col, row)
}

// IncorrectValueMessage is MySQL's 1366 for value val of column col at
// row; typeName is the column's type as go-mysql-server names it ("int",
// "bigint unsigned", "decimal(5,2)", ...).
func IncorrectValueMessage(typeName, val, col string, row int) string {
	word := strings.ToLower(typeName)
	if i := strings.IndexAny(word, "( "); i >= 0 {
		word = word[:i]
	}
	switch word {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		word = "integer"
	case "float", "double", "real":
		word = "double"
	}
	return fmt.Sprintf("Incorrect %s value: '%s' for column '%s' at row %d", word, val, col, row)
}
