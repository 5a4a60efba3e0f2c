package server

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/sqlfront"
)

// go-mysql-server reports many client errors as 1105 (ER_UNKNOWN_ERROR)
// with its own wording, and gives most errors SQLSTATE HY000. Clients and
// tools key on MySQL's numbers and states, so the handler maps the known
// cases here: by message for 1105, by statement for errors whose MySQL
// number depends on the statement (DROP of a missing table or database).

type errRule struct {
	re    *regexp.Regexp
	num   int
	state string
}

var errRules = []errRule{
	{regexp.MustCompile(`^syntax error at position`), mysql.ERParseError, "42000"},
	{regexp.MustCompile(`^string '.*' is too large for column`), mysql.ERDataTooLong, mysql.SSDataTooLong},
	{regexp.MustCompile(`^Field '.*' doesn't have a default value`), 1364, "HY000"},
	{regexp.MustCompile(`out of range for|^Out of range value`), mysql.ERWarnDataOutOfRange, mysql.SSDataOutOfRange},
	{regexp.MustCompile(`could not be found in any table in scope`), mysql.ERBadFieldError, mysql.SSBadFieldError},
	{regexp.MustCompile(`^ambiguous column name ".*", it's present in all these tables`), mysql.ERNonUniq, "23000"},
	{regexp.MustCompile(`^table with name .* already exists`), mysql.ERTableExists, "42S01"},
	// DROP TEMPORARY TABLE of a name no temporary table has.
	{regexp.MustCompile(`^Unknown table '.*'$`), mysql.ERBadTable, "42S02"},
	{regexp.MustCompile(`^Duplicate key name`), mysql.ERDupKeyName, "42000"},
	{regexp.MustCompile(`^Column ".*" already exists`), mysql.ERDupFieldName, "42S21"},
	{regexp.MustCompile(`^Unknown system variable`), mysql.ERUnknownSystemVariable, "HY000"},
	// go-mysql-server's privilege check names neither the command nor
	// the table.
	{regexp.MustCompile(`^command denied to user '`), 1142, "42000"},
	// SET of a system variable: go-mysql-server has MySQL's wording.
	{regexp.MustCompile(`^Variable '.*' is a SESSION variable and can't be used with SET GLOBAL$`), 1228, "HY000"},
	{regexp.MustCompile(`^Variable '.*' is a GLOBAL variable and should be set with SET GLOBAL$`), 1229, "HY000"},
	{regexp.MustCompile(`^Variable '.*' can't be set to the value of '`), 1231, "42000"},
	{regexp.MustCompile(`^Variable '.*' is a read only variable$`), 1238, "HY000"},
	{regexp.MustCompile(`^number of values does not match number of columns`), mysql.ERWrongValueCountOnRow, "21S01"},
	{regexp.MustCompile(`^cannot execute statement in a READ ONLY transaction`), 1792, "25006"},
	{regexp.MustCompile(`^SAVEPOINT .* does not exist`), mysql.ERSPDoesNotExist, "42000"},
	{regexp.MustCompile(`^Incorrect (datetime|date|time|timestamp) value: `), 1292, "22007"},
	{regexp.MustCompile(`^value (?s:.*) is not a valid Time$`), 1292, "22007"},
	{regexp.MustCompile(`^Invalid JSON text`), 3140, "22032"},
	{regexp.MustCompile(`^function: '.*' not found$`), 1305, "42000"},
	// A DECIMAL column given a non-number (the message says neither).
	{regexp.MustCompile(`^number has no digits$|^can't convert .* to decimal`), 1366, "HY000"},
	// Bytes that are not text in the column's character set.
	{invalidString, 1366, "HY000"},
	{generatedValue, 3105, "HY000"},
	// A view's CHECK OPTION (sqlfront/viewwrite.go) is a CHECK constraint
	// named with this prefix: MySQL's ER_VIEW_CHECK_FAILED.
	{regexp.MustCompile(`^Check constraint "` + sqlfront.ViewCheckPrefix + `.*" violated$`), 1369, "HY000"},
	{regexp.MustCompile(`^Check constraint ".*" violated$`), 3819, "HY000"},
	{regexp.MustCompile(`^no database selected$`), mysql.ERNoDb, "3D000"},
	{regexp.MustCompile(`^Result consisted of more than one row$`), 1172, "42000"},
	// A statement KILL QUERY stopped.
	{regexp.MustCompile(`^context canceled$`), 1317, "70100"},
	{regexp.MustCompile(`^table ".*" does not have column ".*"$`), mysql.ERBadFieldError, mysql.SSBadFieldError},
	{regexp.MustCompile(`^expression '.*' doesn't appear in the group by expressions$`), 1055, "42000"},
	// An ENUM or SET value not in the list: MySQL's WARN_DATA_TRUNCATED,
	// an error in strict mode.
	{regexp.MustCompile(`^value .* is not valid for this Enum$|^value .* was not found in the set$`), 1265, "01000"},
	// Features lockstep lacks: MySQL's ER_NOT_SUPPORTED_YET.
	{regexp.MustCompile(`^lockstep does not support `), 1235, "42000"},
	{regexp.MustCompile(`^table does not support FULLTEXT indexes`), 1235, "42000"},
}

// errContext is what a message needs from the session: the current
// database, the row the statement failed at.
type errContext struct {
	query   string // the statement, set by mysqlErrorIn
	db      string
	row     int
	col     string // the column a value did not convert for, if known
	val     string // and that value
	colType string // and the column's type ("date", "datetime(6)")
	host    string // the client's host as MySQL names it ("localhost"), if known
}

// qualifiedTable is a missing table's (or function's) name as MySQL
// reports it, with its database: go-mysql-server names it alone, so the
// database is the one the statement wrote before the name (`shop.nope`),
// else the current one.
func qualifiedTable(name string, ec errContext) string {
	if strings.Contains(name, ".") {
		return name
	}
	re := regexp.MustCompile("(?i)(?:`([^`]+)`|([A-Za-z0-9_$]+))\\s*\\.\\s*`?" + regexp.QuoteMeta(name) + "(?:`|\\b)")
	if m := re.FindStringSubmatch(ec.query); m != nil {
		return m[1] + m[2] + "." + name
	}
	if ec.db != "" {
		return ec.db + "." + name
	}
	return name
}

// infoSchemaTable reports whether the statement names table name in
// information_schema.
func infoSchemaTable(name string, ec errContext) bool {
	q := qualifiedTable(name, ec)
	db, _, _ := strings.Cut(q, ".")
	return strings.EqualFold(db, "information_schema")
}

// msgRule rewrites go-mysql-server's wording of error num into MySQL's.
type msgRule struct {
	num     int
	re      *regexp.Regexp
	rewrite func(m []string, ec errContext) string
}

var wordingRules = []msgRule{
	{1317, regexp.MustCompile(`^context canceled$`),
		func([]string, errContext) string { return "Query execution was interrupted" }},
	{mysql.ERDataTooLong, regexp.MustCompile(`^string '(?s:.*)' is too large for column '(.*)'$`),
		func(m []string, ec errContext) string {
			return fmt.Sprintf("Data too long for column '%s' at row %d", m[1], ec.row)
		}},
	{mysql.ERBadNullError, regexp.MustCompile(`^column name '(.*)' is non-nullable but attempted to set a value of null$`),
		func(m []string, _ errContext) string { return fmt.Sprintf("Column '%s' cannot be null", m[1]) }},
	{mysql.ERNoSuchTable, regexp.MustCompile(`^table not found: (.*)$`),
		func(m []string, ec errContext) string {
			return fmt.Sprintf("Table '%s' doesn't exist", qualifiedTable(m[1], ec))
		}},
	{mysql.ERBadTable, regexp.MustCompile(`^(?:table not found: |Unknown table ')([^']*)'?$`),
		func(m []string, ec errContext) string {
			return fmt.Sprintf("Unknown table '%s'", qualifiedTable(m[1], ec))
		}},
	// A function that does not exist: MySQL looks for a stored function
	// of that name, in the database the statement names or the current one.
	{1305, regexp.MustCompile(`^function: '(.*)' not found$`),
		func(m []string, ec errContext) string {
			return fmt.Sprintf("FUNCTION %s does not exist", qualifiedTable(m[1], ec))
		}},
	{mysql.ERBadDb, regexp.MustCompile(`^database not found: (.*)$`),
		func(m []string, _ errContext) string { return fmt.Sprintf("Unknown database '%s'", m[1]) }},
	{1369, regexp.MustCompile(`^Check constraint "` + sqlfront.ViewCheckPrefix + `(.*)" violated$`),
		func(m []string, _ errContext) string { return fmt.Sprintf("CHECK OPTION failed '%s'", m[1]) }},
	{3819, regexp.MustCompile(`^Check constraint "(.*)" violated$`),
		func(m []string, _ errContext) string { return fmt.Sprintf("Check constraint '%s' is violated.", m[1]) }},
	{mysql.ERWrongAutoKey, regexp.MustCompile(`^error: incorrect table definition: there can be only one auto column`),
		func([]string, errContext) string {
			return "Incorrect table definition; there can be only one auto column and it must be defined as a key"
		}},
	{mysql.ERTableExists, regexp.MustCompile(`^table with name (.*) already exists$`),
		func(m []string, _ errContext) string { return fmt.Sprintf("Table '%s' already exists", m[1]) }},
	{mysql.ERNoDb, regexp.MustCompile(`^no database selected$`),
		func([]string, errContext) string { return "No database selected" }},
	{1068, regexp.MustCompile(`^error: Multiple primary keys defined$`),
		func([]string, errContext) string { return "Multiple primary key defined" }},
	// go-mysql-server's 1007 text is lower-case and leaves the name bare.
	{mysql.ERDbCreateExists, regexp.MustCompile(`^can't create database (.*); database exists$`),
		func(m []string, _ errContext) string {
			return fmt.Sprintf("Can't create database '%s'; database exists", m[1])
		}},
	{3105, generatedValue, func(m []string, _ errContext) string {
		return fmt.Sprintf("The value specified for generated column '%s' in table '%s' is not allowed.", m[1], m[2])
	}},
	{1366, invalidString, func(m []string, ec errContext) string {
		v := badBytes(m[2])
		if ec.col == "" {
			return fmt.Sprintf("Incorrect string value: '%s'", v)
		}
		return fmt.Sprintf("Incorrect string value: '%s' for column '%s' at row %d", v, ec.col, ec.row)
	}},
	// Conversion errors name the column when the session noted it
	// (sqlfront/errcolumn.go).
	{1366, regexp.MustCompile(`^error: '((?s:.*))' is not a valid value for '(.*)'$`),
		func(m []string, ec errContext) string {
			if ec.col == "" {
				return m[0]
			}
			return sqlfront.IncorrectValueMessage(m[2], m[1], ec.col, ec.row)
		}},
	{mysql.ERWarnDataOutOfRange, regexp.MustCompile(`out of range for|^Out of range value`),
		func(m []string, ec errContext) string {
			if ec.col == "" {
				return m[0]
			}
			return sqlfront.OutOfRangeMessage(ec.col, ec.row)
		}},
	{1366, regexp.MustCompile(`^number has no digits$|^can't convert .* to decimal`),
		func(m []string, ec errContext) string {
			if ec.col == "" {
				return m[0]
			}
			return sqlfront.IncorrectValueMessage("decimal", ec.val, ec.col, ec.row)
		}},
	{1292, regexp.MustCompile(`^Incorrect (datetime|date|time|timestamp) value: ('(?s:.*)')$`),
		func(m []string, ec errContext) string {
			if ec.col == "" {
				return m[0]
			}
			// MySQL names the column's type: date, datetime (for
			// TIMESTAMP too), time.
			kind := m[1]
			switch t := ec.colType; {
			case strings.HasPrefix(t, "datetime"), strings.HasPrefix(t, "timestamp"):
				kind = "datetime"
			case strings.HasPrefix(t, "date"):
				kind = "date"
			case strings.HasPrefix(t, "time"):
				kind = "time"
			}
			return fmt.Sprintf("Incorrect %s value: %s for column '%s' at row %d", kind, m[2], ec.col, ec.row)
		}},
	{1292, regexp.MustCompile(`^value ((?s:.*)) is not a valid Time$`),
		func(m []string, ec errContext) string {
			if ec.col == "" {
				return fmt.Sprintf("Incorrect time value: '%s'", m[1])
			}
			return fmt.Sprintf("Incorrect time value: '%s' for column '%s' at row %d", m[1], ec.col, ec.row)
		}},
	{mysql.ERWrongValueCountOnRow, regexp.MustCompile(`^number of values does not match number of columns provided$`),
		func(_ []string, ec errContext) string {
			return fmt.Sprintf("Column count doesn't match value count at row %d", ec.row)
		}},
}

// msgRules are the rules above and those that need the statement's text
// (errwording.go).
var msgRules = append(wordingRules, statementRules...)

// maxQuoted is the longest quoted value a message keeps (MySQL's messages
// print values with %-.192s); a longer one is cut, never echoed whole.
const maxQuoted = 192

var quoted = regexp.MustCompile(`'(?s:[^']*)'`)

// shortenQuoted cuts every quoted value in msg longer than maxQuoted bytes
// (at a character boundary) and marks the cut with "...".
func shortenQuoted(msg string) string {
	if len(msg) <= maxQuoted {
		return msg
	}
	return quoted.ReplaceAllStringFunc(msg, func(q string) string {
		v := q[1 : len(q)-1]
		if len(v) <= maxQuoted {
			return q
		}
		cut := maxQuoted
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		return "'" + v[:cut] + "...'"
	})
}

// statesByNum are MySQL's SQLSTATEs for numbers GMS already gets right.
var statesByNum = map[int]string{
	mysql.ERNoSuchTable:        "42S02",
	mysql.ERBadDb:              "42000",
	mysql.ERBadNullError:       mysql.SSConstraintViolation,
	mysql.ERBadFieldError:      mysql.SSBadFieldError,
	mysql.ERCantDropFieldOrKey: "42000",
	mysql.ERDupEntry:           mysql.SSDupKey,
	mysql.ERParseError:         "42000",
	1068:                       "42000", // ER_MULTIPLE_PRI_KEY
	mysql.ERWrongAutoKey:       "42000",
}

// gmsPrefixes are go-mysql-server's wordings in front of a MySQL message.
var gmsPrefixes = []string{"duplicate primary key given: ", "duplicate unique key given: "}

// wrappedSQLError matches the text of a *mysql.SQLError inside another
// error's message.
var wrappedSQLError = regexp.MustCompile(`^(.*) \(errno (\d+)\) \(sqlstate (\w{5})\)$`)

var dropDB = regexp.MustCompile(`(?is)^\s*drop\s+(database|schema)\s`)
var flushStmt = regexp.MustCompile(`(?is)^\s*flush\s`)
var dropTable = regexp.MustCompile(`(?is)^\s*drop\s+(temporary\s+)?table\s`)

func mysqlError(query string, err error) error {
	return mysqlErrorIn(query, errContext{row: 1}, err)
}

// mysqlErrorIn maps err to MySQL's number, SQLSTATE and wording; ec gives
// the session's side of the message.
func mysqlErrorIn(query string, ec errContext, err error) error {
	if err == nil {
		return nil
	}
	if ec.row < 1 {
		ec.row = 1
	}
	ec.query = query
	var se *mysql.SQLError
	if !errors.As(err, &se) {
		// Not yet a MySQL error (vitess would report it as 1105).
		se = &mysql.SQLError{Num: mysql.ERUnknownError, State: mysql.SSUnknownSQLState, Message: err.Error()}
	}
	num, state, msg := se.Num, se.State, strings.TrimPrefix(strings.TrimPrefix(se.Message, "unknown error: "), "Code: INVALID_ARGUMENT\n")
	if m := wrappedSQLError.FindStringSubmatch(msg); num == mysql.ERUnknownError && m != nil {
		// A MySQL error go-mysql-server wrapped as text (e.g. one a
		// parser hook returned): unwrap it.
		if n, err := strconv.Atoi(m[2]); err == nil {
			num, state, msg = n, m[3], m[1]
		}
	}
	if num == mysql.ERUnknownError {
		if n, st, m, ok := refusedStatement(query, msg, ec); ok { // accessdenied.go
			num, state, msg = n, st, m
		}
	}
	if num == mysql.ERUnknownError {
		for _, r := range errRules {
			if r.re.MatchString(msg) {
				num, state = r.num, r.state
				break
			}
		}
	}
	switch {
	case num == mysql.ERUnknownError && flushStmt.MatchString(query) && strings.HasPrefix(msg, "Access denied for user "):
		// go-mysql-server checks FLUSH as access to the mysql database;
		// MySQL names the privilege it needs.
		num, state, msg = mysql.ERSpecifiedAccessDenied, "42000", "Access denied; you need (at least one of) the RELOAD privilege(s) for this operation"
	case num == mysql.ERNoSuchTable && strings.HasPrefix(msg, "table not found: ") && infoSchemaTable(msg[len("table not found: "):], ec):
		// A table information_schema does not have: MySQL's 1109.
		num, state, msg = mysql.ERUnknownTable, "42S02", fmt.Sprintf("Unknown table '%s' in information_schema", msg[len("table not found: "):])
	case num == mysql.ERBadDb && dropDB.MatchString(query):
		num, state = mysql.ERDbDropExists, "HY000"
	case num == mysql.ERNoSuchTable && dropTable.MatchString(query):
		num, state = mysql.ERBadTable, "42S02"
	}
	if num == mysql.ERDupEntry {
		for _, p := range gmsPrefixes {
			msg = strings.TrimPrefix(msg, p)
		}
	}
	if st, ok := statesByNum[num]; ok {
		state = st
	}
	for _, r := range msgRules {
		if r.num != num {
			continue
		}
		if m := r.re.FindStringSubmatch(msg); m != nil {
			msg = r.rewrite(m, ec)
			break
		}
	}
	msg = shortenQuoted(msg)
	if num == se.Num && state == se.State && msg == se.Message {
		return err // nothing recognised: leave the error as it was
	}
	return mysql.NewSQLError(num, state, "%s", msg)
}

// invalidString is go-mysql-server's refusal of bytes that are not valid
// in a character set, with the bytes as a Go byte slice.
var invalidString = regexp.MustCompile(`^invalid string for charset (\w+): '\[([0-9 ]*)\]'$`)

// badBytes is the part of a value MySQL's 1366 shows: from the first byte
// that is not valid UTF-8, at most six bytes, each non-ASCII or control
// byte as \xHH, then "..." if more follow.
func badBytes(list string) string {
	var b []byte
	for _, f := range strings.Fields(list) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 || n > 255 {
			return list
		}
		b = append(b, byte(n))
	}
	i := 0
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		i += size
	}
	if i == len(b) {
		i = 0
	}
	rest := b[i:]
	var sb strings.Builder
	for k, c := range rest {
		if k == 6 {
			sb.WriteString("...")
			break
		}
		if c >= 0x80 || c < 0x20 {
			fmt.Fprintf(&sb, "\\x%02X", c)
		} else {
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// generatedValue is go-mysql-server's refusal of a value for a generated
// column (MySQL 8's 3105, names in single quotes).
var generatedValue = regexp.MustCompile(`^The value specified for generated column "(.*)" in table "(.*)" is not allowed\.$`)
