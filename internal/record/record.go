// Package record defines the commit record — the one contract between the
// commit pipeline, the log, recovery and (later) a secondary's applier — and
// its byte encoding.
//
// A record is one committed transaction (its row changes with before- and
// after-images, its writeset, its position: sequence number, GTID number and
// last_committed) or one DDL statement (logged as the statement text with
// the database it ran in, replayed serially, as MySQL logs DDL in its
// binary log) or one change to the accounts (the whole user and grant
// tables after an account statement, serialised by go-mysql-server; no
// password in clear text, only its hash).
//
// The package owns the types and the encoding only. Storage produces the
// changes and the writeset; the commit pipeline assigns the position; the
// log (internal/txlog) frames, checksums and stores the bytes; recovery
// decodes and hands changes back to storage.
//
// Encoding (all integers unsigned varints unless noted):
//
//	kind byte (1 = transaction, 2 = DDL, 3 = accounts), format byte (3)
//	seq, gno, last_committed
//	format 3 on: commit time (microseconds since the Unix epoch, 0:
//	             unknown)
//	transaction: flags byte (bit 0: minimal before-images)
//	             n changes, each: op byte, table id, table version,
//	                              pk, before (omitted for inserts, and for
//	                              minimal images), after (omitted for deletes)
//	             n writeset hashes, each 8 bytes little-endian
//	             format 2 on: n AUTO_INCREMENT counters, each: table id,
//	                          next value
//	DDL:         next table id, database, query
//	accounts:    the serialised user and grant tables
//
// byte strings are a varint length and the bytes. Format 1 records (no
// counters, no commit time) and format 2 records (no commit time) are
// still read: their CommitTime is 0; a new field means a new format.
//
// Log entries. A log entry's payload (internal/txlog addresses entries by
// index) holds records in one of three forms (EntryRecords):
//
//	empty:            no record (raft's empty entry at a new term; other
//	                  entries of the log's own get a kind of their own)
//	one record:       its encoding, as above (every entry written before
//	                  batches existed, and the standalone pipeline's)
//	a batch:          kind byte 4, batch format byte (1), n records, each
//	                  a byte string holding one record's encoding (a
//	                  commit group carried by one raft entry)
//
// A reader that predates batches refuses a batch entry as corrupt (unknown
// kind 4) rather than misread it. The three numbers — a record's sequence
// number and GTID number (in the record) and its entry's log index — are
// never assumed equal.
package record

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Kind says what a record holds.
type Kind byte

const (
	KindTxn Kind = 1 // a committed transaction's row changes
	KindDDL Kind = 2 // a DDL statement
	// KindAccounts: the accounts after CREATE USER, GRANT, ... (a full
	// snapshot: replaying the last one restores them).
	KindAccounts Kind = 3
	// KindBatch is not a record: it starts a log entry holding several
	// records (EntryRecords, AppendBatch).
	KindBatch Kind = 4
)

// batchFormat is the format of a batch entry.
const batchFormat = 1

// formatVersion is the format written; minFormatVersion..formatVersion are
// read. Format 2 added the AUTO_INCREMENT counters of a transaction,
// format 3 the commit time of every record.
const (
	formatVersion    = 3
	minFormatVersion = 1
)

// Op is what a change did to its row.
type Op byte

const (
	OpInsert Op = 1 // the row did not exist before the transaction
	OpUpdate Op = 2 // the row existed and exists
	OpDelete Op = 3 // the row existed and was removed
)

// Change is one row changed by a transaction: its final state (After) and
// the state before the transaction (Before; nil for inserts, and for updates
// and deletes when the record keeps minimal images: the primary key
// identifies the row).
type Change struct {
	Op      Op
	Table   uint64 // durable table id
	Version uint64 // table definition version the images are encoded for
	PK      []byte
	Before  []byte
	After   []byte // nil for deletes
}

// Position is where a record stands in the commit order, and when it
// committed.
type Position struct {
	Seq           int64 // sequence_number: dense, in commit (and log) order
	GNO           int64 // the GTID's transaction number (server_uuid:GNO)
	LastCommitted int64 // the highest Seq this record depends on (certify)
	// CommitTime is when the source committed the record, in microseconds
	// since the Unix epoch: MySQL's original_commit_timestamp (the commit
	// pipeline reads the clock once per commit group, in its flush stage).
	// 0: unknown (records of formats 1 and 2 carry none).
	CommitTime int64
}

// Txn is a committed transaction.
type Txn struct {
	Position
	Minimal  bool // before-images omitted (row_image = minimal)
	Changes  []Change
	Writeset []uint64
	// AutoInc: AUTO_INCREMENT counters as they stood when the transaction
	// committed — of every table it wrote that has one, and of tables
	// whose counter a rollback moved since a record last carried it
	// (storage/autoinc.go). Format 2 on; nil in format 1 records.
	AutoInc []AutoInc

	// lazy: the changes left encoded by DecodeTxnChunked (nil: they are
	// in Changes).
	lazy *lazyChanges
}

// AutoInc is a table's AUTO_INCREMENT counter — its high-water mark, as
// MySQL 8 writes it to the redo log — carried in a commit record: when the
// transaction committed, every value below Next had been handed out (to
// this transaction, to others, including ones rolled back since) or
// skipped. Recovery and a replica's applier raise the table's counter to
// at least Next (storage.Engine.ApplyAutoInc); since it only ever raises
// the counter, records can apply it in any order (TRUNCATE, which resets
// the counter, is DDL and serial).
type AutoInc struct {
	Table uint64 // durable table id
	Next  uint64 // the next value the counter hands out
}

// DDL is a DDL statement, replayed by running Query in Database.
type DDL struct {
	Position
	NextTableID uint64 // storage's next table id when the statement ran
	Database    string
	Query       string
}

// Accounts is the state of the accounts after an account statement:
// users, their password hashes and privileges, and role grants, in
// go-mysql-server's serialisation (mysql_db.MySQLDb.Persist).
type Accounts struct {
	Position
	Data []byte
}

// ErrCorrupt is wrapped by every decoding error.
var ErrCorrupt = errors.New("record: corrupt record")

// AppendTxn appends the encoding of t to dst.
func AppendTxn(dst []byte, t *Txn) []byte {
	dst = append(dst, byte(KindTxn), formatVersion)
	dst = appendPos(dst, t.Position)
	var flags byte
	if t.Minimal {
		flags |= 1
	}
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(len(t.Changes)))
	for i := range t.Changes {
		c := &t.Changes[i]
		dst = append(dst, byte(c.Op))
		dst = binary.AppendUvarint(dst, c.Table)
		dst = binary.AppendUvarint(dst, c.Version)
		dst = appendBytes(dst, c.PK)
		if c.Op != OpInsert && !t.Minimal {
			dst = appendBytes(dst, c.Before)
		}
		if c.Op != OpDelete {
			dst = appendBytes(dst, c.After)
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(t.Writeset)))
	for _, h := range t.Writeset {
		dst = binary.LittleEndian.AppendUint64(dst, h)
	}
	dst = binary.AppendUvarint(dst, uint64(len(t.AutoInc)))
	for _, a := range t.AutoInc {
		dst = binary.AppendUvarint(dst, a.Table)
		dst = binary.AppendUvarint(dst, a.Next)
	}
	return dst
}

// AppendDDL appends the encoding of d to dst.
func AppendDDL(dst []byte, d *DDL) []byte {
	dst = append(dst, byte(KindDDL), formatVersion)
	dst = appendPos(dst, d.Position)
	dst = binary.AppendUvarint(dst, d.NextTableID)
	dst = appendBytes(dst, []byte(d.Database))
	return appendBytes(dst, []byte(d.Query))
}

// AppendAccounts appends the encoding of a to dst.
func AppendAccounts(dst []byte, a *Accounts) []byte {
	dst = append(dst, byte(KindAccounts), formatVersion)
	dst = appendPos(dst, a.Position)
	return appendBytes(dst, a.Data)
}

// DecodeAccounts decodes an accounts record. Data aliases b.
func DecodeAccounts(b []byte) (*Accounts, error) {
	if k, err := PeekKind(b); err != nil {
		return nil, err
	} else if k != KindAccounts {
		return nil, fmt.Errorf("%w: kind %d is not accounts", ErrCorrupt, k)
	}
	d := decoder{b: b[2:]}
	a := &Accounts{Position: d.pos(b[1])}
	a.Data = d.bytes()
	return a, d.finish()
}

// AppendBatch appends to dst a log entry payload holding the encoded
// records recs, in order (a commit group in one entry).
func AppendBatch(dst []byte, recs ...[]byte) []byte {
	dst = append(dst, byte(KindBatch), batchFormat)
	dst = binary.AppendUvarint(dst, uint64(len(recs)))
	for _, r := range recs {
		dst = appendBytes(dst, r)
	}
	return dst
}

// EntryRecords returns the encoded records a log entry's payload holds, in
// order: none for an empty payload, the payload itself for a single record,
// each record of a batch. The results alias payload; each is checked to
// start like a record (PeekKind), not decoded.
func EntryRecords(payload []byte) ([][]byte, error) {
	if len(payload) == 0 {
		return nil, nil
	}
	if Kind(payload[0]) != KindBatch {
		if _, err := PeekKind(payload); err != nil {
			return nil, err
		}
		return [][]byte{payload}, nil
	}
	if len(payload) < 2 || payload[1] != batchFormat {
		return nil, fmt.Errorf("%w: batch entry of an unknown format", ErrCorrupt)
	}
	d := decoder{b: payload[2:]}
	n := d.count(3)
	if d.err != nil {
		return nil, d.err
	}
	recs := make([][]byte, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		r := d.bytes()
		if d.err != nil {
			break
		}
		if _, err := PeekKind(r); err != nil {
			return nil, fmt.Errorf("record %d of a batch entry: %w", i, err)
		}
		recs = append(recs, r)
	}
	if err := d.finish(); err != nil {
		return nil, err
	}
	return recs, nil
}

// PeekPosition returns the kind and position of an encoded record without
// decoding the rest (to skip a record whose GTID is already executed).
func PeekPosition(b []byte) (Kind, Position, error) {
	k, err := PeekKind(b)
	if err != nil {
		return 0, Position{}, err
	}
	d := decoder{b: b[2:]}
	p := d.pos(b[1])
	return k, p, d.err
}

// PeekKind returns the kind of an encoded record.
func PeekKind(b []byte) (Kind, error) {
	if len(b) < 2 {
		return 0, fmt.Errorf("%w: %d bytes", ErrCorrupt, len(b))
	}
	if b[1] < minFormatVersion || b[1] > formatVersion {
		return 0, fmt.Errorf("%w: format %d (this binary reads %d-%d)", ErrCorrupt, b[1], minFormatVersion, formatVersion)
	}
	switch k := Kind(b[0]); k {
	case KindTxn, KindDDL, KindAccounts:
		return k, nil
	default:
		return 0, fmt.Errorf("%w: kind %d", ErrCorrupt, b[0])
	}
}

// DecodeTxn decodes a transaction record. The byte slices in the result
// alias b.
func DecodeTxn(b []byte) (*Txn, error) { return DecodeTxnChunked(b, 0) }

// DecodeTxnChunked decodes a transaction record as DecodeTxn does, unless
// chunk > 0 and it holds more than chunk changes (a large transaction):
// then its changes are checked but left encoded — Changes is nil, and
// ChangeChunks decodes them chunk changes at a time into one buffer — and
// its writeset is skipped (Writeset is nil: the applier does not use it),
// so what decoding allocates does not grow with the transaction. The byte
// slices in the result alias b.
func DecodeTxnChunked(b []byte, chunk int) (*Txn, error) {
	if k, err := PeekKind(b); err != nil {
		return nil, err
	} else if k != KindTxn {
		return nil, fmt.Errorf("%w: kind %d is not a transaction", ErrCorrupt, k)
	}
	d := decoder{b: b[2:]}
	t := &Txn{Position: d.pos(b[1])}
	flags := d.byte()
	t.Minimal = flags&1 != 0
	n := d.count(3)
	if chunk > 0 && n > chunk {
		t.lazy = &lazyChanges{b: d.b, n: n, chunk: chunk}
		var c Change
		for i := 0; i < n && d.err == nil; i++ {
			d.change(&c, t.Minimal) // checked, not kept
		}
		n = d.count(8)
		d.skip(8 * n)
	} else {
		if d.err == nil {
			t.Changes = make([]Change, n)
		}
		for i := 0; i < n && d.err == nil; i++ {
			d.change(&t.Changes[i], t.Minimal)
		}
		n = d.count(8)
		if d.err == nil && n > 0 {
			t.Writeset = make([]uint64, n)
			for i := range t.Writeset {
				t.Writeset[i] = d.u64()
			}
		}
	}
	if b[1] >= 2 {
		n = d.count(2)
		if d.err == nil && n > 0 {
			t.AutoInc = make([]AutoInc, n)
			for i := range t.AutoInc {
				t.AutoInc[i] = AutoInc{Table: d.uvarint(), Next: d.uvarint()}
			}
		}
	}
	if err := d.finish(); err != nil {
		return t, err
	}
	return t, nil
}

// change decodes one change into c.
func (d *decoder) change(c *Change, minimal bool) {
	c.Op = Op(d.byte())
	if d.err == nil && (c.Op < OpInsert || c.Op > OpDelete) {
		d.fail("bad change op %d", c.Op)
		return
	}
	c.Table = d.uvarint()
	c.Version = d.uvarint()
	c.PK = d.bytes()
	c.Before, c.After = nil, nil
	if c.Op != OpInsert && !minimal {
		c.Before = d.bytes()
	}
	if c.Op != OpDelete {
		c.After = d.bytes()
	}
}

// DecodeDDL decodes a DDL record.
func DecodeDDL(b []byte) (*DDL, error) {
	if k, err := PeekKind(b); err != nil {
		return nil, err
	} else if k != KindDDL {
		return nil, fmt.Errorf("%w: kind %d is not DDL", ErrCorrupt, k)
	}
	d := decoder{b: b[2:]}
	r := &DDL{Position: d.pos(b[1])}
	r.NextTableID = d.uvarint()
	r.Database = string(d.bytes())
	r.Query = string(d.bytes())
	return r, d.finish()
}

func appendPos(dst []byte, p Position) []byte {
	dst = binary.AppendUvarint(dst, uint64(p.Seq))
	dst = binary.AppendUvarint(dst, uint64(p.GNO))
	dst = binary.AppendUvarint(dst, uint64(p.LastCommitted))
	return binary.AppendUvarint(dst, uint64(p.CommitTime))
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// decoder reads fields, remembering the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 1 {
		d.fail("truncated")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) u64() uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.fail("truncated writeset")
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

// count reads an element count, each element taking at least min bytes.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)/min) {
		d.fail("count %d exceeds the record", n)
		return 0
	}
	return int(n)
}

// skip passes over n bytes.
func (d *decoder) skip(n int) {
	if d.err != nil {
		return
	}
	if n > len(d.b) {
		d.fail("truncated")
		return
	}
	d.b = d.b[n:]
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("byte string of %d past the end", n)
		return nil
	}
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b
}

// pos reads a position written in format f (the commit time from format 3
// on).
func (d *decoder) pos(f byte) Position {
	p := Position{Seq: int64(d.uvarint()), GNO: int64(d.uvarint()), LastCommitted: int64(d.uvarint())}
	if f >= 3 {
		p.CommitTime = int64(d.uvarint())
	}
	return p
}

func (d *decoder) finish() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	return d.err
}

// TxnSize is the size of t's encoding (AppendTxn) with the widest
// position (each of its four numbers 10 bytes): at least the size of the
// record t makes at any position, at most 36 bytes more. A group member
// checks a transaction against group_replication_transaction_size_limit
// with it before the transaction is numbered.
func TxnSize(t *Txn) int {
	uv := func(v uint64) int {
		n := 1
		for v >= 0x80 {
			v >>= 7
			n++
		}
		return n
	}
	bs := func(b []byte) int { return uv(uint64(len(b))) + len(b) }
	n := 2 + 4*binary.MaxVarintLen64 + 1 + uv(uint64(len(t.Changes)))
	for i := range t.Changes {
		c := &t.Changes[i]
		n += 1 + uv(c.Table) + uv(c.Version) + bs(c.PK)
		if c.Op != OpInsert && !t.Minimal {
			n += bs(c.Before)
		}
		if c.Op != OpDelete {
			n += bs(c.After)
		}
	}
	n += uv(uint64(len(t.Writeset))) + 8*len(t.Writeset)
	n += uv(uint64(len(t.AutoInc)))
	for _, a := range t.AutoInc {
		n += uv(a.Table) + uv(a.Next)
	}
	return n
}
