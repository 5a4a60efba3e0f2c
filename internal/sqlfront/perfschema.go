package sqlfront

import (
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// performance_schema, as far as lockstep answers it: the table
// replication_group_members (MySQL Group Replication's members view),
// filled by the server through SetGroupMembers; empty on a server that is
// not a member of a group, as on a MySQL server without the plugin; and
// the lock views data_locks, data_lock_waits (datalocks.go) and
// metadata_locks (metadatalocks.go), read under the same privilege checks
// as replication_group_members (MySQL asks for SELECT on them).
//
// The database is found by name (SELECT ... FROM performance_schema.t,
// SHOW TABLES FROM, DESCRIBE, SHOW CREATE TABLE) but not listed by SHOW
// DATABASES or information_schema: the provider's list is the user
// databases, which the catalog's other users (checkpoints, the DDL log,
// foreign keys) walk.

// perfSchemaName is the database's name (case-insensitive, as MySQL's).
const perfSchemaName = "performance_schema"

// GroupMember is one row of performance_schema.replication_group_members.
type GroupMember struct {
	ID      string // MEMBER_ID
	Host    string // MEMBER_HOST
	Port    int    // MEMBER_PORT; 0 shows NULL
	State   string // MEMBER_STATE: ONLINE, UNREACHABLE, ...
	Role    string // MEMBER_ROLE: PRIMARY or SECONDARY
	Version string // MEMBER_VERSION
	Stack   string // MEMBER_COMMUNICATION_STACK
}

// groupChannel is MySQL's CHANNEL_NAME of the group's members.
const groupChannel = "group_replication_applier"

// SetGroupMembers installs the source of replication_group_members' rows
// (the server's group; nil: no rows).
func (fe *Frontend) SetGroupMembers(rows func() []GroupMember) {
	fe.groupMembers.Store(&rows)
}

func (fe *Frontend) groupMemberRows() []GroupMember {
	if p := fe.groupMembers.Load(); p != nil && *p != nil {
		return (*p)()
	}
	return nil
}

// perfSchemaDB is performance_schema.
type perfSchemaDB struct{ fe *Frontend }

var _ sql.Database = perfSchemaDB{}

func (perfSchemaDB) Name() string { return perfSchemaName }

func (d perfSchemaDB) GetTableInsensitive(_ *sql.Context, name string) (sql.Table, bool, error) {
	if strings.EqualFold(name, groupMembersTable) {
		return &groupMembersTbl{fe: d.fe}, true, nil
	}
	if t := d.fe.psTable(strings.ToLower(name)); t != nil { // datalocks.go
		return t, true, nil
	}
	return nil, false, nil
}

func (perfSchemaDB) GetTableNames(*sql.Context) ([]string, error) {
	return []string{dataLockWaitsTable, dataLocksTable, metadataLocksTable, groupMembersTable}, nil
}

const groupMembersTable = "replication_group_members"

// The database has no views (go-mysql-server asks it for one of the
// table's name before it looks for the table), and none can be made.
var _ sql.ViewDatabase = perfSchemaDB{}

func (perfSchemaDB) CreateView(*sql.Context, string, string, string) error {
	return sql.ErrCreateTableNotSupported.New(perfSchemaName)
}
func (perfSchemaDB) DropView(_ *sql.Context, name string) error {
	return sql.ErrViewDoesNotExist.New(perfSchemaName, name)
}
func (perfSchemaDB) GetViewDefinition(*sql.Context, string) (sql.ViewDefinition, bool, error) {
	return sql.ViewDefinition{}, false, nil
}
func (perfSchemaDB) AllViews(*sql.Context) ([]sql.ViewDefinition, error) { return nil, nil }

// groupMembersSchema is MySQL 8.0's definition of the table.
var groupMembersSchema = sync.OnceValue(func() sql.Schema {
	char := func(n int64, coll sql.CollationID) sql.Type {
		return types.MustCreateString(sqltypes.Char, n, coll)
	}
	col := func(name string, typ sql.Type, nullable bool) *sql.Column {
		return &sql.Column{Name: name, Type: typ, Nullable: nullable, Source: groupMembersTable, DatabaseSource: perfSchemaName}
	}
	bin := sql.Collation_utf8mb4_bin
	return sql.Schema{
		col("CHANNEL_NAME", char(64, bin), false),
		col("MEMBER_ID", char(36, bin), false),
		col("MEMBER_HOST", char(255, sql.Collation_ascii_general_ci), false),
		col("MEMBER_PORT", types.Int32, true),
		col("MEMBER_STATE", char(64, bin), false),
		col("MEMBER_ROLE", char(64, bin), false),
		col("MEMBER_VERSION", char(64, bin), false),
		col("MEMBER_COMMUNICATION_STACK", char(64, bin), false),
	}
})

// groupMembersTbl is replication_group_members, read when scanned.
type groupMembersTbl struct{ fe *Frontend }

var _ sql.Table = (*groupMembersTbl)(nil)

func (t *groupMembersTbl) Name() string               { return groupMembersTable }
func (t *groupMembersTbl) String() string             { return groupMembersTable }
func (t *groupMembersTbl) Schema() sql.Schema         { return groupMembersSchema() }
func (t *groupMembersTbl) Collation() sql.CollationID { return sql.Collation_utf8mb4_0900_ai_ci }
func (t *groupMembersTbl) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return sql.PartitionsToPartitionIter(groupMembersPartition{}), nil
}

func (t *groupMembersTbl) PartitionRows(*sql.Context, sql.Partition) (sql.RowIter, error) {
	ms := t.fe.groupMemberRows()
	rows := make([]sql.Row, 0, len(ms))
	for _, m := range ms {
		var port any
		if m.Port != 0 {
			port = int32(m.Port)
		}
		rows = append(rows, sql.Row{groupChannel, m.ID, m.Host, port, m.State, m.Role, m.Version, m.Stack})
	}
	return sql.RowsToRowIter(rows...), nil
}

type groupMembersPartition struct{}

func (groupMembersPartition) Key() []byte { return []byte(groupMembersTable) }
