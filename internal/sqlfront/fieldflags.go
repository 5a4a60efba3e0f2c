package sqlfront

import (
	"strings"

	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// A result column read straight from a table column carries that column's
// key flags in MySQL's column definition: PRI_KEY_FLAG for a primary key
// column, AUTO_INCREMENT_FLAG for the AUTO_INCREMENT one. go-mysql-server
// sets them only when the column reaches the result unprojected (`SELECT
// *` in a text query); `SELECT id, name`, and every prepared statement's
// metadata (COM_STMT_PREPARE), lack them, so Connector/J's
// ResultSetMetaData.isAutoIncrement said false for an AUTO_INCREMENT key.
// NOT_NULL_FLAG is left as go-mysql-server computed it: an outer join
// makes a NOT NULL column nullable in the result.

const keyFlags = uint32(querypb.MySqlFlag_PRI_KEY_FLAG | querypb.MySqlFlag_AUTO_INCREMENT_FLAG)

// AddKeyFlags sets the key flags of fields that name a table column
// (OrgTable and OrgName; the database is the session's current one when
// the field names none). Fields are changed in place.
func (fe *Frontend) AddKeyFlags(connID uint32, fields []*querypb.Field) {
	curDB := ""
	for _, f := range fields {
		if f.OrgTable == "" || f.OrgName == "" || f.Flags&keyFlags == keyFlags {
			continue
		}
		db := f.Database
		if db == "" {
			if curDB == "" {
				if s := fe.session(connID); s != nil {
					curDB = s.GetCurrentDatabase()
				}
			}
			db = curDB
		}
		entry := fe.lookupEntry(strings.ToLower(db), strings.ToLower(f.OrgTable))
		if entry == nil {
			continue
		}
		m := entry.load()
		i := m.schema.Schema.IndexOfColName(f.OrgName)
		if i < 0 {
			continue
		}
		col := m.schema.Schema[i]
		if col.PrimaryKey && !m.hidden {
			f.Flags |= uint32(querypb.MySqlFlag_PRI_KEY_FLAG)
		}
		if col.AutoIncrement {
			f.Flags |= uint32(querypb.MySqlFlag_AUTO_INCREMENT_FLAG)
		}
	}
}
