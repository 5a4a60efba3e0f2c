package sqlfront

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
)

// A DDL statement is logged as its text (ddllog.go), and recovery — later a
// secondary — runs that text again. The text alone does not decide what
// the statement does: the session it ran in does too. ANSI_QUOTES in
// sql_mode makes "t" a table name instead of a string; NOW() in a DEFAULT
// fills existing rows with the statement's time, shown in the session's
// time zone; strict modes decide whether ALTER TABLE ... MODIFY fails on a
// value that does not fit. MySQL's binary log carries the same state with
// every statement it logs (the query event's status variables: sql_mode,
// time zone, the statement's timestamp, foreign_key_checks, collations).
//
// Lockstep carries it as marks: comments in front of the logged text, in
// this order, each optional on reading (records written before a mark
// existed lack it and replay as they did then):
//
//	/* lockstep: collation_server=NAME */           collation.go
//	/* lockstep: foreign_key_checks=0 */            when off
//	/* lockstep: session ts=MICROS time_zone=TZ sql_mode=MODES
//	   character_set_client=CS collation_connection=COLL */
//
// (one line in the log). The character set fields came later: a mark
// without them replays under the defaults, as it did. The marks are
// comments, so the logged text is still the statement.

// fkChecksOffMark starts the logged text of a DDL statement that ran with
// foreign_key_checks=0 (a dump being loaded creates a child table before
// its parent). Replay runs the statement with the same setting, so that it
// succeeds or fails as it did.
const fkChecksOffMark = "/* lockstep: foreign_key_checks=0 */ "

// sessionMarkPrefix starts the mark carrying the statement's time, time
// zone and sql_mode.
const sessionMarkPrefix = "/* lockstep: session "

// ddlSession is the session state a session mark carries.
type ddlSession struct {
	queryTime time.Time // the statement's NOW(), to the microsecond
	timeZone  string    // time_zone, SYSTEM resolved to the offset it had
	sqlMode   string    // sql_mode, as @@sql_mode shows it
	// charsetClient and collationConnection: how the statement's text
	// and its literals were read (SET NAMES); "" in marks written before
	// they were logged. An expression default such as (COLLATION('a'))
	// fills existing rows with collation_connection's name.
	charsetClient       string
	collationConnection string
}

// sessionMark formats the session mark for st.
func sessionMark(st ddlSession) string {
	mark := sessionMarkPrefix + "ts=" + strconv.FormatInt(st.queryTime.UnixMicro(), 10) +
		" time_zone=" + st.timeZone + " sql_mode=" + st.sqlMode
	if st.charsetClient != "" {
		mark += " character_set_client=" + st.charsetClient
	}
	if st.collationConnection != "" {
		mark += " collation_connection=" + st.collationConnection
	}
	return mark + " */ "
}

// runningSession is the session state of the statement ctx runs.
func runningSession(ctx *sql.Context) (ddlSession, error) {
	tz, err := function.SessionTimeZone(ctx)
	if err != nil {
		return ddlSession{}, fmt.Errorf("time_zone: %w", err)
	}
	st := ddlSession{
		queryTime: ctx.QueryTime(),
		timeZone:  tz,
		sqlMode:   sql.LoadSqlMode(ctx).String(),
	}
	if st.charsetClient, err = sessionName(ctx, "character_set_client"); err != nil {
		return ddlSession{}, err
	}
	if st.collationConnection, err = sessionName(ctx, "collation_connection"); err != nil {
		return ddlSession{}, err
	}
	return st, nil
}

// sessionName is the value of a session variable that holds a name (a
// character set, a collation), as text.
func sessionName(ctx *sql.Context, name string) (string, error) {
	v, err := ctx.GetSessionVariable(ctx, name)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	text := fmt.Sprint(v)
	if v == nil || text == "" || strings.ContainsAny(text, " */") {
		return "", fmt.Errorf("%s: %q cannot be logged", name, text)
	}
	return text, nil
}

// cutSessionMark removes a session mark from the start of logged. ok is
// false when logged has none; a mark that does not parse is an error (the
// record is damaged, or written by a newer binary).
func cutSessionMark(logged string) (rest string, st ddlSession, ok bool, err error) {
	after, found := strings.CutPrefix(logged, sessionMarkPrefix)
	if !found {
		return logged, ddlSession{}, false, nil
	}
	body, rest, found := strings.Cut(after, " */ ")
	if !found {
		return logged, ddlSession{}, false, fmt.Errorf("unterminated session mark")
	}
	var seen [3]bool
	for _, field := range strings.Split(body, " ") {
		k, v, _ := strings.Cut(field, "=")
		switch k {
		case "ts":
			us, perr := strconv.ParseInt(v, 10, 64)
			if perr != nil {
				return logged, ddlSession{}, false, fmt.Errorf("session mark: ts %q: %w", v, perr)
			}
			st.queryTime, seen[0] = time.UnixMicro(us), true
		case "time_zone":
			if v == "" {
				return logged, ddlSession{}, false, fmt.Errorf("session mark: empty time_zone")
			}
			st.timeZone, seen[1] = v, true
		case "sql_mode":
			st.sqlMode, seen[2] = v, true
		case "character_set_client":
			st.charsetClient = v
		case "collation_connection":
			st.collationConnection = v
		default:
			return logged, ddlSession{}, false, fmt.Errorf("session mark: unknown field %q", field)
		}
	}
	if !seen[0] || !seen[1] || !seen[2] {
		return logged, ddlSession{}, false, fmt.Errorf("session mark %q: ts, time_zone and sql_mode are required", body)
	}
	return rest, st, true, nil
}

// fkChecks reports the session's foreign_key_checks.
func fkChecks(ctx *sql.Context) bool {
	v, err := ctx.GetSessionVariable(ctx, "foreign_key_checks")
	return err != nil || boolValue(v)
}

// loggedDDLText is the text logged for the running DDL statement: its
// marks, then the statement.
func loggedDDLText(ctx *sql.Context) (string, error) {
	st, err := runningSession(ctx)
	if err != nil {
		return "", err
	}
	mark := collationMark(sessionCollationServer(ctx))
	if !fkChecks(ctx) {
		mark += fkChecksOffMark
	}
	return mark + sessionMark(st) + ctx.Query(), nil
}

// replayText returns the statement a logged text runs, setting on ctx the
// session state its marks carry. A text without a collation mark was
// logged before lockstep's default became MySQL's: it ran under
// utf8mb4_0900_bin.
func replayText(ctx *sql.Context, logged string) (string, error) {
	q, coll := cutCollationMark(logged)
	if coll == "" {
		coll = legacyCollation
	}
	if err := ctx.SetSessionVariable(ctx, "collation_server", coll); err != nil {
		return q, fmt.Errorf("collation_server %q: %w", coll, err)
	}
	if rest, ok := strings.CutPrefix(q, fkChecksOffMark); ok {
		if err := ctx.SetSessionVariable(ctx, "foreign_key_checks", int8(0)); err != nil {
			return q, err
		}
		q = rest
	}
	q, st, ok, err := cutSessionMark(q)
	if err != nil || !ok {
		return q, err
	}
	ctx.SetQueryTime(st.queryTime)
	if err := ctx.SetSessionVariable(ctx, "time_zone", st.timeZone); err != nil {
		return q, fmt.Errorf("time_zone %q: %w", st.timeZone, err)
	}
	if err := ctx.SetSessionVariable(ctx, "sql_mode", st.sqlMode); err != nil {
		return q, fmt.Errorf("sql_mode %q: %w", st.sqlMode, err)
	}
	// SET NAMES as the statement ran (absent in older marks: the
	// defaults, as those records replayed before).
	for _, v := range [][2]string{{"character_set_client", st.charsetClient}, {"collation_connection", st.collationConnection}} {
		if v[1] == "" {
			continue
		}
		if err := ctx.SetSessionVariable(ctx, v[0], v[1]); err != nil {
			return q, fmt.Errorf("%s %q: %w", v[0], v[1], err)
		}
	}
	return q, nil
}

// A checkpoint carries views, triggers, procedures and events as their
// stored CREATE text, which go-mysql-server keeps as it was typed; each
// also keeps the sql_mode it was created under, and its text parses only
// under that mode (a view created with ANSI_QUOTES names its columns
// "like_this"). The checkpoint's statement starts with a mark naming that
// mode, and loading runs the statement under it.

// sqlModeMarkPrefix starts the mark of a checkpointed catalog statement.
const sqlModeMarkPrefix = "/* lockstep: sql_mode="

// withSQLMode returns stmt marked with the sql_mode it must run under.
func withSQLMode(mode, stmt string) string {
	return sqlModeMarkPrefix + mode + " */ " + stmt
}

// cutSQLModeMark removes a sql_mode mark from the start of stmt; ok is
// false when it has none.
func cutSQLModeMark(stmt string) (rest, mode string, ok bool) {
	after, found := strings.CutPrefix(stmt, sqlModeMarkPrefix)
	if !found {
		return stmt, "", false
	}
	mode, rest, found = strings.Cut(after, " */ ")
	if !found || strings.ContainsAny(mode, " */") {
		return stmt, "", false
	}
	return rest, mode, true
}
