package txlog

import (
	"sort"
	"sync/atomic"
)

// sparseEvery: a segment remembers the file offset of every sparseEvery-th
// record; a read seeks there and walks at most sparseEvery-1 headers.
const sparseEvery = 64

// segment is one segment file.
type segment struct {
	name     string // file name, without the directory
	first    uint64 // index of its first record
	prevTerm uint64 // term of record first-1, from the header
	legacy   bool   // a version 1 segment: the writer moves on before appending to it
	file     File
	// refs counts the log's reference (while the segment is in Log.segs)
	// and those of readers and the flusher; the last release closes file.
	refs atomic.Int32

	// baseLSN and baseOff map LSNs to file offsets for the segment being
	// written (fileOff). Only the writer goroutine uses them.
	baseLSN uint64
	baseOff int64
	// prealloc: the file runs on past the data in zeros (prealloc.go);
	// spare is the file claimed for a segment stamped into but not yet
	// created. Only the writer goroutine uses them after Open.
	prealloc bool
	spare    *spareFile

	// Guarded by Log.segMu, updated by the writer as records are written.
	last   uint64  // index of the last readable record (first-1 if none)
	size   int64   // file offset just past that record
	sparse []int64 // offset of record first+k*sparseEvery
}

func (s *segment) fileOff(lsn uint64) int64 { return s.baseOff + int64(lsn-s.baseLSN) }

func (s *segment) acquire() { s.refs.Add(1) }

func (s *segment) release() {
	if s.refs.Add(-1) == 0 && s.file != nil {
		s.file.Close()
	}
}

// seek returns where to start walking to reach index i (first <= i <=
// last): the offset and index of the nearest remembered record at or
// before i. Called under segMu.
func (s *segment) seek(i uint64) (off int64, idx uint64) {
	k := (i - s.first) / sparseEvery
	if k >= uint64(len(s.sparse)) {
		k = uint64(len(s.sparse)) - 1
	}
	return s.sparse[k], s.first + k*sparseEvery
}

// trimSparse forgets remembered offsets of records >= from.
func (s *segment) trimSparse(from uint64) {
	if from <= s.first {
		s.sparse = s.sparse[:0]
		return
	}
	keep := (from - s.first + sparseEvery - 1) / sparseEvery
	if keep < uint64(len(s.sparse)) {
		s.sparse = s.sparse[:keep]
	}
}

// termRun: records from index on have term, up to the next run.
type termRun struct{ index, term uint64 }

// termOf is the term of index i given runs covering it.
func termOf(runs []termRun, i uint64) (uint64, bool) {
	k := sort.Search(len(runs), func(k int) bool { return runs[k].index > i })
	if k == 0 {
		return 0, false
	}
	return runs[k-1].term, true
}

// trimRunsFrom drops what runs say about indexes >= from.
func trimRunsFrom(runs []termRun, from uint64) []termRun {
	k := sort.Search(len(runs), func(k int) bool { return runs[k].index >= from })
	return runs[:k]
}

// trimRunsBefore drops runs that end before first, keeping the one that
// covers first.
func trimRunsBefore(runs []termRun, first uint64) []termRun {
	k := sort.Search(len(runs), func(k int) bool { return runs[k].index > first })
	if k <= 1 {
		return runs
	}
	return append([]termRun(nil), runs[k-1:]...)
}

// segmentFor returns the position in segs of the segment holding index i:
// the last one whose first index is <= i.
func segmentFor(segs []*segment, i uint64) int {
	return sort.Search(len(segs), func(k int) bool { return segs[k].first > i }) - 1
}
