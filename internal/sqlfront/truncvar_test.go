package sqlfront

import (
	"fmt"
	"testing"
)

// TestMaxExecutionTimeRange: max_execution_time takes MySQL's 0 ..
// 4294967295; a value outside is stored as the nearest bound with warning
// 1292 (go-mysql-server kept -1).
func TestMaxExecutionTimeRange(t *testing.T) {
	f := newTestFE(t)
	for _, tc := range []struct {
		set, want, warning string
	}{
		{"SET SESSION max_execution_time = -1", "[[0]]", "[[Warning 1292 Truncated incorrect max_execution_time value: '-1']]"},
		{"SET max_execution_time = 4294967296", "[[4294967295]]", "[[Warning 1292 Truncated incorrect max_execution_time value: '4294967296']]"},
		{"SET max_execution_time = 18446744073709551615", "[[4294967295]]", "[[Warning 1292 Truncated incorrect max_execution_time value: '18446744073709551615']]"},
		{"SET max_execution_time = 4294967295", "[[4294967295]]", "[]"},
		{"SET max_execution_time = 0", "[[0]]", "[]"},
		{"SET max_execution_time = 250", "[[250]]", "[]"},
	} {
		f.mustExec(f.ctx, tc.set)
		if w, err := f.query(f.ctx, "SHOW WARNINGS"); err != nil || fmt.Sprint(w) != tc.warning {
			t.Errorf("%s: SHOW WARNINGS = %v, %v; want %s", tc.set, w, err, tc.warning)
		}
		if got, err := f.query(f.ctx, "SELECT @@session.max_execution_time"); err != nil || fmt.Sprint(got) != tc.want {
			t.Errorf("%s: @@max_execution_time = %v, %v; want %s", tc.set, got, err, tc.want)
		}
	}
	f.mustExec(f.ctx, "SET GLOBAL max_execution_time = -5")
	defer f.mustExec(f.ctx, "SET GLOBAL max_execution_time = DEFAULT")
	if got, err := f.query(f.ctx, "SELECT @@global.max_execution_time"); err != nil || fmt.Sprint(got) != "[[0]]" {
		t.Errorf("SET GLOBAL max_execution_time = -5: %v, %v; want 0", got, err)
	}
}
