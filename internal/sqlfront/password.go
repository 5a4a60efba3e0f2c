package sqlfront

import (
	"context"
	"regexp"

	"github.com/dolthub/go-mysql-server/sql"
)

// Password changes in MySQL's forms.
//
// The parser go-mysql-server uses knows neither SET PASSWORD (`SET
// PASSWORD FOR 'app'@'%' = 'pw'` was 1064, `SET PASSWORD = 'pw'` 1054
// "Unknown column 'PASSWORD'") nor an account named by USER() or
// CURRENT_USER() in ALTER USER (`ALTER USER USER() IDENTIFIED BY 'pw'`,
// what an account runs to change its own password, was 1064). Both are
// rewritten, before the parse, into the ALTER USER it runs: SET PASSWORD
// [FOR account] = 'pw' becomes ALTER USER account IDENTIFIED BY 'pw' (the
// session's own account when FOR is left out); USER() and CURRENT_USER()
// become the session's account, 'user'@'host' as CURRENT_USER() names it.
// The account's privileges are go-mysql-server's ALTER USER checks. REPLACE
// 'current' is dropped (password_require_current is not supported); RETAIN
// CURRENT PASSWORD is refused as go-mysql-server refuses it in ALTER USER.

var (
	reSetPassword = regexp.MustCompile(`(?is)^(\s*)set\s+password\s*(?:for\s+(.+?)\s*)?=\s*('(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")(?:\s+replace\s+('(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"))?(\s+retain\s+current\s+password)?\s*;?\s*$`)
	reAlterSelf   = regexp.MustCompile(`(?is)^(\s*alter\s+user\s+(?:if\s+exists\s+)?)(?:user\s*\(\s*\)|current_user(?:\s*\(\s*\))?)(\s)`)
)

// mayChangePassword is a cheap filter for rewritePassword.
func mayChangePassword(q string) bool {
	return len(q) > 12 && (containsFold(q, "password") || containsFold(q, "user"))
}

// rewritePassword returns q in the form the parser knows, or q itself.
func rewritePassword(ctx context.Context, q string) string {
	if !mayChangePassword(q) {
		return q
	}
	if m := reSetPassword.FindStringSubmatch(q); m != nil {
		account := m[2]
		if account == "" {
			if account = sessionAccount(ctx); account == "" {
				return q
			}
		}
		return m[1] + "ALTER USER " + account + " IDENTIFIED BY " + m[3] + m[5]
	}
	if m := reAlterSelf.FindStringSubmatchIndex(q); m != nil {
		if account := sessionAccount(ctx); account != "" {
			return q[:m[3]] + account + q[m[4]:]
		}
	}
	return q
}

// sessionAccount is the account of the session ctx runs for, quoted as
// an account name ('user'@'host'), or "" outside a session.
func sessionAccount(ctx context.Context) string {
	sctx, ok := ctx.(*sql.Context)
	if !ok || sctx.Session == nil {
		return ""
	}
	c := sctx.Session.Client()
	if c.User == "" {
		return ""
	}
	return quoteAccount(c.User, c.Address, '\'') // showcreateuser.go
}
