package sqlfront

import (
	"strings"
	"testing"
	"time"
)

// TestShowReplicaStatus: SHOW REPLICA STATUS has MySQL 8.0's 60 columns in
// MySQL's order (SHOW SLAVE STATUS the old names), no rows without a
// source, and the server's rows with NULL for an unknown lag.
func TestShowReplicaStatus(t *testing.T) {
	f := newTestFE(t)
	for _, q := range []string{"SHOW REPLICA STATUS", "SHOW SLAVE STATUS"} {
		if got := f.rowsString(f.ctx, q); got != "" {
			t.Fatalf("%s without a source: %q, want no rows", q, got)
		}
	}
	schema := func(q string) []string {
		ctx := f.ctx.WithQuery(q)
		sch, iter, _, err := f.fe.Engine.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		iter.Close(ctx)
		var names []string
		for _, c := range sch {
			names = append(names, c.Name)
		}
		return names
	}
	cols := schema("SHOW REPLICA STATUS")
	if len(cols) != 60 {
		t.Fatalf("%d columns, want MySQL 8.0's 60: %v", len(cols), cols)
	}
	for i, want := range map[int]string{0: "Replica_IO_State", 1: "Source_Host", 3: "Source_Port", 10: "Replica_IO_Running",
		11: "Replica_SQL_Running", 32: "Seconds_Behind_Source", 33: "Source_SSL_Verify_Server_Cert", 36: "Last_SQL_Errno",
		37: "Last_SQL_Error", 44: "Replica_SQL_Running_State", 51: "Retrieved_Gtid_Set", 52: "Executed_Gtid_Set",
		53: "Auto_Position", 55: "Channel_Name", 58: "Get_Source_public_key", 59: "Network_Namespace"} {
		if cols[i] != want {
			t.Errorf("column %d is %s, want %s", i+1, cols[i], want)
		}
	}
	old := schema("SHOW SLAVE STATUS")
	for i, want := range map[int]string{0: "Slave_IO_State", 1: "Master_Host", 10: "Slave_IO_Running", 32: "Seconds_Behind_Master",
		44: "Slave_SQL_Running_State", 55: "Channel_Name", 58: "Get_master_public_key"} {
		if old[i] != want {
			t.Errorf("SHOW SLAVE STATUS column %d is %s, want %s", i+1, old[i], want)
		}
	}

	at := time.Date(2026, 11, 27, 13, 4, 5, 0, time.UTC)
	f.fe.SetReplicaStatus(func() []ReplicaStatus {
		return []ReplicaStatus{{SourceHost: "db1", SourcePort: 3307, IORunning: "Yes", SQLRunning: false,
			LastSQLErrno: 1105, LastSQLError: "broken", LastSQLErrorAt: at, SecondsBehind: -1,
			RetrievedGtidSet: "u:1-5", ExecutedGtidSet: "u:1-4", AutoPosition: true, Channel: "group_replication_applier"}}
	})
	rows, err := f.query(f.ctx, "SHOW REPLICA STATUS")
	if err != nil || len(rows) != 1 || len(rows[0]) != 60 {
		t.Fatalf("rows %v, %v: want one row of 60 values", rows, err)
	}
	r := rows[0]
	got := []any{r[1], r[3], r[10], r[11], r[32], r[36], r[37], r[48], r[51], r[52], r[53], r[55]}
	want := []any{"db1", int64(3307), "Yes", "No", nil, int64(1105), "broken", "261127 13:04:05", "u:1-5", "u:1-4", int64(1), "group_replication_applier"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("value %d: %v (%T), want %v", i, got[i], got[i], want[i])
		}
	}
	if s := f.rowsString(f.ctx, "SHOW SLAVE STATUS"); !strings.Contains(s, "db1") {
		t.Errorf("SHOW SLAVE STATUS: %q", s)
	}
}
