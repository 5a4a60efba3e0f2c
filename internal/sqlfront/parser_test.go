package sqlfront

import "testing"

func TestNormaliseLocking(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT * FROM t WHERE id = 1 FOR SHARE", "SELECT * FROM t WHERE id = 1 lock in share mode"},
		{"select * from t for share;", "select * from t lock in share mode;"},
		{"SELECT * FROM t FOR SHARE NOWAIT", "SELECT * FROM t lock in share mode"},
		{"SELECT * FROM t For Share Skip Locked;", "SELECT * FROM t lock in share mode"},
		{"SELECT * FROM t FOR SHARE OF t", "SELECT * FROM t FOR SHARE OF t"}, // left to the parser
		{"SELECT * FROM t FOR UPDATE", "SELECT * FROM t FOR UPDATE"},
		// Lower-casing İ changes its length in bytes: the clause must be
		// found in the original text.
		{"SELECT * FROM t WHERE n='İİ' FOR SHARE", "SELECT * FROM t WHERE n='İİ' lock in share mode"},
	}
	for _, tt := range tests {
		if got := normaliseLocking(tt.in); got != tt.want {
			t.Errorf("normaliseLocking(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
