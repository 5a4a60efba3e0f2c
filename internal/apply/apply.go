// Package apply is the state machine that installs committed records into
// a server: crash recovery uses it today, a raft follower and `lockstep
// bench replay` are to use it next (docs/apply.md).
//
// It is a pure state machine in etcd raft's style: it is fed events —
// a log entry (Entry), the outcome of a step it handed out (Done), the end
// of the input (Settle) — and hands out steps to perform (Next). It does
// no I/O and calls nothing: reading the log, running row changes through
// storage, running DDL through the SQL layer and printing notes are the
// driver's (Run, with an Executor the server wires).
//
// Three numbers, never assumed equal: a record's sequence number and GTID
// number (GNO), which the primary's pipeline assigned and the record
// carries, and the log index of the entry that holds it, which the log
// assigned. An entry holds one record, a batch of records (a commit group
// in one raft entry) or none (raft's own entries).
//
// What it tracks:
//   - the applied position: the contiguous applied prefix, as the last
//     entry index whose records (and every earlier entry's) are all
//     applied, and the last sequence number applied with every earlier one;
//   - the executed GTID numbers (one source: a set of GNO ranges). A record
//     whose GNO is executed is skipped (a restart from a checkpoint that
//     already holds it, or a duplicate delivery);
//   - the DDL statement applied last, until the next DDL record says
//     whether it failed on the source (its failure mark: undo it).
//
// Serial by default: Next hands out one step at a time and nothing more
// until Done. With Options.Window > 1 it hands out up to Window
// transaction steps at once, without looking at their dependencies; the
// driver's workers wait until a step is Ready (its last_committed is
// applied) and, preserving commit order, until it MayPublish; Done may
// arrive out of order (the applied prefix advances only over what is
// contiguous). DDL, account and note steps are handed out alone. Parallel
// is the concurrent driver. See docs/apply.md.
package apply

import (
	"fmt"
	"strconv"
	"time"

	"lockstep/internal/certify"
	"lockstep/internal/record"
)

// Position is where application stands.
type Position struct {
	// Index is the log index of the last entry applied with every entry
	// before it (0: none since the start).
	Index uint64
	// Seq is the last sequence number applied with every one before it.
	Seq int64
}

// StepKind says what a step asks the executor to do.
type StepKind int

const (
	// StepTxn: apply a transaction's row changes and AUTO_INCREMENT
	// counters (storage's apply call; no SQL).
	StepTxn StepKind = iota + 1
	// StepDDL: run a DDL statement; its outcome (the statement's own
	// error, which is not a failure of the applier) goes back to Done.
	StepDDL
	// StepUndoDDL: the DDL statement applied last failed on the source (a
	// failure mark follows it): undo what it changed (Undo.NextTableID).
	StepUndoDDL
	// StepAccounts: install the accounts.
	StepAccounts
	// StepNote: print Note; nothing to apply.
	StepNote
)

// Step is one thing to do. Steps that install a record carry its entry
// index and position.
type Step struct {
	Kind     StepKind
	Index    uint64          // the entry's log index
	Pos      record.Position // the record's sequence number, GNO, last_committed
	Txn      *record.Txn
	DDL      *record.DDL // StepDDL, StepUndoDDL (the failure mark)
	Accounts *record.Accounts
	Note     string // StepNote
}

// Options configure a Machine.
type Options struct {
	// Applied is where the data stands at the start: the checkpoint's
	// sequence number (Index may be 0: a checkpoint need not know the log
	// index; then the first entry fed may be any).
	Applied Position
	// ExecutedGNO: GNOs 1..ExecutedGNO are executed (a checkpoint's
	// GTID set, server_uuid:1-N).
	ExecutedGNO int64
	// FailedDDL reports whether a DDL record's text is the failure mark of
	// the statement with the sequence number it returns (sqlfront's
	// FailedDDLIndex; the mark names the statement's sequence number,
	// which logs written before the numbers were apart call its index).
	// nil: no record is a mark.
	FailedDDL func(query string) (seq int64, ok bool)
	// Window is how many transaction steps Next may hand out before the
	// first of them is Done (the parallel applier: its workers and their
	// queue). 0 or 1: serial, one step at a time. DDL, account and note
	// steps are always handed out alone.
	Window int
	// UUID is the source's server_uuid: errors name a record by its GTID,
	// UUID:GNO ("": by its GNO).
	UUID string
	// Retry is how a step whose executor error is transient is retried
	// (both drivers).
	Retry RetryPolicy
	// Clock reads the time for Metrics' durations (default time.Now).
	Clock func() time.Time
	// ChunkChanges: a transaction with more changes than this is not
	// decoded whole; its changes stay encoded in the entry and the
	// executor takes them a chunk of ChunkChanges at a time
	// (record.Txn.ChangeChunks), so that a large transaction costs its
	// entry's bytes and a chunk, not a decoded change per row. Default
	// DefaultChunkChanges; negative: never.
	ChunkChanges int
	// Recertify ignores the records' last_committed and computes it from
	// their writesets with a certifier, in sequence order, as the commit
	// pipeline does (a source whose records carry none: an old log, an
	// external source). DDL and account records have no writeset: serial.
	Recertify bool
	// Certifier is the certifier Recertify uses (nil: certify.NewStatic
	// with certify.DefaultConfig and Base Applied.Seq, made at the first
	// entry). One passed in must not have certified anything past
	// Applied.Seq, and is the machine's alone.
	Certifier certify.Certifier
}

// DefaultChunkChanges is Options.ChunkChanges' default: about 96 KiB of
// decoded changes (their bytes stay in the entry).
const DefaultChunkChanges = 1024

// Machine is the apply state machine. Not safe for concurrent use: its
// owner feeds it and hands its steps out.
type Machine struct {
	applied  Position
	executed gnoSet

	nextSeq int64 // the sequence number the next record to apply must have

	// entries fed and not yet applied, in index order.
	entries []pendingEntry
	// pendingBytes is the payload bytes of the entries fed and not yet
	// wholly applied: what a driver bounds its queue by (Parallel).
	pendingBytes int64
	// queue: steps handed out by Next, in order; inflight: handed out,
	// not Done.
	queue    []Step
	inflight int
	alone    bool // the step in flight is a DDL, undo or account step
	window   int
	// done: sequence numbers Done above applied.Seq (out-of-order Done),
	// with their GNOs.
	done map[int64]int64
	// appliedGNO is the GNO of the record at applied.Seq (the start's
	// ExecutedGNO until one is applied).
	appliedGNO int64
	// received: the GNOs fed (and those executed at the start).
	received gnoSet
	// times: the commit times (record.Position.CommitTime) of the records
	// to apply that are not yet in the applied prefix, in sequence order:
	// times[0] is applied.Seq+1's. appliedTime: the commit time of the
	// record at applied.Seq (0: none, or unknown).
	times       []int64
	appliedTime int64

	ddl struct {
		seq   int64 // the DDL statement applied last, pending its mark; 0: none
		index uint64
		err   error // its error at replay
	}

	failedDDL func(string) (int64, bool)
	chunk     int // ChunkChanges (0: never)

	uuid    string
	retry   RetryPolicy
	clock   func() time.Time
	started time.Time // the first entry was fed

	stats Stats

	// recertify: Options.Recertify, with its certifier (cert) and
	// scratch for one entry's CertifyBatch.
	recertify bool
	cert      certify.Certifier
	ws        [][]uint64
	lcs       []int64
}

type pendingEntry struct {
	index   uint64
	lastSeq int64 // the highest sequence number among its records to apply (applied.Seq at feed time if none)
	size    int64 // the entry's payload bytes and its decoded steps' (PendingBytes)
}

// Stats counts what the machine saw.
type Stats struct {
	Entries      int64 // entries fed
	EmptyEntries int64 // entries with no record
	Records      int64 // records fed
	Skipped      int64 // records whose GNO was executed
	Applied      int64 // records applied (Done), of which:
	Transactions int64 // transactions
	DDL          int64 // DDL records (statements, failure marks, checkpoint markers)
	Accounts     int64 // account records
	// Retries counts the times a step was tried again after a transient
	// executor error (RetryPolicy).
	Retries int64
	// SerialDeps counts transactions whose last_committed was not usable
	// (not below their sequence number, or negative): they are made to
	// depend on their predecessor.
	SerialDeps int64
	// Certified counts records whose last_committed the machine computed
	// (Options.Recertify).
	Certified int64
	// Streamed counts entries whose transaction was streamed from the log
	// (EntryStream): checked in one pass, its changes read again a chunk
	// at a time as they were applied, never in memory whole.
	Streamed int64
}

// New returns a machine starting at opts.Applied.
func New(opts Options) *Machine {
	m := &Machine{applied: opts.Applied, nextSeq: opts.Applied.Seq + 1, done: map[int64]int64{}, failedDDL: opts.FailedDDL, window: max(opts.Window, 1),
		appliedGNO: opts.ExecutedGNO, uuid: opts.UUID, retry: opts.Retry.withDefaults(), clock: opts.Clock,
		recertify: opts.Recertify, cert: opts.Certifier}
	if m.failedDDL == nil {
		m.failedDDL = func(string) (int64, bool) { return 0, false }
	}
	if m.clock == nil {
		m.clock = time.Now
	}
	switch {
	case opts.ChunkChanges == 0:
		m.chunk = DefaultChunkChanges
	case opts.ChunkChanges > 0:
		m.chunk = opts.ChunkChanges
	}
	if opts.ExecutedGNO > 0 {
		m.executed.add(1, opts.ExecutedGNO)
		m.received.add(1, opts.ExecutedGNO)
	}
	return m
}

// Applied returns the contiguous applied prefix.
func (m *Machine) Applied() Position { return m.applied }

// Stats returns the counters.
func (m *Machine) Stats() Stats { return m.stats }

// Executed reports whether GNO gno is executed.
func (m *Machine) Executed(gno int64) bool { return m.executed.has(gno) }

// ExecutedSet returns the executed GNOs as MySQL writes a GTID set's
// intervals for one server: "1-5:7-9" ("" for none).
func (m *Machine) ExecutedSet() string { return m.executed.String() }

// LastGNO returns the highest executed GNO.
func (m *Machine) LastGNO() int64 { return m.executed.max() }

// ReceivedSet returns the GNOs fed (and those executed at the start), as
// ExecutedSet writes them: MySQL's received transaction set.
func (m *Machine) ReceivedSet() string { return m.received.String() }

// GTID names a record's GTID: UUID:GNO, or "GNO n" without a UUID.
func (m *Machine) GTID(gno int64) string {
	if m.uuid == "" {
		return "GNO " + strconv.FormatInt(gno, 10)
	}
	return "GTID " + m.uuid + ":" + strconv.FormatInt(gno, 10)
}

// stepError is a failed step's error, naming its log index, sequence
// number and GTID; the applied position stays before it.
func (m *Machine) stepError(s Step, err error) error {
	return fmt.Errorf("apply: log index %d (sequence number %d, %s): %w", s.Index, s.Pos.Seq, m.GTID(s.Pos.GNO), err)
}

// Entry feeds the log entry at index. Entries must come in index order
// without gaps once the first has been fed; an entry at or before the
// applied index is a duplicate delivery and is ignored. Its records are
// queued: a record whose GNO is executed is skipped, any other must have
// the next sequence number (else records are missing, or the log is not
// in commit order).
func (m *Machine) Entry(index uint64, payload []byte) error {
	if m.applied.Index != 0 && index <= m.applied.Index {
		return nil // delivered again
	}
	if last := m.lastFed(); last != 0 && index != last+1 {
		return fmt.Errorf("log index %d follows %d: entries are missing", index, last)
	}
	recs, err := record.EntryRecords(payload)
	if err != nil {
		return fmt.Errorf("log index %d: %w", index, err)
	}
	m.count(len(recs))
	steps := make([]Step, 0, len(recs))
	size := int64(len(payload)) // what the entry costs until applied: its bytes and its decoded steps
	for i, b := range recs {
		kind, pos, err := record.PeekPosition(b)
		if err != nil {
			return fmt.Errorf("log index %d record %d: %w", index, i, err)
		}
		s, ok, err := m.record(index, kind, pos)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		switch kind {
		case record.KindTxn:
			s.Txn, err = record.DecodeTxnChunked(b, m.chunk)
		case record.KindDDL:
			s.DDL, err = record.DecodeDDL(b)
		case record.KindAccounts:
			s.Accounts, err = record.DecodeAccounts(b)
		}
		if err != nil {
			return fmt.Errorf("log index %d record %d: %w", index, i, err)
		}
		steps = append(steps, s)
	}
	return m.queueEntry(index, steps, size)
}

// EntryStream feeds the log entry at index as Entry does, its payload
// read through open (record.StreamEntry) rather than handed in: a
// transaction with more than ChunkChanges changes is checked in one pass
// over the payload and its changes are read again, a chunk at a time,
// when the executor applies it (record.Txn.ChangeChunks), so that its
// bytes are never in memory whole. cost is what reading the payload holds
// while the step runs (txlog.StreamMemory): what PendingBytes counts for
// it besides the step, instead of its payload's bytes. Any other entry
// is read whole and fed to Entry.
func (m *Machine) EntryStream(index uint64, open record.Opener, cost int64) error {
	payload, t, err := record.StreamEntry(open, m.chunk)
	if err != nil {
		return fmt.Errorf("log index %d: %w", index, err)
	}
	return m.streamed(index, payload, t, cost)
}

// streamed feeds what record.StreamEntry read of the entry at index.
func (m *Machine) streamed(index uint64, payload []byte, t *record.Txn, cost int64) error {
	if t == nil {
		return m.Entry(index, payload)
	}
	if m.applied.Index != 0 && index <= m.applied.Index {
		return nil // delivered again
	}
	if last := m.lastFed(); last != 0 && index != last+1 {
		return fmt.Errorf("log index %d follows %d: entries are missing", index, last)
	}
	m.count(1)
	m.stats.Streamed++
	s, ok, err := m.record(index, record.KindTxn, t.Position)
	if err != nil {
		return err
	}
	var steps []Step
	if ok {
		s.Txn = t
		steps = append(steps, s)
	}
	return m.queueEntry(index, steps, cost+record.StreamMemory(m.chunk))
}

// count counts an entry of n records.
func (m *Machine) count(n int) {
	if m.stats.Entries == 0 {
		m.started = m.clock()
	}
	m.stats.Entries++
	if n == 0 {
		m.stats.EmptyEntries++
	}
}

// record counts a record of the entry at index and checks its sequence
// number; ok is false when its GNO is executed (skipped). The step has
// its kind and position.
func (m *Machine) record(index uint64, kind record.Kind, pos record.Position) (s Step, ok bool, err error) {
	m.stats.Records++
	m.received.add(pos.GNO, pos.GNO)
	if m.executed.has(pos.GNO) {
		m.stats.Skipped++
		return Step{}, false, nil
	}
	if pos.Seq != m.nextSeq {
		return Step{}, false, fmt.Errorf("log index %d: sequence number %d follows %d (GNO %d not executed): records are missing or out of order", index, pos.Seq, m.nextSeq-1, pos.GNO)
	}
	if !m.recertify && (pos.LastCommitted >= pos.Seq || pos.LastCommitted < 0) {
		pos.LastCommitted = pos.Seq - 1
		m.stats.SerialDeps++
	}
	s = Step{Index: index, Pos: pos}
	switch kind {
	case record.KindTxn:
		s.Kind = StepTxn
	case record.KindDDL:
		s.Kind = StepDDL
	case record.KindAccounts:
		s.Kind = StepAccounts
	}
	m.nextSeq++
	m.times = append(m.times, pos.CommitTime)
	return s, true, nil
}

// queueEntry queues an entry's steps; size is what its bytes cost until
// it is applied (stepBytes are added).
func (m *Machine) queueEntry(index uint64, steps []Step, size int64) error {
	for i := range steps {
		size += stepBytes(&steps[i])
	}
	if m.recertify && len(steps) > 0 {
		if err := m.certify(steps); err != nil {
			return fmt.Errorf("log index %d: %w", index, err)
		}
	}
	m.entries = append(m.entries, pendingEntry{index: index, lastSeq: m.nextSeq - 1, size: size})
	m.pendingBytes += size
	m.queue = append(m.queue, steps...)
	m.advance()
	return nil
}

// certify replaces the last_committed of an entry's steps (consecutive
// sequence numbers) by the certifier's, in one CertifyBatch: a
// transaction's from its writeset, a DDL or account record's serial (no
// writeset).
func (m *Machine) certify(steps []Step) error {
	if m.cert == nil {
		cfg := certify.DefaultConfig()
		cfg.Base = m.applied.Seq
		c, err := certify.NewStatic(cfg)
		if err != nil {
			return fmt.Errorf("the certifier for --recertify: %w", err)
		}
		m.cert = c
	}
	n := len(steps)
	if cap(m.ws) < n {
		m.ws, m.lcs = make([][]uint64, n), make([]int64, n)
	}
	ws, lcs := m.ws[:n], m.lcs[:n]
	for i := range steps {
		ws[i] = nil
		if steps[i].Txn != nil {
			ws[i] = steps[i].Txn.Writeset
		}
	}
	m.cert.CertifyBatch(steps[0].Pos.Seq, ws, lcs)
	clear(ws)
	for i := range steps {
		s := &steps[i]
		s.Pos.LastCommitted = lcs[i]
		switch {
		case s.Txn != nil:
			s.Txn.LastCommitted = lcs[i]
		case s.DDL != nil:
			s.DDL.LastCommitted = lcs[i]
		case s.Accounts != nil:
			s.Accounts.LastCommitted = lcs[i]
		}
	}
	m.stats.Certified += int64(n)
	return nil
}

// CertifyStats returns the counters of the certifier Options.Recertify
// uses (false: none).
func (m *Machine) CertifyStats() (certify.Stats, bool) {
	if m.cert == nil {
		return certify.Stats{}, false
	}
	return m.cert.Stats(), true
}

func (m *Machine) lastFed() uint64 {
	if n := len(m.entries); n > 0 {
		return m.entries[n-1].index
	}
	return m.applied.Index
}

// Next returns the next step to perform, or false when there is none now:
// the queue is empty, or the step at its head must wait — a transaction
// step while Window steps are in flight or a DDL, undo or account step
// is; any other step while anything is in flight. Next never waits for a
// transaction's dependency (its last_committed): the worker that performs
// it does (Ready), and publishes it in sequence order (MayPublish) when
// commit order is preserved.
// DDL records are turned into their steps here, in order, since what a
// failure mark asks depends on the outcome of the statement before it.
func (m *Machine) Next() (Step, bool) {
	for len(m.queue) > 0 {
		if m.inflight > 0 && (m.alone || m.queue[0].Kind != StepTxn || m.inflight >= m.window) {
			return Step{}, false
		}
		s := m.queue[0]
		// Clear the slot: the backing array outlives the step, and a
		// step holds its record (and, through it, its entry's bytes).
		m.queue[0] = Step{}
		m.queue = m.queue[1:]
		if s.Kind == StepDDL {
			var note string
			s, note = m.ddlStep(s)
			if note != "" {
				// The note comes first; the step (if any) after it.
				if s.Kind != 0 {
					m.queue = append([]Step{s}, m.queue...)
				}
				return Step{Kind: StepNote, Index: s.Index, Note: note}, true
			}
			if s.Kind == 0 {
				continue // nothing to do (a checkpoint marker, a mark of nothing replayed)
			}
		}
		m.inflight++
		m.alone = s.Kind != StepTxn
		return s, true
	}
	return Step{}, false
}

// Ready reports whether transaction step s may start: every transaction
// up to its last_committed is applied (the contiguous applied prefix has
// reached it).
func (m *Machine) Ready(s Step) bool { return s.Pos.LastCommitted <= m.applied.Seq }

// MayPublish reports whether step s may become visible when commit order
// is preserved (replica_preserve_commit_order): every earlier record is
// applied.
func (m *Machine) MayPublish(s Step) bool { return s.Pos.Seq == m.applied.Seq+1 }

// InFlight returns how many steps are handed out and not Done.
func (m *Machine) InFlight() int { return m.inflight }

// ddlStep decides what a DDL record asks. Kind 0: nothing (the record is
// applied as it is decided). note: a line to print first.
func (m *Machine) ddlStep(s Step) (Step, string) {
	d := s.DDL
	if at, ok := m.failedDDL(d.Query); ok {
		if m.ddl.seq != at {
			// The statement is not the one applied last: it is before the
			// checkpoint the data comes from (which came after its mark,
			// the DDL latch sees to that). Nothing to undo.
			note := m.settleNote()
			m.markApplied(s)
			return Step{}, note
		}
		m.ddl.seq, m.ddl.index = 0, 0
		if m.ddl.err == nil {
			s.Kind = StepUndoDDL
			s.Note = fmt.Sprintf("lockstep: recovery: log index %d: the DDL statement with sequence number %d failed when it ran but not at replay; what it changed is undone, as it was then", s.Index, at)
			m.ddl.err = nil
			return s, ""
		}
		m.ddl.err = nil
		// It failed at replay too and undid itself; the undo step is
		// still run (it moves the next table id to the mark's).
		s.Kind = StepUndoDDL
		return s, ""
	}
	note := m.settleNote()
	if d.Query == "" {
		m.markApplied(s) // a checkpoint marker
		return Step{}, note
	}
	return s, note
}

// markApplied applies a step that needs no executor (a marker) at once.
func (m *Machine) markApplied(s Step) {
	m.inflight++
	m.Done(s, nil)
}

// settleNote ends the pending DDL statement (the next record is another
// DDL record, or the input ends: no failure mark follows it) and returns
// the note to print if it failed at replay.
func (m *Machine) settleNote() string {
	var note string
	if m.ddl.seq != 0 && m.ddl.err != nil {
		note = fmt.Sprintf("lockstep: recovery: note: log index %d: a DDL statement fails at replay (%v) as it failed when it ran: an earlier lockstep logged failed statements too (or it was still running at a crash); nothing to do",
			m.ddl.index, m.ddl.err)
	}
	m.ddl.seq, m.ddl.index, m.ddl.err = 0, 0, nil
	return note
}

// Done reports that step s was performed. For StepDDL, outcome is the
// statement's own error at replay (kept until the next DDL record shows
// whether the statement failed on the source too); for other steps it is
// ignored (a failed step stops the applier: its owner does not call Done,
// and the applied position stays before the step).
func (m *Machine) Done(s Step, outcome error) {
	if s.Kind == StepNote {
		return
	}
	m.inflight--
	m.alone = false
	if s.Kind == StepDDL {
		m.ddl.seq, m.ddl.index, m.ddl.err = s.Pos.Seq, s.Index, outcome
	}
	m.executed.add(s.Pos.GNO, s.Pos.GNO)
	m.stats.Applied++
	switch s.Kind {
	case StepTxn:
		m.stats.Transactions++
	case StepAccounts:
		m.stats.Accounts++
	default:
		m.stats.DDL++
	}
	m.done[s.Pos.Seq] = s.Pos.GNO
	m.advance()
}

// advance moves the applied position over the contiguous prefix of done
// sequence numbers and of entries whose records are all applied.
func (m *Machine) advance() {
	moved := 0
	for {
		gno, ok := m.done[m.applied.Seq+1]
		if !ok {
			break
		}
		delete(m.done, m.applied.Seq+1)
		m.applied.Seq++
		m.appliedGNO = gno
		moved++
	}
	if moved > 0 {
		// As entries below: the slice moves on, nothing is copied.
		m.appliedTime = m.times[moved-1]
		m.times = m.times[moved:]
	}
	k := 0
	for k < len(m.entries) && m.entries[k].lastSeq <= m.applied.Seq {
		m.applied.Index = m.entries[k].index
		m.pendingBytes -= m.entries[k].size
		k++
	}
	if k > 0 {
		// Drop the applied entries from the front: the slice moves on (an
		// append reallocates without them), never copying what remains. A
		// copy here made a queued log's replay quadratic (51% of the CPU
		// in memmove, docs/benchmarks/notes.md "Replay").
		m.entries = m.entries[k:]
	}
}

// Settle ends the input (the end of the log at recovery): the pending DDL
// statement gets no failure mark. It returns the note to print, if any.
func (m *Machine) Settle() string { return m.settleNote() }

// Idle reports whether every step fed has been performed.
func (m *Machine) Idle() bool { return m.inflight == 0 && len(m.queue) == 0 }

// PendingBytes returns what the entries fed and not yet wholly applied
// cost: their payload bytes and their decoded steps' (stepBytes; the
// byte strings of a decoded change alias the payload).
func (m *Machine) PendingBytes() int64 { return m.pendingBytes }
