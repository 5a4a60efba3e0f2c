package sqlfront

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
)

// Stopping a long statement while it is parsed or planned.
//
// go-mysql-server's parser (its fork of vitess's sqlparser) and its plan
// builder do not look at the statement's context: a statement near
// max_allowed_packet (a 55 MB IN list) takes seconds in them, and KILL
// QUERY or KILL waited for the end. The protocol layer therefore runs a
// long statement (at least MinStoppableText bytes) on a goroutine of its
// own and waits for it or for the statement's context
// (internal/server/longstmt.go): when the context is cancelled while the
// statement is still being planned, the statement fails at once and its
// goroutine is abandoned — it runs to the end of the phase it is in and
// stops at the next check (after the parse, before the first analyzer
// rule, or when execution would begin), its result dropped; the
// connection's next command waits for it, so a connection has at most
// one statement in flight as before.
//
// A Planning is that statement's state. It moves once, from planning to
// either executing (the statement's goroutine is about to execute its
// plan, or send a result) or abandoned (the protocol layer gave up on
// it): whichever comes first wins, so an abandoned statement never
// executes and a statement that executes is never abandoned (execution
// observes the context itself).

// MinStoppableText is the length from which a statement's text is
// parsed and planned on a goroutine of its own. Shorter statements parse
// and plan in milliseconds (a 64 KiB IN list in about 10 ms) and pay
// nothing.
const MinStoppableText = 64 << 10

const (
	planningPhase int32 = iota
	executingPhase
	abandonedPhase
)

// Planning is a long statement's planning phase (see above).
type Planning struct {
	phase atomic.Int32
	once  sync.Once
	ready chan struct{} // closed when ctx is set
	ctx   *sql.Context  // the statement's context (process list)
	s     *Session      // its session, whose planning field points here
}

// NewPlanning returns a statement's planning state, in its planning
// phase.
func NewPlanning() *Planning { return &Planning{ready: make(chan struct{})} }

type planningKey struct{}

// WithPlanning returns ctx carrying p: the statement go-mysql-server
// runs with the returned context registers its own context in p when it
// enters the process list (StartPlanning).
func WithPlanning(ctx context.Context, p *Planning) context.Context {
	return context.WithValue(ctx, planningKey{}, p)
}

// StartPlanning is called with a statement's context as the process
// list gives it (cancelled by KILL QUERY and KILL): if the statement
// runs with a Planning, the context is kept there and the session told.
// Only the first context counts.
func StartPlanning(ctx *sql.Context) {
	p, _ := ctx.Value(planningKey{}).(*Planning)
	if p == nil {
		return
	}
	p.once.Do(func() {
		p.ctx = ctx
		if s, ok := ctx.Session.(*Session); ok {
			p.s = s
			s.planning.Store(p)
		}
		close(p.ready)
	})
}

// Ready is closed once the statement's context is known (Context).
func (p *Planning) Ready() <-chan struct{} { return p.ready }

// Context is the statement's context; valid once Ready is closed.
func (p *Planning) Context() *sql.Context { return p.ctx }

// Abandon gives up on the statement if it has not begun to execute, and
// reports whether it did.
func (p *Planning) Abandon() bool {
	return p.phase.CompareAndSwap(planningPhase, abandonedPhase) || p.phase.Load() == abandonedPhase
}

// Execute moves the statement to its execution, and reports false if it
// was abandoned: it must then stop.
func (p *Planning) Execute() bool {
	return p.phase.CompareAndSwap(planningPhase, executingPhase) || p.phase.Load() == executingPhase
}

// EndPlanning is called when the process list ends the statement or
// operation of ctx (EndQuery, EndOperation), which cancels its context:
// if ctx is the one StartPlanning registered, the statement has ended by
// itself (planned and run, or failed), and that cancellation must not
// make the protocol layer abandon it — it would answer 1317 instead of
// the statement's own error, or instead of a COM_STMT_PREPARE's result
// (a prepare never executes).
func EndPlanning(ctx *sql.Context) {
	p, _ := ctx.Value(planningKey{}).(*Planning)
	if p == nil {
		return
	}
	select {
	case <-p.ready:
	default:
		return
	}
	if p.ctx == ctx {
		p.Execute()
	}
}

// Done is called when the statement's goroutine has returned: its
// session no longer points at p.
func (p *Planning) Done() {
	if p.s != nil {
		p.s.planning.CompareAndSwap(p, nil)
	}
}

// executing is the check before a plan is executed: false (and the
// context's error, or context.Canceled) when the statement was abandoned.
func executing(ctx *sql.Context) error {
	s, ok := ctx.Session.(*Session)
	if !ok {
		return nil
	}
	if p := s.planning.Load(); p != nil && !p.Execute() {
		if err := ctx.Err(); err != nil {
			return err
		}
		return context.Canceled
	}
	return nil
}

// parsedLong is the check after a long statement's text was parsed: the
// context's error if it was cancelled meanwhile, so that a statement
// killed during its parse is not planned too.
func parsedLong(ctx context.Context, query string) error {
	if len(query) < MinStoppableText {
		return nil
	}
	return interrupted(ctx)
}

// A COM_STMT_PREPARE's text is parsed by the protocol layer (vitess, to
// count the parameters) before the handler sees it, on the connection's
// goroutine: the statement is in no process list yet, so KILL QUERY then
// found nothing to cancel and the prepare ran on to its end. The handler
// marks the parse's start (BeginPrepareParse, from
// ParserOptionsForConnection, which vitess calls right before it) and
// KILL marks a prepare being parsed as killed (StopFastStatement); the
// handler's prepare asks EndPrepareParse first and fails with 1317 if it
// was. The parse itself runs to its end (it is linear in the text), but
// the client need not wait for it: the server layer may answer the
// killed prepare at once (ClaimKilledPrepare) and drop vitess's own
// answer when it comes.

const (
	prepareIdle uint32 = iota
	prepareParsing
	prepareKilled
	prepareAnswered // killed, and answered ahead of the parse's end
)

// BeginPrepareParse marks connection connID's COM_STMT_PREPARE as being
// parsed by the protocol layer.
func (fe *Frontend) BeginPrepareParse(connID uint32) {
	if s := fe.session(connID); s != nil {
		s.preparing.Store(prepareParsing)
	}
}

// EndPrepareParse ends the mark BeginPrepareParse set and reports
// whether KILL QUERY or KILL arrived meanwhile.
func (fe *Frontend) EndPrepareParse(connID uint32) (killed bool) {
	if s := fe.session(connID); s != nil {
		st := s.preparing.Swap(prepareIdle)
		return st == prepareKilled || st == prepareAnswered
	}
	return false
}

// ClaimKilledPrepare reports whether the caller may answer connection
// connID's killed COM_STMT_PREPARE, still being parsed, itself: true
// once, and only if the handler has not yet seen the prepare
// (EndPrepareParse). The answer the handler gives later is not the
// client's to read then.
func (fe *Frontend) ClaimKilledPrepare(connID uint32) bool {
	if s := fe.session(connID); s != nil {
		return s.preparing.CompareAndSwap(prepareKilled, prepareAnswered)
	}
	return false
}

// killPrepareParse marks the COM_STMT_PREPARE of s being parsed, if any,
// as killed.
func (s *Session) killPrepareParse() bool {
	return s.preparing.CompareAndSwap(prepareParsing, prepareKilled)
}
