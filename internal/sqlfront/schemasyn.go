package sqlfront

import "strings"

// SCHEMA is MySQL's synonym for DATABASE. go-mysql-server parses
// CREATE SCHEMA as a schema inside the current database (1046 "No database
// selected" without one: mysqlslap's first statement is `CREATE SCHEMA
// mysqlslap`), and refuses ALTER SCHEMA and SHOW SCHEMAS LIKE (1064).
// schemaSynonym rewrites the statement's leading CREATE/ALTER/DROP SCHEMA,
// SHOW CREATE SCHEMA and SHOW SCHEMAS into the DATABASE forms.

// mayNameSchema is a cheap filter for schemaSynonym: the statement starts
// with one of its verbs and says SCHEMA.
func mayNameSchema(q string) bool {
	q = strings.TrimLeft(q, " \t\r\n")
	if len(q) < 4 {
		return false
	}
	switch foldByte(q[0]) {
	case 'c', 'a', 'd', 's':
		return containsFold(q, "schema")
	}
	return false
}

func schemaSynonym(q string) string {
	if !mayNameSchema(q) {
		return q
	}
	words := sqlWords(q)
	if len(words) < 2 {
		return q
	}
	word := func(i int) string { return strings.ToLower(q[words[i][0]:words[i][1]]) }
	i := 1
	switch word(0) {
	case "create", "alter", "drop":
	case "show":
		if word(1) == "create" && len(words) > 2 {
			i = 2
		}
	default:
		return q
	}
	if !blank(q[words[i-1][1]:words[i][0]]) {
		return q
	}
	switch w := word(i); {
	case w == "schema" && (i == 2 || word(0) != "show"):
		return q[:words[i][0]] + "DATABASE" + q[words[i][1]:]
	case w == "schemas" && word(0) == "show" && i == 1:
		return q[:words[i][0]] + "DATABASES" + q[words[i][1]:]
	}
	return q
}
