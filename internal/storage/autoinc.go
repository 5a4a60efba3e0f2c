package storage

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	logrec "lockstep/internal/record"
)

// AUTO_INCREMENT counters in the log. The counter itself is not
// transactional (Table.NextAutoIncrement): a value handed out is used up
// whether the transaction commits or not. To keep values from being handed
// out again after a restart, or by a promoted replica, commit records carry
// counters (record.AutoInc), as MySQL 8 writes the counter to its redo log:
//
//   - a record carries the counter of every table its transaction wrote,
//     read at commit (buildRecord);
//   - a rollback (of a transaction, a statement or to a savepoint) that
//     undid writes to a table with a counter, and a commit that left
//     nothing for the log, put the table on a list; the next record
//     written, whatever tables its transaction wrote, takes the list and
//     carries those tables' counters too (as MySQL's redo log carries a
//     rolled-back insert's counter change to disk with the next commit's
//     flush).
//
// Recovery and appliers raise each counter to what a record carries
// (ApplyAutoInc); checkpoints carry the counters in their CREATE TABLE
// text (AUTO_INCREMENT=n); recovery ends by moving each counter past the
// largest value present. docs/durability.md says what is guaranteed.

// unloggedCounters are the tables whose counter a rollback moved since a
// commit record last carried it.
type unloggedCounters struct {
	any    atomic.Bool // tables is not empty (read without the mutex)
	mu     sync.Mutex
	tables []*Table
}

// note puts the tables of undo entries that have a counter on the list.
func (c *unloggedCounters) note(undo []undoEntry) {
	var last *Table
	for _, u := range undo {
		t := u.t
		if t == last || t.temp || t.autoInc.Load() == 0 {
			continue
		}
		last = t
		c.mu.Lock()
		if !slices.Contains(c.tables, t) {
			c.tables = append(c.tables, t)
			c.any.Store(true)
		}
		c.mu.Unlock()
	}
}

// take empties the list and adds its tables' counters to rec (read now,
// after the list was emptied: a rollback noted later goes with a later
// record). It returns the tables, for put if rec does not reach the log.
func (c *unloggedCounters) take(rec *CommitRecord) []*Table {
	if !c.any.Load() {
		return nil
	}
	c.mu.Lock()
	taken := c.tables
	c.tables = nil
	c.any.Store(false)
	c.mu.Unlock()
	for _, t := range taken {
		rec.addCounter(t)
	}
	return taken
}

// put returns tables take returned to the list (their record failed).
func (c *unloggedCounters) put(tables []*Table) {
	if len(tables) == 0 {
		return
	}
	c.mu.Lock()
	for _, t := range tables {
		if !slices.Contains(c.tables, t) {
			c.tables = append(c.tables, t)
		}
	}
	c.any.Store(true)
	c.mu.Unlock()
}

// addCounter adds t's counter to the record, unless t has none or the
// record carries it already.
func (rec *CommitRecord) addCounter(t *Table) {
	next := t.autoInc.Load()
	if next == 0 || t.temp {
		return
	}
	for _, a := range rec.AutoInc {
		if a.Table == uint64(t.id) {
			return
		}
	}
	rec.AutoInc = append(rec.AutoInc, logrec.AutoInc{Table: uint64(t.id), Next: next})
}

// ApplyAutoInc raises the AUTO_INCREMENT counters a commit record carries
// (record.Txn.AutoInc): each table's counter becomes at least the value
// recorded, never lower, so applying is idempotent and the order of
// records does not matter. Recovery calls it for every transaction record
// it replays, after ApplyTxn; a replica's applier must do the same, so that
// a promoted replica continues the primary's counters rather than the
// largest id it holds. A table that is not there any more (dropped,
// possibly before the checkpoint recovery started from) is skipped; a
// table id this engine has not reached yet is an error.
func (e *Engine) ApplyAutoInc(counters []logrec.AutoInc) error {
	for _, a := range counters {
		t, _ := e.TableByID(a.Table)
		if t == nil {
			if a.Table >= e.NextTableID() {
				return fmt.Errorf("storage: apply: AUTO_INCREMENT counter of table id %d, which this engine never had", a.Table)
			}
			continue
		}
		t.SetAutoIncrement(a.Next)
	}
	return nil
}
