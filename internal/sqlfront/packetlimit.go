package sqlfront

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// String functions whose result would be larger than max_allowed_packet.
//
// MySQL refuses to build such a value: REPEAT, SPACE, LPAD, RPAD, CONCAT,
// CONCAT_WS, REPLACE, TO_BASE64 and FROM_BASE64 return NULL with warning
// 1301 "Result of repeat() was larger than max_allowed_packet (N) -
// truncated" (N the session's max_allowed_packet, which MySQL makes the
// global value at connect). go-mysql-server built whatever was asked:
// REPEAT('x', 200000000) returned 200 MB, and SPACE(n) built its result
// one byte at a time (O(n^2): SPACE(1000000) did not finish). The
// provider serves these names (as it does USER(), userfunc.go) with
// go-mysql-server's functions wrapped: REPEAT, SPACE, LPAD and RPAD check
// the size before they build anything (MySQL's tests: length x count for
// REPEAT, count for SPACE, length x the character set's longest
// character for LPAD and RPAD), evaluating their arguments once as
// go-mysql-server does; the others check the value they built.

// limitedFunctions are the functions the provider serves through
// resultLimited, by name.
var limitedFunctions = map[string]sql.Function{
	"repeat": sql.Function2{Name: "repeat", Fn: func(a, b sql.Expression) sql.Expression {
		return &resultLimited{Expression: function.NewRepeat(a, b), eval: evalRepeat}
	}},
	"space": sql.Function1{Name: "space", Fn: func(a sql.Expression) sql.Expression {
		return &resultLimited{Expression: function.NewSpace(a), eval: evalSpace}
	}},
	"lpad":      limitedN("lpad", function.NewLeftPad, evalPad(true)),
	"rpad":      limitedN("rpad", function.NewRightPad, evalPad(false)),
	"concat":    limitedN("concat", function.NewConcat, nil),
	"concat_ws": limitedN("concat_ws", function.NewConcatWithSeparator, nil),
	"replace": sql.Function3{Name: "replace", Fn: func(a, b, c sql.Expression) sql.Expression {
		return &resultLimited{Expression: function.NewReplace(a, b, c)}
	}},
	"to_base64": sql.Function1{Name: "to_base64", Fn: func(a sql.Expression) sql.Expression {
		return &resultLimited{Expression: function.NewToBase64(a)}
	}},
	"from_base64": sql.Function1{Name: "from_base64", Fn: func(a sql.Expression) sql.Expression {
		return &resultLimited{Expression: function.NewFromBase64(a)}
	}},
}

// limitedN wraps a function of any number of arguments.
func limitedN(name string, fn func(...sql.Expression) (sql.Expression, error), eval limitedEval) sql.Function {
	return sql.FunctionN{Name: name, Fn: func(args ...sql.Expression) (sql.Expression, error) {
		e, err := fn(args...)
		if err != nil {
			return nil, err
		}
		return &resultLimited{Expression: e, eval: eval}, nil
	}}
}

// limitedEval computes f's value on row, given the packet limit; nil
// (and a warning) when the value would be larger.
type limitedEval func(ctx *sql.Context, f *resultLimited, row sql.Row, limit int64) (interface{}, error)

// resultLimited is one of go-mysql-server's string functions whose value
// may not be larger than max_allowed_packet.
type resultLimited struct {
	sql.Expression             // go-mysql-server's function
	eval           limitedEval // nil: its own Eval, then the size check
}

var (
	_ sql.FunctionExpression = (*resultLimited)(nil)
	_ sql.CollationCoercible = (*resultLimited)(nil)
)

func (f *resultLimited) name() string {
	if fe, ok := f.Expression.(sql.FunctionExpression); ok {
		return fe.FunctionName()
	}
	return strings.ToLower(fmt.Sprintf("%T", f.Expression))
}

func (f *resultLimited) FunctionName() string { return f.name() }

func (f *resultLimited) Description() string {
	if fe, ok := f.Expression.(sql.FunctionExpression); ok {
		return fe.Description()
	}
	return ""
}

func (f *resultLimited) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, f.Expression)
}

func (f *resultLimited) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	e, err := f.Expression.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &resultLimited{Expression: e, eval: f.eval}, nil
}

func (f *resultLimited) Eval(ctx *sql.Context, row sql.Row) (interface{}, error) {
	limit := maxAllowedPacket(ctx)
	if f.eval != nil {
		return f.eval(ctx, f, row, limit)
	}
	v, err := f.Expression.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	n := int64(-1)
	switch x := v.(type) {
	case string:
		n = int64(len(x))
	case []byte:
		n = int64(len(x))
	}
	if n > limit {
		return f.tooLarge(ctx, limit), nil
	}
	return v, nil
}

// tooLarge warns that f's value would exceed limit and returns NULL.
func (f *resultLimited) tooLarge(ctx *sql.Context, limit int64) interface{} {
	ctx.Session.Warn(&sql.Warning{
		Level:   "Warning",
		Code:    1301, // ER_WARN_ALLOWED_PACKET_OVERFLOWED
		Message: fmt.Sprintf("Result of %s() was larger than max_allowed_packet (%d) - truncated", f.name(), limit),
	})
	return nil
}

// maxAllowedPacket is the session's max_allowed_packet.
func maxAllowedPacket(ctx *sql.Context) int64 {
	if v, err := ctx.GetSessionVariable(ctx, "max_allowed_packet"); err == nil {
		if n, ok := sessionInt(v); ok && n > 0 {
			return n
		}
	}
	return 64 << 20
}

// evalRepeat is go-mysql-server's REPEAT, checking the size first.
func evalRepeat(ctx *sql.Context, f *resultLimited, row sql.Row, limit int64) (interface{}, error) {
	args := f.Children()
	str, err := args[0].Eval(ctx, row)
	if str == nil || err != nil {
		return nil, err
	}
	if str, _, err = types.LongText.Convert(ctx, str); err != nil {
		return nil, err
	}
	count, err := args[1].Eval(ctx, row)
	if count == nil || err != nil {
		return nil, err
	}
	if count, _, err = types.Int32.Convert(ctx, count); err != nil {
		return nil, err
	}
	n := count.(int32)
	if n < 0 {
		return nil, function.ErrNegativeRepeatCount.New(count)
	}
	s := str.(string)
	if int64(len(s))*int64(n) > limit {
		return f.tooLarge(ctx, limit), nil
	}
	return strings.Repeat(s, int(n)), nil
}

// evalSpace is go-mysql-server's SPACE (which built its value a byte at a
// time), checking the size first.
func evalSpace(ctx *sql.Context, f *resultLimited, row sql.Row, limit int64) (interface{}, error) {
	val, err := f.Children()[0].Eval(ctx, row)
	if val == nil || err != nil {
		return nil, err
	}
	v, _, err := types.Int64.Convert(ctx, val)
	if err != nil {
		ctx.Warn(1292, "Truncated incorrect INTEGER value: '%v'", val)
		v = int64(0)
	}
	n := v.(int64)
	if n < 0 {
		n = 0
	}
	if n > limit {
		return f.tooLarge(ctx, limit), nil
	}
	return strings.Repeat(" ", int(n)), nil
}

// evalPad is go-mysql-server's LPAD (left) or RPAD, checking the size
// first as MySQL does: the length asked for times the longest character
// of the result's character set.
func evalPad(left bool) limitedEval {
	return func(ctx *sql.Context, f *resultLimited, row sql.Row, limit int64) (interface{}, error) {
		args := f.Children()
		str, err := args[0].Eval(ctx, row)
		if err != nil || str == nil {
			return nil, err
		}
		if str, _, err = types.LongText.Convert(ctx, str); err != nil {
			return nil, err
		}
		length, err := args[1].Eval(ctx, row)
		if err != nil || length == nil {
			return nil, err
		}
		if length, _, err = types.Int64.Convert(ctx, length); err != nil {
			return nil, err
		}
		padStr, err := args[2].Eval(ctx, row)
		if err != nil || padStr == nil {
			return nil, err
		}
		if padStr, _, err = types.LongText.Convert(ctx, padStr); err != nil {
			return nil, err
		}
		s, _, err := sql.Unwrap[string](ctx, str)
		if err != nil {
			return nil, err
		}
		p, _, err := sql.Unwrap[string](ctx, padStr)
		if err != nil {
			return nil, err
		}
		n := length.(int64)
		if n > 0 && n > limit/maxCharLen(f.Type()) {
			return f.tooLarge(ctx, limit), nil
		}
		return padString(s, n, p, left)
	}
}

// maxCharLen is the longest character of t's character set, in bytes.
func maxCharLen(t sql.Type) int64 {
	if st, ok := t.(sql.StringType); ok {
		if n := int64(st.CharacterSet().MaxLength()); n > 0 {
			return n
		}
	}
	return 1
}

// padString is go-mysql-server's (function/rpad_lpad.go).
func padString(str string, length int64, padStr string, left bool) (string, error) {
	if length <= 0 {
		return "", nil
	}
	if int64(len(str)) >= length {
		return str[:length], nil
	}
	if len(padStr) == 0 {
		return "", nil
	}
	padLen := length - int64(len(str))
	quo, rem := padLen/int64(len(padStr)), padLen%int64(len(padStr))
	if left {
		result := strings.Repeat(padStr, int(quo)) + padStr[:rem] + str
		return result[:length], nil
	}
	result := str + strings.Repeat(padStr, int(quo)) + padStr[:rem]
	return result[int64(len(result))-length:], nil
}
