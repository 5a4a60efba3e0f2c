package sqlfront

import (
	"testing"

	"lockstep/internal/storage"
)

func TestNormaliseLocking(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT * FROM t WHERE id = 1 FOR SHARE", "SELECT * FROM t WHERE id = 1 lock in share mode"},
		{"select * from t for share;", "select * from t lock in share mode;"},
		{"SELECT * FROM t FOR SHARE NOWAIT", "SELECT * FROM t lock in share mode"},
		{"SELECT * FROM t For Share Skip Locked;", "SELECT * FROM t lock in share mode;"},
		{"SELECT * FROM t FOR\n  SHARE", "SELECT * FROM t lock in share mode"},
		{"SELECT * FROM t FOR UPDATE NOWAIT ", "SELECT * FROM t for update "},
		{"SELECT * FROM t FOR UPDATE SKIP LOCKED", "SELECT * FROM t FOR UPDATE SKIP LOCKED"}, // the parser knows it
		{"SELECT 'for share' FROM t", "SELECT 'for share' FROM t"},
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

func TestPolicyOf(t *testing.T) {
	tests := []struct {
		in   string
		want storage.ReadPolicy
	}{
		{"SELECT 1", storage.WaitLocked},
		{"SELECT * FROM t FOR UPDATE", storage.WaitLocked},
		{"SELECT * FROM t FOR UPDATE NOWAIT", storage.NoWait},
		{"SELECT * FROM t for share nowait;", storage.NoWait},
		{"SELECT * FROM t FOR SHARE SKIP\tLOCKED", storage.SkipLocked},
		{"SELECT * FROM t FOR UPDATE SKIP LOCKED ;", storage.SkipLocked},
		{"SELECT 'for update nowait' FROM t", storage.WaitLocked},
	}
	for _, tt := range tests {
		if got := policyOf(tt.in); got != tt.want {
			t.Errorf("policyOf(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
