package server

import (
	"time"

	"lockstep/internal/commit"
	"lockstep/internal/config"
	"lockstep/internal/sqlfront"
)

// Variables of the group commit sync delay (internal/commit/delay.go).
const (
	varSyncDelay        = "binlog_group_commit_sync_delay"
	varSyncNoDelayCount = "binlog_group_commit_sync_no_delay_count"
)

// installSyncDelay keeps the pipeline's sync delay equal to the server's
// @@binlog_group_commit_sync_delay and _no_delay_count: the options'
// values at start, SET GLOBAL's afterwards.
func installSyncDelay(fe *sqlfront.Frontend, p *commit.Pipeline, cfg config.Config) error {
	apply := func(any) {
		// Both are validated and stored as int64 (the variables' type).
		d, _ := fe.GlobalVariable(varSyncDelay)
		n, _ := fe.GlobalVariable(varSyncNoDelayCount)
		us, _ := d.(int64)
		count, _ := n.(int64)
		p.SetSyncDelay(time.Duration(us)*time.Microsecond, int(count))
	}
	for _, name := range []string{varSyncDelay, varSyncNoDelayCount} {
		if err := fe.WatchGlobal(name, apply); err != nil {
			return err
		}
	}
	if err := fe.SetGlobalVariable(varSyncDelay, int64(cfg.SyncDelayMicros)); err != nil {
		return err
	}
	return fe.SetGlobalVariable(varSyncNoDelayCount, int64(cfg.SyncNoDelayCount))
}
