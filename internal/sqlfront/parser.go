package sqlfront

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"lockstep/internal/txn"
)

// parser wraps go-mysql-server's parser. The planner drops a SELECT's
// locking clause, so the parser notes which query texts lock (FOR UPDATE,
// LOCK IN SHARE MODE, FOR SHARE); table scans of such a query become
// locking current reads. Prepared statements are parsed once at PREPARE,
// so the note is kept per query text and found again at EXECUTE.
type parser struct {
	sql.Parser
	fe *Frontend
}

func (p *parser) note(ctx context.Context, query string, stmt ast.Statement) {
	if stmt == nil || !mayLock(query) {
		return
	}
	if _, ok := stmt.(*ast.Begin); ok && containsFold(query, "consistent snapshot") {
		if sctx, ok := ctx.(*sql.Context); ok {
			if s, ok := sctx.Session.(*Session); ok {
				s.snapshotPid = sctx.Pid()
			}
		}
		return
	}
	mode := lockModeOf(stmt)
	if mode != 0 {
		p.fe.lockingQueries.add(query, mode)
	}
}

func (p *parser) ParseSimple(query string) (ast.Statement, error) {
	st, err := p.Parser.ParseSimple(normaliseLocking(query))
	p.note(nil, query, st)
	return st, err
}

func (p *parser) Parse(ctx *sql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	st, q, rem, err := p.Parser.Parse(ctx, normaliseLocking(query), multi)
	p.note(ctx, query, st)
	return st, q, rem, err
}

func (p *parser) ParseWithOptions(ctx context.Context, query string, delim rune, multi bool, o ast.ParserOptions) (ast.Statement, string, string, error) {
	st, q, rem, err := p.Parser.ParseWithOptions(ctx, normaliseLocking(query), delim, multi, o)
	p.note(ctx, query, st)
	return st, q, rem, err
}

func (p *parser) ParseOneWithOptions(ctx context.Context, query string, o ast.ParserOptions) (ast.Statement, int, error) {
	nq := normaliseLocking(query)
	st, n, err := p.Parser.ParseOneWithOptions(ctx, nq, o)
	p.note(ctx, query, st)
	if nq != query && n > 0 {
		// Map the end offset back onto the caller's text.
		n += len(query) - len(nq)
		if n > len(query) {
			n = len(query)
		}
	}
	return st, n, err
}

// mayLock is a cheap filter: only texts with these words can lock or ask
// for a snapshot, so most queries skip the AST walk.
func mayLock(q string) bool {
	return containsFold(q, "for ") || containsFold(q, "lock") || containsFold(q, "snapshot")
}

// containsFold reports whether s contains sub (ASCII, case-insensitive).
func containsFold(s, sub string) bool {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		if strings.EqualFold(s[i:i+n], sub) {
			return true
		}
	}
	return false
}

// lockModeOf returns the strongest locking clause in stmt's SELECTs.
func lockModeOf(stmt ast.Statement) txn.LockMode {
	var mode txn.LockMode
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if sel, ok := n.(*ast.Select); ok {
			switch sel.Lock {
			case ast.ForUpdateStr, ast.ForUpdateSkipLockedStr:
				mode = txn.LockX
			case ast.ShareModeStr:
				if mode == 0 {
					mode = txn.LockS
				}
			}
		}
		return true, nil
	}, stmt)
	return mode
}

// normaliseLocking rewrites MySQL 8's trailing FOR SHARE (which this parser
// does not know) into the equivalent LOCK IN SHARE MODE. The clause is
// found in q itself (ASCII, case-insensitively), so its offset is valid in
// q whatever else the text holds.
func normaliseLocking(q string) string {
	const clause = "for share"
	i := lastIndexFold(q, clause)
	if i < 0 {
		return q
	}
	rest := strings.ToLower(strings.TrimSpace(strings.TrimRight(q[i+len(clause):], "; \t\r\n")))
	switch rest {
	case "":
		return q[:i] + "lock in share mode" + q[i+len(clause):]
	case "nowait", "skip locked":
		return q[:i] + "lock in share mode"
	}
	return q
}

// lastIndexFold is the offset of the last occurrence of sub in s (ASCII,
// case-insensitive), or -1.
func lastIndexFold(s, sub string) int {
	for i := len(s) - len(sub); i >= 0; i-- {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// lockingQueries remembers the texts of locking queries (bounded).
type lockingQueries struct {
	m sync.Map // string -> txn.LockMode
	n atomic.Int64
}

const maxLockingQueries = 10000

func newLockingQueries() *lockingQueries { return &lockingQueries{} }

func (l *lockingQueries) add(q string, mode txn.LockMode) {
	if l.n.Load() >= maxLockingQueries {
		l.m.Clear()
		l.n.Store(0)
	}
	if _, loaded := l.m.LoadOrStore(q, mode); !loaded {
		l.n.Add(1)
	}
}

func (l *lockingQueries) lookup(q string) txn.LockMode {
	if l.n.Load() == 0 {
		return 0
	}
	if v, ok := l.m.Load(q); ok {
		return v.(txn.LockMode)
	}
	return 0
}
