package sqlfront

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"
)

// Stopping a statement: KILL QUERY, KILL and max_execution_time.
//
// go-mysql-server's process list gives each statement a context that KILL
// QUERY and KILL cancel. Execution observes it (storage cursors check it as
// they read, lockstep's recursive CTE iterator at every iteration:
// recursivecte.go), but planning did not: go-mysql-server's analyzer runs
// its rules without looking at the context, so a statement whose planning
// took minutes (a long IN list or UNION chain, longin.go and
// longunion.go) ran to the end whatever KILL said. Every analyzer rule is
// wrapped to stop the analysis with the context's error before it runs:
// the analyzer runs some eighty rules per statement, and each again for
// every subquery and union branch, so a cancelled statement stops at the
// next rule. The cost is one non-blocking channel receive per rule.
//
// max_execution_time is MySQL's: a limit in milliseconds for a top-level
// SELECT (not INSERT ... SELECT, not a statement run by a stored routine),
// from the statement's /*+ MAX_EXECUTION_TIME(N) */ hint after its first
// SELECT, else from the session variable (0: none). A timer armed when the
// analysis begins (after parsing, as MySQL starts it when execution
// begins) cancels the statement's context as KILL QUERY does; the
// statement then fails with 3024 "Query execution was interrupted, maximum
// statement execution time exceeded" instead of 1317 (the protocol layer
// asks StatementTimedOut). Statements on the fast path are stopped by
// the same timer and by KILL (fast_stop.go).

// statementTimerRuleID is the pre-analysis rule arming max_execution_time.
const statementTimerRuleID analyzer.RuleId = 1<<20 + 40

// ErrQueryTimeout is MySQL's ER_QUERY_TIMEOUT.
func ErrQueryTimeout() error {
	return mysql.NewSQLError(3024, "HY000", "Query execution was interrupted, maximum statement execution time exceeded")
}

var sharedRulesOnce sync.Once

// interruptibleAnalysis wraps every rule of a so that analysis stops when
// the statement's context is cancelled, and adds the statement timer.
// go-mysql-server's default, once-after, validation and after-all rule
// lists are package-level slices every analyzer shares (and its simple
// INSERT / UPDATE / DELETE batches use OnceAfterAll directly): those are
// wrapped once per process, the others per analyzer.
func interruptibleAnalysis(a *analyzer.Analyzer) {
	shared := [][]analyzer.Rule{analyzer.DefaultRules, analyzer.OnceAfterDefault, analyzer.DefaultValidationRules, analyzer.OnceAfterAll}
	sharedRulesOnce.Do(func() {
		for _, rules := range shared {
			for i := range rules {
				rules[i].Apply = interruptible(rules[i].Apply)
			}
		}
	})
	for _, b := range a.Batches {
		if len(b.Rules) == 0 || sharesArray(b.Rules, shared) {
			continue
		}
		for i := range b.Rules {
			b.Rules[i].Apply = interruptible(b.Rules[i].Apply)
		}
	}
	for _, b := range a.Batches {
		if b.Desc == "pre-analyzer" {
			b.Rules = append(b.Rules, analyzer.Rule{Id: statementTimerRuleID, Apply: statementTimerRule})
		}
	}
}

// sharesArray reports whether rules is one of lists (same first element).
func sharesArray(rules []analyzer.Rule, lists [][]analyzer.Rule) bool {
	for _, l := range lists {
		if len(l) > 0 && &l[0] == &rules[0] {
			return true
		}
	}
	return false
}

// interruptible runs rule unless ctx is cancelled.
func interruptible(rule analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		if err := interrupted(ctx); err != nil {
			return n, transform.SameTree, err
		}
		return rule(ctx, a, n, scope, sel, qFlags)
	}
}

// interrupted returns ctx's error once it is cancelled, without blocking.
func interrupted(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
		return nil
	}
}

// stmtTimer is a session's max_execution_time timer.
type stmtTimer struct {
	mu       sync.Mutex
	pid      uint64 // the statement it was armed for
	t        *time.Timer
	timedOut bool // it fired for pid
	internal int  // lockstep's own statements are running (InternalStatement)
}

// arm starts the timer for statement pid: after d, cancel.
func (st *stmtTimer) arm(pid uint64, d time.Duration, cancel func()) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.t != nil {
		st.t.Stop()
	}
	st.pid, st.timedOut = pid, false
	st.t = time.AfterFunc(d, func() {
		st.mu.Lock()
		if st.pid == pid {
			st.timedOut = true
		}
		st.mu.Unlock()
		cancel()
	})
}

// armed reports whether the timer was armed for statement pid, or
// must not be (an internal statement runs).
func (st *stmtTimer) armed(pid uint64) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.pid == pid || st.internal > 0
}

// disarm stops the timer; whether it fired is kept.
func (st *stmtTimer) disarm() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.t != nil {
		st.t.Stop()
		st.t = nil
	}
}

// reset stops the timer: a new command begins.
func (st *stmtTimer) reset() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.t != nil {
		st.t.Stop()
		st.t = nil
	}
	st.pid, st.timedOut = 0, false
}

// fired reports whether the timer stopped the last statement it was armed
// for.
func (st *stmtTimer) fired() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.timedOut
}

// InternalStatement marks what connection connID runs until the returned
// function is called as lockstep's own statements, run to answer one the
// client sent (DO, CHECK TABLE, KILL's id: internal/server/adminstmt.go):
// max_execution_time does not apply to them.
func (fe *Frontend) InternalStatement(connID uint32) func() {
	s := fe.session(connID)
	if s == nil {
		return func() {}
	}
	s.timer.mu.Lock()
	s.timer.internal++
	s.timer.mu.Unlock()
	return func() {
		s.timer.mu.Lock()
		s.timer.internal--
		s.timer.mu.Unlock()
	}
}

// StatementTimedOut reports whether max_execution_time stopped the
// statement connection connID ran last (since BeginStatement): its
// "interrupted" error is then 3024.
func (fe *Frontend) StatementTimedOut(connID uint32) bool {
	s := fe.session(connID)
	return s != nil && s.timer.fired()
}

// statementTimerRule arms max_execution_time for a top-level SELECT.
func statementTimerRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, scope *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if scope != nil || ctx.IsInterpreted() || ctx.ProcessList == nil {
		return n, transform.SameTree, nil
	}
	s, ok := ctx.Session.(*Session)
	if !ok || s.connID == 0 || s.timer.armed(ctx.Pid()) {
		return n, transform.SameTree, nil
	}
	var ms int64
	if v, err := ctx.GetSessionVariable(ctx, "max_execution_time"); err == nil {
		ms, _ = sessionInt(v)
	}
	q := ctx.Query()
	if ms <= 0 && !containsFold(q, "max_execution_time") {
		return n, transform.SameTree, nil
	}
	isSelect, hint := selectTimeHint(q)
	if !isSelect {
		return n, transform.SameTree, nil
	}
	if hint > 0 {
		ms = hint
	}
	if ms <= 0 {
		return n, transform.SameTree, nil
	}
	// When it fires, the timer cancels this statement's context: the
	// process list holds its cancel function while it runs (a copy of
	// the list is made then, not for every statement).
	procs, conn, pid := ctx.ProcessList, s.ID(), ctx.Pid()
	s.timer.arm(pid, time.Duration(ms)*time.Millisecond, func() {
		for _, p := range procs.Processes() {
			if p.Connection == conn && p.QueryPid == pid && p.Kill != nil {
				p.Kill()
			}
		}
	})
	return n, transform.SameTree, nil
}

// sessionInt reads an integer system variable's value.
func sessionInt(v interface{}) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int:
		return int64(x), true
	case uint64:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int8:
		return int64(x), true
	}
	return 0, false
}

// selectTimeHint reports whether q is a SELECT statement — its first
// word (after comments and opening parentheses) is SELECT, or WITH with no
// INSERT, UPDATE, DELETE or REPLACE word outside quotes and comments — and
// the N of a MAX_EXECUTION_TIME(N) optimizer hint in the /*+ ... */
// comment right after its first SELECT (0 if none).
func selectTimeHint(q string) (isSelect bool, ms int64) {
	w, at := nextWord(q, 0)
	switch {
	case strings.EqualFold(q[w:at], "select"):
	case strings.EqualFold(q[w:at], "with"):
		sel := -1
		for i := at; i < len(q); {
			ws, we := nextWord(q, i)
			if ws == we {
				break
			}
			switch strings.ToLower(q[ws:we]) {
			case "insert", "update", "delete", "replace":
				return false, 0
			case "select":
				if sel < 0 {
					sel = we
				}
			}
			i = we
		}
		if sel < 0 {
			return false, 0
		}
		at = sel
	default:
		return false, 0
	}
	rest := strings.TrimLeft(q[at:], " \t\r\n")
	if !strings.HasPrefix(rest, "/*+") {
		return true, 0
	}
	end := strings.Index(rest, "*/")
	if end < 0 {
		return true, 0
	}
	return true, maxExecutionTimeHint(rest[3:end])
}

// maxExecutionTimeHint reads MAX_EXECUTION_TIME(N) in an optimizer hint
// comment's text (0 if absent or not a number).
func maxExecutionTimeHint(h string) int64 {
	const name = "max_execution_time"
	i := indexFold(h, name)
	if i < 0 {
		return 0
	}
	rest := strings.TrimLeft(h[i+len(name):], " \t\r\n")
	if !strings.HasPrefix(rest, "(") {
		return 0
	}
	end := strings.IndexByte(rest, ')')
	if end < 0 {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(rest[1:end]), 10, 32)
	if err != nil {
		return 0
	}
	return int64(n)
}

// indexFold is strings.Index, ASCII case-insensitive.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}
