package sqlfront

import (
	"errors"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// editor implements inserts, updates, deletes and replaces for one
// statement on one table. StatementBegin marks an undo savepoint;
// DiscardChanges rolls the statement back to it (MySQL's statement-level
// rollback on error).
type editor struct {
	t       *Table
	s       *Session
	mark    int
	marked  bool
	locking bool // an UPDATE/DELETE editor: its statement reads with X locks
	closed  bool
}

var (
	_ sql.RowInserter = (*editor)(nil)
	_ sql.RowUpdater  = (*editor)(nil)
	_ sql.RowDeleter  = (*editor)(nil)
	_ sql.RowReplacer = (*editor)(nil)
)

func (e *editor) StatementBegin(ctx *sql.Context) {
	if e.s == nil {
		return
	}
	// INSERT IGNORE calls this before every row (and DiscardChanges after a
	// failed one), so the mark is always the latest begin.
	e.mark = e.s.storageTx(ctx).Savepoint()
	e.marked = true
}

func (e *editor) DiscardChanges(ctx *sql.Context, cause error) error {
	if e.s != nil && e.s.tx != nil && !e.s.tx.Done() && e.marked {
		e.s.tx.RollbackTo(e.mark)
	}
	return nil
}

func (e *editor) StatementComplete(ctx *sql.Context) error { return nil }
func (e *editor) Close(*sql.Context) error {
	if e.locking && !e.closed {
		e.s.endLockingWrite()
	}
	e.closed = true
	return nil
}

func (e *editor) tx(ctx *sql.Context) (*storage.Tx, error) {
	if e.s == nil {
		return nil, errors.New("lockstep: no session")
	}
	if e.s.readOnly && !e.t.entry.temp { // MySQL lets a READ ONLY transaction write its temporary tables
		return nil, sql.ErrReadOnlyTransaction.New()
	}
	if e.s.fe.readOnlyActive() && !e.t.entry.temp { // read_only, super_read_only (readonly.go)
		if err := e.s.fe.readOnlyError(ctx); err != nil {
			return nil, err
		}
	}
	return e.s.storageTx(ctx), nil
}

func (e *editor) Insert(ctx *sql.Context, row sql.Row) error {
	tx, err := e.tx(ctx)
	if err != nil {
		return err
	}
	m := e.t.meta
	enc, err := encodeRow(nil, row)
	if err != nil {
		return err
	}
	pk, err := m.pkOf(e.t.entry, row, true)
	if err != nil {
		return err
	}
	err = tx.Insert(ctx, e.t.entry.store, m.version, pk, enc)
	if err == nil {
		e.s.rowsWritten++
		if m.autoIncCol >= 0 {
			e.s.autoInc.noteRow(row[m.autoIncCol], true)
		}
	}
	return e.writeError(ctx, err, row)
}

// writeError maps a write error, building the MySQL duplicate-key error
// go-mysql-server needs for ON DUPLICATE KEY UPDATE, REPLACE and IGNORE.
func (e *editor) writeError(ctx *sql.Context, err error, row sql.Row) error {
	if err == nil {
		return nil
	}
	if dupErr := duplicateError(e.t.meta, err, row); dupErr != err {
		return dupErr
	}
	return e.s.handleTxError(ctx, err)
}

// duplicateError turns storage's duplicate key error for row into MySQL's
// (1062, with the row found); any other error is returned as it is.
func duplicateError(m *tableMeta, err error, row sql.Row) error {
	var dup *storage.DuplicateKeyError
	if !errors.As(err, &dup) {
		return err
	}
	existing, derr := decodeRow(dup.Existing, len(m.schema.Schema))
	if derr != nil {
		existing = nil
	}
	codec, name := m.pk, "PRIMARY"
	if dup.Index != storage.PrimaryIndex && dup.Index < len(m.indexes) {
		codec, name = m.indexes[dup.Index].codec, m.indexes[dup.Index].name
	}
	return duplicateEntry(m, codec, name, row, existing)
}

// locate finds the primary key of a stored row equal to row; enc is row
// encoded, or nil to encode it here (only keyless tables need it).
func (e *editor) locate(ctx *sql.Context, tx *storage.Tx, row sql.Row, enc []byte) ([]byte, error) {
	m := e.t.meta
	if !m.hidden {
		return m.pkOf(e.t.entry, row, false)
	}
	if enc == nil {
		var err error
		if enc, err = encodeRow(nil, row); err != nil {
			return nil, err
		}
	}
	prefix := contentKey(enc)
	var found []byte
	err := tx.Locate(func() error {
		return tx.Scan(ctx, e.t.entry.store, m.contentIndex(), storage.Range{Lo: prefix, Hi: prefixEnd(prefix)}, false, txn.LockX,
			func(pk, _ []byte) (bool, error) {
				found = append([]byte(nil), pk...)
				return false, nil
			})
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

func (e *editor) Update(ctx *sql.Context, old, new sql.Row) error {
	tx, err := e.tx(ctx)
	if err != nil {
		return err
	}
	e.s.rowsWritten++ // rows examined, changed or not (MySQL's row count)
	m := e.t.meta
	if m.autoIncCol >= 0 {
		e.s.autoInc.noteRow(new[m.autoIncCol], false)
	}
	enc, err := encodeRow(nil, new)
	if err != nil {
		return err
	}
	oldEnc, err := encodeRow(nil, old)
	if err != nil {
		return err
	}
	if string(enc) == string(oldEnc) {
		return nil // nothing changes: MySQL counts the row as matched only
	}
	oldPK, err := e.locate(ctx, tx, old, oldEnc)
	if err != nil {
		return e.s.handleTxError(ctx, err)
	}
	if oldPK == nil {
		return nil
	}
	newPK := oldPK
	if !m.hidden {
		if newPK, err = m.pkOf(e.t.entry, new, false); err != nil {
			return err
		}
	}
	return e.writeError(ctx, tx.Update(ctx, e.t.entry.store, m.version, oldPK, newPK, enc), new)
}

func (e *editor) Delete(ctx *sql.Context, row sql.Row) error {
	tx, err := e.tx(ctx)
	if err != nil {
		return err
	}
	pk, err := e.locate(ctx, tx, row, nil)
	if err != nil {
		return e.s.handleTxError(ctx, err)
	}
	if pk == nil {
		return nil
	}
	return e.s.handleTxError(ctx, tx.Delete(ctx, e.t.entry.store, e.t.meta.version, pk))
}
