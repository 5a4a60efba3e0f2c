package sqlfront

import (
	"context"
	"errors"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
)

// TestPlanningPhases: a long statement's planning ends once, either in
// its execution or abandoned, and an abandoned statement's plan is not
// executed (execOverride asks executing).
func TestPlanningPhases(t *testing.T) {
	p := NewPlanning()
	if !p.Execute() || !p.Execute() {
		t.Fatalf("Execute of a planned statement: false")
	}
	if p.Abandon() {
		t.Fatalf("an executing statement was abandoned")
	}

	p = NewPlanning()
	if !p.Abandon() || !p.Abandon() {
		t.Fatalf("Abandon of a planned statement: false")
	}
	if p.Execute() {
		t.Fatalf("an abandoned statement executes")
	}

	// StartPlanning hands the statement's context over and ties the
	// session to p; executing then refuses to build the plan.
	s := &Session{BaseSession: sql.NewBaseSession()}
	p = NewPlanning()
	cctx, cancel := context.WithCancel(WithPlanning(context.Background(), p))
	ctx := sql.NewContext(cctx, sql.WithSession(s))
	StartPlanning(ctx)
	select {
	case <-p.Ready():
	default:
		t.Fatalf("Ready not closed after StartPlanning")
	}
	if p.Context() != ctx || s.planning.Load() != p {
		t.Fatalf("StartPlanning did not register the context and session")
	}
	cancel()
	p.Abandon()
	if err := executing(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("executing an abandoned statement: %v, want context.Canceled", err)
	}
	p.Done()
	if s.planning.Load() != nil {
		t.Fatalf("Done left the session pointing at the statement")
	}
	if err := executing(ctx); err != nil {
		t.Fatalf("executing with no long statement: %v", err)
	}
}

// TestParsedLong: a long text is not parsed once its statement's context
// is cancelled; a short one is.
func TestParsedLong(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	long := make([]byte, MinStoppableText)
	if err := parsedLong(ctx, string(long)); !errors.Is(err, context.Canceled) {
		t.Fatalf("long text, cancelled: %v", err)
	}
	if err := parsedLong(ctx, "SELECT 1"); err != nil {
		t.Fatalf("short text, cancelled: %v", err)
	}
	if err := parsedLong(context.Background(), string(long)); err != nil {
		t.Fatalf("long text: %v", err)
	}
}

// TestPrepareParseKill: KILL while the protocol layer parses a
// COM_STMT_PREPARE (StopFastStatement) is kept for the handler's prepare;
// one before or after the parse is not.
func TestPrepareParseKill(t *testing.T) {
	s := &Session{BaseSession: sql.NewBaseSession()}
	s.killPrepareParse() // idle
	s.preparing.Store(prepareParsing)
	if s.preparing.Swap(prepareIdle) == prepareKilled {
		t.Fatalf("a KILL before the parse was kept")
	}
	s.preparing.Store(prepareParsing)
	s.killPrepareParse()
	if s.preparing.Swap(prepareIdle) != prepareKilled {
		t.Fatalf("a KILL during the parse was lost")
	}
	s.killPrepareParse()
	if s.preparing.Load() != prepareIdle {
		t.Fatalf("a KILL after the prepare marked it")
	}
}
