package server

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// MySQL's wording for errors whose text needs the statement itself: the
// syntax error's "near" text, the clause an unknown column was found in, the
// position in the SELECT list of a column missing from GROUP BY. Found by
// the differential tests against MariaDB (test/differential).

// syntaxMessage rewrites go-mysql-server's "syntax error at position P near
// 'TOKEN'" as MySQL's. P is one past the end of TOKEN (1-based); MySQL
// quotes the statement from the offending token to its end (up to 80
// characters) and names the token's line. An error at the end of the
// statement quotes ” as MySQL's does: go-mysql-server names the last token
// read there, MySQL the missing one.
func syntaxMessage(query string, pos int, near string) string {
	end := pos - 1
	start := end - len(near)
	var rest string
	switch {
	case end >= len(strings.TrimRight(query, " \t\r\n;")):
		start = len(query)
	case start >= 0 && end <= len(query) && strings.EqualFold(query[start:end], near):
		rest = query[start:]
	case end >= 0 && end < len(query):
		start = end
		rest = query[end:]
	default:
		start = len(query)
	}
	rest = strings.TrimRight(rest, " \t\r\n;")
	if len(rest) > 80 {
		rest = rest[:80]
	}
	line := 1 + strings.Count(query[:min(start, len(query))], "\n")
	return fmt.Sprintf("You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s' at line %d", rest, line)
}

var clauseWords = regexp.MustCompile(`(?i)\b(select|where|order\s+by|group\s+by|having|on|set|values|using)\b`)

// unknownColumnMessage is MySQL's 1054 text: the column as written and the
// clause it was found in ('field list' for a SELECT list, an UPDATE's SET
// or an INSERT's columns).
func unknownColumnMessage(query, col string) string {
	return fmt.Sprintf("Unknown column '%s' in '%s'", col, columnClause(query, col))
}

func columnClause(query, col string) string {
	name := col
	if i := strings.LastIndexByte(col, '.'); i >= 0 {
		name = col[i+1:]
	}
	loc := wordOf(name).FindStringIndex(query)
	if loc == nil {
		return "field list"
	}
	return clauseAt(query, loc[0])
}

// unqualifiedWord matches name as an identifier neither qualified (t.name)
// nor a qualifier (name.col).
func unqualifiedWord(name string) *regexp.Regexp { return identifier(name, `\w$.`) }

// ambiguousMessage is MySQL's 1052 text: the column, named without its
// table, and the clause of its first unqualified use.
func ambiguousMessage(query, name string) string {
	clause := "field list"
	if loc := unqualifiedWord(name).FindStringIndex(query); loc != nil {
		clause = clauseAt(query, loc[0])
	}
	return fmt.Sprintf("Column '%s' in %s is ambiguous", name, clause)
}

// clauseAt names the clause of the statement text at byte offset pos, as
// MySQL's messages do.
func clauseAt(query string, pos int) string {
	clause := "field list"
	for _, m := range clauseWords.FindAllStringIndex(query[:pos+1], -1) {
		switch w := strings.ToLower(strings.Join(strings.Fields(query[m[0]:m[1]]), " ")); w {
		case "where":
			clause = "where clause"
		case "order by":
			clause = "order clause"
		case "group by":
			clause = "group statement"
		case "having":
			clause = "having clause"
		case "on", "using":
			clause = "on clause"
		default: // select, set, values
			clause = "field list"
		}
	}
	return clause
}

// groupByMessage is MySQL's 1055 text under ONLY_FULL_GROUP_BY. col is
// go-mysql-server's "table.column"; MySQL names it db.table.column and
// gives the number of the SELECT list item it is in (1 when not found).
func groupByMessage(query, db, col string) string {
	full := col
	if strings.Count(col, ".") == 1 && db != "" {
		full = db + "." + col
	}
	name := col[strings.LastIndexByte(col, '.')+1:]
	return fmt.Sprintf("Expression #%d of SELECT list is not in GROUP BY clause and contains nonaggregated column '%s' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by",
		selectItem(query, name), full)
}

// selectItem finds the 1-based number of the first top-level SELECT list
// item that mentions name.
func selectItem(query, name string) int {
	lower := strings.ToLower(query)
	start := strings.Index(lower, "select")
	if start < 0 {
		return 1
	}
	re := wordOf(name)
	depth, item, from := 0, 1, start+len("select")
	for i := from; i < len(query); i++ {
		switch query[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				if re.MatchString(query[from:i]) {
					return item
				}
				item++
				from = i + 1
			}
		default:
			if depth == 0 && strings.HasPrefix(lower[i:], "from") && (i == 0 || !isWordByte(query[i-1])) {
				if re.MatchString(query[from:i]) {
					return item
				}
				return 1
			}
		}
	}
	return 1
}

func isWordByte(b byte) bool {
	return b == '_' || b == '$' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// wordOf matches name as a whole identifier, backquoted or not.
func wordOf(name string) *regexp.Regexp { return identifier(name, `\w$`) }

// identifier matches name, backquoted or not, between characters of none
// of the class notAround (a regexp character class's contents).
func identifier(name, notAround string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^|[^` + notAround + `])` + "`?" + regexp.QuoteMeta(name) + "`?" + `($|[^` + notAround + `])`)
}

// statementRules are msgRules whose MySQL text needs the statement.
var statementRules = []msgRule{
	{1064, regexp.MustCompile(`^syntax error at position (\d+) near '((?s:.*))'$`),
		func(m []string, ec errContext) string {
			pos, _ := strconv.Atoi(m[1])
			return syntaxMessage(ec.query, pos, m[2])
		}},
	{1054, regexp.MustCompile(`^column "(.*)" could not be found in any table in scope$|^table "(.*)" does not have column "(.*)"$`),
		func(m []string, ec errContext) string {
			col := m[1]
			if m[2] != "" {
				col = m[2] + "." + m[3]
			}
			return unknownColumnMessage(ec.query, col)
		}},
	// A column two tables of the statement have, named without its table.
	{1052, regexp.MustCompile(`^ambiguous column name "(.*)", it's present in all these tables: .*$`),
		func(m []string, ec errContext) string {
			return ambiguousMessage(ec.query, m[1])
		}},
	{1055, regexp.MustCompile(`^expression '(.*)' doesn't appear in the group by expressions$`),
		func(m []string, ec errContext) string { return groupByMessage(ec.query, ec.db, m[1]) }},
	{1265, regexp.MustCompile(`^value .* is not valid for this Enum$|^value .* was not found in the set$`),
		func(m []string, ec errContext) string {
			if ec.col == "" {
				return m[0]
			}
			return fmt.Sprintf("Data truncated for column '%s' at row %d", ec.col, ec.row)
		}},
}
