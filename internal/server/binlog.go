package server

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/binlogreplication"
	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/config"
	"lockstep/internal/sqlfront"
)

// binlogStatus answers SHOW BINARY LOG STATUS / SHOW MASTER STATUS and SHOW
// BINARY LOGS from lockstep's log. It does not serve MySQL's binlog
// replication protocol: lockstep's secondaries follow the log through their
// group (internal/cluster, to come), so a MySQL replica's COM_BINLOG_DUMP is
// refused with an error.
type binlogStatus struct{ d *durable }

var _ binlogreplication.BinlogPrimaryController = binlogStatus{}

// logFileName is what the status statements call the log: it is one
// logical stream of records, split into segments internally.
const logFileName = "lockstep-log"

func (b binlogStatus) RegisterReplica(*sql.Context, *mysql.Conn, string, uint16) error {
	return errNoBinlogDump
}

func (b binlogStatus) BinlogDumpGtid(*sql.Context, *mysql.Conn, mysql.GTIDSet) error {
	return errNoBinlogDump
}

func (b binlogStatus) ListReplicas(*sql.Context) error { return nil }

func (b binlogStatus) ListBinaryLogs(*sql.Context) ([]binlogreplication.BinaryLogFileMetadata, error) {
	return []binlogreplication.BinaryLogFileMetadata{{Name: logFileName, Size: b.d.log.Stats().Bytes}}, nil
}

// GetBinaryLogStatus reports the log's position: Position is the index of
// the last record (one record per transaction), Executed_Gtid_Set the
// server's GTID set.
func (b binlogStatus) GetBinaryLogStatus(*sql.Context) ([]binlogreplication.BinaryLogStatus, error) {
	return []binlogreplication.BinaryLogStatus{{
		File:          logFileName,
		Position:      uint(b.d.log.LastIndex()),
		ExecutedGtids: b.d.gtidExecuted(),
	}}, nil
}

var errNoBinlogDump = mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
	"This version of lockstep doesn't yet support 'MySQL binary log replication from lockstep'")

// installIdentity installs the binary log status source and the
// variables answered from this server's log: @@server_uuid and
// @@gtid_executed.
func installIdentity(fe *sqlfront.Frontend, d *durable) error {
	fe.Engine.Analyzer.Catalog.BinlogPrimaryController = binlogStatus{d: d}
	fe.SetGTIDSource(func() (string, int64) { return d.gtidSource(), d.lastGNO() })
	return installServerVars(fe, map[string]func() any{
		"server_uuid":   func() any { return d.uuid },
		"gtid_executed": func() any { return d.gtidExecuted() },
	})
}

// installConfigVars installs the variables answered from the server's
// options: each server in a process reports its own.
func installConfigVars(fe *sqlfront.Frontend, cfg config.Config, port int) error {
	datadir, err := filepath.Abs(cfg.Datadir)
	if err != nil {
		datadir = cfg.Datadir
	}
	syncBinlog, rowImage := int64(cfg.SyncBinlog), strings.ToUpper(cfg.RowImage)
	return installServerVars(fe, map[string]func() any{
		"sync_binlog":                   func() any { return syncBinlog },
		"binlog_row_image":              func() any { return rowImage },
		"port":                          func() any { return int64(port) },
		"datadir":                       func() any { return datadir + string(filepath.Separator) },
		"lockstep_group_commit_wakeup":  func() any { return cfg.GroupCommitWakeup },
		"lockstep_log_retention_size":   func() any { return cfg.LogRetentionSize },
		"lockstep_log_syncs_in_flight":  func() any { return int64(max(cfg.LogSyncsInFlight, 1)) },
		"replica_parallel_workers":      func() any { return int64(cfg.ReplicaParallelWorkers) },
		"replica_preserve_commit_order": func() any { return boolVar(cfg.ReplicaPreserveCommitOrder) },
		"replica_transaction_retries":   func() any { return int64(cfg.ReplicaTransactionRetries) },
	})
}

func installServerVars(fe *sqlfront.Frontend, vars map[string]func() any) error {
	for name, f := range vars {
		if err := fe.SetServerVariable(name, f); err != nil {
			return fmt.Errorf("install @@%s: %w", name, err)
		}
	}
	return nil
}

// boolVar is a boolean system variable's value as go-mysql-server holds
// one (1 or 0; SELECT shows 1 or 0, SHOW VARIABLES ON or OFF).
func boolVar(b bool) int8 {
	if b {
		return 1
	}
	return 0
}
