package sqlfront

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// ALTER TABLE. Column changes rewrite every stored version in place (see
// storage.Table.Rewrite), so open transactions keep their snapshots and
// undo; the table version moves on and writes encoded for the old
// definition fail with ER_TABLE_DEF_CHANGED.

func (t *Table) AddColumn(ctx *sql.Context, column *sql.Column, order *sql.ColumnOrder) error {
	if err := t.logDDLChecked(ctx, func() error {
		if err := t.checkNewColumn(column, order); err != nil {
			return err
		}
		return t.checkReplayableFill(ctx, column) // ddlnondet.go
	}); err != nil {
		return err
	}
	if !storable(column.Type) {
		return fmt.Errorf("lockstep does not support columns of type %s yet", column.Type.String())
	}
	old := t.entry.load()
	col := *column
	col.Source = old.name
	if col.PrimaryKey {
		col.Nullable = false
	}
	pos := len(old.schema.Schema)
	if order != nil {
		if order.First {
			pos = 0
		} else if order.AfterColumn != "" {
			i := old.colIndex(order.AfterColumn)
			if i < 0 {
				return sql.ErrTableColumnNotFound.New(old.name, order.AfterColumn)
			}
			pos = i + 1
		}
	}
	sch := make(sql.Schema, 0, len(old.schema.Schema)+1)
	sch = append(sch, old.schema.Schema[:pos]...)
	sch = append(sch, &col)
	sch = append(sch, old.schema.Schema[pos:]...)
	pks := shiftOrdinals(old.schema.PkOrdinals, pos, +1)
	if col.PrimaryKey {
		pks = append(pks, pos)
	}
	newSchema := sql.NewPrimaryKeySchema(sch, pks...)
	conv := func(row sql.Row) (sql.Row, error) {
		nr := make(sql.Row, 0, len(row)+1)
		nr = append(nr, row[:pos]...)
		nr = append(nr, nil)
		nr = append(nr, row[pos:]...)
		// Existing rows get the generated value, else the default (an
		// expression default evaluated per row), else NULL or, for a NOT
		// NULL column without a default, the type's zero value — as
		// MySQL fills them.
		// The expressions were resolved against the table as it was (their
		// column indexes are the old row's): they read the old row.
		var fill *sql.ColumnDefaultValue
		switch {
		case col.Generated != nil:
			fill = col.Generated
		case col.Default != nil:
			fill = col.Default
		case !col.Nullable:
			nr[pos] = col.Type.Zero()
		}
		if fill != nil {
			v, err := fill.Eval(ctx, row)
			if err != nil {
				return nil, err
			}
			if v != nil {
				if v, _, err = col.Type.Convert(ctx, v); err != nil {
					return nil, err
				}
			}
			nr[pos] = v
		}
		return nr, nil
	}
	if err := t.alter(ctx, old, newSchema, conv, nil, ""); err != nil {
		return err
	}
	t.filled = true
	return nil
}

func shiftOrdinals(ords []int, from, by int) []int {
	out := make([]int, len(ords))
	for i, o := range ords {
		if o >= from {
			o += by
		}
		out[i] = o
	}
	return out
}

func (t *Table) DropColumn(ctx *sql.Context, name string) error {
	if err := t.logDDLChecked(ctx, func() error { return t.checkDropColumn(name) }); err != nil {
		return err
	}
	old := t.entry.load()
	pos := old.colIndex(name)
	if pos < 0 {
		return sql.ErrTableColumnNotFound.New(old.name, name)
	}
	for _, o := range old.schema.PkOrdinals {
		if o == pos {
			return fmt.Errorf("lockstep cannot drop primary key column %s", name)
		}
	}
	sch := make(sql.Schema, 0, len(old.schema.Schema)-1)
	sch = append(sch, old.schema.Schema[:pos]...)
	sch = append(sch, old.schema.Schema[pos+1:]...)
	newSchema := sql.NewPrimaryKeySchema(sch, shiftOrdinals(old.schema.PkOrdinals, pos, -1)...)
	conv := func(row sql.Row) (sql.Row, error) {
		nr := make(sql.Row, 0, len(row)-1)
		nr = append(nr, row[:pos]...)
		return append(nr, row[pos+1:]...), nil
	}
	return t.alter(ctx, old, newSchema, conv, nil, name)
}

func (t *Table) ModifyColumn(ctx *sql.Context, name string, column *sql.Column, order *sql.ColumnOrder) error {
	if err := t.logDDLChecked(ctx, func() error { return t.checkModifyColumn(name, column, order) }); err != nil {
		return err
	}
	old := t.entry.load()
	pos := old.colIndex(name)
	if pos < 0 {
		return sql.ErrTableColumnNotFound.New(old.name, name)
	}
	if !storable(column.Type) {
		return fmt.Errorf("lockstep does not support columns of type %s yet", column.Type.String())
	}
	col := *column
	col.Source = old.name
	oldCol := old.schema.Schema[pos]
	for _, o := range old.schema.PkOrdinals {
		if o == pos { // the primary key is a table constraint: it stays
			col.PrimaryKey, col.Nullable = true, false
		}
	}
	// Remove, then re-insert at the requested position.
	cols := make(sql.Schema, 0, len(old.schema.Schema))
	perm := make([]int, 0, len(old.schema.Schema)) // new position -> old ordinal
	for i, c := range old.schema.Schema {
		if i != pos {
			cols = append(cols, c)
			perm = append(perm, i)
		}
	}
	newPos := pos
	if order != nil {
		if order.First {
			newPos = 0
		} else if order.AfterColumn != "" {
			i := -1
			for j, c := range cols {
				if strings.EqualFold(c.Name, order.AfterColumn) {
					i = j
				}
			}
			if i < 0 {
				return sql.ErrTableColumnNotFound.New(old.name, order.AfterColumn)
			}
			newPos = i + 1
		}
	}
	cols = append(cols[:newPos], append(sql.Schema{&col}, cols[newPos:]...)...)
	perm = append(perm[:newPos], append([]int{pos}, perm[newPos:]...)...)
	var pks []int
	for _, o := range old.schema.PkOrdinals {
		for np, op := range perm {
			if op == o {
				pks = append(pks, np)
			}
		}
	}
	newSchema := sql.NewPrimaryKeySchema(cols, pks...)
	conv := func(row sql.Row) (sql.Row, error) {
		nr := make(sql.Row, len(perm))
		for np, op := range perm {
			nr[np] = row[op]
		}
		if v := nr[newPos]; v != nil {
			v = enumSetText(oldCol.Type, v)
			cv, inRange, err := col.Type.Convert(ctx, v)
			if err != nil {
				return nil, err
			}
			if inRange != sql.InRange {
				return nil, sql.ErrValueOutOfRange.New(v, col.Type)
			}
			nr[newPos] = cv
		} else if !col.Nullable {
			return nil, sql.ErrInsertIntoNonNullableProvidedNull.New(col.Name)
		}
		return nr, nil
	}
	renames := map[string]string{}
	if !strings.EqualFold(name, col.Name) {
		renames[strings.ToLower(name)] = col.Name
	}
	if err := t.alter(ctx, old, newSchema, conv, renames, ""); err != nil {
		return err
	}
	if col.AutoIncrement && !oldCol.AutoIncrement {
		return t.seedAutoIncrement(ctx, newPos)
	}
	return nil
}

// seedAutoIncrement moves the AUTO_INCREMENT counter past the largest value
// column ord holds (a column that just became AUTO_INCREMENT).
func (t *Table) seedAutoIncrement(ctx *sql.Context, ord int) error {
	tx := t.db.fe.store.Begin(txn.ReadCommitted)
	defer tx.Rollback()
	n := len(t.meta.schema.Schema)
	var maxv uint64
	err := tx.Scan(ctx, t.entry.store, storage.PrimaryIndex, storage.Range{}, false, 0, func(_, b []byte) (bool, error) {
		row, err := decodeRow(b, n)
		if err != nil {
			return false, err
		}
		if v, _, err := types.Uint64.Convert(ctx, row[ord]); err == nil && v != nil && v.(uint64) > maxv {
			maxv = v.(uint64)
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	t.entry.store.SetAutoIncrement(maxv + 1)
	return nil
}

// enumSetText turns a stored ENUM/SET value (an index or bit set) into its
// text, so a changed member list converts by name, not by position.
func enumSetText(typ sql.Type, v interface{}) interface{} {
	switch t := typ.(type) {
	case sql.EnumType:
		if i, ok := v.(uint16); ok && i > 0 { // 0 is the '' error value: keep it
			if s, ok := t.At(int(i)); ok {
				return s
			}
		}
	case sql.SetType:
		if bits, ok := v.(uint64); ok {
			if s, err := t.BitsToString(bits); err == nil {
				return s
			}
		}
	}
	return v
}

// alter installs newSchema, converting every stored row with conv and
// rebuilding index definitions (columns renamed per renames, dropCol removed).
func (t *Table) alter(ctx *sql.Context, old *tableMeta, newSchema sql.PrimaryKeySchema, conv func(sql.Row) (sql.Row, error),
	renames map[string]string, dropCol string) error {
	te := t.entry
	te.ddl.Lock()
	defer te.ddl.Unlock()
	if te.load() != old {
		return errors.New("lockstep: table definition changed concurrently; retry")
	}
	m := old.clone()
	m.setSchema(newSchema)
	if err := m.checkPK(); err != nil {
		return err
	}
	m.indexes = nil
	for _, im := range old.indexes {
		var cols []sql.IndexColumn
		for _, c := range im.cols {
			if dropCol != "" && strings.EqualFold(c.Name, dropCol) {
				continue
			}
			if nn, ok := renames[strings.ToLower(c.Name)]; ok {
				c.Name = nn
			}
			cols = append(cols, c)
		}
		if len(cols) == 0 {
			continue
		}
		def := sql.IndexDef{Name: im.name, Columns: cols, Comment: im.comment}
		if im.unique {
			def.Constraint = sql.IndexConstraint_Unique
		}
		nm, err := m.newIndexMeta(def)
		if err != nil {
			return err
		}
		m.indexes = append(m.indexes, nm)
	}
	desc, err := m.tableDesc()
	if err != nil {
		return err
	}
	n := len(old.schema.Schema)
	err = te.store.Rewrite(func(b []byte) ([]byte, error) {
		row, err := decodeRow(b, n)
		if err != nil {
			return nil, err
		}
		nr, err := conv(row)
		if err != nil {
			return nil, err
		}
		return encodeRow(nil, nr)
	}, desc)
	if err != nil {
		return err
	}
	t.publish(m)
	return nil
}

func (t *Table) CreateIndex(ctx *sql.Context, def sql.IndexDef) error {
	if err := t.logDDLChecked(ctx, func() error { return t.checkNewIndex(def) }); err != nil {
		return err
	}
	te := t.entry
	te.ddl.Lock()
	defer te.ddl.Unlock()
	old := te.load()
	if def.IsPrimary() {
		return fmt.Errorf("lockstep cannot add a primary key to an existing table yet")
	}
	if old.indexByName(def.Name) >= 0 || strings.EqualFold(def.Name, "PRIMARY") {
		return sql.ErrDuplicateKey.New(def.Name)
	}
	m := old.clone()
	im, err := m.newIndexMeta(def)
	if err != nil {
		return err
	}
	m.indexes = append(m.indexes, im)
	desc, err := m.tableDesc()
	if err != nil {
		return err
	}
	added := desc.Indexes[len(m.indexes)-1]
	if !m.hidden {
		err = te.store.AddIndex(added)
	} else {
		if im.unique {
			err = te.store.CheckUnique(added)
		}
		if err == nil {
			// Keep the hidden content index last: rebuild every index.
			err = te.store.Rewrite(func(b []byte) ([]byte, error) { return b, nil }, desc)
		}
	}
	if err != nil {
		var dup *storage.DuplicateKeyError
		if errors.As(err, &dup) {
			row, _ := decodeRow(dup.Existing, len(m.schema.Schema))
			return duplicateEntry(m, im.codec, im.name, row, row)
		}
		return err
	}
	t.publish(m)
	return nil
}

func (t *Table) DropIndex(ctx *sql.Context, name string) error {
	if err := t.logDDLChecked(ctx, func() error { return t.checkIndex(name) }); err != nil {
		return err
	}
	te := t.entry
	te.ddl.Lock()
	defer te.ddl.Unlock()
	old := te.load()
	i := old.indexByName(name)
	if i < 0 {
		return sql.ErrIndexNotFound.New(name)
	}
	if err := te.store.DropIndex(i); err != nil {
		return err
	}
	m := old.clone()
	m.indexes = append(m.indexes[:i:i], m.indexes[i+1:]...)
	t.publish(m)
	return nil
}

func (t *Table) RenameIndex(ctx *sql.Context, from, to string) error {
	if err := t.logDDLChecked(ctx, func() error { return t.checkIndex(from) }); err != nil {
		return err
	}
	te := t.entry
	te.ddl.Lock()
	defer te.ddl.Unlock()
	old := te.load()
	i := old.indexByName(from)
	if i < 0 {
		return sql.ErrIndexNotFound.New(from)
	}
	if err := te.store.RenameIndex(i, to); err != nil {
		return err
	}
	m := old.clone()
	m.indexes[i].name = to
	te.meta.Store(m)
	t.meta = m
	return nil
}
