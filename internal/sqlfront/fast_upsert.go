package sqlfront

import (
	"context"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
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
// an AUTO_INCREMENT column (the insert id of an upsert is its business).
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
	stored, found, err := tx.Get(ctx, entry.store, pk, txn.LockX)
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

// noUpsertInsertID reports whether the OK packet of INSERT n must carry no
// insert id where go-mysql-server gives one: an ON DUPLICATE KEY UPDATE or
// a REPLACE into a table without an AUTO_INCREMENT column generates no id,
// and MySQL sends 0 (go-mysql-server sends the session's LAST_INSERT_ID(),
// and so would differ from the fast path, which sends 0). A statement
// naming LAST_INSERT_ID is left alone, and so is a database with triggers
// (their executor must see go-mysql-server's own iterator).
func (fe *Frontend) noUpsertInsertID(ctx *sql.Context, n *plan.InsertInto) bool {
	if !n.IsReplace && len(n.OnDupExprs) == 0 {
		return false
	}
	for _, c := range n.Destination.Schema() {
		if c.AutoIncrement {
			return false
		}
	}
	if db := n.Database(); db == nil || fe.fastWriteBlocked(strings.ToLower(db.Name())) {
		return false
	}
	return !containsFold(ctx.Query(), "last_insert_id")
}

// noInsertIDIter clears the insert id of the OK result it passes on. It is
// a MutableRowIter so that go-mysql-server's accumulator, which makes the
// OK result, goes inside it.
type noInsertIDIter struct{ child sql.RowIter }

var _ sql.MutableRowIter = (*noInsertIDIter)(nil)

func (it *noInsertIDIter) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := it.child.Next(ctx)
	if err == nil && len(row) == 1 {
		if ok, is := row[0].(types.OkResult); is {
			ok.InsertID = 0
			row = sql.Row{ok}
		}
	}
	return row, err
}

func (it *noInsertIDIter) Close(ctx *sql.Context) error { return it.child.Close(ctx) }

func (it *noInsertIDIter) GetChildIter() sql.RowIter { return it.child }

func (it *noInsertIDIter) WithChildIter(c sql.RowIter) sql.RowIter { return &noInsertIDIter{child: c} }
