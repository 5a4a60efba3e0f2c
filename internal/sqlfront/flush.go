package sqlfront

import (
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// FLUSH statements.
//
// go-mysql-server runs FLUSH PRIVILEGES and takes FLUSH TABLES and FLUSH
// BINARY LOGS as no-ops, but refuses FLUSH LOGS, FLUSH STATUS, FLUSH
// ERROR / GENERAL / SLOW / RELAY LOGS and every FLUSH LOCAL or
// NO_WRITE_TO_BINLOG with 1105 "... not supported" — and that is what
// `mysqladmin flush-logs` and `mysqldump --flush-logs` (FLUSH /*!40101
// LOCAL */ LOGS) send, so backups scripted the MySQL way failed. lockstep
// has none of the files they act on (its transaction log is one logical
// stream whose segments roll over by size; there is no error, general or
// slow query log file) and writes no FLUSH to its log either way, so they
// succeed and change nothing. FLUSH STATUS does not reset the session's
// status counters (MySQL adds them to the global ones and zeroes them).
// FLUSH RELAY LOGS FOR CHANNEL stays refused: there are no channels.

// flushNoOps are the FLUSH options that succeed without doing anything.
var flushNoOps = map[string]bool{
	"logs": true, "error logs": true, "general logs": true, "slow logs": true,
	"relay logs": true, "engine logs": true, "status": true,
	"optimizer_costs": true, "hosts": true, "user_resources": true,
}

// normalizeFlush rewrites f into a statement go-mysql-server runs as
// MySQL would answer f.
func normalizeFlush(f *ast.Flush) {
	f.Type = "" // LOCAL, NO_WRITE_TO_BINLOG
	if f.Option != nil && f.Option.Channel == "" && flushNoOps[strings.ToLower(f.Option.Name)] {
		f.Option.Name = "binary logs" // go-mysql-server's no-op
	}
}
