//go:build !linux

package certify

// allocWords returns n zeroed words from the Go heap (pointer-free, so the
// garbage collector does not scan it).
func allocWords(owner *Static, n int) (words []uint64, hugePages bool) {
	return make([]uint64, n), false
}
