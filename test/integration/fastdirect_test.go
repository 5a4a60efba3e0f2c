package integration

import (
	"fmt"
	"math"
	"testing"
)

// TestFastPathDirectValues: the fast path writes integer and utf8mb4
// string columns straight from the stored row (internal/sqlfront,
// fast_direct.go) and every other column through its type. Every column
// type, at its extremes, NULL, multibyte and trailing-space strings, read
// by point, range, ORDER BY, DISTINCT and SUM statements under several
// character_set_results values, must give the same bytes, metadata and
// errors with the fast path on and off — and the fast path must have run
// them.
func TestFastPathDirectValues(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	s := e.session("client")
	s.exec("CREATE TABLE t_all (id INT PRIMARY KEY, i8 TINYINT, u8 TINYINT UNSIGNED, i16 SMALLINT, u16 SMALLINT UNSIGNED, " +
		"i24 MEDIUMINT, u24 MEDIUMINT UNSIGNED, i32 INT, u32 INT UNSIGNED, i64 BIGINT, u64 BIGINT UNSIGNED, b BOOL, " +
		"ch CHAR(10), vc VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, tx TEXT, l1 VARCHAR(10) CHARACTER SET latin1, m3 VARCHAR(10) CHARACTER SET utf8mb3, " +
		"bn BINARY(4), vb VARBINARY(8), bl BLOB, e ENUM('x','y'), st SET('a','b'), bt BIT(8), yr YEAR, dt DATE, tm TIME, " +
		"fl FLOAT, de DECIMAL(8,3), js JSON)")
	s.exec("INSERT INTO t_all VALUES " +
		"(1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0, 0, " +
		"'a', 'héllo', 'ünï 😀', 'café', 'añb', 'ab', 'x', '', 'x', 'a,b', b'101', 1901, '2024-02-29', '-838:59:59', -1.5, -12345.678, '{\"k\": [1, \"é\"]}'), " +
		"(2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807, 18446744073709551615, 1, " +
		"'Zed  ', 'HELLO ', '', 'CAFÉ', '', 'abcd', 'yy', 'blob', 'y', '', b'11111111', 2155, '1000-01-01', '00:00:00', 3.25, 0.001, 'null'), " +
		"(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), " +
		"(4, 0, 1, 7, 8, 9, 10, 11, 12, 13, 14, 0, 'a', 'Héllo', 'ünï 😀', 'cafe', 'A', 'a', 'x', 'z', 'x', 'b', b'0', 2000, '2000-01-01', '12:34:56', 0, 0, '[]'), " +
		"(5, 1, 2, 3, 4, 5, 6, 7, 8, -1, 1, 1, '', 'hello', 'a', '', 'b', NULL, NULL, NULL, 'y', 'a', NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
	cols := "i8, u8, i16, u16, i24, u24, i32, u32, i64, u64, b, ch, vc, tx, l1, m3, bn, vb, bl, e, st, bt, yr, dt, tm, fl, de, js"
	type c struct {
		q    string
		args [][]any
	}
	cases := []c{
		{"SELECT " + cols + " FROM t_all WHERE id = ?", [][]any{{1}, {2}, {3}, {4}, {5}, {6}}},
		{"SELECT * FROM t_all WHERE id BETWEEN ? AND ?", [][]any{{1, 5}, {2, 2}, {6, 9}, {math.MinInt32, math.MaxInt32}}},
		{"SELECT tx, i64, u64, id FROM t_all WHERE id IN (?, ?, ?)", [][]any{{1, 2, 3}, {5, 4, 9}}},
		{"SELECT ch, id FROM t_all WHERE id BETWEEN ? AND ? ORDER BY ch", [][]any{{1, 5}}},
		{"SELECT vc, id FROM t_all WHERE id BETWEEN ? AND ? ORDER BY vc DESC, id", [][]any{{1, 5}}},
		{"SELECT DISTINCT vc FROM t_all WHERE id BETWEEN ? AND ? ORDER BY vc", [][]any{{1, 5}}},
		{"SELECT DISTINCT tx FROM t_all WHERE id BETWEEN ? AND ? ORDER BY tx", [][]any{{1, 5}}},
		{"SELECT tx, ch FROM t_all WHERE id BETWEEN ? AND ? ORDER BY tx, ch DESC", [][]any{{1, 5}}},
		{"SELECT DISTINCT l1 FROM t_all WHERE id BETWEEN ? AND ? ORDER BY l1", [][]any{{1, 5}}},
		{"SELECT m3, id FROM t_all WHERE id BETWEEN ? AND ? ORDER BY m3", [][]any{{1, 5}}},
		{"SELECT i64, id FROM t_all WHERE id BETWEEN ? AND ? ORDER BY i64", [][]any{{1, 5}}},
		{"SELECT SUM(i64) FROM t_all WHERE id BETWEEN ? AND ?", [][]any{{1, 1}, {1, 5}, {3, 3}, {7, 9}}},
		{"SELECT SUM(u64) FROM t_all WHERE id BETWEEN ? AND ?", [][]any{{1, 5}, {2, 2}}},
		{"SELECT SUM(i8) FROM t_all WHERE id BETWEEN ? AND ?", [][]any{{1, 5}}},
		{"SELECT SUM(u24) FROM t_all WHERE id BETWEEN ? AND ?", [][]any{{1, 5}}},
		{"SELECT e, st, bt, yr FROM t_all WHERE id BETWEEN ? AND ?", [][]any{{1, 5}}},
	}
	run := func() []string {
		var out []string
		for _, cs := range []string{"utf8mb4", "latin1", "'binary'", "NULL"} {
			s.exec("SET character_set_results = " + cs)
			for _, c := range cases {
				for _, a := range c.args {
					out = append(out, fmt.Sprintf("[%s] %s %v => %s", cs, c.q, a, resultOf(s, c.q, a...)))
				}
			}
		}
		s.exec("SET character_set_results = utf8mb4")
		return out
	}
	hits := fastCounter(t, s, "hits")
	on := run()
	onHits := fastCounter(t, s, "hits") - hits
	setFastPath(t, s, false)
	off := run()
	s.exec("SET GLOBAL lockstep_fast_path = ON")
	for i := range on {
		t.Log(on[i])
	}
	sameOutcomes(t, on, off)
	if want := int64(len(on) * 3 / 4); onHits < want {
		t.Errorf("fast path ran %d of %d statements, want at least %d", onHits, len(on), want)
	}
}
