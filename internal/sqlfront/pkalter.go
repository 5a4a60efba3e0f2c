package sqlfront

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// ALTER TABLE ... ADD PRIMARY KEY / DROP PRIMARY KEY. The rows are filed
// under their new key (storage.Table.Rekey): the declared columns, or
// hidden row ids numbered 1, 2, ... in the old key's order once the key is
// dropped — the same numbers when the log replays the statement, so the
// row changes logged after it find their rows.
//
// Rekey cannot run while an unfinished transaction has changed a row of
// the table (MySQL's ALTER waits for the table's metadata lock). A
// client's statement waits for that before it is logged, up to
// innodb_lock_wait_timeout (then 1205, nothing logged or changed), and
// again, without a limit but the client's, in the short window between the
// log call and the re-keying.
//
// A replayed statement (the applier's: recovery, a group member) logs
// nothing, so it has no window: it tries to re-key and waits, as long as
// the rows are in use, for at most innodb_lock_wait_timeout in all (the
// applier session's, from the global value) — never without a bound on a
// local session. Then it fails with 1205, nothing changed, and ReplayDDL
// reports that as the applier's error (wrapping txn.ErrLockWaitTimeout:
// transient, retried by replica_transaction_retries), not as the
// statement's own outcome.

var _ sql.PrimaryKeyAlterableTable = (*Table)(nil)

// CreatePrimaryKey implements ALTER TABLE ... ADD PRIMARY KEY (cols).
func (t *Table) CreatePrimaryKey(ctx *sql.Context, cols []sql.IndexColumn) error {
	return t.alterPK(ctx, cols)
}

// DropPrimaryKey implements ALTER TABLE ... DROP PRIMARY KEY.
func (t *Table) DropPrimaryKey(ctx *sql.Context) error {
	return t.alterPK(ctx, nil)
}

// alterPK gives the table the primary key cols (none: hidden row ids).
func (t *Table) alterPK(ctx *sql.Context, cols []sql.IndexColumn) error {
	te := t.entry
	limit := 50 * time.Second
	sess, _ := ctx.Session.(*Session)
	if sess != nil {
		limit = sess.lockWait(ctx)
	}
	deadline := time.Now().Add(limit)
	replaying := sess != nil && sess.replaying
	if !replaying {
		if err := t.waitIdle(ctx, deadline); err != nil {
			return err
		}
		if err := t.logDDL(ctx); err != nil {
			return err
		}
	}
	te.ddl.Lock()
	defer te.ddl.Unlock()
	old := te.load()
	if cols == nil {
		if err := checkAutoIncKeyed(old); err != nil {
			return err
		}
	} else if !old.hidden {
		return sql.ErrMultiplePrimaryKeysDefined.New()
	}
	m := old.clone()
	m.setSchema(pkSchema(old.schema.Schema, cols))
	m.setPKPrefixes(cols)
	if err := m.checkPK(); err != nil {
		return err
	}
	desc, err := m.tableDesc()
	if err != nil {
		return err
	}
	n := len(old.schema.Schema)
	keyOf := func(b []byte) ([]byte, error) {
		row, err := decodeRow(b, n)
		if err != nil {
			return nil, err
		}
		k, null, err := m.pk.encode(nil, row)
		if err == nil && null {
			err = mysql.NewSQLError(mysql.ERInvalidUseOfNull, "22004", "Invalid use of NULL value")
		}
		return k, err
	}
	if m.hidden {
		keyOf = func([]byte) ([]byte, error) { return appendIntKey(nil, int64(te.rowid.Add(1))), nil }
	}
	for {
		if m.hidden {
			te.rowid.Store(0) // the key is dropped: rows renumbered from 1
		}
		err = te.store.Rekey(desc, keyOf)
		if !errors.Is(err, storage.ErrRowsInUse) {
			break
		}
		if replaying {
			// A local transaction has changed rows of the table: wait for
			// it, within the bound.
			if err := t.waitIdle(ctx, deadline); err != nil {
				if isLockWaitTimeout(err) {
					sess.replayBlocked = fmt.Errorf("%w (a local transaction has changed rows of the table for %v, innodb_lock_wait_timeout)", txn.ErrLockWaitTimeout, limit)
				}
				return err
			}
			continue
		}
		// A transaction changed a row between the wait and the log call:
		// the statement is logged, so it waits for it to end.
		if err := t.waitIdle(ctx, time.Time{}); err != nil {
			return err
		}
	}
	if err != nil {
		var dup *storage.DuplicateKeyError
		if errors.As(err, &dup) {
			row, _ := decodeRow(dup.Existing, n)
			return duplicateEntry(m, m.pk, "PRIMARY", row, row)
		}
		return err
	}
	t.publish(m)
	return nil
}

// waitIdle waits until no unfinished transaction has changed a row of the
// table: up to deadline (then 1205), or without one when deadline is zero.
func (t *Table) waitIdle(ctx *sql.Context, deadline time.Time) error {
	for pause := time.Millisecond; t.entry.store.InUse(); pause = min(2*pause, 50*time.Millisecond) {
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return mysql.NewSQLError(mysql.ERLockWaitTimeout, "HY000", "Lock wait timeout exceeded; try restarting transaction")
			}
			pause = min(pause, left)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
	return nil
}

// isLockWaitTimeout reports whether err is MySQL's 1205.
func isLockWaitTimeout(err error) bool {
	var se *mysql.SQLError
	return errors.As(err, &se) && se.Num == mysql.ERLockWaitTimeout
}

// pkSchema is schema with the primary key cols (none: no primary key).
// Key columns become NOT NULL, as in MySQL; a dropped key's columns stay
// NOT NULL.
func pkSchema(schema sql.Schema, cols []sql.IndexColumn) sql.PrimaryKeySchema {
	out := make(sql.Schema, len(schema))
	for i, c := range schema {
		cc := *c
		cc.PrimaryKey = false
		out[i] = &cc
	}
	var ords []int
	for _, ic := range cols {
		for i, c := range out {
			if strings.EqualFold(c.Name, ic.Name) {
				c.PrimaryKey, c.Nullable = true, false
				ords = append(ords, i)
			}
		}
	}
	return sql.NewPrimaryKeySchema(out, ords...)
}

// checkAutoIncKeyed refuses to drop a primary key that is the only key
// starting with the AUTO_INCREMENT column (MySQL's 1075).
func checkAutoIncKeyed(m *tableMeta) error {
	if m.autoIncCol < 0 {
		return nil
	}
	for _, im := range m.indexes {
		if len(im.codec.cols) > 0 && im.codec.cols[0].ord == m.autoIncCol {
			return nil
		}
	}
	return sql.ErrWrongAutoKey.New() // 1075, MySQL's wording (internal/server/errors.go)
}
