package sqlfront

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
)

// SHOW CREATE USER, which the parser does not know (1064): the statement
// that creates an account as it is now, in MySQL 8's form — used by
// pt-show-grants, MySQL Shell's dumps and admin tools to copy accounts.
// Needs SELECT on the mysql database or CREATE USER, except for one's own
// account, as in MySQL. Password and lock state come from the account;
// the options lockstep does not have (TLS requirements, password history
// and reuse, current-password requirement) are shown with their defaults.

// ShowCreateUser returns the CREATE USER statement for account
// user@host, for connection connID: MySQL's 1227 without the privilege,
// 1396 for an account that does not exist.
func (fe *Frontend) ShowCreateUser(connID uint32, user, host string) (string, error) {
	s := fe.session(connID)
	if s == nil {
		return "", fmt.Errorf("SHOW CREATE USER: no session for connection %d", connID)
	}
	mdb := fe.Engine.Analyzer.Catalog.MySQLDb
	if c := s.Client(); c.User != user || c.Address != host {
		ctx := s.fastContext()
		mysqlDB := sql.NewPrivilegedOperation(sql.PrivilegeCheckSubject{Database: "mysql"}, sql.PrivilegeType_Select)
		global := sql.NewPrivilegedOperation(sql.PrivilegeCheckSubject{}, sql.PrivilegeType_CreateUser)
		if !mdb.UserHasPrivileges(ctx, mysqlDB) && !mdb.UserHasPrivileges(ctx, global) {
			return "", mysql.NewSQLError(mysql.ERSpecifiedAccessDenied, "42000",
				"Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation")
		}
	}
	rd := mdb.Reader()
	u, ok := rd.GetUser(mysql_db.UserPrimaryKey{Host: host, User: user})
	rd.Close()
	if !ok || u.IsRole {
		return "", mysql.NewSQLError(1396, "HY000", "Operation SHOW CREATE USER failed for %s", quoteAccount(user, host, '\''))
	}
	var b strings.Builder
	b.WriteString("CREATE USER ")
	b.WriteString(quoteAccount(u.User, u.Host, '`'))
	plugin := u.Plugin
	if plugin == "" {
		plugin = "mysql_native_password"
	}
	fmt.Fprintf(&b, " IDENTIFIED WITH '%s'", plugin)
	if u.AuthString != "" {
		fmt.Fprintf(&b, " AS '%s'", strings.ReplaceAll(u.AuthString, "'", "''"))
	}
	b.WriteString(" REQUIRE NONE PASSWORD EXPIRE DEFAULT")
	if u.Locked {
		b.WriteString(" ACCOUNT LOCK")
	} else {
		b.WriteString(" ACCOUNT UNLOCK")
	}
	b.WriteString(" PASSWORD HISTORY DEFAULT PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT")
	return b.String(), nil
}

// quoteAccount writes user@host with both parts quoted by q (doubled
// inside).
func quoteAccount(user, host string, q byte) string {
	quote := func(s string) string {
		qs := string(q)
		return qs + strings.ReplaceAll(s, qs, qs+qs) + qs
	}
	return quote(user) + "@" + quote(host)
}

// SessionAccount is the account connection connID logged in as (the user
// and the host part of the account it matched), or "", "".
func (fe *Frontend) SessionAccount(connID uint32) (user, host string) {
	if s := fe.session(connID); s != nil {
		c := s.Client()
		return c.User, c.Address
	}
	return "", ""
}
