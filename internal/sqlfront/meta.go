package sqlfront

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/storage"
	"lockstep/internal/storage/rowenc"
)

// tableEntry is a table's slot in its database: the storage table and the
// current definition. DDL swaps in a new immutable tableMeta.
type tableEntry struct {
	store *storage.Table
	meta  atomic.Pointer[tableMeta]
	ddl   sync.Mutex    // serialises DDL on the table
	rowid atomic.Uint64 // hidden row ids for tables without a primary key
	temp  bool          // a session's TEMPORARY table (temptables.go)
}

func (te *tableEntry) load() *tableMeta { return te.meta.Load() }

// tableMeta is one immutable version of a table definition.
type tableMeta struct {
	name, db   string
	collation  sql.CollationID
	comment    string
	schema     sql.PrimaryKeySchema
	pk         keyCodec // primary key columns (empty: hidden row id)
	hidden     bool     // no declared primary key
	autoIncCol int      // ordinal of the AUTO_INCREMENT column, or -1
	indexes    []indexMeta
	fks        []foreignKey          // FOREIGN KEYs this table declares (fk.go)
	checks     []sql.CheckDefinition // CHECK constraints (checks.go)
	version    uint64                // storage table version this definition encodes for

	// sqlIndexes caches what GetIndexes returns for this definition: a
	// published tableMeta never changes, and the planner asks several times
	// per query. clone starts a fresh cache.
	sqlIndexes *indexCache
}

type indexCache struct {
	once sync.Once
	list []sql.Index
}

// indexList returns the definition's indexes as the planner sees them,
// built on first use.
func (m *tableMeta) indexList() []sql.Index {
	m.sqlIndexes.once.Do(func() {
		var out []sql.Index
		if !m.hidden {
			out = append(out, newIndex(m, "PRIMARY", storage.PrimaryIndex, true, m.pk, ""))
		}
		for i, im := range m.indexes {
			out = append(out, newIndex(m, im.name, i, im.unique, im.codec, im.comment))
		}
		m.sqlIndexes.list = out
	})
	return m.sqlIndexes.list
}

// indexMeta is a secondary index definition.
type indexMeta struct {
	name    string
	unique  bool
	cols    []sql.IndexColumn
	codec   keyCodec
	comment string
}

func (m *tableMeta) clone() *tableMeta {
	c := *m
	c.schema.Schema = append(sql.Schema(nil), m.schema.Schema...)
	c.schema.PkOrdinals = append([]int(nil), m.schema.PkOrdinals...)
	c.indexes = append([]indexMeta(nil), m.indexes...)
	c.fks = append([]foreignKey(nil), m.fks...)
	c.checks = append([]sql.CheckDefinition(nil), m.checks...)
	c.sqlIndexes = &indexCache{}
	return &c
}

func (m *tableMeta) setSchema(s sql.PrimaryKeySchema) {
	// A primary key on column prefixes keeps its prefixes (by column name)
	// through ALTERs that rebuild the definition.
	var prefixes []sql.IndexColumn
	for _, c := range m.pk.cols {
		if c.prefix > 0 && c.ord < len(m.schema.Schema) {
			prefixes = append(prefixes, sql.IndexColumn{Name: m.schema.Schema[c.ord].Name, Length: int64(c.prefix)})
		}
	}
	m.schema = s
	m.autoIncCol = -1
	for i, c := range s.Schema {
		if c.AutoIncrement {
			m.autoIncCol = i
		}
	}
	m.pk = keyCodec{}
	m.hidden = len(s.PkOrdinals) == 0
	for _, ord := range s.PkOrdinals {
		m.pk.add(newKeyColumn(ord, s.Schema[ord].Type, 0))
	}
	m.setPKPrefixes(prefixes)
}

// setPKPrefixes gives the primary key's columns the prefix lengths cols
// name (PRIMARY KEY (v(10))): uniqueness and the row's key are then the
// prefix, as in InnoDB.
func (m *tableMeta) setPKPrefixes(cols []sql.IndexColumn) {
	for _, ic := range cols {
		if ic.Length <= 0 {
			continue
		}
		for i, c := range m.pk.cols {
			if strings.EqualFold(m.schema.Schema[c.ord].Name, ic.Name) {
				nc := newKeyColumn(c.ord, c.typ, int(ic.Length))
				m.pk.cols[i], m.pk.enc[i] = nc, nc.enc
			}
		}
	}
}

// pkHasPrefix reports whether a primary key column is a prefix.
func (m *tableMeta) pkHasPrefix() bool {
	for _, c := range m.pk.cols {
		if c.prefix > 0 {
			return true
		}
	}
	return false
}

func (m *tableMeta) checkPK() error {
	for _, c := range m.pk.cols {
		if !keyable(c.typ) {
			return fmt.Errorf("lockstep cannot use a column of type %s in a key", c.typ.String())
		}
	}
	return nil
}

func (m *tableMeta) colIndex(name string) int {
	for i, c := range m.schema.Schema {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

func (m *tableMeta) newIndexMeta(def sql.IndexDef) (indexMeta, error) {
	if def.IsFullText() || def.IsSpatial() || def.IsVector() {
		return indexMeta{}, fmt.Errorf("lockstep does not support FULLTEXT, SPATIAL or VECTOR indexes")
	}
	im := indexMeta{name: def.Name, unique: def.IsUnique(), cols: def.Columns, comment: def.Comment}
	for _, c := range def.Columns {
		ord := m.colIndex(c.Name)
		if ord < 0 {
			return indexMeta{}, sql.ErrKeyColumnDoesNotExist.New(c.Name)
		}
		typ := m.schema.Schema[ord].Type
		if !keyable(typ) {
			return indexMeta{}, fmt.Errorf("lockstep cannot index column %s of type %s", c.Name, typ.String())
		}
		im.codec.add(newKeyColumn(ord, typ, int(c.Length)))
	}
	return im, nil
}

func (m *tableMeta) indexByName(name string) int {
	for i, ix := range m.indexes {
		if strings.EqualFold(ix.name, name) {
			return i
		}
	}
	return -1
}

// pkOf encodes the primary key of row. Tables without a declared primary
// key use a hidden row id (a new one when newRowID is set).
func (m *tableMeta) pkOf(te *tableEntry, row sql.Row, newRowID bool) ([]byte, error) {
	if !m.hidden {
		k, _, err := m.pk.encode(nil, row)
		return k, err
	}
	if !newRowID {
		return nil, nil
	}
	return appendIntKey(nil, int64(te.rowid.Add(1))), nil
}

// contentIndex is the storage index number of the hidden index over whole
// rows that tables without a primary key use to find a row by its values.
func (m *tableMeta) contentIndex() int { return len(m.indexes) }

// contentKey is a row's key in the hidden content index.
func contentKey(enc []byte) []byte { return rowenc.ContentKey(enc) }
