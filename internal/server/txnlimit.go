package server

import (
	"fmt"
	"sync/atomic"

	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/cluster"
	"lockstep/internal/sqlfront"
)

// group_replication_transaction_size_limit (docs/cluster.md, "Large
// transactions"), MySQL Group Replication's: a transaction whose record
// (its replicated data: row images, writeset, AUTO_INCREMENT counters —
// record.TxnSize) is larger is refused at commit on the primary with
// 3100, rolled back and never proposed; the server's log says why. 0
// means no limit but what one raft entry can carry (cluster.MaxEntryData,
// about 1 GiB — MySQL's own ceiling with the limit off is its applier's
// 1 GB packet). The same bound caps a commit group's entry
// (commit.Options.MaxGroupBytes): several large transactions committing
// together become several entries.

const varTxnSizeLimit = "group_replication_transaction_size_limit"

// txnLimit is a member's effective limit in bytes.
type txnLimit struct {
	bytes   atomic.Int64
	refused atomic.Int64 // transactions refused (Lockstep_group_replication_transactions_too_large)
}

// effectiveTxnLimit is the limit in force for the variable's value v.
func effectiveTxnLimit(v int64) int64 {
	if v <= 0 || v > cluster.MaxEntryData {
		return cluster.MaxEntryData
	}
	return v
}

// installTxnSizeLimit keeps g's limit and its pipeline's cap on a commit
// group's bytes equal to the variable (SET GLOBAL).
func (g *group) installTxnSizeLimit(fe *sqlfront.Frontend) error {
	apply := func(any) {
		v, _ := fe.GlobalVariable(varTxnSizeLimit)
		n, _ := v.(int64) // validated and stored as int64 (the variable's type)
		lim := effectiveTxnLimit(n)
		g.limit.bytes.Store(lim)
		g.p.SetMaxGroupBytes(lim)
	}
	if err := fe.WatchGlobal(varTxnSizeLimit, apply); err != nil {
		return err
	}
	apply(nil)
	return nil
}

// checkTxnSize refuses a transaction of size bytes over the limit: MySQL's
// 3100 (ER_RUN_HOOK_ERROR) to the client, the reason in the server's log.
func (g *group) checkTxnSize(size int64) error {
	lim := g.limit.bytes.Load()
	if size <= lim {
		return nil
	}
	g.limit.refused.Add(1)
	v, _ := g.fe.GlobalVariable(varTxnSizeLimit)
	fmt.Fprintf(g.w, "lockstep: group: a transaction of %d bytes exceeds group_replication_transaction_size_limit (%v; %d bytes in force): rolled back, not replicated; split the transaction or raise the limit\n",
		size, v, lim)
	return mysql.NewSQLError(3100, "HY000", "Error on observer while running replication hook 'before_commit'.")
}
