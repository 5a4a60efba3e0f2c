package sqlfront

import (
	"strings"
	"testing"
)

// TestGroupMembersTable: performance_schema.replication_group_members is
// empty without a group and shows the rows the server gives it, with
// MySQL's columns, NULL for an unknown port, and the database's name
// case-insensitive as MySQL's.
func TestGroupMembersTable(t *testing.T) {
	f := newTestFE(t)
	q := "SELECT * FROM performance_schema.replication_group_members"
	if got := f.rowsString(f.ctx, q); got != "" {
		t.Fatalf("standalone: %q, want no rows", got)
	}
	f.fe.SetGroupMembers(func() []GroupMember {
		return []GroupMember{
			{ID: "uuid-1", Host: "127.0.0.1", Port: 33061, State: "ONLINE", Role: "PRIMARY", Version: "8.0.33", Stack: "raft"},
			{ID: "2", Host: "db2", State: "UNREACHABLE", Role: "SECONDARY", Version: "8.0.33", Stack: "raft"},
		}
	})
	want := "group_replication_applier uuid-1 127.0.0.1 33061 ONLINE PRIMARY 8.0.33 raft\n" +
		"group_replication_applier 2 db2 <nil> UNREACHABLE SECONDARY 8.0.33 raft\n"
	if got := f.rowsString(f.ctx, q); got != want {
		t.Fatalf("got\n%swant\n%s", got, want)
	}
	if got := f.rowsString(f.ctx, "SELECT MEMBER_ID FROM PERFORMANCE_SCHEMA.Replication_Group_Members WHERE MEMBER_STATE = 'UNREACHABLE'"); got != "2\n" {
		t.Fatalf("filtered: %q", got)
	}
	if got := f.rowsString(f.ctx, "SHOW TABLES FROM performance_schema"); got != "data_lock_waits\ndata_locks\nmetadata_locks\nreplication_group_members\n" {
		t.Fatalf("SHOW TABLES: %q", got)
	}
	if _, err := f.query(f.ctx, "SELECT * FROM performance_schema.no_such_table"); err == nil {
		t.Fatal("a missing performance_schema table was found")
	}
	f.fe.SetGroupMembers(nil)
	if got := f.rowsString(f.ctx, q); got != "" {
		t.Fatalf("after SetGroupMembers(nil): %q", got)
	}
}

// TestPerformanceSchemaNotCreatable: CREATE DATABASE performance_schema
// fails as in MySQL (1007) instead of making a user database that would
// hide the real one.
func TestPerformanceSchemaNotCreatable(t *testing.T) {
	f := newTestFE(t)
	if _, err := f.query(f.ctx, "CREATE DATABASE Performance_Schema"); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("CREATE DATABASE performance_schema: %v, want database exists", err)
	}
}
