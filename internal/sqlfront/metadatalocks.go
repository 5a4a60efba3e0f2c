package sqlfront

import (
	"fmt"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"lockstep/internal/mdl"
)

// performance_schema.metadata_locks: the metadata lock table (internal/
// mdl; docs/mdl.md, "Seeing metadata locks"). lockstep locks tables only
// (OBJECT_TYPE 'TABLE'); LOCK_TYPE is MySQL's name of the mode
// (SHARED_READ, SHARED_WRITE, SHARED_READ_ONLY, SHARED_NO_READ_WRITE,
// EXCLUSIVE). A lock's duration is kept by its owner, not in the lock
// table; sqlfront takes each mode for one duration, so LOCK_DURATION
// follows the mode: TRANSACTION for reads and writes, EXPLICIT for LOCK
// TABLES, STATEMENT for DDL.

const metadataLocksTable = "metadata_locks"

var metadataLocksSchema = sync.OnceValue(func() sql.Schema {
	c := func(name string, typ sql.Type, null bool) *sql.Column {
		return psColumn(metadataLocksTable, name, typ, null)
	}
	return sql.Schema{
		c("OBJECT_TYPE", psVarchar(64), false),
		c("OBJECT_SCHEMA", psVarchar(64), true),
		c("OBJECT_NAME", psVarchar(64), true),
		c("COLUMN_NAME", psVarchar(64), true),
		c("OBJECT_INSTANCE_BEGIN", types.Uint64, false),
		c("LOCK_TYPE", psVarchar(32), false),
		c("LOCK_DURATION", psVarchar(32), false),
		c("LOCK_STATUS", psVarchar(32), false),
		c("SOURCE", psVarchar(64), true),
		c("OWNER_THREAD_ID", types.Uint64, true),
		c("OWNER_EVENT_ID", types.Uint64, true),
	}
})

func (fe *Frontend) metadataLockRows() []sql.Row {
	locks := fe.mdl.Snapshot()
	if len(locks) == 0 {
		return nil
	}
	// The lock table keeps names folded; show them as the catalog spells them.
	spelled := map[mdl.Key][2]string{}
	for _, nm := range fe.tableNames() {
		spelled[mdlKey(nm[0], nm[1])] = nm
	}
	rows := make([]sql.Row, 0, len(locks))
	for _, l := range locks {
		nm, ok := spelled[l.Key]
		if !ok {
			nm = [2]string{l.Key.DB, l.Key.Table}
		}
		typ, dur := l.Mode.String(), "TRANSACTION"
		switch l.Mode {
		case mdl.Exclusive:
			dur = "STATEMENT"
		case mdl.SharedReadOnly, mdl.SharedNoReadWrite:
			dur = "EXPLICIT"
		}
		status := "GRANTED"
		if l.Pending {
			status = "PENDING"
		}
		inst := xxhash.Sum64String(fmt.Sprintf("%s\x00%s\x00%d\x00%s\x00%s", l.Key.DB, l.Key.Table, l.Owner, status, typ)) >> 1
		rows = append(rows, sql.Row{
			"TABLE", nm[0], nm[1], nil, inst, typ, dur, status, nil, nullable(l.Owner), nil,
		})
	}
	return rows
}
