package sqlfront

import (
	"math"
	"testing"
)

func TestIntAsDecimal(t *testing.T) {
	for _, tc := range []struct {
		in   interface{}
		want string
		ok   bool
	}{
		{int8(-3), "-3", true},
		{int64(math.MinInt64), "-9223372036854775808", true},
		{uint64(math.MaxUint64), "18446744073709551615", true},
		{uint32(7), "7", true},
		{true, "1", true},
		{"7", "", false},
		{1.5, "", false},
	} {
		d, ok := intAsDecimal(tc.in)
		if ok != tc.ok || (ok && d.String() != tc.want) {
			t.Errorf("%T %v: %v %v, want %s %v", tc.in, tc.in, d, ok, tc.want, tc.ok)
		}
	}
}
