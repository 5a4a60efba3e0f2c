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
		d, _ := fe.GlobalVariable(varSyncDelay)
		n, _ := fe.GlobalVariable(varSyncNoDelayCount)
		p.SetSyncDelay(time.Duration(asInt64(d))*time.Microsecond, int(asInt64(n)))
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

// asInt64 reads an integer variable's value (go-mysql-server stores them
// as int64; anything else counts as 0).
func asInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint64:
		return int64(x)
	}
	return 0
}
