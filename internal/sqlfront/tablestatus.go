package sqlfront

import (
	"github.com/dolthub/go-mysql-server/sql"
)

// NextAutoIncrement is the AUTO_INCREMENT value table db.table would give
// next, for SHOW TABLE STATUS (go-mysql-server leaves its Auto_increment
// column NULL; information_schema.TABLES has the value). ok is false for a
// table without an AUTO_INCREMENT column, or none of that name visible to
// connection connID.
func (fe *Frontend) NextAutoIncrement(connID uint32, db, table string) (next uint64, ok bool) {
	s := fe.session(connID)
	if s == nil {
		return 0, false
	}
	ctx := s.fastContext()
	d, err := fe.provider.Database(ctx, db)
	if err != nil {
		return 0, false
	}
	t, found, err := d.GetTableInsensitive(ctx, table)
	if err != nil || !found {
		return 0, false
	}
	at, isAuto := t.(sql.AutoIncrementTable)
	if !isAuto {
		return 0, false
	}
	hasAuto := false
	for _, c := range t.Schema() {
		hasAuto = hasAuto || c.AutoIncrement
	}
	if !hasAuto {
		return 0, false
	}
	n, err := at.PeekNextAutoIncrementValue(ctx)
	return n, err == nil
}
