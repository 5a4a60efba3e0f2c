package storage

import (
	"errors"
	"fmt"

	"lockstep/internal/storage/rowenc"
)

// keyer computes one key of a table from an encoded row: a secondary
// index's key, or the primary key. It is compiled from the table's
// descriptor when the table is created or its definition changes.
type keyer struct {
	cols    []rowenc.KeyColumn
	ncols   int  // leading columns to decode (highest ordinal + 1)
	content bool // the hidden content index: the key is the whole row
}

func newKeyer(d *TableDesc, parts []KeyPart, content bool) keyer {
	k := keyer{cols: d.KeyColumns(parts), content: content}
	for _, p := range parts {
		k.ncols = max(k.ncols, p.Column+1)
	}
	return k
}

// key returns row's key; hasNull reports a NULL in a key column (such keys
// never conflict in a unique index).
func (k *keyer) key(row []byte) (key []byte, hasNull bool, err error) {
	if k.content {
		return rowenc.ContentKey(row), false, nil
	}
	vals, err := rowenc.DecodeRow(row, k.ncols)
	if err != nil {
		return nil, false, err
	}
	return rowenc.AppendKey(nil, k.cols, vals)
}

// ErrNoPrimaryKey is returned by PrimaryKeyOf for a table without a
// declared primary key: its rows are keyed by hidden row ids, which are not
// in the row.
var ErrNoPrimaryKey = errors.New("storage: the table has no declared primary key")

// PrimaryKeyOf computes the primary key of an encoded row from the table's
// descriptor.
func (t *Table) PrimaryKeyOf(row []byte) ([]byte, error) {
	t.mu.RLock()
	k := t.pkKey
	t.mu.RUnlock()
	if len(k.cols) == 0 {
		return nil, ErrNoPrimaryKey
	}
	key, _, err := k.key(row)
	if err != nil {
		return nil, fmt.Errorf("storage: primary key of a row of %s: %w", t.name, err)
	}
	return key, nil
}

// Desc returns a copy of the table's current descriptor.
func (t *Table) Desc() *TableDesc {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.descLocked()
}

// descLocked builds the descriptor from the table's definition. Caller
// holds t.mu.
func (t *Table) descLocked() *TableDesc {
	d := &TableDesc{
		Columns:    append([]ColumnDesc(nil), t.cols...),
		PrimaryKey: append([]KeyPart(nil), t.pkParts...),
		Indexes:    make([]IndexDesc, len(t.secs)),
	}
	for i, s := range t.secs {
		ix := s.ix
		ix.Parts = append([]KeyPart(nil), ix.Parts...)
		d.Indexes[i] = ix
	}
	return d
}

// setDesc installs a validated descriptor's columns, primary key and (new,
// empty) secondary indexes. Caller holds t.mu for writing or owns t.
func (t *Table) setDesc(d *TableDesc) {
	d = d.Clone()
	t.cols, t.pkParts = d.Columns, d.PrimaryKey
	t.pkKey = newKeyer(d, d.PrimaryKey, false)
	secs := make([]*secIndex, len(d.Indexes)) // a new slice: never alias the old one
	for i := range d.Indexes {
		secs[i] = t.newSecIndex(d, d.Indexes[i])
	}
	t.secs = secs
}

// newSecIndex makes an empty secondary index of t with the next index id.
// Caller holds t.mu for writing or owns t.
func (t *Table) newSecIndex(d *TableDesc, ix IndexDesc) *secIndex {
	id := t.nextIdx
	t.nextIdx++
	return &secIndex{ix: ix, keyer: newKeyer(d, ix.Parts, ix.Content), tree: t.newSecTree(), id: id}
}

// IndexKey computes secondary index i's key of an encoded row from the
// descriptor alone, as a tool or an applier without a Table does (tables
// keep their keys compiled; this compiles on every call).
func (d *TableDesc) IndexKey(i int, row []byte) (key []byte, hasNull bool, err error) {
	if err := d.Validate(); err != nil {
		return nil, false, err
	}
	if i < 0 || i >= len(d.Indexes) {
		return nil, false, fmt.Errorf("storage: the descriptor has no index %d", i)
	}
	k := newKeyer(d, d.Indexes[i].Parts, d.Indexes[i].Content)
	return k.key(row)
}

// PrimaryKeyOf computes the primary key of an encoded row from the
// descriptor alone (ErrNoPrimaryKey for a table keyed by hidden row ids).
func (d *TableDesc) PrimaryKeyOf(row []byte) ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if len(d.PrimaryKey) == 0 {
		return nil, ErrNoPrimaryKey
	}
	k := newKeyer(d, d.PrimaryKey, false)
	key, _, err := k.key(row)
	return key, err
}
