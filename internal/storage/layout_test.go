package storage

import (
	"testing"
	"unsafe"
)

// TestLayoutSizes pins the per-row objects' sizes: every row version and
// every index entry pays them (docs/benchmarks/notes.md, bytes per row).
func TestLayoutSizes(t *testing.T) {
	tests := []struct {
		name      string
		got, want uintptr
	}{
		{"version", unsafe.Sizeof(version{}), 48},
		{"secEntry", unsafe.Sizeof(secEntry{}), 32},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("sizeof(%s) = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}
