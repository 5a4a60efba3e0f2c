package sqlfront

import (
	"context"
	"errors"
	"reflect"
	"strconv"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Writes through views inside triggers and stored procedures
// (docs/sqlfront.md, "Writes through views"). The parser hook rewrites the
// statements a client sends (viewwrite.go); the bodies of triggers and
// procedures reach go-mysql-server by two other ways, each hooked here:
//
//   - A trigger's body is parsed from its stored CREATE TRIGGER text by a
//     planbuilder that uses sql.GlobalParser, each time a statement that
//     may fire it is analysed (the applyTriggers rule), and planned then.
//     sql.GlobalParser is wrapped (triggerBodyParser): while the trigger
//     rule runs for a lockstep session (Session.triggerRule), each INSERT,
//     UPDATE and DELETE of a parsed trigger body that writes a view is
//     rewritten as at the top level. A view the statement cannot write
//     (1288, 1471, 1394, 1395, 1348) must fail only when the trigger runs
//     that statement, as in MySQL: the statement is replaced by a SIGNAL of
//     that error. CREATE TRIGGER's own parse goes through the same rewrite
//     (parser.note), so that go-mysql-server's check of the body passes;
//     the stored text is the client's.
//   - A procedure's statements are run one by one by go-mysql-server's
//     interpreter, as parsed statements, through the analyzer's
//     StatementRunner; viewRunner rewrites a copy of each that writes a
//     view, when it runs (so an error comes at that statement, and a view
//     changed since the CALL began is seen). This covers a procedure
//     called from a trigger.
//
// CHECK OPTION conditions are Session.routineViewChecks while the trigger
// body or the procedure statement is planned (Table.GetChecks reads them
// then), put back after. Inside one trigger body they apply to all of the
// body's writes to the same base table. No privilege is checked by the
// rewrite: the body runs with its definer's rights in MySQL, which
// go-mysql-server does not model (it does not check a trigger's body).
//
// The client's own statements never pass here: the engine's parser is
// the wrapped one (mysqlParser), and the interpreter is the only caller of
// the analyzer's runner with a parsed statement.

// mysqlParser is go-mysql-server's parser, before triggerBodyParser wraps
// sql.GlobalParser.
var mysqlParser = sql.GlobalParser

func init() { sql.GlobalParser = triggerBodyParser{Parser: mysqlParser} }

// triggerBodyParser is sql.GlobalParser: see the top of this file.
type triggerBodyParser struct {
	sql.Parser
}

func (p triggerBodyParser) ParseWithOptions(ctx context.Context, query string, delim rune, multi bool, o ast.ParserOptions) (ast.Statement, string, string, error) {
	st, q, rem, err := p.Parser.ParseWithOptions(ctx, query, delim, multi, o)
	if err == nil {
		if ddl, ok := st.(*ast.DDL); ok && ddl.TriggerSpec != nil {
			if sctx, s := parsingSession(ctx); s != nil && s.fe != nil && s.triggerRule > 0 {
				s.routineViewChecks = s.rewriteTriggerBody(sctx, ddl.TriggerSpec)
			}
		}
	}
	return st, q, rem, err
}

// createTriggerViews rewrites a CREATE TRIGGER's body for go-mysql-server's
// check of it (parser.note); its CHECK OPTION conditions are not needed.
func createTriggerViews(ctx context.Context, ddl *ast.DDL) {
	if ddl.TriggerSpec == nil || ddl.Action != ast.CreateStr {
		return
	}
	if sctx, s := parsingSession(ctx); s != nil && s.fe != nil {
		s.rewriteTriggerBody(sctx, ddl.TriggerSpec)
	}
}

// rewriteTriggerBody rewrites the writes to views in a trigger's body and
// returns their CHECK OPTION conditions.
func (s *Session) rewriteTriggerBody(sctx *sql.Context, spec *ast.TriggerSpec) []viewCheck {
	var checks []viewCheck
	spec.Body = s.rewriteBodyStatement(sctx, spec.Body, &checks)
	return checks
}

// rewriteBodyStatement rewrites st, or the statements in it, and returns
// what takes its place.
func (s *Session) rewriteBodyStatement(sctx *sql.Context, st ast.Statement, checks *[]viewCheck) ast.Statement {
	list := func(stmts ast.Statements) {
		for i := range stmts {
			stmts[i] = s.rewriteBodyStatement(sctx, stmts[i], checks)
		}
	}
	switch st := st.(type) {
	case *ast.BeginEndBlock:
		list(st.Statements)
	case *ast.IfStatement:
		for i := range st.Conditions {
			list(st.Conditions[i].Statements)
		}
		list(st.Else)
	case *ast.CaseStatement:
		for i := range st.Cases {
			list(st.Cases[i].Statements)
		}
		list(st.Else)
	case *ast.While:
		list(st.Statements)
	case *ast.Repeat:
		list(st.Statements)
	case *ast.Loop:
		list(st.Statements)
	case *ast.Insert, *ast.Update, *ast.Delete:
		vcs, err := s.rewriteViewWrite(sctx, st, false)
		if err != nil {
			return signalOf(err)
		}
		*checks = append(*checks, vcs...)
	}
	return st
}

// signalOf is a SIGNAL statement raising err: MySQL's code, SQLSTATE and
// message for a client error, 1105 otherwise. go-mysql-server takes a
// message of 128 characters at most.
func signalOf(err error) ast.Statement {
	code, state, msg := 1105, "HY000", err.Error()
	var se *mysql.SQLError
	if errors.As(err, &se) {
		code, state, msg = se.Num, se.State, se.Message
	}
	if len(msg) > 128 {
		msg = msg[:128]
	}
	return &ast.Signal{SqlStateValue: state, Info: []ast.SignalInfo{
		{ConditionItemName: ast.SignalConditionItemName_MysqlErrno, Value: ast.NewIntVal([]byte(strconv.Itoa(code)))},
		{ConditionItemName: ast.SignalConditionItemName_MessageText, Value: ast.NewStrVal([]byte(msg))},
	}}
}

// viewRunner is the analyzer's StatementRunner: see the top of this file.
type viewRunner struct {
	inner sql.StatementRunner
}

func (r viewRunner) QueryWithBindings(ctx *sql.Context, query string, parsed ast.Statement, bindings map[string]ast.Expr, qFlags *sql.QueryFlags) (sql.Schema, sql.RowIter, *sql.QueryFlags, error) {
	if query != "" || parsed == nil {
		return r.inner.QueryWithBindings(ctx, query, parsed, bindings, qFlags)
	}
	s, ok := ctx.Session.(*Session)
	if !ok || s.fe == nil || s.writtenView(ctx, parsed) == nil {
		return r.inner.QueryWithBindings(ctx, query, parsed, bindings, qFlags)
	}
	// The interpreter runs the same parsed statement again in a loop, and
	// at the next CALL parses the body again: rewrite a copy.
	st := cloneStatement(parsed)
	vcs, err := s.rewriteViewWrite(ctx, st, false)
	if err != nil {
		return nil, nil, nil, err
	}
	prev := s.routineViewChecks
	s.routineViewChecks = vcs
	defer func() { s.routineViewChecks = prev }()
	return r.inner.QueryWithBindings(ctx, query, st, bindings, qFlags)
}

// cloneStatement is a deep copy of st's syntax tree (the vitess parser's
// nodes; values of other packages that hang in it are shared).
func cloneStatement(st ast.Statement) ast.Statement {
	v := reflect.ValueOf(&st).Elem()
	out := cloneValue(v, 0)
	c, _ := out.Interface().(ast.Statement)
	if c == nil {
		return st
	}
	return c
}

var astPackage = reflect.TypeOf(ast.Select{}).PkgPath()

// ownNode reports a type of the vitess parser's package (or a pointer to one).
func ownNode(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath() == astPackage
}

func cloneValue(v reflect.Value, depth int) reflect.Value {
	if depth > 10000 {
		return v // a cycle: the tree has none
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() || !ownNode(v.Elem().Type()) {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(cloneValue(v.Elem(), depth+1))
		return out
	case reflect.Pointer:
		if v.IsNil() || !ownNode(v.Type()) {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(cloneValue(v.Elem(), depth+1))
		return out
	case reflect.Struct:
		if !ownNode(v.Type()) {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(v) // unexported fields are values (identifiers' text)
		for i := 0; i < v.NumField(); i++ {
			if out.Field(i).CanSet() {
				out.Field(i).Set(cloneValue(v.Field(i), depth+1))
			}
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(cloneValue(v.Index(i), depth+1))
		}
		return out
	}
	return v
}
