package sqlfront

import (
	"fmt"
	"io"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// Table is the sql.Table for one table definition. It is created per query
// (GetTableInsensitive) and holds the definition current at that time.
type Table struct {
	db    *Database
	entry *tableEntry
	meta  *tableMeta
	// filled is set once AddColumn has filled the new column of every
	// existing row (ddl.go): the UPDATE pass go-mysql-server then runs
	// over the table to apply defaults must change nothing.
	filled bool
	// exact: this is the table an UPDATE writes through; its Schema
	// compares strings by bytes (collation_plan.go).
	exact bool
}

var (
	_ sql.Table                 = (*Table)(nil)
	_ sql.IndexAddressableTable = (*Table)(nil)
	_ sql.InsertableTable       = (*Table)(nil)
	_ sql.UpdatableTable        = (*Table)(nil)
	_ sql.DeletableTable        = (*Table)(nil)
	_ sql.ReplaceableTable      = (*Table)(nil)
	_ sql.TruncateableTable     = (*Table)(nil)
	_ sql.AutoIncrementTable    = (*Table)(nil)
	_ sql.AlterableTable        = (*Table)(nil)
	_ sql.IndexAlterableTable   = (*Table)(nil)
	_ sql.PrimaryKeyTable       = (*Table)(nil)
	_ sql.StatisticsTable       = (*Table)(nil)
	_ sql.CommentedTable        = (*Table)(nil)
)

// IsTemporary implements sql.TemporaryTable (temptables.go).
func (t *Table) IsTemporary() bool { return t.entry.temp }

func (t *Table) Name() string   { return t.meta.name }
func (t *Table) String() string { return t.meta.name }
func (t *Table) Schema() sql.Schema {
	if t.exact {
		return t.meta.exactSchema() // an UPDATE's target (collation_plan.go)
	}
	return t.meta.schema.Schema
}
func (t *Table) Collation() sql.CollationID             { return t.meta.collation }
func (t *Table) Comment() string                        { return t.meta.comment }
func (t *Table) PrimaryKeySchema() sql.PrimaryKeySchema { return t.meta.schema }

func (t *Table) DataLength(ctx *sql.Context) (uint64, error) {
	return uint64(t.entry.store.ApproxRows()) * 200, nil
}

func (t *Table) RowCount(ctx *sql.Context) (uint64, bool, error) {
	n := t.entry.store.ApproxRows()
	if n < 0 {
		n = 0
	}
	return uint64(n), false, nil
}

// partition is the single partition of a table, optionally restricted to an
// index lookup.
type partition struct {
	lookup *sql.IndexLookup
}

func (p *partition) Key() []byte { return []byte("p") }

type onePartition struct {
	p    *partition
	done bool
}

func (it *onePartition) Next(*sql.Context) (sql.Partition, error) {
	if it.done {
		return nil, io.EOF
	}
	it.done = true
	return it.p, nil
}
func (it *onePartition) Close(*sql.Context) error { return nil }

func (t *Table) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return &onePartition{p: &partition{}}, nil
}

func (t *Table) session(ctx *sql.Context) (*Session, error) {
	s, ok := ctx.Session.(*Session)
	if !ok {
		return nil, fmt.Errorf("lockstep: session of type %T cannot use lockstep tables", ctx.Session)
	}
	return s, nil
}

func (t *Table) PartitionRows(ctx *sql.Context, p sql.Partition) (sql.RowIter, error) {
	return t.partitionRows(ctx, p)
}

func (t *Table) partitionRows(ctx *sql.Context, p sql.Partition) (*rowIter, error) {
	s, err := t.session(ctx)
	if err != nil {
		return nil, err
	}
	it := &rowIter{s: s, t: t, n: len(t.meta.schema.Schema), idx: storage.PrimaryIndex}
	part, _ := p.(*partition)
	if part == nil || part.lookup == nil {
		it.ranges = []storage.Range{{}}
		return it, nil
	}
	ix, ok := part.lookup.Index.(*index)
	if !ok {
		return nil, fmt.Errorf("lockstep: foreign index %T", part.lookup.Index)
	}
	ranges, ok := part.lookup.Ranges.(sql.MySQLRangeCollection)
	if !ok {
		return nil, fmt.Errorf("lockstep: unsupported range type %T", part.lookup.Ranges)
	}
	it.idx, it.reverse = ix.pos, part.lookup.IsReverse
	for _, r := range ranges {
		if br, empty := ix.byteRange(ctx, r); !empty {
			it.ranges = append(it.ranges, br)
		}
	}
	it.ranges = mergeRanges(it.ranges)
	if it.reverse {
		for i, j := 0, len(it.ranges)-1; i < j; i, j = i+1, j-1 {
			it.ranges[i], it.ranges[j] = it.ranges[j], it.ranges[i]
		}
	}
	return it, nil
}

// rowIter reads the rows of a list of key ranges of one index. Cursors open
// lazily, at the first Next, when the statement's lock intent is known
// (UPDATE and DELETE declare it after building their child iterators).
type rowIter struct {
	s       *Session
	t       *Table
	n       int
	idx     int
	reverse bool
	ranges  []storage.Range
	cur     *storage.Cursor
	// fk: a foreign key check or action reads (fk.go): share-locking
	// current reads that see the statement's own changes, waiting for
	// locks, whatever the statement's own intent.
	fk bool
	tx *storage.Tx
}

func (it *rowIter) Next(ctx *sql.Context) (sql.Row, error) {
	for {
		if it.cur == nil {
			if len(it.ranges) == 0 {
				return nil, io.EOF
			}
			tx := it.s.storageTx(ctx)
			it.tx = tx
			if it.fk {
				it.cur = tx.Cursor(ctx, it.t.entry.store, it.idx, it.ranges[0], it.reverse, txn.LockS)
			} else {
				in := it.s.lockIntent(ctx)
				tx.ReadPolicy = in.policy
				it.cur = tx.Cursor(ctx, it.t.entry.store, it.idx, it.ranges[0], it.reverse, in.mode)
			}
			it.ranges = it.ranges[1:]
		}
		row, ok, err := it.next()
		if err != nil {
			return nil, it.s.handleTxError(ctx, err)
		}
		if !ok {
			it.cur = nil
			continue
		}
		return decodeRow(row, it.n)
	}
}

// next reads the open cursor's next row.
func (it *rowIter) next() (row []byte, ok bool, err error) {
	if !it.fk {
		_, row, ok, err = it.cur.Next()
		return row, ok, err
	}
	tx := it.tx
	policy := tx.ReadPolicy
	tx.ReadPolicy = storage.WaitLocked
	err = tx.Locate(func() error {
		var err error
		_, row, ok, err = it.cur.Next()
		return err
	})
	tx.ReadPolicy = policy
	return row, ok, err
}

func (it *rowIter) Close(*sql.Context) error {
	if it.cur != nil {
		it.cur.Close()
		it.cur = nil
	}
	return nil
}

// --- indexes ---------------------------------------------------------------

func (t *Table) GetIndexes(ctx *sql.Context) ([]sql.Index, error) {
	return t.meta.indexList(), nil
}

func (t *Table) IndexedAccess(ctx *sql.Context, lookup sql.IndexLookup) sql.IndexedTable {
	return &indexedTable{Table: t}
}

// PreciseMatch: index ranges are turned into byte ranges that may be wider
// than the predicate (inexact bound conversions), so filters stay.
func (t *Table) PreciseMatch() bool { return false }

// indexedTable is the table as an index lookup's target; the lookup itself
// arrives with LookupPartitions.
type indexedTable struct {
	*Table
}

func (t *indexedTable) LookupPartitions(ctx *sql.Context, lookup sql.IndexLookup) (sql.PartitionIter, error) {
	l := lookup
	return &onePartition{p: &partition{lookup: &l}}, nil
}

// --- writes ----------------------------------------------------------------

func (t *Table) Inserter(ctx *sql.Context) sql.RowInserter { return t.editor(ctx) }
func (t *Table) Replacer(ctx *sql.Context) sql.RowReplacer { return t.editor(ctx) }

func (t *Table) Updater(ctx *sql.Context) sql.RowUpdater {
	if t.filled {
		return filledUpdater{}
	}
	return t.lockingEditor(ctx)
}

// filledUpdater is the updater of go-mysql-server's pass that applies a new
// column's default to existing rows after ADD COLUMN. AddColumn has already
// written every row with the right value; the pass would write them again
// with the default expression evaluated against the wrong columns (its
// column indexes are the old table's, the rows it passes are the new
// table's: an ADD COLUMN ... DEFAULT (expr) FIRST or AFTER read a
// neighbouring column). It keeps nothing.
type filledUpdater struct{}

func (filledUpdater) StatementBegin(*sql.Context)                 {}
func (filledUpdater) DiscardChanges(*sql.Context, error) error    { return nil }
func (filledUpdater) StatementComplete(*sql.Context) error        { return nil }
func (filledUpdater) Update(*sql.Context, sql.Row, sql.Row) error { return nil }
func (filledUpdater) Close(*sql.Context) error                    { return nil }
func (t *Table) Deleter(ctx *sql.Context) sql.RowDeleter          { return t.lockingEditor(ctx) }

// lockingEditor makes the reads of an UPDATE or DELETE current reads that
// lock each row (InnoDB semantics), so concurrent updates never lose writes,
// until the editor is closed at the end of the statement.
func (t *Table) lockingEditor(ctx *sql.Context) *editor {
	e := t.editor(ctx)
	if e.s != nil {
		e.s.beginLockingWrite(ctx)
		e.locking = true
	}
	return e
}

func (t *Table) editor(ctx *sql.Context) *editor {
	s, _ := t.session(ctx)
	return &editor{t: t, s: s}
}

func (t *Table) Truncate(ctx *sql.Context) (int, error) {
	if q := ctx.Query(); q != "" && !isDDLText(q) {
		// go-mysql-server turns DELETE FROM t without a WHERE into a
		// truncate. In MySQL that DELETE is an ordinary transactional
		// statement (it can be rolled back, and it is logged as row
		// changes), so it is run as one. A statement without its text is
		// a TRUNCATE TABLE replayed from the log (ReplayDDL runs the
		// logged text in a context that does not carry it; a DELETE is
		// never replayed as SQL): run as a DELETE, it left the definition
		// version behind, and the records after it failed to apply.
		return t.deleteAll(ctx)
	}
	if err := t.logDDL(ctx); err != nil {
		return 0, err
	}
	t.entry.ddl.Lock()
	defer t.entry.ddl.Unlock()
	n := t.entry.store.Truncate()
	t.refreshVersion()
	return n, nil
}

// deleteAll deletes every row in the session's transaction, locking each.
func (t *Table) deleteAll(ctx *sql.Context) (int, error) {
	s, err := t.session(ctx)
	if err != nil {
		return 0, err
	}
	if s.readOnly && !t.entry.temp {
		return 0, sql.ErrReadOnlyTransaction.New()
	}
	if s.fe.readOnlyActive() && !t.entry.temp { // readonly.go
		if err := s.fe.readOnlyError(ctx); err != nil {
			return 0, err
		}
	}
	tx := s.storageTx(ctx)
	mark := tx.Savepoint()
	store, ver := t.entry.store, t.meta.version
	var pks [][]byte
	err = tx.Locate(func() error {
		return tx.Scan(ctx, store, storage.PrimaryIndex, storage.Range{}, false, txn.LockX, func(pk, _ []byte) (bool, error) {
			pks = append(pks, append([]byte(nil), pk...))
			return true, nil
		})
	})
	for i := 0; err == nil && i < len(pks); i++ {
		err = tx.Delete(ctx, store, ver, pks[i])
	}
	if err != nil {
		tx.RollbackTo(mark)
		return 0, s.handleTxError(ctx, err)
	}
	return len(pks), nil
}

// refreshVersion republishes the definition with the storage version.
func (t *Table) refreshVersion() { t.publish(t.entry.load().clone()) }

// publish makes m, stamped with the storage table's current version, the
// table's definition (after a DDL change rewrote or re-versioned it).
func (t *Table) publish(m *tableMeta) {
	m.version = t.entry.store.Version()
	t.entry.meta.Store(m)
	t.meta = m
}

// --- AUTO_INCREMENT --------------------------------------------------------

func (t *Table) PeekNextAutoIncrementValue(ctx *sql.Context) (uint64, error) {
	return t.entry.store.PeekAutoIncrement(), nil
}

func (t *Table) GetNextAutoIncrementValue(ctx *sql.Context, insertVal interface{}) (uint64, error) {
	var explicit uint64
	if insertVal != nil {
		col := t.meta.schema.Schema[t.meta.autoIncCol]
		v, _, err := col.Type.Convert(ctx, insertVal)
		// A negative value generates no id (explicit stays 0).
		if neg, mag, _, ok := intValue(v); err == nil && ok && !neg {
			explicit = mag
		}
	}
	// A refused write spends no value: read_only and a group secondary are
	// checked before one is taken, as MySQL refuses the statement before
	// it runs (readonly.go; the editor checks again before each row).
	if s, ok := ctx.Session.(*Session); ok && s.fe.readOnlyActive() && !t.entry.temp {
		if err := s.fe.readOnlyError(ctx); err != nil {
			return 0, err
		}
	}
	v := t.entry.store.NextAutoIncrement(explicit)
	if s, ok := ctx.Session.(*Session); ok && explicit == 0 {
		s.autoInc.noteGenerated(v)
	}
	return v, nil
}

func (t *Table) AutoIncrementSetter(ctx *sql.Context) sql.AutoIncrementSetter {
	return &autoIncSetter{t: t}
}

type autoIncSetter struct{ t *Table }

func (a *autoIncSetter) SetAutoIncrementValue(ctx *sql.Context, v uint64) error {
	// ALTER TABLE ... AUTO_INCREMENT = n is DDL and logged as such; inserts
	// of explicit values also move the counter, and their rows are logged.
	if isDDLText(ctx.Query()) {
		if err := a.t.logDDL(ctx); err != nil {
			return err
		}
	}
	a.t.entry.store.SetAutoIncrement(v)
	return nil
}
func (a *autoIncSetter) AcquireAutoIncrementLock(ctx *sql.Context) (func(), error) {
	return func() {}, nil
}
func (a *autoIncSetter) Close(*sql.Context) error { return nil }

// formatKey renders key column values the way MySQL prints a duplicate.
// duplicateEntry is MySQL's 1062 "Duplicate entry 'k' for key 't.name'"
// of index name (codec its key) of table m, the entry formatted from row
// (none when row is nil); existing is the row that holds the key.
func duplicateEntry(m *tableMeta, codec keyCodec, name string, row, existing sql.Row) error {
	key := ""
	if row != nil {
		key = formatKey(row, codec)
	}
	return sql.NewUniqueKeyErr("Duplicate entry '"+key+"' for key '"+m.name+"."+name+"'", name == "PRIMARY", existing)
}

func formatKey(row sql.Row, codec keyCodec) string {
	parts := make([]string, len(codec.cols))
	for i, c := range codec.cols {
		v := row[c.ord]
		switch x := v.(type) {
		case nil:
			parts[i] = "NULL"
		case []byte:
			parts[i] = string(x)
		default:
			parts[i] = fmt.Sprint(x)
		}
		if c.prefix > 0 {
			// A prefix key's entry is the prefix (MySQL: "Duplicate entry 'abc'").
			if r := []rune(parts[i]); len(r) > c.prefix {
				parts[i] = string(r[:c.prefix])
			}
		}
	}
	return strings.Join(parts, "-")
}
