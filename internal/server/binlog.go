package server

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/binlogreplication"
	"github.com/dolthub/vitess/go/mysql"

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

// installIdentity sets @@server_uuid and the binary log status source.
func installIdentity(fe *sqlfront.Frontend, d *durable) error {
	if err := sql.SystemVariables.SetGlobal(sql.NewEmptyContext(), "server_uuid", d.uuid); err != nil {
		return fmt.Errorf("set server_uuid: %w", err)
	}
	fe.Engine.Analyzer.Catalog.BinlogPrimaryController = binlogStatus{d: d}
	return nil
}
