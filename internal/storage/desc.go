package storage

import (
	"errors"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/storage/rowenc"
)

// TableDesc is a table's schema descriptor: what storage needs to know of
// a table definition to decode its rows and compute its keys without the
// SQL layer — recovery, a replica's applier, checkpoint loading. It is
// plain data with a versioned binary encoding (Marshal, UnmarshalTableDesc).
//
// Rows are rowenc rows of len(Columns) values; keys are rowenc keys of the
// parts named here. The SQL layer builds the descriptor from its schema,
// and storage derives every secondary index key from it.
type TableDesc struct {
	Columns []ColumnDesc
	// PrimaryKey lists the primary key columns. Empty: the table has no
	// declared primary key and rows are keyed by a hidden row id the SQL
	// layer assigns (rowenc.AppendIntKey of the id).
	PrimaryKey []KeyPart
	// Indexes are the secondary indexes in index-number order.
	Indexes []IndexDesc
}

// ColumnDesc describes one column.
type ColumnDesc struct {
	Name     string
	Kind     Kind
	Unsigned bool // integer kinds: UNSIGNED
	Nullable bool
	// Collation is the collation of a string column's values (key order,
	// PAD SPACE); 0 for columns whose values compare by bytes.
	Collation sql.CollationID
	// Type is the column's SQL type as text ("varchar(40)"), for people
	// and tools; keys and rows do not depend on it.
	Type string
}

// Kind is a column's kind of value. The numbers are part of the encoding:
// append new kinds, never renumber.
type Kind uint8

const (
	KindInvalid   Kind = iota
	KindInt            // TINYINT .. BIGINT, BOOLEAN (with Unsigned)
	KindFloat          // FLOAT
	KindDouble         // DOUBLE
	KindDecimal        // DECIMAL
	KindText           // CHAR, VARCHAR, TEXT (with Collation)
	KindBinary         // BINARY, VARBINARY, BLOB
	KindEnum           // ENUM (stored as its 1-based index)
	KindSet            // SET (stored as a bit set)
	KindBit            // BIT
	KindYear           // YEAR
	KindDate           // DATE
	KindDatetime       // DATETIME
	KindTimestamp      // TIMESTAMP
	KindTime           // TIME
	KindJSON           // JSON
	KindNull           // the NULL type (CREATE TABLE ... SELECT NULL): values are NULL
	kindEnd            // first unused number
)

var kindNames = [kindEnd]string{"invalid", "int", "float", "double", "decimal", "text", "binary", "enum", "set",
	"bit", "year", "date", "datetime", "timestamp", "time", "json", "null"}

func (k Kind) String() string {
	if k < kindEnd {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// KeyPart is one column of a key.
type KeyPart struct {
	Column int // ordinal in Columns
	Prefix int // prefix length in characters (0: the whole value)
}

// IndexDesc describes a secondary index.
type IndexDesc struct {
	Name   string
	Unique bool
	Parts  []KeyPart
	// Content marks the hidden index over whole rows that a table without
	// a primary key uses to find a row by its values: its key is
	// rowenc.ContentKey of the encoded row, and it has no Parts.
	Content bool
}

// Limits on descriptors, checked by Validate (and so by decoding).
const (
	MaxColumns   = 4096
	MaxIndexes   = 1024
	MaxKeyParts  = 64
	maxNameBytes = 1024
)

// ErrBadDesc is wrapped by every descriptor validation error.
var ErrBadDesc = errors.New("bad table descriptor")

// Validate checks that d describes a table storage can hold: known kinds
// and collations, key parts naming existing columns, a content index only
// on a table without a primary key and only as the last index. (A prefix
// on a column that is not a string is allowed and has no effect: prefixes
// cut string values only.)
func (d *TableDesc) Validate() error {
	if len(d.Columns) > MaxColumns {
		return fmt.Errorf("%w: %d columns", ErrBadDesc, len(d.Columns))
	}
	for i, c := range d.Columns {
		if c.Kind == KindInvalid || c.Kind >= kindEnd {
			return fmt.Errorf("%w: column %d (%s): unknown kind %d", ErrBadDesc, i, c.Name, uint8(c.Kind))
		}
		if !rowenc.ValidCollation(c.Collation) {
			return fmt.Errorf("%w: column %d (%s): unknown collation id %d", ErrBadDesc, i, c.Name, uint16(c.Collation))
		}
		if len(c.Name) > maxNameBytes || len(c.Type) > maxNameBytes {
			return fmt.Errorf("%w: column %d: name or type too long", ErrBadDesc, i)
		}
	}
	if err := d.validateParts("primary key", d.PrimaryKey, false); err != nil {
		return err
	}
	if len(d.Indexes) > MaxIndexes {
		return fmt.Errorf("%w: %d indexes", ErrBadDesc, len(d.Indexes))
	}
	for i, ix := range d.Indexes {
		if len(ix.Name) > maxNameBytes {
			return fmt.Errorf("%w: index %d: name too long", ErrBadDesc, i)
		}
		if ix.Content {
			if len(ix.Parts) != 0 || ix.Unique || len(d.PrimaryKey) != 0 || i != len(d.Indexes)-1 {
				return fmt.Errorf("%w: index %d (%s): a content index has no parts, is not unique, is last, and only on a table without a primary key",
					ErrBadDesc, i, ix.Name)
			}
			continue
		}
		if err := d.validateParts("index "+ix.Name, ix.Parts, true); err != nil {
			return err
		}
	}
	return nil
}

func (d *TableDesc) validateParts(what string, parts []KeyPart, needOne bool) error {
	if len(parts) > MaxKeyParts || (needOne && len(parts) == 0) {
		return fmt.Errorf("%w: %s has %d key parts", ErrBadDesc, what, len(parts))
	}
	for _, p := range parts {
		if p.Column < 0 || p.Column >= len(d.Columns) {
			return fmt.Errorf("%w: %s names column %d of %d", ErrBadDesc, what, p.Column, len(d.Columns))
		}
		if p.Prefix < 0 || p.Prefix > 1<<24 {
			return fmt.Errorf("%w: %s: prefix length %d", ErrBadDesc, what, p.Prefix)
		}
	}
	return nil
}

// KeyColumns returns the key encoders of parts (of a validated descriptor).
func (d *TableDesc) KeyColumns(parts []KeyPart) []rowenc.KeyColumn {
	out := make([]rowenc.KeyColumn, len(parts))
	for i, p := range parts {
		out[i] = rowenc.NewKeyColumn(p.Column, d.Columns[p.Column].Collation, p.Prefix)
	}
	return out
}

// Clone returns a deep copy of d.
func (d *TableDesc) Clone() *TableDesc {
	c := &TableDesc{
		Columns:    append([]ColumnDesc(nil), d.Columns...),
		PrimaryKey: append([]KeyPart(nil), d.PrimaryKey...),
		Indexes:    make([]IndexDesc, len(d.Indexes)),
	}
	for i, ix := range d.Indexes {
		ix.Parts = append([]KeyPart(nil), ix.Parts...)
		c.Indexes[i] = ix
	}
	return c
}

// Equal reports whether d and o describe the same table.
func (d *TableDesc) Equal(o *TableDesc) bool {
	if len(d.Columns) != len(o.Columns) || !partsEqual(d.PrimaryKey, o.PrimaryKey) || len(d.Indexes) != len(o.Indexes) {
		return false
	}
	for i := range d.Columns {
		if d.Columns[i] != o.Columns[i] {
			return false
		}
	}
	for i, a := range d.Indexes {
		b := o.Indexes[i]
		if a.Name != b.Name || a.Unique != b.Unique || a.Content != b.Content || !partsEqual(a.Parts, b.Parts) {
			return false
		}
	}
	return true
}

func partsEqual(a, b []KeyPart) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// SameKeys reports whether d and o compute the same keys from the same
// rows: the same number of columns with the same collations, and the same
// primary key and index parts, uniqueness and content flags. Names, kinds
// and type texts do not take part.
func (d *TableDesc) SameKeys(o *TableDesc) bool {
	if len(d.Columns) != len(o.Columns) || !partsEqual(d.PrimaryKey, o.PrimaryKey) || len(d.Indexes) != len(o.Indexes) {
		return false
	}
	for i := range d.Columns {
		if d.Columns[i].Collation != o.Columns[i].Collation {
			return false
		}
	}
	for i, a := range d.Indexes {
		b := o.Indexes[i]
		if a.Unique != b.Unique || a.Content != b.Content || !partsEqual(a.Parts, b.Parts) {
			return false
		}
	}
	return true
}
