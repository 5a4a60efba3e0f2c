package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"sync/atomic"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/sirupsen/logrus"

	"lockstep/internal/sqlfront"
)

// KILL during the parse and planning of a long statement.
//
// go-mysql-server's parser and plan builder do not look at KILL: a
// statement near max_allowed_packet kept KILL QUERY and KILL waiting for
// seconds (sqlfront/planning.go). A text statement (COM_QUERY) of at
// least sqlfront.MinStoppableText bytes runs on a goroutine of its own
// while the connection's goroutine waits for it or for its context:
//   - cancelled (KILL QUERY, KILL, max_execution_time) while the
//     statement is still planned, the statement is abandoned: it fails at
//     once with 1317 (3024 when max_execution_time stopped it), leaves
//     the process list (Command Sleep), and its goroutine runs on to the
//     next check, which stops it (it never executes nor sends anything);
//   - the connection's next command (and its closing) first waits for an
//     abandoned statement to end: a connection never has two statements in
//     flight, and the session is used by one goroutine at a time. The
//     abandoned statement's error enters the session's diagnostics then;
//   - a connection closed by KILL leaves the process list at once; its
//     session is closed when the abandoned statement has ended;
//   - cancelled once the statement executes, it is waited for: execution
//     observes the context itself.
// Shorter statements run in place, as before.
//
// COM_STMT_PREPARE and COM_STMT_EXECUTE of a long text run the same way
// (handler.go; go-mysql-server plans the statement again at every
// execute). vitess parses a prepare's text itself before the handler sees
// it, outside any process list: ParserOptionsForConnection (called right
// before that parse) marks it, KILL marks it killed and answers the
// client with 1317 at once, ahead of the protocol layer
// (handler.killParsingPrepare, wireConn.interject), and the prepare fails
// as soon as the handler sees it, its answer dropped. That parse runs to
// its end: it is linear in the text, bounded by max_allowed_packet (3.8 s
// at 64 MiB; docs/sqlfront.md); the connection's next command waits for it. A prepare that fails or is abandoned
// leaves no statement id (vitess registered one before asking).

// stoppable is a long statement run by runStoppable; nil for a short one.
type stoppable struct {
	p *sqlfront.Planning
}

// newStoppable returns the stoppable of a statement text, nil if it is
// short.
func newStoppable(query string) *stoppable {
	if len(query) < sqlfront.MinStoppableText {
		return nil
	}
	return &stoppable{p: sqlfront.NewPlanning()}
}

// guard wraps a result callback: a statement sends a result only when it
// executes, never once abandoned.
func (st *stoppable) guard(cb mysql.ResultSpoolFn) mysql.ResultSpoolFn {
	if st == nil {
		return cb
	}
	return func(r *sqltypes.Result, more bool) error {
		if !st.p.Execute() {
			return context.Canceled
		}
		return cb(r, more)
	}
}

// testAfterStoppable, when set by a test, runs on a long statement's
// goroutine after it has handed over its result (TestAbandonedThenNext).
var testAfterStoppable atomic.Pointer[func()]

// abandonedStmt is a connection's statement runStoppable gave up on.
type abandonedStmt struct {
	done <-chan error // its goroutine's result
	err  error        // the error the client got
}

// runStoppable runs fn, the statement's work in go-mysql-server: in place
// for a short statement, else on a goroutine of its own until it ends or
// its context is cancelled while it is planned; abandoned reports the
// latter, err is then the error to send.
func (h *handler) runStoppable(ctx context.Context, c *mysql.Conn, st *stoppable, fn func(context.Context) error) (abandoned bool, err error) {
	if st == nil {
		return false, fn(ctx)
	}
	done := make(chan error, 1)
	go func() {
		err := recovered(c, func() error { return fn(sqlfront.WithPlanning(ctx, st.p)) })
		// The session lets go of the statement's planning state before
		// anyone hears it ended: the connection's next statement (settle
		// waits for done) must not find the abandoned state and fail its
		// own execution check with 1317.
		st.p.Done()
		done <- err
		if f := testAfterStoppable.Load(); f != nil {
			(*f)()
		}
	}()
	select {
	case err := <-done:
		return false, err
	case <-st.p.Ready():
	}
	sctx := st.p.Context()
	select {
	case err := <-done:
		return false, err
	case <-sctx.Done():
	}
	if !st.p.Abandon() {
		return false, <-done // executing: it stops by itself
	}
	// The statement has ended for the client: for the process list too
	// (go-mysql-server ignores the statement's own EndQuery later).
	h.fe.Engine.ProcessList.EndQuery(sctx)
	err = errInterrupted()
	if h.fe.StatementTimedOut(c.ConnectionID) {
		err = sqlfront.ErrQueryTimeout()
	}
	h.abandoned.Store(c.ConnectionID, &abandonedStmt{done: done, err: err})
	h.nAbandoned.Add(1)
	logStatementError(c.ConnectionID, err) // clientlog.go
	return true, err
}

// errInterrupted is the error of a statement KILL QUERY or KILL stopped.
func errInterrupted() error {
	return mysql.NewSQLError(mysql.ERQueryInterrupted, mysql.SSQueryInterrupted, "Query execution was interrupted")
}

// recovered runs fn, turning a panic into an error as the protocol layer
// does for a command (the goroutine is not the connection's).
func recovered(c *mysql.Conn, fn func() error) (err error) {
	defer func() {
		if x := recover(); x != nil {
			logrus.WithField("connectionID", c.ConnectionID).Errorf("statement panicked: %v\n%s", x, debug.Stack())
			err = mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState, "%v", fmt.Errorf("statement panicked: %v", x))
		}
	}()
	return fn()
}

// settle waits for the statement of connection c that runStoppable
// abandoned, if any, and puts its error into the session's diagnostics.
// Every command that uses the session calls it first.
func (h *handler) settle(c *mysql.Conn) {
	if h.nAbandoned.Load() == 0 {
		return
	}
	v, ok := h.abandoned.LoadAndDelete(c.ConnectionID)
	if !ok {
		return
	}
	h.nAbandoned.Add(-1)
	a := v.(*abandonedStmt)
	<-a.done
	var se *mysql.SQLError
	if errors.As(a.err, &se) {
		h.fe.NoteError(c.ConnectionID, se.Num, se.Message)
	}
}

// ConnectionClosed: a connection whose statement was abandoned (closed
// by KILL, or by its client after KILL QUERY) leaves the process list
// now; its session is closed once the statement has ended.
func (h *handler) ConnectionClosed(c *mysql.Conn) {
	if h.nAbandoned.Load() != 0 {
		if _, ok := h.abandoned.Load(c.ConnectionID); ok {
			h.fe.Engine.ProcessList.RemoveConnection(c.ConnectionID)
			h.settle(c)
		}
	}
	h.Handler.ConnectionClosed(c)
}

// ParserOptionsForConnection reads the session's sql_mode (the protocol
// layer asks before COM_STMT_PREPARE).
func (h *handler) ParserOptionsForConnection(c *mysql.Conn) (ast.ParserOptions, error) {
	h.settle(c)
	o, err := h.Handler.ParserOptionsForConnection(c)
	h.fe.BeginPrepareParse(c.ConnectionID) // ComPrepare ends it
	if wc := wireConnOf(c.Conn); wc != nil {
		// (kill.go) Ended by ComPrepare, or by vitess's answer when its
		// parse failed and the handler never sees the prepare: a mark
		// left standing would have a later KILL answer another command.
		id := c.ConnectionID
		h.parsing.Store(id, wc)
		wc.armParseDone(func(p []byte) []byte {
			h.fe.EndPrepareParse(id)
			if _, failed := h.parsing.LoadAndDelete(id); failed { // ComPrepare never ran
				return h.prepareParseError(c, wc, p)
			}
			return nil
		})
	}
	return o, err
}

// vitessSyntaxError finds vitess's syntax error in the message of the
// error it answers a COM_STMT_PREPARE it cannot parse with.
var vitessSyntaxError = regexp.MustCompile(`syntax error at position (\d+) near '((?s:.*))'\n?$`)

// prepareParseError returns the packet p, vitess's answer to a
// COM_STMT_PREPARE whose text its parser refused, with MySQL's error in
// place of vitess's: 1064 and MySQL's words, where vitess answered 1105
// "unknown error: Code: INVALID_ARGUMENT ... syntax error at position N
// near 'x'" (a text statement gets 1064 through the handler). nil: p
// stands.
func (h *handler) prepareParseError(c *mysql.Conn, wc *wireConn, p []byte) []byte {
	if len(p) < 4+9 || p[4] != mysql.ErrPacket || int(p[0])|int(p[1])<<8|int(p[2])<<16 != len(p)-4 ||
		binary.LittleEndian.Uint16(p[5:]) != mysql.ERUnknownError {
		return nil
	}
	m := vitessSyntaxError.FindSubmatch(p[4+9:])
	if m == nil {
		return nil
	}
	query := ""
	if x, ok := wc.hook.(*execHook); ok {
		query = x.takeParsing()
	}
	var se *mysql.SQLError
	err := h.mapError(c, query, fmt.Errorf("syntax error at position %s near '%s'", m[1], m[2]))
	if !errors.As(err, &se) {
		return nil
	}
	h.noteError(c, se)
	w := packetWriter{seq: p[3]}
	w.errPacket(se)
	return w.b
}
