package sqlfront

import (
	"context"
	"strconv"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Integer system variables MySQL truncates to their range.
//
// MySQL stores a value outside an integer variable's range as the nearest
// bound, with warning 1292 "Truncated incorrect max_execution_time value:
// '-1'"; go-mysql-server's max_execution_time took any BIGINT (a negative
// limit was kept). truncatedInt is go-mysql-server's integer type with
// MySQL's range and truncation.

type truncatedInt struct {
	sql.SystemVariableType
	name   string
	lo, hi int64
}

// newTruncatedInt is the type of integer variable name, range lo..hi.
func newTruncatedInt(name string, lo, hi int64) sql.SystemVariableType {
	return truncatedInt{SystemVariableType: types.NewSystemIntType(name, lo, hi, false), name: name, lo: lo, hi: hi}
}

// Convert truncates an integer outside the range to its bound, warning
// when it is given a statement's context; anything else is
// go-mysql-server's.
func (t truncatedInt) Convert(ctx context.Context, v interface{}) (interface{}, sql.ConvertInRange, error) {
	var n int64
	var text string
	if u, ok := v.(uint64); ok {
		text = strconv.FormatUint(u, 10)
		n = int64(u)
		if u > uint64(t.hi) {
			n = t.hi + 1 // past the bound
		}
	} else if i, ok := signedInt(v); ok {
		n, text = i, strconv.FormatInt(i, 10)
	} else {
		return t.SystemVariableType.Convert(ctx, v)
	}
	switch {
	case n < t.lo:
		n = t.lo
	case n > t.hi:
		n = t.hi
	default:
		return t.SystemVariableType.Convert(ctx, v)
	}
	if sctx, ok := ctx.(*sql.Context); ok && sctx.Session != nil {
		sctx.Warn(1292, "Truncated incorrect %s value: '%s'", t.name, text)
	}
	return n, sql.InRange, nil
}

// signedInt is v as an int64 if it is a Go integer other than uint64.
func signedInt(v interface{}) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	}
	return 0, false
}
