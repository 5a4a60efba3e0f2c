package sqlfront

import (
	"context"

	"github.com/dolthub/go-mysql-server/sql"

	"lockstep/internal/storage"
)

// Upserts on the fast path: INSERT ... ON DUPLICATE KEY UPDATE and REPLACE.
//
// Each row of the statement, in order, is looked up by its primary key
// under an exclusive lock. A missing row is inserted (1 affected row). An
// existing one is, for REPLACE, overwritten by the new row (2: MySQL counts
// the delete and the insert, changed or not); for ON DUPLICATE KEY UPDATE,
// changed by the assignments, left to right, each seeing the ones before
// it (2 if the stored row changed, 0 if not — 1 with CLIENT_FOUND_ROWS). A
// later row of the same statement sees what an earlier one did.
//
// Only tables where the primary key is the one unique key qualify — a
// conflict on a secondary UNIQUE key, which MySQL resolves by deleting or
// updating that other row, is go-mysql-server's — and only tables without
// an AUTO_INCREMENT column (go-mysql-server generates the values; the
// insert id of the OK packet is insertid.go's).
// Everything else about the row (conversion, NULLs, defaults, fallbacks on
// anything not plainly in range) is fastInsert's.

// upsertKind is what an INSERT does with a row whose primary key exists.
type upsertKind uint8

const (
	upsertNone    upsertKind = iota // fail with 1062 (a plain INSERT)
	upsertUpdate                    // ON DUPLICATE KEY UPDATE
	upsertReplace                   // REPLACE
)

// upsertable reports whether conflicts in a table of this definition can
// only be on its primary key, and it generates no values.
func upsertable(m *tableMeta) bool {
	if m.hidden || m.autoIncCol >= 0 {
		return false
	}
	for _, im := range m.indexes {
		if im.unique {
			return false
		}
	}
	return true
}

// upsertRow writes row (the statement's converted row, encoded as enc,
// primary key pk) under the plan's upsert kind and returns its affected
// rows.
func (s *Session) upsertRow(ctx context.Context, sctx *sql.Context, p *fastPlan, entry *tableEntry, tx *storage.Tx, pk, enc []byte, row sql.Row, onDup []interface{}) (int, error) {
	m := p.meta
	stored, found, err := tx.GetForUpsert(ctx, entry.store, pk)
	if err != nil {
		return 0, err
	}
	if !found {
		return 1, tx.Insert(ctx, entry.store, m.version, pk, enc)
	}
	if p.write.upsert == upsertReplace {
		return 2, tx.Update(ctx, entry.store, m.version, pk, pk, enc)
	}
	changed, err := changeStored(ctx, sctx, tx, entry, m, p.write.onDup, onDup, pk, stored, row)
	switch {
	case err != nil:
		return 0, err
	case changed:
		return 2, nil
	case s.clientFoundRows():
		return 1, nil
	}
	return 0, nil
}
