package sqlfront

import (
	"fmt"
	"testing"
)

func TestNormaliseText(t *testing.T) {
	tests := []struct {
		in, norm, binds string // binds: type:value ...; norm "" = not normalised
	}{
		{"SELECT c FROM sbtest1 WHERE id=5", "SELECT c FROM sbtest1 WHERE id=?", "INT64:5"},
		{"select c from sbtest12 where id = 18446744073709551615;", "select c from sbtest12 where id = ?", "UINT64:18446744073709551615"},
		{"SELECT c FROM t WHERE id BETWEEN 10 AND 109 ORDER BY c", "SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c", "INT64:10 INT64:109"},
		{"SELECT v FROM `t1` WHERE k = 'abc' AND id = 7", "SELECT v FROM `t1` WHERE k = ? AND id = ?", "VARCHAR:abc INT64:7"},
		{"SELECT v FROM t WHERE k = ''", "SELECT v FROM t WHERE k = ?", "VARCHAR:"},
		{"SELECT v FROM t WHERE id = -5", "SELECT v FROM t WHERE id = ?", "INT64:-5"},
		{"SELECT v FROM t WHERE id = a -5", "SELECT v FROM t WHERE id = a -?", "INT64:5"},
		{"SELECT v FROM t WHERE id = a - -5", "SELECT v FROM t WHERE id = a - -?", "INT64:5"},
		{"SELECT v FROM t WHERE id=b-5", "SELECT v FROM t WHERE id=b-?", "INT64:5"},
		{"UPDATE c SET bal=-10.500000, n = n + 1 WHERE id=3", "UPDATE c SET bal=?, n = n + ? WHERE id=?", "DECIMAL:-10.500000 INT64:1 INT64:3"},
		{"INSERT INTO h VALUES (-1,-2.50, 3.0)", "INSERT INTO h VALUES (?,?, ?)", "INT64:-1 DECIMAL:-2.50 DECIMAL:3.0"},
		{"SELECT v FROM t WHERE id = 1.5", "SELECT v FROM t WHERE id = ?", "DECIMAL:1.5"},
		{"SELECT v FROM t WHERE id = 1.", "", ""},
		{"SELECT v FROM t WHERE id = 1.5e3", "", ""},
		{"SELECT v FROM t WHERE id = 1.5.6", "", ""},
		{"SELECT v FROM t WHERE id = - 5", "SELECT v FROM t WHERE id = - ?", "INT64:5"},
		{"SELECT v FROM `t 2` WHERE id=1", "SELECT v FROM `t 2` WHERE id=?", "INT64:1"},
		{"SELECT v FROM t WHERE id = 1e3", "", ""},
		{"SELECT v FROM t WHERE id = 0x1f", "", ""},
		{"SELECT v FROM t WHERE k = 'it''s'", "", ""},
		{"SELECT v FROM t WHERE k = 'a\\'b'", "", ""},
		{"SELECT v FROM t WHERE k = _utf8mb4'a'", "", ""},
		{"SELECT v FROM t WHERE k = X'ff'", "", ""},
		{"SELECT v FROM t WHERE k = \"a\"", "", ""},
		{"SELECT /*+ hint */ v FROM t WHERE id = 1", "", ""},
		{"SELECT v FROM t WHERE id = 1 -- c", "", ""},
		{"SELECT v FROM t WHERE id = 1; SELECT 2", "", ""},
		{"SELECT v FROM t WHERE id = ?", "", ""},
		{"SELECT @x", "", ""},
		{"SELECT v FROM t WHERE k = 'unterminated", "", ""},
		{"SELECT v FROM t WHERE id = 99999999999999999999", "", ""},
	}
	for _, tt := range tests {
		norm, binds, ok := normaliseText(tt.in)
		if tt.norm == "" {
			if ok {
				t.Errorf("normaliseText(%q) = %q, want it left alone", tt.in, norm)
			}
			continue
		}
		got := ""
		for i, b := range binds {
			if i > 0 {
				got += " "
			}
			got += fmt.Sprintf("%s:%s", b.Type, b.Value)
		}
		if !ok || norm != tt.norm || got != tt.binds {
			t.Errorf("normaliseText(%q) = %q [%s] %v, want %q [%s]", tt.in, norm, got, ok, tt.norm, tt.binds)
		}
	}
}
