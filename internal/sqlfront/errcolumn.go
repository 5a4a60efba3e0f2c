package sqlfront

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
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
//     It converts each row's values as go-mysql-server is about to, in the
//     same order, and notes the first column that fails (it changes
//     nothing: go-mysql-server then fails on that column).
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

// convCheckIter notes the first column of a row whose value does not
// convert (for the error), and every such column in order (for INSERT
// IGNORE's warnings, which go-mysql-server raises one per column as it
// converts the row: Session.Warn words each as MySQL does).
type convCheckIter struct {
	sql.RowIter
	s    *Session
	dest sql.Schema
}

func (it *convCheckIter) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := it.RowIter.Next(ctx)
	if err != nil || it.s == nil || len(row) < len(it.dest) {
		return row, err
	}
	vals := row[len(row)-len(it.dest):]
	it.s.rowBad = it.s.rowBad[:0]
	for i, col := range it.dest {
		if vals[i] == nil {
			continue
		}
		if _, inRange, cerr := col.Type.Convert(ctx, vals[i]); cerr != nil || !inRange {
			if len(it.s.rowBad) == 0 {
				it.s.badColumn, it.s.badValue = col.Name, fmt.Sprint(vals[i])
			}
			it.s.rowBad = append(it.s.rowBad, badValue{col: col.Name, val: fmt.Sprint(vals[i]), typ: col.Type})
		}
	}
	return row, nil
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
			it.s.badColumn, it.s.badValue = it.schema[w.OffendingIdx].Name, fmt.Sprint(w.OffendingVal)
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

// rangeChecked is the value of one SET col = expr.
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
	if _, ok := typ.(sql.NumberType); !ok {
		return v, nil
	}
	if _, inRange, cerr := typ.Convert(ctx, v); cerr == nil && !inRange {
		if !r.ignore && strictMode(ctx) {
			return nil, sql.NewWrappedTypeConversionError(v, r.col.Index(), sql.ErrValueOutOfRange.New(v, typ))
		}
		row := 1
		if s, ok := ctx.Session.(*Session); ok {
			row = s.rowsWritten + 1
		}
		ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: 1264,
			Message: fmt.Sprintf("Out of range value for column '%s' at row %d", r.col.Name(), row)})
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

// withRangeChecks returns u with each SET value wrapped in rangeChecked,
// or nil when there is nothing to wrap (or it is wrapped already).
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

// badValue is a value of the row being inserted that does not convert to
// its column's type.
type badValue struct {
	col, val string
	typ      sql.Type
}

var reOutOfRange = regexp.MustCompile(`^.+ out of range for .+$`)

// conversionWarning rewrites go-mysql-server's warning for a value INSERT
// IGNORE could not convert into MySQL's (the column, the row), taking the
// row's next noted column. ok is false when w is not such a warning.
func (s *Session) conversionWarning(w *sql.Warning) (out sql.Warning, ok bool) {
	if len(s.rowBad) == 0 {
		return out, false
	}
	var msg string
	b := s.rowBad[0]
	row := s.rowsWritten + 1
	switch {
	case (w.Code == 1105 || w.Code == 1264) && reOutOfRange.MatchString(w.Message):
		out.Code = 1264
		msg = fmt.Sprintf("Out of range value for column '%s' at row %d", b.col, row)
	case w.Code == 1366 && strings.Contains(w.Message, "is not a valid value for"):
		out.Code = 1366
		msg = fmt.Sprintf("Incorrect %s value: '%s' for column '%s' at row %d", typeWord(b.typ), b.val, b.col, row)
	default:
		return out, false
	}
	s.rowBad = s.rowBad[1:]
	out.Level, out.Message = "Warning", msg
	return out, true
}

// typeWord is MySQL's word for a column type in "Incorrect ... value".
func typeWord(t sql.Type) string {
	switch {
	case types.IsInteger(t):
		return "integer"
	case types.IsDecimal(t):
		return "decimal"
	case types.IsFloat(t):
		return "double"
	}
	return strings.ToLower(t.String())
}
