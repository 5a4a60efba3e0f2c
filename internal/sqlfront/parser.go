package sqlfront

import (
	"context"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"lockstep/internal/storage"
	"lockstep/internal/txn"
)

// parser wraps go-mysql-server's parser. The planner drops a SELECT's
// locking clause, so the parser tells the session that the statement it
// parses locks (FOR UPDATE, LOCK IN SHARE MODE, FOR SHARE, with NOWAIT or
// SKIP LOCKED): its table scans become locking current reads. A prepared
// statement is parsed once, at PREPARE; at EXECUTE the session finds the
// clause again in its own prepared statement (Session.lockIntent). Nothing
// is kept per query text outside the session.
type parser struct {
	sql.Parser
	fe *Frontend
}

// note runs on every parsed statement: it rewrites row IN lists
// (rowin.go) and ~X (bitnot.go), makes FLUSH statements answer as MySQL's (flush.go), carries
// a SET list's scope word over to the assignments after it (setscope.go), records
// the statement's locking intent on the session, and
// notes a SET TRANSACTION for the next transaction only (settx.go), whose
// error (1568 inside a transaction) it returns.
func (p *parser) note(ctx context.Context, query string, stmt ast.Statement) error {
	if stmt == nil {
		return nil
	}
	if mayHaveRowIn(query) {
		expandRowIn(stmt)
	}
	if mayHaveUnion(query) {
		balanceUnions(stmt) // longunion.go
	}
	if mayHaveBitNot(query) {
		rewriteBitNot(stmt) // bitnot.go
	}
	if mayNameLogTable(query) {
		redirectLogTables(ctx, stmt) // mysqlschema.go
	}
	switch st := stmt.(type) {
	case *ast.DDL:
		if st.Action == ast.CreateStr && st.TableSpec != nil {
			noteCreateComment(ctx, st)
		}
		if st.TriggerSpec != nil {
			createTriggerViews(ctx, st) // viewroutine.go
		}
		if err := lockedDDLParsed(ctx, st); err != nil { // lockddl.go
			return err
		}
		if st.Action == ast.RenameStr {
			if err := renameDatabase(ctx, st); err != nil { // renamedb.go
				return err
			}
		}
	case *ast.AlterTable:
		if err := renameDatabase(ctx, st); err != nil {
			return err
		}
	case *ast.Flush:
		normalizeFlush(st) // flush.go
	case *ast.Load:
		loadDataAuth(st) // loaddata.go
	case *ast.Show, *ast.Kill:
		processAuth(st)       // procpriv.go
		replicaStatusAuth(st) // replicastatus.go
	case *ast.Delete:
		deleteDatabase(ctx, st)                                  // deletedb.go
		if err := writeThroughView(ctx, query, st); err != nil { // viewwrite.go
			return err
		}
	case *ast.Update:
		if err := writeThroughView(ctx, query, st); err != nil {
			return err
		}
	case *ast.Insert:
		if err := writeThroughView(ctx, query, st); err != nil {
			return err
		}
		if mayHaveGenerated(query) {
			generatedValues(ctx, st) // genvalues.go
		}
	case *ast.Set:
		if maySetScopeList(query) {
			carrySetScope(query, st) // setscope.go
		}
	}
	setTx := mayBeSet(query)
	if !setTx && !mayLock(query) {
		return nil
	}
	sctx, s := parsingSession(ctx)
	if s == nil {
		return nil
	}
	if setTx {
		if nextTxSet(query, stmt) {
			return s.beginNextTxSet(sctx)
		}
		return nil
	}
	if _, ok := stmt.(*ast.Begin); ok && containsFold(query, "consistent snapshot") {
		s.snapshotPid = sctx.Pid()
		return nil
	}
	if in := intentOf(query, stmt); in.mode != 0 {
		s.setLockIntent(sctx, in)
	}
	return nil
}

// parsingSession is the lockstep session a parse runs for (nil, nil for
// a parse outside one).
func parsingSession(ctx context.Context) (*sql.Context, *Session) {
	sctx, ok := ctx.(*sql.Context)
	if !ok {
		return nil, nil
	}
	s, _ := sctx.Session.(*Session)
	return sctx, s
}

// noteCreateComment keeps a CREATE TABLE's COMMENT option on the session
// for createTable.
func noteCreateComment(ctx context.Context, ddl *ast.DDL) {
	_, s := parsingSession(ctx)
	if s == nil {
		return
	}
	s.createComment.table, s.createComment.comment = ddl.Table.Name.String(), ""
	for _, o := range ddl.TableSpec.TableOpts {
		if strings.EqualFold(o.Name, "comment") {
			s.createComment.comment = o.Value
		}
	}
}

// mayBeSet is a cheap filter for SET statements.
func mayBeSet(q string) bool {
	q = strings.TrimLeft(q, " \t\r\n")
	return len(q) > 4 && strings.EqualFold(q[:3], "set") && containsFold(q, "transaction")
}

// intentOf is the locking intent of a statement parsed from query.
func intentOf(query string, stmt ast.Statement) lockIntent {
	mode, skip := lockModeOf(stmt)
	if mode == 0 {
		return lockIntent{}
	}
	in := lockIntent{mode: mode, policy: policyOf(query)}
	if skip {
		in.policy = storage.SkipLocked
	}
	return in
}

func (p *parser) ParseSimple(query string) (ast.Statement, error) {
	st, err := p.Parser.ParseSimple(parserText(query))
	if st != nil && mayHaveRowIn(query) {
		expandRowIn(st)
	}
	if st != nil && mayHaveUnion(query) {
		balanceUnions(st)
	}
	return st, err
}

// The parses below refuse a long text (planning.go) once the statement's
// context is cancelled, before and after the parse: a statement killed
// during its parse is not planned, nor parsed twice.

func (p *parser) Parse(ctx *sql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	if err := parsedLong(ctx, query); err != nil {
		return nil, "", "", err
	}
	st, q, rem, err := p.Parser.Parse(ctx, rewritePassword(ctx, parserText(query)), multi)
	if cerr := parsedLong(ctx, query); cerr != nil {
		return nil, q, rem, cerr
	}
	if nerr := p.note(ctx, query, st); nerr != nil && err == nil {
		return nil, q, rem, nerr
	}
	return st, q, rem, err
}

func (p *parser) ParseWithOptions(ctx context.Context, query string, delim rune, multi bool, o ast.ParserOptions) (ast.Statement, string, string, error) {
	if err := parsedLong(ctx, query); err != nil {
		return nil, "", "", err
	}
	st, q, rem, err := p.Parser.ParseWithOptions(ctx, rewritePassword(ctx, parserText(query)), delim, multi, o)
	if cerr := parsedLong(ctx, query); cerr != nil {
		return nil, q, rem, cerr
	}
	viewDatabase(ctx, query, st) // routinedb.go
	if nerr := p.note(ctx, query, st); nerr != nil && err == nil {
		return nil, q, rem, nerr
	}
	return st, q, rem, err
}

func (p *parser) ParseOneWithOptions(ctx context.Context, query string, o ast.ParserOptions) (ast.Statement, int, error) {
	if err := parsedLong(ctx, query); err != nil {
		return nil, 0, err
	}
	nq := rewritePassword(ctx, parserText(query))
	st, n, err := p.Parser.ParseOneWithOptions(ctx, nq, o)
	if cerr := parsedLong(ctx, query); cerr != nil {
		return nil, 0, cerr
	}
	if nerr := p.note(ctx, query, st); nerr != nil && err == nil {
		return nil, 0, nerr
	}
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
	return containsFold(q, "update") || containsFold(q, "share") || containsFold(q, "lock") || containsFold(q, "snapshot")
}

// containsFold reports whether s contains sub (ASCII, case-insensitive).
// It runs on every statement the parser sees (the filters in front of the
// rewrites), so a position is compared in full only when its first byte
// matches.
func containsFold(s, sub string) bool {
	return containsAnyFold(s, sub)
}

// containsAnyFold reports whether s contains any of subs (ASCII,
// case-insensitive, none empty), in one pass over s.
func containsAnyFold(s string, subs ...string) bool {
	var first [256]bool // the bytes a match can start with, either case
	for _, sub := range subs {
		c := foldByte(sub[0])
		first[c] = true
		if c >= 'a' && c <= 'z' {
			first[c-'a'+'A'] = true
		}
	}
	for i := 0; i < len(s); i++ {
		if !first[s[i]] {
			continue
		}
		for _, sub := range subs {
			if i+len(sub) <= len(s) && strings.EqualFold(s[i:i+len(sub)], sub) {
				return true
			}
		}
	}
	return false
}

// foldByte is c lower-cased if it is an ASCII letter.
func foldByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// lockModeOf returns the strongest locking clause in stmt's SELECTs, and
// whether it is FOR UPDATE SKIP LOCKED (the one option the parser keeps).
func lockModeOf(stmt ast.Statement) (mode txn.LockMode, skipLocked bool) {
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if sel, ok := n.(*ast.Select); ok {
			switch sel.Lock {
			case ast.ForUpdateSkipLockedStr:
				mode, skipLocked = txn.LockX, true
			case ast.ForUpdateStr:
				mode = txn.LockX
			case ast.ShareModeStr:
				if mode == 0 {
					mode = txn.LockS
				}
			}
		}
		return true, nil
	}, stmt)
	return mode, skipLocked
}

// lockingTail matches a statement's trailing locking clause that MySQL 8
// accepts: FOR SHARE or FOR UPDATE, optionally with NOWAIT or SKIP LOCKED.
var lockingTail = regexp.MustCompile(`(?is)\bfor\s+(share|update)(\s+(nowait|skip\s+locked))?[\s;]*$`)

// normaliseLocking rewrites the locking clauses of MySQL 8 that this parser
// does not know into ones it does: a trailing FOR SHARE [NOWAIT | SKIP
// LOCKED] becomes LOCK IN SHARE MODE and FOR UPDATE NOWAIT becomes FOR
// UPDATE (policyOf reads the option from the original text). Offsets are
// taken in q itself, so they are valid whatever else the text holds.
func normaliseLocking(q string) string {
	m := matchLockingTail(q)
	if m == nil {
		return q
	}
	tail := m[3] // keep what follows the clause (and its option)
	if m[6] >= 0 {
		tail = m[7]
	}
	switch {
	case strings.EqualFold(q[m[2]:m[3]], "share"):
		return q[:m[0]] + "lock in share mode" + q[tail:]
	case m[6] >= 0 && strings.EqualFold(q[m[6]:m[7]], "nowait"):
		return q[:m[0]] + "for update" + q[tail:]
	}
	return q
}

// parserText is the statement text go-mysql-server's parser gets:
// locking clauses in the form it knows, without the statement modifiers
// it refuses (modifiers.go), SCHEMA spelled DATABASE (schemasyn.go).
func parserText(q string) string { return schemaSynonym(stripModifiers(normaliseLocking(q))) }

// ParserText is parserText for the protocol layer's own parse of a
// prepared statement (internal/server: COM_STMT_PREPARE), which does not
// go through this parser.
func ParserText(q string) string { return parserText(q) }

// policyOf reads a trailing NOWAIT or SKIP LOCKED of a locking clause.
func policyOf(q string) storage.ReadPolicy {
	m := matchLockingTail(q)
	if m == nil || m[6] < 0 {
		return storage.WaitLocked
	}
	if strings.EqualFold(q[m[6]:m[7]], "nowait") {
		return storage.NoWait
	}
	return storage.SkipLocked
}

// matchLockingTail returns lockingTail's submatch offsets in q, or nil. A
// cheap test keeps the regular expression off texts that cannot match.
func matchLockingTail(q string) []int {
	if !containsFold(q, "share") && !containsFold(q, "update") {
		return nil
	}
	return lockingTail.FindStringSubmatchIndex(q)
}
