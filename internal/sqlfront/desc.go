package sqlfront

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"

	"lockstep/internal/storage"
)

// contentIndexName names the hidden index over whole rows of a table
// without a primary key.
const contentIndexName = "lockstep_row_content"

// tableDesc builds the storage descriptor of the definition: storage
// computes every index key from it.
func (m *tableMeta) tableDesc() (*storage.TableDesc, error) {
	d := &storage.TableDesc{Columns: make([]storage.ColumnDesc, len(m.schema.Schema)), PrimaryKey: m.pk.parts()}
	for i, c := range m.schema.Schema {
		kind, err := columnKind(c.Type)
		if err != nil {
			return nil, fmt.Errorf("describing column %s of %s: %w", c.Name, m.name, err)
		}
		d.Columns[i] = storage.ColumnDesc{
			Name:      c.Name,
			Kind:      kind,
			Unsigned:  sqltypes.IsUnsigned(c.Type.Type()),
			Nullable:  c.Nullable,
			Collation: keyCollation(c.Type),
			Type:      c.Type.String(),
		}
	}
	for _, im := range m.indexes {
		d.Indexes = append(d.Indexes, storage.IndexDesc{Name: im.name, Unique: im.unique, Parts: im.codec.parts()})
	}
	if m.hidden {
		d.Indexes = append(d.Indexes, storage.IndexDesc{Name: contentIndexName, Content: true})
	}
	return d, nil
}

// columnKind maps a column type to its storage kind.
func columnKind(typ sql.Type) (storage.Kind, error) {
	switch t := typ.Type(); t {
	case sqltypes.Int8, sqltypes.Int16, sqltypes.Int24, sqltypes.Int32, sqltypes.Int64,
		sqltypes.Uint8, sqltypes.Uint16, sqltypes.Uint24, sqltypes.Uint32, sqltypes.Uint64:
		return storage.KindInt, nil
	case sqltypes.Float32:
		return storage.KindFloat, nil
	case sqltypes.Float64:
		return storage.KindDouble, nil
	case sqltypes.Decimal:
		return storage.KindDecimal, nil
	case sqltypes.Char, sqltypes.VarChar, sqltypes.Text:
		return storage.KindText, nil
	case sqltypes.Binary, sqltypes.VarBinary, sqltypes.Blob:
		return storage.KindBinary, nil
	case sqltypes.Enum:
		return storage.KindEnum, nil
	case sqltypes.Set:
		return storage.KindSet, nil
	case sqltypes.Bit:
		return storage.KindBit, nil
	case sqltypes.Year:
		return storage.KindYear, nil
	case sqltypes.Date:
		return storage.KindDate, nil
	case sqltypes.Datetime:
		return storage.KindDatetime, nil
	case sqltypes.Timestamp:
		return storage.KindTimestamp, nil
	case sqltypes.Time:
		return storage.KindTime, nil
	case sqltypes.TypeJSON:
		return storage.KindJSON, nil
	case sqltypes.Null:
		return storage.KindNull, nil
	default:
		return storage.KindInvalid, fmt.Errorf("lockstep cannot store values of type %s (%v)", typ.String(), t)
	}
}
