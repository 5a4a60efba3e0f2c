package integration

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// KILL QUERY, KILL and max_execution_time stop a long statement sent as a
// server-side prepared statement (COM_STMT_PREPARE, COM_STMT_EXECUTE), as
// they stop one sent as text (TestKillLongStatements; issue 29). A 55 MB
// prepared IN list took some 8 s to prepare and 10 s to execute (planned
// again with the bound values), and neither KILL QUERY nor KILL stopped
// either.

// hugePrepared is a prepared "SELECT COUNT(*) FROM big WHERE id IN (?,
// ...)" about size bytes long (some 4 million values).
func hugePrepared(size int) string {
	var b strings.Builder
	b.Grow(size + 64)
	b.WriteString("SELECT COUNT(*) FROM big WHERE id IN (?, 0")
	for i := 100000000000; b.Len() < size; i++ {
		b.WriteString(", ")
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString(")")
	return b.String()
}

// protocolParse is how long vitess's parse of query takes here: the
// protocol layer parses a COM_STMT_PREPARE's text itself (to count its
// parameters) before lockstep's handler sees it.
func protocolParse(t *testing.T, query string) time.Duration {
	t.Helper()
	start := time.Now()
	if _, err := ast.ParseWithOptions(context.Background(), query, ast.ParserOptions{}); err != nil {
		t.Fatalf("vitess parse: %v", err)
	}
	return time.Since(start)
}

// preparing waits until connection id shows its COM_STMT_PREPARE in the
// process list (Command "Prepare", as MySQL), for up to 2 minutes: the
// protocol layer has parsed the text and go-mysql-server prepares it.
func preparing(t *testing.T, admin *session, id int64) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if admin.int("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ? AND COMMAND = 'Prepare' AND LENGTH(INFO) > 1000", id) == 1 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("connection %d never showed its prepare in the process list", id)
}

// goPrepare prepares query on s in a goroutine.
func (s *session) goPrepare(query string) (*pending, **sql.Stmt) {
	p := &pending{query: s.name + ": prepare", start: time.Now(), done: make(chan struct{})}
	var st *sql.Stmt
	go func() {
		defer close(p.done)
		st, p.err = s.c.PrepareContext(s.ctx, query)
		p.took = time.Since(p.start)
	}()
	return p, &st
}

// endsWithin waits for p up to 20 s and checks that it ended within
// killAnswer of since with error code.
func endsWithin(t *testing.T, p *pending, since time.Time, code uint16, what string) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still running 20 s later", what)
	}
	d := time.Since(since)
	t.Logf("%s: ended %v later (%v in all)", what, d, p.took)
	if errno(p.err) != code {
		t.Fatalf("%s: %v, want error %d", what, p.err, code)
	}
	if d > killAnswer {
		t.Errorf("%s: ended %v later, want within %v", what, d, killAnswer)
	}
}

// gone waits for connection id to leave the process list, within
// killAnswer of since.
func gone(t *testing.T, admin *session, id int64, since time.Time) {
	t.Helper()
	for admin.int("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", id) != 0 {
		if d := time.Since(since); d > 20*time.Second {
			t.Fatalf("connection %d still in the process list %v after KILL", id, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	d := time.Since(since)
	t.Logf("KILL: the connection left the process list %v later", d)
	if d > killAnswer {
		t.Errorf("connection %d left the process list %v after KILL, want within %v", id, d, killAnswer)
	}
}

func TestKillLongPrepared(t *testing.T) {
	srv := startServer(t)
	huge := hugePrepared(55 << 20)
	t.Logf("%d bytes; vitess parses them in %v", len(huge), protocolParse(t, huge))
	const after = 500 * time.Millisecond

	// longEnv is a database whose sessions may wait minutes: a loaded
	// machine takes tens of seconds over the 55 MB text.
	longEnv := func(t *testing.T) *env {
		e := newDatabase(t, srv)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		t.Cleanup(cancel)
		e.ctx = ctx
		return e
	}
	prepareKilled := func(t *testing.T, connection bool) {
		e := longEnv(t)
		fillBig(e.session("setup"), 100)
		victim, admin := e.session("victim"), e.session("admin")
		id := victim.int("SELECT CONNECTION_ID()")
		p, _ := victim.goPrepare(huge)
		preparing(t, admin, id)
		select {
		case <-p.done:
			t.Fatalf("the prepare ended before KILL, after %v: %v", p.took, p.err)
		case <-time.After(after):
		}
		kill := "KILL QUERY "
		if connection {
			kill = "KILL "
		}
		admin.exec(kill + strconv.FormatInt(id, 10))
		killed := time.Now()
		if connection {
			gone(t, admin, id, killed)
			return
		}
		endsWithin(t, p, killed, erQueryInterrupted, "the prepare, KILL QUERY")
		if cmd := admin.str("SELECT COMMAND FROM information_schema.PROCESSLIST WHERE ID = ?", id); cmd != "Sleep" {
			t.Errorf("after KILL QUERY the connection's command is %q, want Sleep", cmd)
		}
		victim.wantInt(1, "SELECT 1")
		// The connection prepares and runs statements as before.
		victim.wantInt(3, "SELECT COUNT(*) FROM big WHERE id IN (?, 1, 2)", 0)
	}
	t.Run("PrepareKillQuery", func(t *testing.T) { prepareKilled(t, false) })
	t.Run("PrepareKillConnection", func(t *testing.T) { prepareKilled(t, true) })

	// KILL while vitess parses the text (before lockstep's handler sees
	// the prepare; 3.8 s at 64 MiB): answered at once, not when the parse
	// ends. Lockstep_prepare_parse_kills counts the KILLs that found a
	// prepare there. KILL QUERY is sent again until one does (before it,
	// the text may still be on its way); KILL, which ends the connection
	// whenever it comes, is sent once, well inside the parse's time, and
	// the round run again on a new connection if it missed the parse.
	parse := protocolParse(t, huge)
	parseKilled := func(t *testing.T, connection bool) {
		e := longEnv(t)
		fillBig(e.session("setup"), 100)
		admin := e.session("admin")
		kills := func() int64 {
			return status(t, e.ctx, e.db, "SHOW GLOBAL STATUS LIKE 'Lockstep_prepare_parse_kills'")["Lockstep_prepare_parse_kills"]
		}
		for round := 1; ; round++ {
			victim := e.session(fmt.Sprintf("victim%d", round))
			id := victim.int("SELECT CONNECTION_ID()")
			before := kills()
			p, _ := victim.goPrepare(huge)
			var killed time.Time
			for killed.IsZero() {
				wait := 50 * time.Millisecond
				if connection {
					wait = 200*time.Millisecond + parse/3
				}
				select {
				case <-p.done:
					t.Fatalf("the prepare ended (after %v: %v) before a KILL found it in the protocol layer's parse", p.took, p.err)
				case <-time.After(wait):
				}
				if !connection {
					admin.exec("KILL QUERY " + strconv.FormatInt(id, 10))
					if kills() > before {
						killed = time.Now()
					}
					continue
				}
				admin.exec("KILL " + strconv.FormatInt(id, 10))
				killed = time.Now()
			}
			if connection {
				select {
				case <-p.done:
				case <-time.After(20 * time.Second):
					t.Fatalf("the prepare still waits 20 s after KILL")
				}
				if kills() == before {
					if round == 3 {
						t.Fatalf("3 KILLs missed the protocol layer's parse")
					}
					t.Logf("round %d: the KILL missed the protocol layer's parse (%v)", round, p.err)
					continue
				}
				if d := time.Since(killed); d > killAnswer || p.err == nil {
					t.Errorf("the prepare, KILL: %v, %v later; want a lost connection within %v", p.err, d, killAnswer)
				}
				gone(t, admin, id, killed)
				return
			}
			t.Logf("KILL QUERY found the prepare in the parse %v after it was sent", killed.Sub(p.start))
			endsWithin(t, p, killed, erQueryInterrupted, "the prepare, KILL QUERY in the parse")
			// The next command waits for the parse to end; vitess's own
			// answer to the prepare is not read as its answer.
			victim.wantInt(1, "SELECT 1")
			victim.wantInt(3, "SELECT COUNT(*) FROM big WHERE id IN (?, 1, 2)", 0)
			return
		}
	}
	t.Run("ParseKillQuery", func(t *testing.T) { parseKilled(t, false) })
	t.Run("ParseKillConnection", func(t *testing.T) { parseKilled(t, true) })

	// COM_STMT_EXECUTE plans the statement again with the bound values.
	t.Run("Execute", func(t *testing.T) {
		e := longEnv(t)
		fillBig(e.session("setup"), 100)
		victim, admin := e.session("victim"), e.session("admin")
		id := victim.int("SELECT CONNECTION_ID()")
		start := time.Now()
		st, err := victim.c.PrepareContext(victim.ctx, huge)
		if err != nil {
			t.Fatalf("prepare: %v (after %v)", err, time.Since(start))
		}
		t.Logf("prepared in %v", time.Since(start))
		defer st.Close()
		execute := func() *pending {
			p := &pending{query: "execute", start: time.Now(), done: make(chan struct{})}
			go func() {
				defer close(p.done)
				p.err = st.QueryRowContext(victim.ctx, 5).Scan(&p.val)
				p.took = time.Since(p.start)
			}()
			return p
		}

		// KILL QUERY while it is planned.
		p := execute()
		running(t, admin, id)
		time.Sleep(500 * time.Millisecond)
		admin.exec("KILL QUERY " + strconv.FormatInt(id, 10))
		endsWithin(t, p, time.Now(), erQueryInterrupted, "the execute, KILL QUERY")
		victim.wantInt(1, "SELECT 1")

		// max_execution_time times an executed SELECT (MySQL does not
		// time its prepare): 3024. (The timer starts with the analysis,
		// after go-mysql-server has bound the values: sqlfront.md.)
		victim.exec("SET SESSION max_execution_time = 300")
		p = execute()
		select {
		case <-p.done:
		case <-time.After(60 * time.Second):
			t.Fatalf("the execute still ran 60 s after it began, max_execution_time 300 ms")
		}
		t.Logf("the execute, max_execution_time 300 ms: %v", p.took)
		if errno(p.err) != erQueryTimeout {
			t.Fatalf("the execute, max_execution_time 300 ms: %v, want 3024", p.err)
		}
		victim.exec("SET SESSION max_execution_time = 0")

		// KILL closes the connection at once.
		p = execute()
		running(t, admin, id)
		time.Sleep(500 * time.Millisecond)
		admin.exec("KILL " + strconv.FormatInt(id, 10))
		gone(t, admin, id, time.Now())
	})
}

// TestLongStatementError: a long statement (run on a goroutine of its
// own so that KILL can abandon it) that fails keeps its own error: the
// end of its process-list entry cancels its context, which was taken for
// a KILL (1317 instead of 1054), and a long COM_STMT_PREPARE that
// succeeded failed so too.
func TestLongStatementError(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	s := e.session("s")
	fillBig(s, 10)
	long := "SELECT nope FROM big WHERE id IN (" + numberList(20000) + ")"
	for i := 0; i < 3; i++ {
		s.mustFail(1054, long)
		if _, err := s.c.PrepareContext(s.ctx, long); errno(err) != 1054 {
			t.Fatalf("prepare of a long statement naming no column: %v, want 1054", err)
		}
		st, err := s.c.PrepareContext(s.ctx, "SELECT COUNT(*) FROM big WHERE id IN (?, "+numberList(20000)+")")
		if err != nil {
			t.Fatalf("prepare of a long statement: %v", err)
		}
		var n int64
		if err := st.QueryRowContext(s.ctx, 3).Scan(&n); err != nil || n != 10 {
			t.Fatalf("execute of a long statement: %d, %v; want 10", n, err)
		}
		st.Close()
	}
}

// TestKillAfterFailedPrepare: a COM_STMT_PREPARE whose text the protocol
// layer cannot parse never reaches lockstep's handler; the mark its parse
// left must end with the error's answer, or a later KILL QUERY took the
// statement then running for that prepare and answered it 1317 ahead of
// its own answer.
func TestKillAfterFailedPrepare(t *testing.T) {
	srv := startServer(t)
	e := newDatabase(t, srv)
	victim, admin := e.session("victim"), e.session("admin")
	kills := func() int64 {
		return status(t, e.ctx, e.db, "SHOW GLOBAL STATUS LIKE 'Lockstep_prepare_parse_kills'")["Lockstep_prepare_parse_kills"]
	}
	id := victim.int("SELECT CONNECTION_ID()")
	// (vitess answered 1105 "unknown error: Code: INVALID_ARGUMENT
	// syntax error at position 6 near 'SELEC'")
	const want = "Error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'SELEC 1 FROM' at line 1"
	for i := 0; i < 2; i++ {
		if _, err := victim.c.PrepareContext(victim.ctx, "SELEC 1 FROM"); err == nil || err.Error() != want {
			t.Fatalf("prepare of bad text: %v, want %s", err, want)
		}
	}
	before := kills()
	p := victim.goQueryInt("SELECT SLEEP(3)")
	running(t, admin, id)
	admin.exec("KILL QUERY " + strconv.FormatInt(id, 10))
	<-p.done
	t.Logf("SELECT SLEEP(3), KILL QUERY: %v, %v after %v", p.val, p.err, p.took)
	if n := kills() - before; n != 0 {
		t.Errorf("KILL QUERY of a SELECT answered %d prepares in the protocol layer's parse", n)
	}
	victim.wantInt(1, "SELECT 1")
}
