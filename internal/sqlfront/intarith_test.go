package sqlfront

import (
	"math"
	"testing"
)

func TestExactArith(t *testing.T) {
	for _, tc := range []struct {
		op      string
		l, r    int64
		neg     bool
		mag     uint64
		overMag bool
	}{
		{"+", 2, 3, false, 5, false},
		{"+", -2, 3, false, 1, false},
		{"+", 2, -3, true, 1, false},
		{"+", -2, -3, true, 5, false},
		{"-", 5, 7, true, 2, false},
		{"-", -3, -3, false, 0, false},
		{"-", -3, 4, true, 7, false},
		{"*", 0, -5, false, 0, false},
		{"*", -4, 3, true, 12, false},
		{"*", -4, -3, false, 12, false},
		{"+", math.MinInt64, -1, true, 1<<63 + 1, false},
	} {
		ln, lm, _, _ := intValue(tc.l)
		rn, rm, _, _ := intValue(tc.r)
		neg, mag, over := exactArith(tc.op, ln, lm, rn, rm)
		if neg != tc.neg || mag != tc.mag || over != tc.overMag {
			t.Errorf("%d %s %d = neg %v mag %d over %v; want %v %d %v", tc.l, tc.op, tc.r, neg, mag, over, tc.neg, tc.mag, tc.overMag)
		}
	}
	// Magnitudes past 2^64-1.
	if _, _, over := exactArith("+", false, math.MaxUint64, false, 1); !over {
		t.Error("2^64-1 + 1 did not overflow")
	}
	if _, _, over := exactArith("*", false, 1<<32, false, 1<<32); !over {
		t.Error("2^32 * 2^32 did not overflow")
	}
	if neg, mag, over := exactArith("-", false, math.MaxUint64, true, 0); neg || over || mag != math.MaxUint64 {
		t.Errorf("2^64-1 - 0 = %v %d %v", neg, mag, over)
	}
}
