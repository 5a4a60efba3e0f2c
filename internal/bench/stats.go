package bench

import (
	"slices"
	"sync/atomic"
	"time"

	"lockstep/internal/bench/errlog"
)

// TxType is one of the five TPC-C transactions.
type TxType int

// The five transactions, in the order of Clause 2.
const (
	NewOrder TxType = iota
	Payment
	OrderStatus
	Delivery
	StockLevel
	numTxTypes
)

var txNames = [numTxTypes]string{"New-Order", "Payment", "Order-Status", "Delivery", "Stock-Level"}

func (t TxType) String() string { return txNames[t] }

// mix is the transaction mix in percent (Clause 5.2.3 minimums, New-Order
// taking the rest): 45/43/4/4/4.
var mix = [numTxTypes]int{45, 43, 4, 4, 4}

// TypeStats are the measured-window numbers of one transaction type.
type TypeStats struct {
	Commits      int64 // committed
	Rollbacks    int64 // user rollbacks (New-Order's invalid item, Clause 2.4.2.3)
	Deadlocks    int64 // attempts that ended in error 1213 and were retried
	LockTimeouts int64 // attempts that ended in error 1205 and were retried
	Errors       int64 // transactions that failed with any other error
	// Latencies of completed transactions (commit or user rollback), from the
	// first BEGIN to the final COMMIT/ROLLBACK including retries, sorted.
	Latencies []time.Duration
}

// Completed is the number of transactions that ran to their end: committed or
// rolled back by the client as the specification asks.
func (s *TypeStats) Completed() int64 { return s.Commits + s.Rollbacks }

// Percentile returns the p-th percentile latency (nearest rank), 0 if none.
func (s *TypeStats) Percentile(p float64) time.Duration {
	n := len(s.Latencies)
	if n == 0 {
		return 0
	}
	i := int(p/100*float64(n)+0.999999) - 1
	i = max(0, min(n-1, i))
	return s.Latencies[i]
}

func (s *TypeStats) merge(o *TypeStats) {
	s.Commits += o.Commits
	s.Rollbacks += o.Rollbacks
	s.Deadlocks += o.Deadlocks
	s.LockTimeouts += o.LockTimeouts
	s.Errors += o.Errors
	s.Latencies = append(s.Latencies, o.Latencies...)
}

// live are counters the progress reporter reads while the run goes on; they
// cover the whole run, warm-up included.
type live struct {
	completed    [numTxTypes]atomic.Int64
	measuredNO   atomic.Int64 // New-Orders completed in the measured window
	rollbacks    atomic.Int64
	deadlocks    atomic.Int64
	lockTimeouts atomic.Int64
	errors       atomic.Int64
}

// ErrorCount is one distinct error message and how often it occurred.
type ErrorCount = errlog.Count

func sortLatencies(s *TypeStats) { slices.Sort(s.Latencies) }
