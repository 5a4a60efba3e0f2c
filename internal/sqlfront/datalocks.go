package sqlfront

import (
	"fmt"
	"sort"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// performance_schema.data_locks and data_lock_waits: the row lock table
// (internal/txn) as InnoDB shows its locks (docs/storage.md, "Seeing
// locks"). lockstep keeps a next-key lock as two requests, the record's
// and its gap's; a transaction's granted pair on one entry shows as the
// one row InnoDB shows (mode 'X' or 'S'), a lone record lock as
// 'X,REC_NOT_GAP', a lone gap lock as 'X,GAP', the supremum's gap as
// 'X' (InnoDB keeps no gap bit on the supremum). lockstep has no
// table-level intention locks: one IX (or IS, when every lock of the
// transaction in the table is shared) TABLE row per transaction and table
// is made up, as InnoDB holds one there.

const (
	dataLocksTable     = "data_locks"
	dataLockWaitsTable = "data_lock_waits"
)

// lockRow is one row of data_locks before it becomes a sql.Row.
type lockRow struct {
	lockID      string
	trx, thread uint64
	schema      string
	table       string
	index       any // NULL for a TABLE lock
	lockType    string
	mode        string
	waiting     bool
	data        any // NULL unless a RECORD lock with its entry still there
}

func (r *lockRow) instance() uint64 { return xxhash.Sum64String(r.lockID) >> 1 }

// lockView is one read of the lock table: data_locks' rows and the
// (waiter, blocker) row pairs of data_lock_waits.
type lockView struct {
	rows  []lockRow
	waits [][2]int
}

// tableNames maps the storage tables of the catalog to (schema, name).
func (fe *Frontend) tableNames() map[*storage.Table][2]string {
	out := map[*storage.Table][2]string{}
	for _, d := range fe.provider.databases() {
		d.mu.RLock()
		for _, te := range d.tables {
			if m := te.load(); m != nil {
				out[te.store] = [2]string{d.name, m.name}
			}
		}
		d.mu.RUnlock()
	}
	return out
}

// readLocks copies the lock table and names its keys.
func (fe *Frontend) readLocks() *lockView {
	snap := fe.store.Locks.Snapshot()
	v := &lockView{}
	if len(snap.Locks) == 0 {
		return v
	}
	names := fe.tableNames()
	infos := make([]storage.LockKeyInfo, len(snap.Locks))
	known := make([]bool, len(snap.Locks))
	byKey := map[string]int{}
	for i, l := range snap.Locks {
		if j, ok := byKey[l.Key]; ok {
			infos[i], known[i] = infos[j], known[j]
			continue
		}
		infos[i], known[i] = fe.store.DescribeLockKey(l.Key)
		byKey[l.Key] = i
	}

	// A granted record lock and the same transaction's granted gap lock
	// on the same entry are one next-key row.
	type entryKey struct {
		trx   uint64
		entry string
	}
	type pair struct{ rec, gap int } // indexes into snap.Locks, -1: none
	pairs := map[entryKey]*pair{}
	order := []entryKey{}
	entryOf := func(i int) entryKey {
		return entryKey{snap.Locks[i].Trx, infos[i].Entry}
	}
	for i, l := range snap.Locks {
		if !known[i] || l.Waiting || infos[i].Supremum {
			continue
		}
		k := entryOf(i)
		p := pairs[k]
		if p == nil {
			p = &pair{-1, -1}
			pairs[k] = p
			order = append(order, k)
		}
		if l.Mode >= txn.LockGapS {
			p.gap = i
		} else {
			p.rec = i
		}
	}
	rowOf := make([]int, len(snap.Locks)) // snap lock → data_locks row
	for i := range rowOf {
		rowOf[i] = -1
	}
	type tableKey struct {
		trx uint64
		t   *storage.Table
	}
	tables := map[tableKey]*lockRow{}
	var tableOrder []tableKey
	add := func(i int, mode, suffix string) int {
		l, in := snap.Locks[i], infos[i]
		nm, ok := names[in.Table]
		if !ok {
			nm = [2]string{"", in.Table.Name()} // a session's temporary table
		}
		r := lockRow{
			lockID:   fmt.Sprintf("%d:%d:%d:%016x%s", l.Trx, in.Table.ID(), in.Index+1, xxhash.Sum64String(in.Entry), suffix),
			trx:      l.Trx,
			thread:   l.Thread,
			schema:   nm[0],
			table:    nm[1],
			index:    in.IndexName,
			lockType: "RECORD",
			mode:     mode,
			waiting:  l.Waiting,
		}
		if in.HasData {
			r.data = in.Data
		}
		v.rows = append(v.rows, r)
		tk := tableKey{l.Trx, in.Table}
		tr := tables[tk]
		if tr == nil {
			tr = &lockRow{
				lockID: fmt.Sprintf("%d:%d", l.Trx, in.Table.ID()), trx: l.Trx, thread: l.Thread,
				schema: nm[0], table: nm[1], lockType: "TABLE", mode: "IS",
			}
			tables[tk] = tr
			tableOrder = append(tableOrder, tk)
		}
		if l.Mode == txn.LockX || l.Mode == txn.LockGapX || l.Mode == txn.LockInsertIntention {
			tr.mode = "IX"
		}
		return len(v.rows) - 1
	}
	strength := func(m txn.LockMode) string {
		if m == txn.LockS || m == txn.LockGapS {
			return "S"
		}
		return "X"
	}
	for _, k := range order {
		p := pairs[k]
		switch {
		case p.rec >= 0 && p.gap >= 0 && strength(snap.Locks[p.rec].Mode) == strength(snap.Locks[p.gap].Mode):
			r := add(p.rec, strength(snap.Locks[p.rec].Mode), "")
			rowOf[p.rec], rowOf[p.gap] = r, r
		default:
			if p.rec >= 0 {
				rowOf[p.rec] = add(p.rec, strength(snap.Locks[p.rec].Mode)+",REC_NOT_GAP", ":REC")
			}
			if p.gap >= 0 {
				rowOf[p.gap] = add(p.gap, strength(snap.Locks[p.gap].Mode)+",GAP", ":GAP")
			}
		}
	}
	for i, l := range snap.Locks {
		if !known[i] || rowOf[i] >= 0 {
			continue
		}
		in := infos[i]
		var mode, suffix string
		switch {
		case l.Mode == txn.LockInsertIntention && in.Supremum:
			mode, suffix = "X,INSERT_INTENTION", ":II"
		case l.Mode == txn.LockInsertIntention:
			mode, suffix = "X,GAP,INSERT_INTENTION", ":II"
		case in.Supremum:
			mode, suffix = strength(l.Mode), ":SUP"
		case l.Waiting:
			// A waiting record lock completes a next-key lock when the
			// transaction holds the entry's gap already.
			mode = strength(l.Mode) + ",REC_NOT_GAP"
			if p := pairs[entryOf(i)]; p != nil && p.gap >= 0 {
				mode = strength(l.Mode)
			}
			suffix = ":W"
		default:
			continue
		}
		if l.Waiting {
			suffix += ":W"
		}
		rowOf[i] = add(i, mode, suffix)
	}
	for _, w := range snap.Waits {
		if a, b := rowOf[w.Waiter], rowOf[w.Blocker]; a >= 0 && b >= 0 {
			v.waits = append(v.waits, [2]int{a, b})
		}
	}
	// TABLE rows first for each transaction, as InnoDB lists them.
	sort.SliceStable(tableOrder, func(i, j int) bool { return tableOrder[i].trx < tableOrder[j].trx })
	shift := len(tableOrder)
	out := make([]lockRow, 0, len(v.rows)+shift)
	for _, tk := range tableOrder {
		out = append(out, *tables[tk])
	}
	out = append(out, v.rows...)
	v.rows = out
	for i := range v.waits {
		v.waits[i][0] += shift
		v.waits[i][1] += shift
	}
	return v
}

func nullable(v uint64) any {
	if v == 0 {
		return nil
	}
	return v
}

func (v *lockView) lockRows() []sql.Row {
	rows := make([]sql.Row, 0, len(v.rows))
	for i := range v.rows {
		r := &v.rows[i]
		status := "GRANTED"
		if r.waiting {
			status = "WAITING"
		}
		rows = append(rows, sql.Row{
			"INNODB", r.lockID, r.trx, nullable(r.thread), nil,
			r.schema, r.table, nil, nil, r.index, r.instance(),
			r.lockType, r.mode, status, r.data,
		})
	}
	return rows
}

func (v *lockView) waitRows() []sql.Row {
	rows := make([]sql.Row, 0, len(v.waits))
	for _, w := range v.waits {
		a, b := &v.rows[w[0]], &v.rows[w[1]]
		rows = append(rows, sql.Row{
			"INNODB",
			a.lockID, a.trx, nullable(a.thread), nil, a.instance(),
			b.lockID, b.trx, nullable(b.thread), nil, b.instance(),
		})
	}
	return rows
}

// psColumn builds a performance_schema column.
func psColumn(table, name string, typ sql.Type, nullable bool) *sql.Column {
	return &sql.Column{Name: name, Type: typ, Nullable: nullable, Source: table, DatabaseSource: perfSchemaName}
}

func psVarchar(n int64) sql.Type {
	return types.MustCreateString(sqltypes.VarChar, n, sql.Collation_utf8mb4_0900_ai_ci)
}

// dataLocksSchema is MySQL 8.0's definition of data_locks.
var dataLocksSchema = sync.OnceValue(func() sql.Schema {
	c := func(name string, typ sql.Type, null bool) *sql.Column {
		return psColumn(dataLocksTable, name, typ, null)
	}
	return sql.Schema{
		c("ENGINE", psVarchar(32), false),
		c("ENGINE_LOCK_ID", psVarchar(128), false),
		c("ENGINE_TRANSACTION_ID", types.Uint64, true),
		c("THREAD_ID", types.Uint64, true),
		c("EVENT_ID", types.Uint64, true),
		c("OBJECT_SCHEMA", psVarchar(64), true),
		c("OBJECT_NAME", psVarchar(64), true),
		c("PARTITION_NAME", psVarchar(64), true),
		c("SUBPARTITION_NAME", psVarchar(64), true),
		c("INDEX_NAME", psVarchar(64), true),
		c("OBJECT_INSTANCE_BEGIN", types.Uint64, false),
		c("LOCK_TYPE", psVarchar(32), false),
		c("LOCK_MODE", psVarchar(32), false),
		c("LOCK_STATUS", psVarchar(32), false),
		c("LOCK_DATA", psVarchar(8192), true),
	}
})

// dataLockWaitsSchema is MySQL 8.0's definition of data_lock_waits.
var dataLockWaitsSchema = sync.OnceValue(func() sql.Schema {
	c := func(name string, typ sql.Type, null bool) *sql.Column {
		return psColumn(dataLockWaitsTable, name, typ, null)
	}
	return sql.Schema{
		c("ENGINE", psVarchar(32), false),
		c("REQUESTING_ENGINE_LOCK_ID", psVarchar(128), false),
		c("REQUESTING_ENGINE_TRANSACTION_ID", types.Uint64, true),
		c("REQUESTING_THREAD_ID", types.Uint64, true),
		c("REQUESTING_EVENT_ID", types.Uint64, true),
		c("REQUESTING_OBJECT_INSTANCE_BEGIN", types.Uint64, false),
		c("BLOCKING_ENGINE_LOCK_ID", psVarchar(128), false),
		c("BLOCKING_ENGINE_TRANSACTION_ID", types.Uint64, true),
		c("BLOCKING_THREAD_ID", types.Uint64, true),
		c("BLOCKING_EVENT_ID", types.Uint64, true),
		c("BLOCKING_OBJECT_INSTANCE_BEGIN", types.Uint64, false),
	}
})

// psTable is a performance_schema table whose rows are made when it is
// scanned.
type psTable struct {
	name   string
	schema func() sql.Schema
	rows   func() []sql.Row
}

var _ sql.Table = (*psTable)(nil)

func (t *psTable) Name() string               { return t.name }
func (t *psTable) String() string             { return t.name }
func (t *psTable) Schema() sql.Schema         { return t.schema() }
func (t *psTable) Collation() sql.CollationID { return sql.Collation_utf8mb4_0900_ai_ci }
func (t *psTable) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return sql.PartitionsToPartitionIter(psPartition(t.name)), nil
}
func (t *psTable) PartitionRows(*sql.Context, sql.Partition) (sql.RowIter, error) {
	return sql.RowsToRowIter(t.rows()...), nil
}

type psPartition string

func (p psPartition) Key() []byte { return []byte(p) }

// psTables are performance_schema's tables other than
// replication_group_members, by lower-case name.
func (fe *Frontend) psTable(name string) *psTable {
	switch name {
	case dataLocksTable:
		return &psTable{name: dataLocksTable, schema: dataLocksSchema, rows: func() []sql.Row { return fe.readLocks().lockRows() }}
	case dataLockWaitsTable:
		return &psTable{name: dataLockWaitsTable, schema: dataLockWaitsSchema, rows: func() []sql.Row { return fe.readLocks().waitRows() }}
	case metadataLocksTable:
		return &psTable{name: metadataLocksTable, schema: metadataLocksSchema, rows: fe.metadataLockRows}
	}
	return nil
}

// beginTx starts the session's storage transaction at its isolation level,
// its locks shown as the connection's (THREAD_ID).
func (s *Session) beginTx() *storage.Tx {
	tx := s.fe.store.Begin(s.iso)
	tx.Trx().SetThread(uint64(s.connID))
	return tx
}
