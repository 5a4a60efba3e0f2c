package apply

import "time"

// Metrics is the applier's status (issue 31 item 5): what it received and
// applied, where it stands, what waits to be applied, and how its workers
// spent their time. Counters count from the machine's creation. The
// server shows them in SHOW STATUS (docs/apply.md, "Status").
type Metrics struct {
	// Received.
	Entries      int64 // log entries fed
	EmptyEntries int64 // of which held no record
	Records      int64 // records in them
	Skipped      int64 // records whose GTID was executed (a checkpoint held them; a duplicate delivery)

	// Applied: records installed (Done), by kind.
	Applied      int64
	Transactions int64
	DDL          int64 // DDL statements, failure marks, checkpoint markers
	Accounts     int64

	// The applied position: the contiguous applied prefix (Applied()),
	// and the GNO of the record at AppliedSeq (the start's executed GNO
	// before one is applied).
	AppliedIndex uint64
	AppliedSeq   int64
	AppliedGNO   int64
	// LastGNO is the highest executed GNO.
	LastGNO int64

	// Queue depth. Queued: records received and not yet handed to a
	// worker; InFlight: handed out and not done; PendingBytes: payload
	// bytes of the entries fed and not yet wholly applied.
	Queued       int64
	InFlight     int64
	PendingBytes int64
	// Lag is the lag in transactions: records received, not skipped and
	// not yet applied.
	Lag int64
	// LagSeconds is the lag in seconds, as MySQL defines
	// Seconds_Behind_Source: the time now minus the source's commit time
	// (record.Position.CommitTime) of the oldest record received and not
	// yet applied, in whole seconds; 0 when every record received is
	// applied (caught up), and when the source's clock is ahead of this
	// one; -1 when that record carries no commit time (a record written
	// before format 3), as MySQL shows NULL when it cannot tell.
	LagSeconds int64
	// LastAppliedCommitTime is the source's commit time of the record at
	// AppliedSeq, in microseconds since the epoch (0: none applied, or it
	// carries none): performance_schema's
	// LAST_APPLIED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP.
	LastAppliedCommitTime int64

	// Workers: the parallel driver's workers (1: serial); BusyWorkers:
	// those performing a step now.
	Workers     int64
	BusyWorkers int64
	// PeakBusyWorkers: the most of the parallel driver's workers that
	// performed steps at once since it started (0: the serial applier).
	PeakBusyWorkers int64

	// Retries: steps tried again after a transient executor error.
	Retries int64
	// DependencyWaits: transactions whose worker waited for their
	// last_committed to be applied, DependencyWaitTime in all.
	DependencyWaits    int64
	DependencyWaitTime time.Duration
	// GateWaits: transactions that waited at the commit-order gate
	// (replica_preserve_commit_order), GateWaitTime in all.
	GateWaits    int64
	GateWaitTime time.Duration
	// EntryWaits: the times feeding an entry waited for room under the
	// pending bytes' bound.
	EntryWaits int64
	// SerialDeps: transactions without a usable last_committed (made to
	// depend on their predecessor).
	SerialDeps int64
	// Certified: records whose last_committed the applier computed with
	// its certifier (Options.Recertify) instead of reading it.
	Certified int64
	// Streamed: entries whose transaction was streamed from the log
	// (EntryStream) rather than read whole.
	Streamed int64

	// Elapsed is the time from the first entry fed to when the metrics
	// were taken (0: none fed).
	Elapsed time.Duration
}

// Rate is the records applied per second over Elapsed (0 if none).
func (mt Metrics) Rate() float64 {
	if mt.Elapsed <= 0 {
		return 0
	}
	return float64(mt.Applied) / mt.Elapsed.Seconds()
}

// Metrics returns the machine's metrics; the driver's (workers, waits)
// are those of a serial driver with nothing in progress: Parallel.Metrics
// adds its own. Not safe while a Parallel driver owns the machine.
func (m *Machine) Metrics() Metrics {
	st := m.stats
	mt := Metrics{
		Entries: st.Entries, EmptyEntries: st.EmptyEntries, Records: st.Records, Skipped: st.Skipped,
		Applied: st.Applied, Transactions: st.Transactions, DDL: st.DDL, Accounts: st.Accounts,
		AppliedIndex: m.applied.Index, AppliedSeq: m.applied.Seq, AppliedGNO: m.appliedGNO, LastGNO: m.executed.max(),
		Queued: int64(len(m.queue)), InFlight: int64(m.inflight), PendingBytes: m.pendingBytes,
		Lag:     st.Records - st.Skipped - st.Applied,
		Workers: 1, Retries: st.Retries, SerialDeps: st.SerialDeps, Certified: st.Certified, Streamed: st.Streamed,
		LastAppliedCommitTime: m.appliedTime,
	}
	if st.Entries > 0 {
		now := m.clock()
		mt.Elapsed = now.Sub(m.started)
		mt.LagSeconds = m.lagSeconds(now)
	}
	return mt
}

// lagSeconds is Metrics.LagSeconds at now.
func (m *Machine) lagSeconds(now time.Time) int64 {
	if len(m.times) == 0 {
		return 0 // caught up
	}
	oldest := m.times[0]
	if oldest == 0 {
		return -1 // unknown: the record carries no commit time
	}
	return max(now.UnixMicro()-oldest, 0) / 1e6
}

// Metrics returns the machine's metrics with the driver's: workers, busy
// workers, waits. Safe at any time.
func (p *Parallel) Metrics() Metrics {
	p.mu.Lock()
	defer p.mu.Unlock()
	mt := p.m.Metrics()
	mt.Workers, mt.BusyWorkers, mt.PeakBusyWorkers = int64(p.opt.Workers), int64(p.busy), int64(p.peakBusy)
	mt.DependencyWaits, mt.DependencyWaitTime = p.deps.n, p.deps.d
	mt.GateWaits, mt.GateWaitTime = p.gate.n, p.gate.d
	mt.EntryWaits = p.entryWaits
	return mt
}

// ReceivedSet is the machine's ReceivedSet, safe while the driver runs.
func (p *Parallel) ReceivedSet() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m.ReceivedSet()
}
