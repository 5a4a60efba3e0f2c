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

// FixFields makes go-mysql-server's result column definitions MySQL's: key
// flags (addKeyFlags) and computed string types (computedStringTypes).
// Fields are changed in place.
func (fe *Frontend) FixFields(connID uint32, fields []*querypb.Field) {
	fe.addKeyFlags(connID, fields)
	computedStringTypes(fields)
	diagnosticsTypes(fields)
	binaryFields(fields) // numfields.go
}

// diagnosticsTypes: SHOW WARNINGS' (and SHOW ERRORS') Code column is
// unsigned in MySQL (INT UNSIGNED); go-mysql-server sends it signed.
func diagnosticsTypes(fields []*querypb.Field) {
	if len(fields) == 3 && fields[0].Name == "Level" && fields[1].Name == "Code" && fields[2].Name == "Message" &&
		fields[0].OrgTable == "" && fields[1].Type == querypb.Type_INT32 {
		fields[1].Type = querypb.Type_UINT32
		fields[1].Flags |= uint32(querypb.MySqlFlag_UNSIGNED_FLAG)
	}
}

// computedStringTypes: go-mysql-server types the result of every string
// function and string-valued expression (CONCAT, SUBSTRING, IFNULL, CASE,
// HEX ...) as LONGTEXT or LONGBLOB, so clients saw a BLOB column
// (Connector/J: LONGVARCHAR) where MySQL sends VAR_STRING. A computed
// column (no original table) of a TEXT or BLOB type is sent as VARCHAR or
// VARBINARY; the values are unchanged. MySQL itself sends a BLOB type for an
// expression whose maximum length passes 65,535 bytes (CONCAT of a TEXT
// column); go-mysql-server's types carry no such length, so those are
// VAR_STRING here too.
//
// GROUP_CONCAT is left as it is: MySQL sends TEXT (a BLOB type) for it
// unless group_concat_max_len is 512 or less. It is recognised by its
// column name, so an aliased GROUP_CONCAT is sent as VAR_STRING.
func computedStringTypes(fields []*querypb.Field) {
	for _, f := range fields {
		if f.OrgTable != "" || len(f.Name) > 13 && strings.EqualFold(f.Name[:13], "group_concat(") {
			continue
		}
		switch f.Type {
		case querypb.Type_TEXT:
			f.Type = querypb.Type_VARCHAR
		case querypb.Type_BLOB:
			f.Type = querypb.Type_VARBINARY
		}
	}
}

// addKeyFlags sets the key flags of fields that name a table column
// (OrgTable and OrgName; the database is the session's current one when
// the field names none).
func (fe *Frontend) addKeyFlags(connID uint32, fields []*querypb.Field) {
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
