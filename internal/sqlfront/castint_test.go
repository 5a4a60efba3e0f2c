package sqlfront

import (
	"math"
	"strings"
	"testing"
)

func TestParseLeadingInt(t *testing.T) {
	for _, tc := range []struct {
		in                  string
		signed              int64
		truncated, overflow bool
	}{
		{"12", 12, false, false},
		{"  \t-34", -34, false, false},
		{"+5", 5, false, false},
		{"12abc", 12, true, false},
		{"-7x", -7, true, false},
		{"1.5", 1, true, false},
		{"1e3", 1, true, false},
		{"12 ", 12, true, false},
		{"abc", 0, true, false},
		{"", 0, true, false},
		{"-", 0, true, false},
		{"0x1A", 0, true, false},
		{"-0", 0, false, false},
		{"9223372036854775807", math.MaxInt64, false, false},
		{"9223372036854775808", math.MinInt64, false, false},
		{"18446744073709551615", -1, false, false},
		{"18446744073709551616", -1, true, true},
		{"99999999999999999999", -1, true, true},
		{"-9223372036854775808", math.MinInt64, false, false},
		{"-9223372036854775809", math.MinInt64, true, true},
		{"-99999999999999999999x", math.MinInt64, true, true},
	} {
		r := parseLeadingInt(tc.in)
		if got := r.value(); got != tc.signed || r.truncated != tc.truncated || r.overflow != tc.overflow {
			t.Errorf("%q: %d truncated=%v overflow=%v, want %d %v %v", tc.in, got, r.truncated, r.overflow, tc.signed, tc.truncated, tc.overflow)
		}
	}
}

func TestCutForMessage(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	got := cutForMessage(long)
	if len(got) != 192 || !strings.HasPrefix(long, got) {
		t.Fatalf("cut to %d bytes", len(got))
	}
	if cutForMessage("short") != "short" {
		t.Fatal("a short value was cut")
	}
}
