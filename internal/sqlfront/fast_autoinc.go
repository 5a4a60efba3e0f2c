package sqlfront

import (
	"github.com/dolthub/go-mysql-server/sql"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// AUTO_INCREMENT on the fast path's INSERT, as go-mysql-server's
// AutoIncrement expression and MySQL give it:
//
//   - a row whose AUTO_INCREMENT value is omitted, NULL or 0 (0 unless
//     sql_mode has NO_AUTO_VALUE_ON_ZERO) takes the table's next value;
//   - a positive explicit value moves the counter past it; a negative one
//     is stored as given and moves nothing;
//   - the statement's insert id (OK packet) is the first generated value,
//     else the last row's explicit one (insertid.go); LAST_INSERT_ID()
//     becomes the first generated value, and stays as it was when none was
//     generated.
//
// All rows' other values are converted before the counter moves, so a
// statement that falls back to go-mysql-server has used no value (a gap a
// plain one-row INSERT would not leave in MySQL). REPLACE and INSERT ... ON
// DUPLICATE KEY UPDATE generate nothing here: their insert id follows the
// row they changed, which go-mysql-server's path works out.

// autoIncUse is what a row does with the AUTO_INCREMENT column.
type autoIncUse struct {
	generate bool
	explicit interface{} // the converted explicit value (generate false)
}

// autoIncValue reads the AUTO_INCREMENT column's value of one row.
func autoIncValue(sctx *sql.Context, src valueSource, bind map[string]*querypb.BindVariable, col *sql.Column, upsert upsertKind) (autoIncUse, error) {
	v, err := sourceValue(src, bind, col)
	if err != nil {
		return autoIncUse{}, err
	}
	generate := v == nil
	if !generate {
		if n, ok := asInt64(v); ok && n == 0 && !sql.LoadSqlMode(sctx).ModeEnabled(sql.NoAutoValueOnZero) {
			generate = true
		}
	}
	if generate {
		if upsert != upsertNone {
			return autoIncUse{}, errFastFallback
		}
		return autoIncUse{generate: true}, nil
	}
	c, err := convertForColumn(sctx, col, v)
	if err != nil {
		return autoIncUse{}, err
	}
	if _, ok := asInt64(c); !ok {
		return autoIncUse{}, errFastFallback // beyond int64
	}
	return autoIncUse{explicit: c}, nil
}

// assignAutoInc sets each row's AUTO_INCREMENT value in row order and
// returns the statement's insert id and the first generated value (0:
// none). Nothing is used up when a generated value would not fit the
// column: the statement falls back.
func assignAutoInc(sctx *sql.Context, m *tableMeta, entry *tableEntry, rows []sql.Row, uses []autoIncUse) (insertID, generated uint64, err error) {
	ord := m.autoIncCol
	if ord < 0 {
		return 0, 0, nil
	}
	col := m.schema.Schema[ord]
	n := uint64(0)
	for _, u := range uses {
		if u.generate {
			n++
		}
	}
	if n > 0 {
		// The largest value the statement could generate must fit.
		if _, err := convertForColumn(sctx, col, entry.store.PeekAutoIncrement()+n-1); err != nil {
			return 0, 0, err
		}
	}
	for r, u := range uses {
		if !u.generate {
			v, _ := asInt64(u.explicit)
			if v > 0 {
				entry.store.NextAutoIncrement(uint64(v))
			}
			rows[r][ord] = u.explicit
			insertID = uint64(v) // the last row's (insertid.go)
			continue
		}
		next := entry.store.NextAutoIncrement(0)
		c, err := convertForColumn(sctx, col, next)
		if err != nil {
			return 0, 0, err // another session took values meanwhile
		}
		rows[r][ord] = c
		if generated == 0 {
			generated = next
		}
	}
	if generated != 0 {
		insertID = generated
	}
	return insertID, generated, nil
}
