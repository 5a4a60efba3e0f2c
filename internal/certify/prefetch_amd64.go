//go:build amd64 && !purego

package certify

// prefetchLine asks the CPU to bring the cache line holding *p into the cache
// without waiting for it: unlike a load, it never stalls retirement.
//
//go:noescape
func prefetchLine(p *uint64)
