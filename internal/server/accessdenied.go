package server

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// MySQL's words for a refused statement.
//
// go-mysql-server refuses with two messages that name neither the command
// nor the table: "Access denied for user 'u'@'%' to database 'x'" (1105,
// any use of a database the account has no privilege in) and "command
// denied to user 'u'@'%'" (a missing privilege). MySQL answers a statement
// on a table with 1142 "SELECT command denied to user 'u'@'localhost' for
// table 't'" (the client's host), one on a database (USE, GRANT ... ON
// db.*, CREATE DATABASE) with 1044 "Access denied for user 'u'@'%' to
// database 'x'" (the account's host), and CREATE USER with 1227 naming the
// privilege. The statement's text gives the command and the table: the
// first table of the refused database, or the first table of the
// statement for the second message.

var (
	dbDenied      = regexp.MustCompile(`^Access denied for user '((?:[^']|'')*)'@'((?:[^']|'')*)' to database '((?:[^']|'')*)'$`)
	commandDenied = regexp.MustCompile(`^command denied to user '((?:[^']|'')*)'@'((?:[^']|'')*)'$`)
)

// refusedStatement rewrites go-mysql-server's refusal msg of query; ok is false
// for any other message.
func refusedStatement(query, msg string, ec errContext) (num int, state, out string, ok bool) {
	if flushStmt.MatchString(query) {
		return 0, "", "", false // FLUSH: mysqlErrorIn names RELOAD
	}
	if m := dbDenied.FindStringSubmatch(msg); m != nil {
		user, privHost, db := m[1], m[2], m[3]
		if cmd, table := deniedTarget(parseOrNil(query), db, ec.db); cmd != "" && table != "" {
			return 1142, "42000", fmt.Sprintf("%s command denied to user '%s'@'%s' for table '%s'", cmd, user, clientHostOr(ec, privHost), table), true
		}
		return mysql.ERDBAccessDenied, "42000", fmt.Sprintf("Access denied for user '%s'@'%s' to database '%s'", user, privHost, db), true
	}
	if m := commandDenied.FindStringSubmatch(msg); m != nil {
		user, privHost := m[1], m[2]
		stmt, err := ast.Parse(query)
		if err != nil {
			return 0, "", "", false
		}
		switch st := stmt.(type) {
		case *ast.CreateUser:
			return mysql.ERSpecifiedAccessDenied, "42000", "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation", true
		case *ast.DropUser, *ast.RenameUser:
			return mysql.ERSpecifiedAccessDenied, "42000", "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation", true
		case *ast.GrantPrivilege:
			db := st.PrivilegeLevel.Database
			if db == "" || db == "*" {
				if st.PrivilegeLevel.Database == "*" || ec.db == "" {
					return mysql.ERAccessDeniedError, "28000", fmt.Sprintf("Access denied for user '%s'@'%s' (using password: YES)", user, clientHostOr(ec, privHost)), true
				}
				db = ec.db
			}
			return mysql.ERDBAccessDenied, "42000", fmt.Sprintf("Access denied for user '%s'@'%s' to database '%s'", user, privHost, db), true
		}
		if cmd, table := deniedTarget(stmt, "", ec.db); cmd != "" && table != "" {
			return 1142, "42000", fmt.Sprintf("%s command denied to user '%s'@'%s' for table '%s'", cmd, user, clientHostOr(ec, privHost), table), true
		}
	}
	return 0, "", "", false
}

func clientHostOr(ec errContext, privHost string) string {
	if ec.host != "" {
		return ec.host
	}
	return privHost
}

// parseOrNil is query's statement, nil if it does not parse.
func parseOrNil(query string) ast.Statement {
	stmt, err := ast.Parse(query)
	if err != nil {
		return nil
	}
	return stmt
}

// deniedTarget is the command word MySQL names for stmt and its first
// table in database db ("": any; a table without a qualifier is in cur).
func deniedTarget(stmt ast.Statement, db, cur string) (cmd, table string) {
	switch st := stmt.(type) {
	case *ast.Select, *ast.SetOp:
		cmd = "SELECT"
	case *ast.Insert:
		cmd = "INSERT"
	case *ast.Update:
		cmd = "UPDATE"
	case *ast.Delete:
		cmd = "DELETE"
	case *ast.Load:
		cmd = "INSERT"
	case *ast.Show:
		cmd = "SHOW"
	case *ast.DDL:
		switch strings.ToLower(st.Action) {
		case ast.CreateStr:
			cmd = "CREATE"
		case ast.DropStr, ast.TruncateStr:
			cmd = "DROP"
		case ast.AlterStr, ast.RenameStr:
			cmd = "ALTER"
		}
	}
	if cmd == "" {
		return "", ""
	}
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if table != "" {
			return false, nil
		}
		if tn, ok := n.(ast.TableName); ok && !tn.Name.IsEmpty() {
			q := tn.DbQualifier.String()
			if q == "" {
				q = cur
			}
			if db == "" || strings.EqualFold(q, db) {
				table = tn.Name.String()
				return false, nil
			}
		}
		return true, nil
	}, stmt)
	if table == "" {
		if st, ok := stmt.(*ast.Show); ok && st.Table.Name.String() != "" {
			q := st.Table.DbQualifier.String()
			if q == "" {
				q = cur
			}
			if db == "" || strings.EqualFold(q, db) {
				table = st.Table.Name.String()
			}
		}
		if st, ok := stmt.(*ast.DDL); ok && table == "" {
			for _, t := range append([]ast.TableName{st.Table}, st.FromTables...) {
				q := t.DbQualifier.String()
				if q == "" {
					q = cur
				}
				if !t.Name.IsEmpty() && (db == "" || strings.EqualFold(q, db)) {
					table = t.Name.String()
					break
				}
			}
		}
	}
	return cmd, table
}
