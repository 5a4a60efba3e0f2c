package server

import "testing"

func TestSyntaxMessage(t *testing.T) {
	const pre = "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near "
	for _, tc := range []struct {
		query string
		pos   int
		near  string
		want  string
	}{
		{"SELECT 1 FROM t WHERE", 22, "WHERE", "'' at line 1"},
		{"SELECT * FORM t", 14, "FORM", "'FORM t' at line 1"},
		{"SELEC 1", 6, "SELEC", "'SELEC 1' at line 1"},
		{"SELECT 1\nFROM t\nWHERE x = = 2", 27, "=", "'= 2' at line 3"},
		{"SELECT 1 FROM t WHERE;", 22, "WHERE", "'' at line 1"},
	} {
		if got := syntaxMessage(tc.query, tc.pos, tc.near); got != pre+tc.want {
			t.Errorf("syntaxMessage(%q, %d, %q) = %q, want %q", tc.query, tc.pos, tc.near, got, pre+tc.want)
		}
	}
}

func TestColumnClause(t *testing.T) {
	for _, tc := range []struct{ query, col, want string }{
		{"SELECT nosuch FROM t", "nosuch", "field list"},
		{"SELECT id FROM t WHERE zz = 1", "zz", "where clause"},
		{"SELECT id FROM t ORDER BY zz", "zz", "order clause"},
		{"SELECT id FROM t GROUP BY zz", "zz", "group statement"},
		{"SELECT id FROM t HAVING zz > 1", "zz", "having clause"},
		{"SELECT a.id FROM a JOIN b ON a.x = b.zz", "b.zz", "on clause"},
		{"UPDATE t SET zz = 1 WHERE id = 2", "zz", "field list"},
		{"INSERT INTO t (id, zz) VALUES (1, 2)", "zz", "field list"},
		{"SELECT `zz` FROM t WHERE id = 1", "zz", "field list"},
	} {
		if got := columnClause(tc.query, tc.col); got != tc.want {
			t.Errorf("columnClause(%q, %q) = %q, want %q", tc.query, tc.col, got, tc.want)
		}
	}
}

func TestSelectItem(t *testing.T) {
	for _, tc := range []struct {
		query, name string
		want        int
	}{
		{"SELECT g, n FROM t GROUP BY g", "n", 2},
		{"SELECT g, COUNT(*), CONCAT(a, n) FROM t GROUP BY g", "n", 3},
		{"SELECT n FROM t GROUP BY g", "n", 1},
		{"SELECT g, f(x, y), n FROM t GROUP BY g", "n", 3},
		{"SELECT g, nn, n FROM t GROUP BY g", "n", 3},
	} {
		if got := selectItem(tc.query, tc.name); got != tc.want {
			t.Errorf("selectItem(%q, %q) = %d, want %d", tc.query, tc.name, got, tc.want)
		}
	}
}
