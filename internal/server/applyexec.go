package server

import (
	"fmt"
	"io"
	"path/filepath"

	"lockstep/internal/apply"
	"lockstep/internal/checkpoint"
	"lockstep/internal/sqlfront"
	"lockstep/internal/txlog"
)

// NewApplyExecutor returns the executor crash recovery gives the apply
// state machine (recoveryExec): transactions through fe's storage
// (ApplyTxn, then ApplyAutoInc), DDL through ReplayDDL, failure marks
// through ReplayFailedDDL, accounts through LoadAccounts; notes go to w.
// `lockstep bench replay` drives it with apply.Drain, as recovery does.
func NewApplyExecutor(fe *sqlfront.Frontend, w io.Writer) apply.Executor {
	return &recoveryExec{fe: fe, w: w}
}

// LoadDatadirCheckpoint loads the newest checkpoint of a stopped server's
// data directory into fe (an empty engine), as recovery does, and returns
// its sequence number and last GNO (0, 0: no checkpoint, the log must
// reach back to the start). It then checks that the log l reaches the
// checkpoint, without --recover-truncate.
func LoadDatadirCheckpoint(datadir string, l *txlog.Log, fe *sqlfront.Frontend, w io.Writer) (seq, gno int64, err error) {
	dir := filepath.Join(datadir, "checkpoint")
	seq, gno, err = loadCheckpoint(dir, fe, w)
	if err != nil {
		return 0, 0, err
	}
	if err := logReachesCheckpoint(l, dir, seq, false, w); err != nil {
		return 0, 0, err
	}
	return seq, gno, nil
}

// CheckpointPath is the newest checkpoint file in a data directory ("":
// none).
func CheckpointPath(datadir string) (string, error) {
	p, err := checkpoint.Latest(filepath.Join(datadir, "checkpoint"))
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	return p, nil
}
