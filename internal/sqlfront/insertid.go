package sqlfront

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// The insert id in an INSERT's OK packet (what a client reads as
// lastrowid), as MySQL computes it (sql_insert.cc, after the rows are
// written):
//
//  1. the first AUTO_INCREMENT value the statement generated for a row it
//     then inserted;
//  2. else, when the table has an AUTO_INCREMENT column and the statement
//     inserted or changed rows, that column's value in the last row it
//     wrote (an explicit id, or the row ON DUPLICATE KEY UPDATE changed);
//  3. else 0 (after LAST_INSERT_ID(x) in the statement, x: that case is left
//     to go-mysql-server).
//
// go-mysql-server sends, for a plain INSERT, the first row's value whether
// generated or not, and after ON DUPLICATE KEY UPDATE or REPLACE the
// session's LAST_INSERT_ID() — an id an earlier statement generated, which
// a client takes for the row it just wrote. Its accumulator makes the OK
// result; insertIDIter sits above it and replaces the id with the one the
// session's autoIncState collected while the rows were written: the table's
// GetNextAutoIncrementValue notes each generated value, the editor each row
// it inserts or updates.

// autoIncState is what the running INSERT has done with AUTO_INCREMENT
// values; reset when the statement's iterator is built.
type autoIncState struct {
	generated uint64 // the value generated last, until a row carries it
	first     uint64 // the first generated value a row was inserted with
	last      uint64 // the AUTO_INCREMENT value of the last row written
	lastSet   bool
}

// noteGenerated records a value GetNextAutoIncrementValue generated.
func (a *autoIncState) noteGenerated(v uint64) { a.generated = v }

// noteRow records the AUTO_INCREMENT column's value v of a row written;
// inserted: the row was inserted (not updated).
func (a *autoIncState) noteRow(v interface{}, inserted bool) {
	neg, mag, _, ok := intValue(v)
	if !ok {
		return
	}
	id := mag
	if neg {
		id = -mag // MySQL reports a negative value as its 64-bit pattern
	}
	if inserted && a.first == 0 && a.generated != 0 && id == a.generated {
		a.first = id
	}
	a.generated = 0
	a.last, a.lastSet = id, true
}

// insertID is MySQL's id for a statement that affected rows.
func (a *autoIncState) insertID(affected uint64) uint64 {
	switch {
	case a.first != 0:
		return a.first
	case affected > 0 && a.lastSet:
		return a.last
	}
	return 0
}

// okFixes reports what insertIDIter changes in INSERT n's OK result: its
// insert id (fixID, fixesInsertID) and its info string (info,
// insertinfo.go). Both are left to go-mysql-server for an INSERT inside a
// stored procedure (the OK packet of CALL carries neither in MySQL;
// go-mysql-server sends no id there either) and in a database with
// triggers (their executor must see go-mysql-server's own iterator). The
// info string is the text protocol's: not for EXECUTE.
func (fe *Frontend) okFixes(ctx *sql.Context, n *plan.InsertInto) (fixID bool, info insertInfoMode) {
	kw := firstKeyword(ctx.Query())
	if kw != "INSERT" && kw != "REPLACE" && kw != "EXECUTE" {
		return false, infoNone
	}
	if db := n.Database(); db == nil || fe.fastWriteBlocked(strings.ToLower(db.Name())) {
		return false, infoNone
	}
	if kw != "EXECUTE" {
		info = insertInfoModeOf(n)
	}
	return fixesInsertID(ctx, n), info
}

// fixesInsertID reports whether the OK packet of INSERT n gets its insert
// id from insertIDIter: an insert into a table with an AUTO_INCREMENT
// column (rules 1 and 2), or an ON DUPLICATE KEY UPDATE or REPLACE into any
// table (without such a column MySQL sends 0; go-mysql-server the session's
// LAST_INSERT_ID(), and so would differ from the fast path, which sends 0).
// A statement naming LAST_INSERT_ID is left alone (rule 3).
func fixesInsertID(ctx *sql.Context, n *plan.InsertInto) bool {
	auto := false
	for _, c := range n.Destination.Schema() {
		auto = auto || c.AutoIncrement
	}
	if !auto && !n.IsReplace && len(n.OnDupExprs) == 0 {
		return false
	}
	return !containsFold(ctx.Query(), "last_insert_id")
}

// newInsertIDIter starts the statement's AUTO_INCREMENT bookkeeping and
// row count and wraps the INSERT's iterator: fixID, the OK result gets
// MySQL's insert id; info, its info string (insertinfo.go).
func newInsertIDIter(ctx *sql.Context, child sql.RowIter, fixID bool, info insertInfoMode) sql.RowIter {
	s, _ := ctx.Session.(*Session)
	if s != nil {
		s.autoInc = autoIncState{}
		s.insertRows = 0
	}
	return &insertIDIter{child: child, s: s, fixID: fixID, info: info}
}

// insertIDIter sets the insert id and the info string of the OK result it
// passes on. It is a MutableRowIter so that go-mysql-server's accumulator,
// which makes the OK result, goes inside it.
type insertIDIter struct {
	child sql.RowIter
	s     *Session
	fixID bool
	info  insertInfoMode
}

var _ sql.MutableRowIter = (*insertIDIter)(nil)

func (it *insertIDIter) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := it.child.Next(ctx)
	if err == nil && len(row) == 1 {
		if ok, is := row[0].(types.OkResult); is {
			if it.fixID {
				ok.InsertID = 0
				if it.s != nil {
					ok.InsertID = it.s.autoInc.insertID(ok.RowsAffected)
				}
			}
			if it.info != infoNone && it.s != nil {
				ok.Info = infoString(it.info.text(it.s.insertRows, ok.RowsAffected, it.s.WarningCount()))
			}
			row = sql.Row{ok}
		}
	}
	return row, err
}

func (it *insertIDIter) Close(ctx *sql.Context) error { return it.child.Close(ctx) }

func (it *insertIDIter) GetChildIter() sql.RowIter { return it.child }

func (it *insertIDIter) WithChildIter(c sql.RowIter) sql.RowIter {
	return &insertIDIter{child: c, s: it.s, fixID: it.fixID, info: it.info}
}
