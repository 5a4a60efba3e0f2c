package server

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
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
	{regexp.MustCompile(`^table with name .* already exists`), mysql.ERTableExists, "42S01"},
	{regexp.MustCompile(`^Duplicate key name`), mysql.ERDupKeyName, "42000"},
	{regexp.MustCompile(`^Column ".*" already exists`), mysql.ERDupFieldName, "42S21"},
	{regexp.MustCompile(`^Unknown system variable`), mysql.ERUnknownSystemVariable, "HY000"},
	{regexp.MustCompile(`^number of values does not match number of columns`), mysql.ERWrongValueCountOnRow, "21S01"},
	{regexp.MustCompile(`^cannot execute statement in a READ ONLY transaction`), 1792, "25006"},
	{regexp.MustCompile(`^SAVEPOINT .* does not exist`), mysql.ERSPDoesNotExist, "42000"},
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
}

// gmsPrefixes are go-mysql-server's wordings in front of a MySQL message.
var gmsPrefixes = []string{"duplicate primary key given: ", "duplicate unique key given: "}

// wrappedSQLError matches the text of a *mysql.SQLError inside another
// error's message.
var wrappedSQLError = regexp.MustCompile(`^(.*) \(errno (\d+)\) \(sqlstate (\w{5})\)$`)

var dropDB = regexp.MustCompile(`(?is)^\s*drop\s+(database|schema)\s`)
var dropTable = regexp.MustCompile(`(?is)^\s*drop\s+(temporary\s+)?table\s`)

func mysqlError(query string, err error) error {
	if err == nil {
		return nil
	}
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
		for _, r := range errRules {
			if r.re.MatchString(msg) {
				num, state = r.num, r.state
				break
			}
		}
	}
	switch {
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
	if num == se.Num && state == se.State {
		return err // nothing recognised: leave the error as it was
	}
	return mysql.NewSQLError(num, state, "%s", msg)
}
