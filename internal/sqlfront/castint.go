package sqlfront

import (
	"math"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// CAST(string AS SIGNED | UNSIGNED). MySQL reads the string's leading
// integer — spaces and tabs, a sign, digits — and stops at the first other
// character: CAST('12abc' AS SIGNED) is 12, CAST('1.5' AS SIGNED) is 1,
// with Warning 1292 "Truncated incorrect INTEGER value" whenever anything
// is left over or the number does not fit in 64 bits (then it is the
// nearest bound). A positive number past 2^63-1 cast to SIGNED, and a
// negative one cast to UNSIGNED, keep their 64 bits and get a warning that
// says so. go-mysql-server gave 0 for '12abc' and '-7x' (and no warning),
// rounded '1.5' to 2, read '1e3' as 1000, and wrapped
// '99999999999999999999' to -9223372036854775808; castIntRule replaces
// such a Convert by castInt, which converts string values as MySQL does and
// leaves every other value to go-mysql-server.

const castIntRuleID analyzer.RuleId = 1<<20 + 14

var castIntRule = exprRule(castIntExpr)

func castIntExpr(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	c, ok := e.(*expression.Convert)
	if !ok || !types.IsText(c.Child.Type()) {
		return e, transform.SameTree, nil
	}
	switch t := c.Type(); {
	case t == types.Int64:
		return &castInt{Convert: c}, transform.NewTree, nil
	case t == types.Uint64:
		return &castInt{Convert: c, unsigned: true}, transform.NewTree, nil
	}
	return e, transform.SameTree, nil
}

// castInt is a CAST of a string expression to SIGNED or UNSIGNED.
type castInt struct {
	*expression.Convert
	unsigned bool
}

func (c *castInt) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	e, err := c.Convert.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	if x, ok := e.(*expression.Convert); ok {
		return &castInt{Convert: x, unsigned: c.unsigned}, nil
	}
	return e, nil
}

func (c *castInt) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := c.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return c.Convert.Eval(ctx, row)
	}
	r := parseLeadingInt(s)
	if r.truncated {
		ctx.Warn(1292, "Truncated incorrect INTEGER value: '%s'", cutForMessage(s))
	}
	if c.unsigned {
		if r.neg && !r.overflow {
			ctx.Warn(1105, "Cast to unsigned converted negative integer to it's positive complement")
		}
		return uint64(r.value()), nil
	}
	v64 := r.value()
	if !r.neg && v64 < 0 && !r.overflow {
		ctx.Warn(1105, "Cast to signed converted positive out-of-range integer to it's negative complement")
	}
	return v64, nil
}

// leadingInt is the integer at the start of a string, as MySQL reads it for
// an integer conversion (its strtoll10).
type leadingInt struct {
	neg       bool
	mag       uint64 // clamped: 2^64-1 for a positive overflow, 2^63 for a negative one
	truncated bool   // characters left over, no digits, or out of range
	overflow  bool   // out of range (mag is the bound)
}

func parseLeadingInt(s string) leadingInt {
	var r leadingInt
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		r.neg = s[i] == '-'
		i++
	}
	start, over := i, false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if r.mag > (math.MaxUint64-d)/10 {
			over = true
			continue
		}
		r.mag = r.mag*10 + d
	}
	switch {
	case i == start: // no digits: 0, nothing converted
		r.neg, r.mag, r.truncated = false, 0, true
	case r.neg && (over || r.mag > 1<<63):
		r.mag, r.truncated, r.overflow = 1<<63, true, true
	case over:
		r.mag, r.truncated, r.overflow = math.MaxUint64, true, true
	}
	if i < len(s) {
		r.truncated = true
	}
	if r.mag == 0 {
		r.neg = false
	}
	return r
}

// value is the 64 bits MySQL keeps: a negative number as its two's
// complement, a positive one past 2^63-1 wrapped.
func (r leadingInt) value() int64 {
	if r.neg {
		return -int64(r.mag-1) - 1 // 2^63 becomes math.MinInt64
	}
	return int64(r.mag)
}

// cutForMessage shortens a value quoted in a message to 192 bytes (as
// MySQL prints values with %-.192s), at a character boundary.
func cutForMessage(s string) string {
	const max = 192
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
