//go:build !amd64 || purego

package certify

// prefetchLine is a hint only; without an assembly version it does nothing
// and certification pays its cache misses as they come.
func prefetchLine(*uint64) {}
