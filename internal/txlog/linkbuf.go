package txlog

import "sync/atomic"

// linkBuf records which reserved byte ranges of the log buffer are filled,
// so that the writer can find the contiguous filled prefix without any lock
// (InnoDB's link_buf, "recent_written").
//
// An appender that has copied its range [start, start+n) stores n in the
// slot keyed by start; the writer, at the end of the contiguous prefix M,
// reads the slot keyed by M, and if it is set, clears it and moves M past
// the range. The key is (start/32) mod len(slots). Every range is at least
// 32 bytes long (a record header), so distinct starts have distinct start/32;
// every range not yet consumed starts in [M, M+bufSize) (an appender waits
// for the writer to free its space before it completes), so its start/32 is
// within bufSize/32+1 consecutive values; with bufSize/16 slots no two
// pending ranges share a slot.
type linkBuf struct {
	slots []atomic.Uint32
	mask  uint64
}

// contChunk marks a piece of an append copied in several pieces that is not
// its first: the writer counts appends by the ranges without it.
const contChunk = 1 << 31

func newLinkBuf(bufSize uint64) *linkBuf {
	n := bufSize / 16
	return &linkBuf{slots: make([]atomic.Uint32, n), mask: n - 1}
}

func (lb *linkBuf) slot(lsn uint64) *atomic.Uint32 { return &lb.slots[(lsn>>5)&lb.mask] }

// complete marks [start, start+n) filled. n < 2^31.
func (lb *linkBuf) complete(start uint64, n uint32, continuation bool) {
	if continuation {
		n |= contChunk
	}
	lb.slot(start).Store(n)
}

// ready reports whether the range starting at m is filled.
func (lb *linkBuf) ready(m uint64) bool { return lb.slot(m).Load() != 0 }

// advance consumes the filled ranges from m on, up to max bytes past m
// (roughly: it stops at the first range that ends beyond), and returns the
// new end of the contiguous prefix and the number of appends consumed.
// Only the writer calls it.
func (lb *linkBuf) advance(m uint64, max uint64) (uint64, uint64) {
	start := m
	var appends uint64
	for m-start < max {
		s := lb.slot(m)
		v := s.Load()
		if v == 0 {
			break
		}
		s.Store(0)
		if v&contChunk == 0 {
			appends++
		}
		m += uint64(v &^ contChunk)
	}
	return m, appends
}
