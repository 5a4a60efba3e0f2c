//go:build linux

package certify

import (
	"runtime"
	"syscall"
	"unsafe"
)

const hugePage = 2 << 20

// offHeapMin is the smallest array placed outside the Go heap; small test
// geometries use an ordinary slice.
const offHeapMin = 4 << 20

// allocWords returns n zeroed words. Large arrays are mapped outside the Go
// heap, aligned to 2 MiB and marked for transparent huge pages: every key
// lands in a random bucket, so with 4 KiB pages nearly every lookup also
// misses the TLB, and under virtualisation a TLB miss costs as much as a
// cache miss or more. The mapping is released by a cleanup once owner is
// unreachable. hugePages reports whether the advice was accepted (the
// kernel may still use small pages).
func allocWords(owner *Static, n int) (words []uint64, hugePages bool) {
	size := n * 8
	if size < offHeapMin {
		return make([]uint64, n), false
	}
	mapped, err := syscall.Mmap(-1, 0, size+hugePage, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]uint64, n), false
	}
	off := 0
	if rem := uintptr(unsafe.Pointer(&mapped[0])) % hugePage; rem != 0 {
		off = int(hugePage - rem)
	}
	region := mapped[off : off+size : off+size]
	hugePages = syscall.Madvise(region, syscall.MADV_HUGEPAGE) == nil
	runtime.AddCleanup(owner, func(m []byte) { _ = syscall.Munmap(m) }, mapped)
	return unsafe.Slice((*uint64)(unsafe.Pointer(&region[0])), n), hugePages
}
