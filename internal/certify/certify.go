package certify

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
)

// Certifier turns (sequence_number, writeset) into last_committed.
//
// Calls to Certify and CertifyChecked must come from one goroutine at a time,
// with strictly increasing sequence numbers. That is not a limitation in
// practice: the commit pipeline leader assigns sequence numbers and certifies
// the batch it owns before handing over leadership, and every result depends
// on all earlier calls, so the work is inherently sequential; a lock would only
// add cost to the hot path. Stats may be called concurrently from any
// goroutine (the counters are atomics), for example by SHOW STATUS.
type Certifier interface {
	// Certify returns last_committed for the transaction seq with the given
	// writeset of 64-bit key hashes. An empty writeset means DDL and yields
	// seq-1 (serial); later transactions then depend on at least seq.
	// Duplicate keys in a writeset are allowed. Certify never panics: if seq
	// is not greater than the previous accepted seq, the call changes
	// nothing, is counted in Stats.Rejected, and returns seq-1 (saturating),
	// the most conservative value; use CertifyChecked to get an error instead.
	Certify(seq int64, writeset []uint64) (lastCommitted int64)

	// CertifyChecked is Certify that reports out-of-order input as an error
	// wrapping ErrSequenceOrder instead of returning a conservative value.
	CertifyChecked(seq int64, writeset []uint64) (lastCommitted int64, err error)

	// Stats returns a snapshot of the counters. Safe for concurrent use.
	Stats() Stats
}

// ErrSequenceOrder is wrapped by the error CertifyChecked returns when a
// sequence number is not greater than the previous accepted one.
var ErrSequenceOrder = errors.New("certify: sequence number not increasing")

// Stats are the counters of one Certifier. Each field is read atomically, but
// the snapshot as a whole is not taken under a lock, so fields read while
// Certify runs may be one transaction apart.
type Stats struct {
	// Certifications counts accepted calls (DDL included). It is also the
	// count for DistanceSum.
	Certifications int64
	// Resets counts times all history was dropped because the structure was
	// full: for Static a full bucket or a relative sequence number past
	// 65,535 (split in ResetsBucketFull and ResetsRelOverflow); for HashMap a
	// clear because the history size was exceeded. DDL is not counted here.
	Resets            int64
	ResetsBucketFull  int64
	ResetsRelOverflow int64
	// SerialDDL counts empty writesets (DDL), each answered with seq-1.
	SerialDDL int64
	// SerialReset counts transactions made serial (seq-1) because they
	// triggered a reset. Always 0 for HashMap, whose clearing transaction
	// keeps its computed value.
	SerialReset int64
	// DistanceSum is the sum of seq - last_committed over accepted calls.
	DistanceSum int64
	// Rejected counts calls refused because seq did not increase.
	Rejected int64
}

// SerialFallbacks is the number of transactions that were made to depend on
// their immediate predecessor by rule (DDL or reset), not by a key conflict.
func (s Stats) SerialFallbacks() int64 { return s.SerialDDL + s.SerialReset }

// Mean is the mean dependency distance, seq - last_committed, over accepted
// calls; 0 when there were none. Larger means more replay parallelism.
func (s Stats) Mean() float64 {
	if s.Certifications == 0 {
		return 0
	}
	return float64(s.DistanceSum) / float64(s.Certifications)
}

// String formats the counters for logs and test failures.
func (s Stats) String() string {
	return fmt.Sprintf("certifications=%d resets=%d (bucket-full=%d rel-overflow=%d) serial-ddl=%d serial-reset=%d mean-distance=%.2f rejected=%d",
		s.Certifications, s.Resets, s.ResetsBucketFull, s.ResetsRelOverflow,
		s.SerialDDL, s.SerialReset, s.Mean(), s.Rejected)
}

// counters holds the atomics behind Stats. Only the owning goroutine writes;
// any goroutine may read.
type counters struct {
	certifications    atomic.Int64
	resetsBucketFull  atomic.Int64
	resetsRelOverflow atomic.Int64
	resetsCapacity    atomic.Int64
	serialDDL         atomic.Int64
	serialReset       atomic.Int64
	distanceSum       atomic.Int64
	rejected          atomic.Int64
}

func (c *counters) snapshot() Stats {
	s := Stats{
		Certifications:    c.certifications.Load(),
		ResetsBucketFull:  c.resetsBucketFull.Load(),
		ResetsRelOverflow: c.resetsRelOverflow.Load(),
		SerialDDL:         c.serialDDL.Load(),
		SerialReset:       c.serialReset.Load(),
		DistanceSum:       c.distanceSum.Load(),
		Rejected:          c.rejected.Load(),
	}
	s.Resets = s.ResetsBucketFull + s.ResetsRelOverflow + c.resetsCapacity.Load()
	return s
}

// done records one accepted certification.
func (c *counters) done(seq, lastCommitted int64) {
	c.certifications.Add(1)
	c.distanceSum.Add(seq - lastCommitted)
}

// predecessor is seq-1 without wrapping below math.MinInt64.
func predecessor(seq int64) int64 {
	if seq == math.MinInt64 {
		return seq
	}
	return seq - 1
}

func orderError(seq, prev int64) error {
	return fmt.Errorf("%w: got %d after %d", ErrSequenceOrder, seq, prev)
}
