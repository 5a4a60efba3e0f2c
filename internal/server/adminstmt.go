package server

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"lockstep/internal/sqlfront"
)

// Statements the parser does not know (1064) that tools send: the table
// maintenance statements `mysqlcheck` runs — CHECK TABLE, OPTIMIZE TABLE,
// REPAIR TABLE — and DO; and SHOW ERRORS, which go-mysql-server refuses
// as an unsupported feature. The handler tries them only once
// go-mysql-server has refused a statement, so they cost the other
// statements nothing.
//
// They answer as MySQL with InnoDB does: one result set (Table, Op,
// Msg_type, Msg_text) with rows per table, the table named db.table.
//   - CHECK TABLE reads every row of the table (SELECT COUNT(*)): status OK.
//   - OPTIMIZE TABLE is InnoDB's "recreate + analyze": lockstep has nothing
//     to recreate (no pages to defragment), so it runs ANALYZE TABLE and
//     answers with InnoDB's note and the status.
//   - REPAIR TABLE: InnoDB's note that the engine does not support it.
//   - A table that does not exist is a row with Msg_type Error and MySQL's
//     1146 text, then "Operation failed", as MySQL sends it.
//   - DO expr, ... evaluates the expressions (as SELECT) and sends OK
//     without a result set.
//   - SHOW CREATE USER account (sqlfront/showcreateuser.go).
//   - SHOW ENGINE engine STATUS | MUTEX | LOGS (showengine.go).
//   - SHOW ERRORS [LIMIT [offset,] n] is SHOW WARNINGS' rows of level
//     Error (a failed statement's error is among them:
//     sqlfront/diagnostics.go).
// CHECK TABLE's options (QUICK, EXTENDED, FOR UPGRADE ...) change nothing.

var (
	reTableOp    = regexp.MustCompile(`(?is)^\s*(check|optimize|repair)\s+(?:(?:no_write_to_binlog|local)\s+)?tables?\s+(.+?)\s*;?\s*$`)
	reDo         = regexp.MustCompile(`(?is)^\s*do\s+(.+?)\s*;?\s*$`)
	reShowErrors = regexp.MustCompile(`(?is)^\s*show\s+errors(?:\s+limit\s+(\d+)(?:\s*,\s*(\d+))?)?\s*;?\s*$`)
	reOptions    = regexp.MustCompile(`(?is)\s+(?:(?:for\s+upgrade|quick|fast|medium|extended|changed|use_frm)\b\s*)+$`)
)

var tableOpFields = []*querypb.Field{
	{Name: "Table", Type: querypb.Type_VARCHAR, Charset: 255, ColumnLength: 256},
	{Name: "Op", Type: querypb.Type_VARCHAR, Charset: 255, ColumnLength: 40},
	{Name: "Msg_type", Type: querypb.Type_VARCHAR, Charset: 255, ColumnLength: 40},
	{Name: "Msg_text", Type: querypb.Type_VARCHAR, Charset: 255, ColumnLength: 1024},
}

// adminStatement answers query, which go-mysql-server refused with
// refusal, if it is one of the statements above, reporting whether it did;
// err is the statement's error then.
func (h *handler) adminStatement(ctx context.Context, c *mysql.Conn, query string, refusal error, cb mysql.ResultSpoolFn) (sent bool, err error) {
	if m := reShowErrors.FindStringSubmatch(query); m != nil {
		return true, h.showErrors(ctx, c, m, cb)
	}
	if !isSyntaxError(refusal) {
		return false, nil
	}
	if m := reShowEngine.FindStringSubmatch(uncommented(query)); m != nil {
		return true, h.showEngine(c, m, cb) // showengine.go
	}
	if m := reShowCreateUser.FindStringSubmatch(query); m != nil {
		res, err := h.showCreateUser(c, m)
		if res == nil && err == nil {
			return false, nil // not an account name: the syntax error stands
		}
		if err != nil {
			return true, err
		}
		return true, cb(res, false)
	}
	if m := reDo.FindStringSubmatch(query); m != nil {
		if err := h.inner(ctx, c, "SELECT "+m[1], nil); err != nil {
			return true, err
		}
		return true, cb(&sqltypes.Result{}, false)
	}
	if m := reTableOp.FindStringSubmatch(query); m != nil {
		return h.tableOp(ctx, c, strings.ToLower(m[1]), reOptions.ReplaceAllString(m[2], ""), cb)
	}
	return false, nil
}

// tableOp answers CHECK, OPTIMIZE or REPAIR TABLE (op) of the tables in
// list; sent is false when list is not a table list.
func (h *handler) tableOp(ctx context.Context, c *mysql.Conn, op, list string, cb mysql.ResultSpoolFn) (sent bool, err error) {
	names := splitTableList(list)
	if names == nil {
		return false, nil
	}
	db := h.fe.CurrentDatabase(c.ConnectionID)
	res := &sqltypes.Result{Fields: tableOpFields}
	row := func(table, typ, text string) {
		res.Rows = append(res.Rows, []sqltypes.Value{
			sqltypes.NewVarChar(table), sqltypes.NewVarChar(op), sqltypes.NewVarChar(typ), sqltypes.NewVarChar(text)})
	}
	for _, n := range names {
		qualified, display := n.qualified(db)
		if qualified == "" {
			return true, mysql.NewSQLError(mysql.ERNoDb, "3D000", "No database selected")
		}
		probe := "SELECT COUNT(*) FROM " + qualified
		if op == "optimize" {
			probe = "ANALYZE TABLE " + qualified
		}
		if err := h.inner(ctx, c, probe, nil); err != nil {
			var se *mysql.SQLError
			if e := h.mapError(c, probe, err); errors.As(e, &se) {
				row(display, "Error", se.Message)
				row(display, "status", "Operation failed")
				continue
			}
			return true, err
		}
		switch op {
		case "optimize":
			row(display, "note", "Table does not support optimize, doing recreate + analyze instead")
			row(display, "status", "OK")
		case "repair":
			row(display, "note", "The storage engine for the table doesn't support repair")
		default:
			row(display, "status", "OK")
		}
	}
	return true, cb(res, false)
}

// inner runs q through go-mysql-server for the connection, handing each
// result to keep (nil: drop them).
func (h *handler) inner(ctx context.Context, c *mysql.Conn, q string, keep func(*sqltypes.Result)) error {
	defer h.fe.InternalStatement(c.ConnectionID)() // not under max_execution_time
	return h.Handler.ComQuery(ctx, c, q, func(r *sqltypes.Result, _ bool) error {
		if keep != nil {
			keep(r)
		}
		return nil
	})
}

// tableName is one name of a statement's table list, as written.
type tableName struct{ db, table string } // unquoted

// qualified returns the name quoted for a statement and as MySQL shows it
// (db.table); "" when it names no database and none is current.
func (n tableName) qualified(current string) (quoted, display string) {
	db := n.db
	if db == "" {
		db = current
	}
	if db == "" {
		return "", ""
	}
	return sqlfront.QuoteIdent(db) + "." + sqlfront.QuoteIdent(n.table), db + "." + n.table
}

// splitTableList reads `t`, db.t, `d`.`t` ... separated by commas; nil if
// the list is not one. The parser reads it: DROP TABLE's grammar is
// exactly a list of table names (the statement is only parsed).
func splitTableList(s string) []tableName {
	st, err := ast.Parse("DROP TABLE " + s)
	if err != nil {
		return nil
	}
	ddl, ok := st.(*ast.DDL)
	if !ok || len(ddl.FromTables) == 0 || ddl.IfExists {
		return nil
	}
	out := make([]tableName, len(ddl.FromTables))
	for i, t := range ddl.FromTables {
		out[i] = tableName{db: t.DbQualifier.String(), table: t.Name.String()}
	}
	return out
}

// isSyntaxError reports whether go-mysql-server refused a statement as
// one its parser does not know.
func isSyntaxError(err error) bool {
	var se *mysql.SQLError
	if errors.As(mysqlError("", err), &se) {
		return se.Num == mysql.ERParseError
	}
	return false
}

// showErrors answers SHOW ERRORS (m: reShowErrors' match) from SHOW
// WARNINGS.
func (h *handler) showErrors(ctx context.Context, c *mysql.Conn, m []string, cb mysql.ResultSpoolFn) error {
	var res *sqltypes.Result
	err := h.inner(ctx, c, "SHOW WARNINGS", func(r *sqltypes.Result) {
		if res == nil {
			res = &sqltypes.Result{Fields: r.Fields}
			h.fe.FixFields(c.ConnectionID, res.Fields)
		}
		for _, row := range r.Rows {
			if len(row) > 0 && row[0].ToString() == "Error" {
				res.Rows = append(res.Rows, copyRow(row))
			}
		}
	})
	if err != nil {
		return err
	}
	if res == nil {
		return errors.New("SHOW ERRORS: SHOW WARNINGS sent no result")
	}
	offset, count := 0, len(res.Rows)
	if m[1] != "" {
		a, _ := strconv.Atoi(m[1])
		count = a
		if m[2] != "" {
			b, _ := strconv.Atoi(m[2])
			offset, count = a, b
		}
	}
	offset = min(offset, len(res.Rows))
	res.Rows = res.Rows[offset:min(len(res.Rows), offset+count)]
	return cb(res, false)
}

// copyRow copies a row a callback was handed (its values may be reused).
func copyRow(row []sqltypes.Value) []sqltypes.Value {
	out := make([]sqltypes.Value, len(row))
	for i, v := range row {
		out[i] = sqltypes.MakeTrusted(v.Type(), append([]byte(nil), v.Raw()...))
	}
	return out
}

var (
	reShowCreateUser = regexp.MustCompile(`(?is)^\s*show\s+create\s+user\s+(.+?)\s*;?\s*$`)
	// an account: a user name (quoted or bare), then @ and a host, or
	// CURRENT_USER[()]
	reAccount = regexp.MustCompile("(?is)^(?:'((?:[^']|'')*)'|`((?:[^`]|``)*)`|\"((?:[^\"]|\"\")*)\"|([A-Za-z0-9_$.-]+))" +
		"(?:\\s*@\\s*(?:'((?:[^']|'')*)'|`((?:[^`]|``)*)`|\"((?:[^\"]|\"\")*)\"|([A-Za-z0-9_$.%:-]+)))?$")
	reCurrentUser = regexp.MustCompile(`(?is)^current_user(?:\s*\(\s*\))?$`)
)

// parseAccount reads an account name as SQL writes it; the host is '%'
// when left out.
func parseAccount(s string) (user, host string, ok bool) {
	m := reAccount.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", "", false
	}
	user = strings.ReplaceAll(m[1], "''", "'") + strings.ReplaceAll(m[2], "``", "`") + strings.ReplaceAll(m[3], `""`, `"`) + m[4]
	host = strings.ReplaceAll(m[5], "''", "'") + strings.ReplaceAll(m[6], "``", "`") + strings.ReplaceAll(m[7], `""`, `"`) + m[8]
	if m[5] == "" && m[6] == "" && m[7] == "" && m[8] == "" {
		host = "%"
	}
	return user, host, true
}

// showCreateUser answers SHOW CREATE USER (m: reShowCreateUser's match).
func (h *handler) showCreateUser(c *mysql.Conn, m []string) (*sqltypes.Result, error) {
	var user, host string
	if reCurrentUser.MatchString(strings.TrimSpace(m[1])) {
		user, host = h.fe.SessionAccount(c.ConnectionID)
	} else {
		var ok bool
		if user, host, ok = parseAccount(m[1]); !ok {
			return nil, nil
		}
	}
	stmt, err := h.fe.ShowCreateUser(c.ConnectionID, user, host)
	if err != nil {
		return nil, err
	}
	name := "CREATE USER for " + user + "@" + host
	return &sqltypes.Result{
		Fields: []*querypb.Field{{Name: name, Type: querypb.Type_VARCHAR, Charset: 255, ColumnLength: 4096}},
		Rows:   [][]sqltypes.Value{{sqltypes.NewVarChar(stmt)}},
	}, nil
}
