package sqlfront

import (
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// A scope word carries over in a SET list.
//
// In MySQL `SET GLOBAL a = 1, b = 2` sets both globally: a scope keyword
// (GLOBAL, SESSION, LOCAL, PERSIST, PERSIST_ONLY) applies to the
// assignments after it that name a variable with no scope of their own,
// until the next keyword. The @@GLOBAL. and @@SESSION. prefixes apply to
// their own variable only. go-mysql-server's parser gives each bare name
// no scope, which it then treats as SESSION: the second assignment above
// went to the session (or failed with 1229 for a global-only variable).
// carrySetScope puts the keyword's scope on those assignments again. The
// parsed statement no longer says which assignment began with a keyword
// and which with an @@ prefix (both come out with a scope), so it reads
// that from the statement's text.

// maySetScopeList is a cheap filter: a SET with a list and a scope word.
func maySetScopeList(q string) bool {
	q = strings.TrimLeft(q, " \t\r\n")
	return len(q) > 4 && strings.EqualFold(q[:3], "set") && strings.IndexByte(q, ',') > 0 &&
		(containsFold(q, "global") || containsFold(q, "session") || containsFold(q, "local") || containsFold(q, "persist"))
}

// carrySetScope gives the bare-named assignments of set the scope of the
// keyword before them in query. It leaves the statement as it is when the
// text does not split into as many assignments as it has.
func carrySetScope(query string, set *ast.Set) {
	parts := setAssignments(query)
	if len(parts) != len(set.Exprs) {
		return
	}
	var carried ast.SetScope
	for i, p := range parts {
		word, rest := firstWord(p)
		if scope, ok := scopeWords[strings.ToLower(word)]; ok && rest != "" && blank(rest[:1]) {
			carried = scope
			continue
		}
		e := set.Exprs[i]
		if carried != ast.SetScope_None && e.Scope == ast.SetScope_None && !strings.HasPrefix(p, "@") {
			e.Scope = carried
		}
	}
}

// scopeWords are the keywords that set the scope of what follows.
var scopeWords = map[string]ast.SetScope{
	"global":       ast.SetScope_Global,
	"session":      ast.SetScope_Session,
	"local":        ast.SetScope_Session,
	"persist":      ast.SetScope_Persist,
	"persist_only": ast.SetScope_PersistOnly,
}

// setAssignments splits a SET statement's text after the SET keyword at
// its top-level commas (outside quotes, comments and parentheses, sqltext.go),
// up to a top-level semicolon, each part trimmed. A comment before an
// assignment is not part of it.
func setAssignments(q string) []string {
	q = strings.TrimLeft(q, " \t\r\n")
	if len(q) < 3 || !strings.EqualFold(q[:3], "set") {
		return nil
	}
	q = strings.TrimRight(q[3:], " \t\r\n;")
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(q); i++ {
		if j := skipQuoted(q, i); j != i {
			if j < 0 {
				return nil
			}
			if q[i] != '\'' && q[i] != '"' && q[i] != '`' && blank(q[start:i]) {
				start = j + 1 // a comment before an assignment is not part of it
			}
			i = j
			continue
		}
		switch q[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ';':
			if depth == 0 { // the end of the statement; the rest is another
				return append(parts, strings.TrimSpace(q[start:i]))
			}
		case ',':
			if depth == 0 {
				parts = append(parts, strings.TrimSpace(q[start:i]))
				start = i + 1
			}
		}
	}
	return append(parts, strings.TrimSpace(q[start:]))
}
