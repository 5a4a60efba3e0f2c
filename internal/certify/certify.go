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

	// CertifyBatch certifies the transactions numbered first, first+1, ...,
	// one per writeset, and stores their last_committed values in out, which
	// must be at least as long as writesets. It is Certify in a loop, except
	// that an implementation may work on several transactions at once (Static
	// fetches the buckets of the next transactions while it certifies one).
	// The commit pipeline certifies each group this way; so does an applier
	// reading a log.
	CertifyBatch(first int64, writesets [][]uint64, out []int64)

	// Stats returns a snapshot of the counters. Safe for concurrent use. It
	// may lag the owner by up to 63 certifications; it is exact after
	// CertifyBatch returns and after any reset, DDL or rejected call.
	Stats() Stats
}

// ErrSequenceOrder is wrapped by the error CertifyChecked returns when a
// sequence number is not greater than the previous accepted one.
var ErrSequenceOrder = errors.New("certify: sequence number not increasing")

// Stats are the counters of one Certifier. Each field is read atomically, but
// the snapshot as a whole is not taken under a lock, so fields read while
// the owner publishes may be one publication apart.
type Stats struct {
	// Certifications counts accepted calls (DDL included). It is also the
	// count for DistanceSum.
	Certifications int64
	// Resets counts times all history was dropped because the structure was
	// full: for Static a full bucket or a relative sequence number past
	// 65,535 (split in ResetsBucketFull and ResetsRelOverflow); for HashMap a
	// clear because the history size was exceeded; for CertDB a garbage
	// collection. DDL is not counted here.
	Resets            int64
	ResetsBucketFull  int64
	ResetsRelOverflow int64
	// SerialDDL counts empty writesets (DDL), each answered with seq-1.
	SerialDDL int64
	// SerialReset counts transactions made serial (seq-1) because they
	// triggered a reset. Always 0 for HashMap and CertDB, whose clearing
	// transaction keeps its computed value.
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

// counters are the owner's running totals and the published copy behind
// Stats. The owner goroutine updates the plain fields on every call and
// copies them to the atomics every publishEvery certifications and whenever
// something rare happens (a reset, DDL, a rejected call, the end of a batch).
// An atomic add per transaction would cost more than it seems: on amd64 it
// is a locked instruction, a full memory barrier that keeps the next
// transaction's loads from overlapping this one's stores.
type counters struct {
	certifications    int64
	resetsBucketFull  int64
	resetsRelOverflow int64
	resetsCapacity    int64
	serialDDL         int64
	serialReset       int64
	distanceSum       int64
	rejected          int64

	pub struct {
		certifications    atomic.Int64
		resetsBucketFull  atomic.Int64
		resetsRelOverflow atomic.Int64
		resetsCapacity    atomic.Int64
		serialDDL         atomic.Int64
		serialReset       atomic.Int64
		distanceSum       atomic.Int64
		rejected          atomic.Int64
	}
}

// publishEvery bounds how many certifications Stats may lag behind.
const publishEvery = 64

func (c *counters) snapshot() Stats {
	p := &c.pub
	s := Stats{
		Certifications:    p.certifications.Load(),
		ResetsBucketFull:  p.resetsBucketFull.Load(),
		ResetsRelOverflow: p.resetsRelOverflow.Load(),
		SerialDDL:         p.serialDDL.Load(),
		SerialReset:       p.serialReset.Load(),
		DistanceSum:       p.distanceSum.Load(),
		Rejected:          p.rejected.Load(),
	}
	s.Resets = s.ResetsBucketFull + s.ResetsRelOverflow + p.resetsCapacity.Load()
	return s
}

// publish copies the running totals to the atomics Stats reads.
func (c *counters) publish() {
	p := &c.pub
	p.certifications.Store(c.certifications)
	p.resetsBucketFull.Store(c.resetsBucketFull)
	p.resetsRelOverflow.Store(c.resetsRelOverflow)
	p.resetsCapacity.Store(c.resetsCapacity)
	p.serialDDL.Store(c.serialDDL)
	p.serialReset.Store(c.serialReset)
	p.distanceSum.Store(c.distanceSum)
	p.rejected.Store(c.rejected)
}

// done records one accepted certification.
func (c *counters) done(seq, lastCommitted int64) {
	c.certifications++
	c.distanceSum += seq - lastCommitted
	if c.certifications%publishEvery == 0 {
		c.publish()
	}
}

// reject records a refused call.
func (c *counters) reject() {
	c.rejected++
	c.publish()
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
