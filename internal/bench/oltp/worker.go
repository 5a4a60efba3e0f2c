package oltp

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"time"
)

// worker is one thread: a connection of its own with its prepared
// statements, used below database/sql. The connection comes straight from
// the driver's connector and is never shared, so nothing of database/sql's
// pool, locking, argument conversion or Rows bookkeeping runs per
// statement: the client shares the cores with the server under test, and
// this brought its CPU per transaction down to sysbench's (docs/bench.md,
// docs/BENCHMARKS.md, issue 34 item 3).
type worker struct {
	run   *runner
	rec   *shard
	g     gen
	conn  driver.Conn
	text  driver.ExecerContext    // conn's text protocol (oltp_insert's INSERT, ROLLBACK)
	stmts [][NumKinds]driver.Stmt // [table][kind]; BEGIN and COMMIT under table 0
	ncols [][NumKinds]int         // columns of each SELECT's result, learned on its first run
	args  []driver.Value          // one statement's parameters, reused
	dest  []driver.Value          // one row, read and discarded, reused
	ops   []Op
}

// connect opens a connection and prepares the workload's statements on it
// (thread_init's prepare_statements).
func (w *worker) connect(ctx context.Context) error {
	conn, err := w.run.connector.Connect(ctx)
	if err != nil {
		return err
	}
	w.conn = conn
	text, ok := conn.(driver.ExecerContext)
	if !ok {
		return fmt.Errorf("driver connection %T cannot run text statements", conn)
	}
	w.text = text
	prep, ok := conn.(driver.ConnPrepareContext)
	if !ok {
		return fmt.Errorf("driver connection %T cannot prepare with a context", conn)
	}
	o := &w.g.o
	w.stmts = make([][NumKinds]driver.Stmt, o.Tables+1)
	w.ncols = make([][NumKinds]int, o.Tables+1)
	for _, k := range w.g.w.Kinds(o) {
		for n := 1; n <= o.Tables; n++ {
			t := n
			if k == Begin || k == Commit {
				t = 0
				if w.stmts[0][k] != nil {
					continue
				}
			}
			s, err := prep.PrepareContext(ctx, k.SQL(n))
			if err != nil {
				return fmt.Errorf("preparing %q: %w", k.SQL(n), err)
			}
			w.stmts[t][k] = s
		}
	}
	return nil
}

// close closes the statements and the connection. After a lost connection
// the driver knows it is closed and sends nothing.
func (w *worker) close() {
	for _, row := range w.stmts {
		for _, s := range row {
			if s != nil {
				s.Close() //nolint:errcheck // closing; nothing to do about it
			}
		}
	}
	w.stmts = nil
	if w.conn != nil {
		w.conn.Close() //nolint:errcheck // closing; nothing to do about it
		w.conn, w.text = nil, nil
	}
}

// reconnect replaces a broken connection and its statements, trying until
// the run ends; it reports whether it succeeded.
func (w *worker) reconnect(ctx context.Context) bool {
	w.close()
	for ctx.Err() == nil && time.Now().Before(w.run.end) {
		if err := w.connect(ctx); err == nil {
			return true
		}
		w.close()
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// exec runs one event's statements; the counts of a successful event's
// statements go to e.
func (w *worker) exec(ctx context.Context, ops []Op, e *event) error {
	var q [3]int64
	var ins, del int64
	for i := range ops {
		op := &ops[i]
		var err error
		var n int64
		switch {
		case !op.Kind.prepared():
			n, err = rowsAffected(w.text.ExecContext(ctx, op.insertQuery(), nil))
		case op.Kind.returnsRows():
			err = w.query(op)
		default:
			n, err = rowsAffected(w.stmts[op.Table][op.Kind].Exec(w.bind(op.Args))) //nolint:staticcheck // the context-free call: the context is never cancelled (loop) and ExecContext would copy the arguments
		}
		if err != nil {
			return &stmtError{op.Kind, err}
		}
		q[op.Kind.Class()]++
		switch op.Kind {
		case InsertRow, InsertQuery:
			ins += n
		case Delete:
			del += n
		}
	}
	for i := range q {
		e.c.queries[i] += q[i]
	}
	e.inserted += ins
	e.deleted += del
	return nil
}

// bind puts a statement's parameters (int64s and strings, already the
// driver's values) into the reused argument slice.
func (w *worker) bind(args []any) []driver.Value {
	w.args = w.args[:0]
	for _, a := range args {
		w.args = append(w.args, a)
	}
	return w.args
}

func rowsAffected(r driver.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// query runs a SELECT and reads every row, as sysbench's driver does
// (mysql_stmt_store_result), discarding the values. The result must be
// read to its end before the connection can run another statement; Close
// reads what Next left.
func (w *worker) query(op *Op) error {
	s := w.stmts[op.Table][op.Kind]
	rows, err := s.Query(w.bind(op.Args)) //nolint:staticcheck // see exec
	if err != nil {
		return err
	}
	nc := &w.ncols[op.Table][op.Kind]
	if *nc == 0 {
		*nc = len(rows.Columns())
	}
	if cap(w.dest) < *nc {
		w.dest = make([]driver.Value, *nc)
	}
	dest := w.dest[:*nc]
	for {
		if err = rows.Next(dest); err != nil {
			break
		}
	}
	clear(dest) // the values point into the driver's read buffer
	if !errors.Is(err, io.EOF) {
		rows.Close() //nolint:errcheck // the read's error is the one to report
		return err
	}
	return rows.Close()
}

// rollback ends a failed event's transaction. sysbench does not: it starts
// the next event with BEGIN, which commits what a lock wait timeout left
// of the failed one; lockstep bench oltp rolls it back instead.
func (w *worker) rollback(ctx context.Context) {
	if w.g.o.SkipTrx || w.g.w == PointSelect || w.g.w == Insert || w.text == nil {
		return
	}
	w.text.ExecContext(ctx, "ROLLBACK", nil) //nolint:errcheck // the transaction may already be gone
}
