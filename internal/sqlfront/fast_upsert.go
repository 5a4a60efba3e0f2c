package sqlfront

import (
	"context"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

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

// onDupAssignments returns the ON DUPLICATE KEY UPDATE list as
// assignments, or nil for a form the fast path does not take: each is
// `col = v`, `col = VALUES(c)`, `col = col ± v` or `col = col ± VALUES(c)`
// (v a marker or literal) on a column outside the primary key.
func onDupAssignments(m *tableMeta, list ast.OnDup) []assignment {
	out := make([]assignment, 0, len(list))
	for _, a := range list {
		if !a.Name.Qualifier.IsEmpty() {
			return nil
		}
		ord := m.colIndex(a.Name.Name.String())
		if ord < 0 || m.isPKColumn(ord) {
			return nil
		}
		as := assignment{ord: ord}
		e := a.Expr
		if b, ok := e.(*ast.BinaryExpr); ok {
			col, ok := b.Left.(*ast.ColName)
			if !ok || (b.Operator != ast.PlusStr && b.Operator != ast.MinusStr) || !col.Qualifier.IsEmpty() ||
				m.colIndex(col.Name.String()) != ord || !deltaColumn(m.schema.Schema[ord].Type) {
				return nil
			}
			as.delta, as.minus = true, b.Operator == ast.MinusStr
			e = b.Right
		}
		if vf, ok := e.(*ast.ValuesFuncExpr); ok {
			if vf.Name == nil || !vf.Name.Qualifier.IsEmpty() {
				return nil
			}
			src := m.colIndex(vf.Name.Name.String())
			if src < 0 {
				return nil
			}
			as.fromRow, as.rowOrd = true, src
		} else {
			var ok bool
			if as.src, ok = valueSourceOf(e); !ok || (as.delta && as.src.param == "" && as.src.lit == nil) {
				return nil
			}
		}
		out = append(out, as)
	}
	return out
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
	sch := m.schema.Schema
	old, err := decodeRow(stored, len(sch))
	if err != nil {
		return 0, err
	}
	next := old.Copy()
	for i, a := range p.write.onDup {
		v := onDup[i]
		if a.fromRow {
			v = row[a.rowOrd]
		}
		if a.delta {
			if v == nil {
				return 0, errFastFallback
			}
			if v, err = applyDelta(sctx, sch[a.ord], next[a.ord], v, a.minus); err != nil {
				return 0, err
			}
		} else if a.fromRow {
			if v, err = convertForColumn(sctx, sch[a.ord], v); err != nil {
				return 0, err
			}
		}
		next[a.ord] = v
	}
	nenc, err := encodeRow(nil, next)
	if err != nil {
		return 0, errFastFallback
	}
	if string(nenc) == string(stored) {
		if s.Client().Capabilities&mysql.CapabilityClientFoundRows != 0 {
			return 1, nil
		}
		return 0, nil
	}
	return 2, tx.Update(ctx, entry.store, m.version, pk, pk, nenc)
}

// onDupValues converts the ON DUPLICATE KEY UPDATE list's bound values
// (those not taken from the row), once per statement.
func onDupValues(sctx *sql.Context, p *fastPlan, bind map[string]*querypb.BindVariable) ([]interface{}, error) {
	if len(p.write.onDup) == 0 {
		return nil, nil
	}
	sch := p.meta.schema.Schema
	vals := make([]interface{}, len(p.write.onDup))
	for i, a := range p.write.onDup {
		if a.fromRow {
			continue
		}
		var v interface{}
		var err error
		if a.delta {
			if v, err = bindValue(a.src, bind); err == nil && v == nil {
				err = errFastFallback
			}
		} else if v, err = sourceValue(a.src, bind, sch[a.ord]); err == nil {
			v, err = convertForColumn(sctx, sch[a.ord], v)
		}
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
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
