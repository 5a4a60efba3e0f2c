package sqlfront

import (
	"context"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Writes through views (docs/sqlfront.md, "Writes through views").
//
// go-mysql-server plans INSERT, UPDATE and DELETE against tables only (a
// view target was 1105). The parser hook (parser.note) rewrites a
// single-table INSERT, UPDATE or DELETE whose target is an updatable view
// into the same statement against the view's base table, before
// go-mysql-server plans it, following MySQL's rules:
//
//   - updatable: one base table (or an updatable view) in FROM, no
//     DISTINCT, GROUP BY, HAVING, LIMIT, UNION, aggregate or window
//     function, subquery in the select list; else 1288 for UPDATE and
//     DELETE, 1471 for INSERT;
//   - UPDATE may set only view columns that are plain base columns (1348
//     otherwise); INSERT needs every view column to be one (1471);
//   - the view's WHERE is added to an UPDATE's or DELETE's;
//   - WITH CHECK OPTION: the rows an INSERT or UPDATE writes must satisfy
//     the view's WHERE (CASCADED: and the WHERE of every view under it;
//     LOCAL: the views under it that have their own CHECK OPTION), else
//     1369. The condition is handed to go-mysql-server as a CHECK
//     constraint of the base table for this statement only (Table.GetChecks
//     adds the session's viewChecks), whose 3819 the server maps to 1369.
//
// Privileges: the invoker needs the statement's privilege on the view and
// on each view and table under it (checked here, 1142 naming the
// statement's view), and go-mysql-server checks the planned statement
// against the base table. MySQL asks the definer for what is under the
// view; lockstep is stricter.
//
// Metadata locks and LOCK TABLES: each view is looked up through
// Database.GetViewDefinition, which notes it in the session's viewsSeen,
// so mdlRule locks it and lockcheck finds the base table locked
// implicitly under a locked view.

// ViewCheckPrefix names the CHECK constraint that carries a view's CHECK
// OPTION; the server maps its violation (3819) to 1369.
const ViewCheckPrefix = "lockstep_view_check:"

// viewCheck is a CHECK OPTION condition for one statement.
type viewCheck struct {
	te   *tableEntry
	name string // db.view
	expr string // over the base table's columns
}

// viewCol is a column of a view: its name and the base column it is
// ("" when it is not a plain column reference), with the expression.
type viewCol struct {
	name string
	base string
	expr ast.Expr
}

// updatableView is a view analysed for writes.
type updatableView struct {
	db     *Database
	name   string
	cols   []viewCol
	where  ast.Expr // nil without one
	check  ast.ViewCheckOption
	baseDB string // the base table's (or view's) database and name
	base   string
	alias  string // what the view's FROM calls it
}

// isJoin reports a FROM clause of more than one table.
func isJoin(from ast.TableExprs) bool {
	if len(from) > 1 {
		return true
	}
	if len(from) == 1 {
		_, ok := from[0].(*ast.JoinTableExpr)
		return ok
	}
	return false
}

// errNotUpdatable is ER_NON_UPDATABLE_TABLE (1288), or for an INSERT
// ER_NON_INSERTABLE_TABLE (1471).
func errNotUpdatable(name, op string) error {
	if op == "INSERT" {
		return errNotInsertable(name)
	}
	return mysql.NewSQLError(1288, "HY000", "The target table %s of the %s is not updatable", name, op)
}

// errNotInsertable is ER_NON_INSERTABLE_TABLE (1471).
func errNotInsertable(name string) error {
	return mysql.NewSQLError(1471, "HY000", "The target table %s of the INSERT is not insertable-into", name)
}

// errNonUpdatableColumn is ER_NONUPDATEABLE_COLUMN (1348).
func errNonUpdatableColumn(name string) error {
	return mysql.NewSQLError(1348, "HY000", "Column '%s' is not updatable", name)
}

// viewOf is the view db.name, or nil when it is none (a table, a
// temporary table of the session, nothing).
func (s *Session) viewOf(dbName, name string) *Database {
	dbKey, key := strings.ToLower(dbName), strings.ToLower(name)
	db := s.fe.provider.database(dbKey)
	if db == nil {
		return nil
	}
	db.mu.RLock()
	_, ok := db.views[key]
	db.mu.RUnlock()
	if !ok || s.tempTable(dbKey, key) != nil {
		return nil
	}
	return db
}

// analyseView reads view db.name for a write; op names the statement in
// 1288.
func analyseView(sctx *sql.Context, s *Session, db *Database, name, op string, depth int) (*updatableView, error) {
	if depth > 32 {
		return nil, errNotUpdatable(name, op)
	}
	def, ok, err := db.GetViewDefinition(sctx, name)
	if err != nil || !ok {
		return nil, fmt.Errorf("view %s.%s: definition not found", db.name, name)
	}
	opts := sql.NewSqlModeFromString(def.SqlMode).ParserOptions()
	parsed, err := ast.ParseWithOptions(sctx, def.CreateViewStatement, opts)
	if err != nil {
		return nil, fmt.Errorf("view %s.%s: parsing its definition: %w", db.name, name, err)
	}
	ddl, ok := parsed.(*ast.DDL)
	if !ok || ddl.ViewSpec == nil {
		return nil, fmt.Errorf("view %s.%s: definition is not CREATE VIEW", db.name, name)
	}
	sel, ok := ddl.ViewSpec.ViewExpr.(*ast.Select)
	if ok && isJoin(sel.From) {
		// MySQL's errors for join views; writes to one table of a join
		// view (MySQL takes them) are not supported.
		switch op {
		case "DELETE":
			return nil, mysql.NewSQLError(1395, "HY000", "Can not delete from join view '%s.%s'", db.name, def.Name)
		case "INSERT":
			return nil, mysql.NewSQLError(1394, "HY000", "Can not insert into join view '%s.%s' without fields list", db.name, def.Name)
		}
		return nil, errNotUpdatable(def.Name, op)
	}
	if !ok || sel.QueryOpts.Distinct || len(sel.GroupBy) > 0 || sel.Having != nil || sel.Limit != nil ||
		sel.With != nil || sel.Into != nil || len(sel.Window) > 0 || len(sel.From) != 1 {
		return nil, errNotUpdatable(def.Name, op)
	}
	from, ok := sel.From[0].(*ast.AliasedTableExpr)
	if !ok {
		return nil, errNotUpdatable(def.Name, op)
	}
	tn, ok := from.Expr.(ast.TableName)
	if !ok {
		return nil, errNotUpdatable(def.Name, op)
	}
	v := &updatableView{db: db, name: def.Name, check: ddl.ViewSpec.CheckOption,
		baseDB: tn.DbQualifier.String(), base: tn.Name.String(), alias: tn.Name.String()}
	if v.baseDB == "" {
		v.baseDB = db.name
	}
	if !from.As.IsEmpty() {
		v.alias = from.As.String()
	}
	if sel.Where != nil {
		v.where = sel.Where.Expr
	}
	var baseCols []string
	baseColumns := func() ([]string, error) {
		if baseCols != nil {
			return baseCols, nil
		}
		if vdb := s.viewOf(v.baseDB, v.base); vdb != nil {
			inner, err := analyseView(sctx, s, vdb, v.base, op, depth+1)
			if err != nil {
				return nil, err
			}
			for _, c := range inner.cols {
				baseCols = append(baseCols, c.name)
			}
			return baseCols, nil
		}
		te := s.fe.lookupEntry(strings.ToLower(v.baseDB), strings.ToLower(v.base))
		if te == nil {
			return nil, errNotUpdatable(def.Name, op)
		}
		for _, c := range te.load().schema.Schema {
			baseCols = append(baseCols, c.Name)
		}
		return baseCols, nil
	}
	for _, se := range sel.SelectExprs {
		switch se := se.(type) {
		case *ast.StarExpr:
			cols, err := baseColumns()
			if err != nil {
				return nil, err
			}
			for _, c := range cols {
				v.cols = append(v.cols, viewCol{name: c, base: c, expr: &ast.ColName{Name: ast.NewColIdent(c)}})
			}
		case *ast.AliasedExpr:
			if !plainSelectExpr(se.Expr) {
				return nil, errNotUpdatable(def.Name, op)
			}
			c := viewCol{name: se.As.String(), expr: se.Expr}
			if cn, ok := se.Expr.(*ast.ColName); ok {
				c.base = cn.Name.String()
				if c.name == "" {
					c.name = c.base
				}
			} else if c.name == "" {
				c.name = ast.String(se.Expr)
			}
			v.cols = append(v.cols, c)
		default:
			return nil, errNotUpdatable(def.Name, op)
		}
	}
	if len(ddl.ViewSpec.Columns) == len(v.cols) {
		for i, c := range ddl.ViewSpec.Columns {
			v.cols[i].name = c.String()
		}
	}
	return v, nil
}

// plainSelectExpr reports a select-list expression that keeps a view
// updatable: no aggregate or window function, no subquery.
func plainSelectExpr(e ast.Expr) bool {
	ok := true
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery, *ast.GroupConcatExpr:
			ok = false
		case *ast.FuncExpr:
			if n.IsAggregate() || n.Over != nil {
				ok = false
			}
		}
		return ok, nil
	}, e)
	return ok
}

// col is the view column named name (case-insensitive).
func (v *updatableView) col(name string) *viewCol {
	for i := range v.cols {
		if strings.EqualFold(v.cols[i].name, name) {
			return &v.cols[i]
		}
	}
	return nil
}

// mapExpr rewrites the references to view columns in e (by the name the
// statement gives the view, or unqualified outside subqueries) into the
// expressions they stand for, qualified by the base table's alias.
func (v *updatableView) mapExpr(e ast.Expr, goesBy string, qualify bool) ast.Expr {
	if e == nil {
		return nil
	}
	type repl struct{ from, to ast.Expr }
	var repls []repl
	var visit func(n ast.SQLNode, inSub bool)
	visit = func(n ast.SQLNode, inSub bool) {
		_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
			switch n := n.(type) {
			case *ast.Subquery:
				if !inSub {
					visit(n.Select, true)
					return false, nil
				}
			case *ast.ColName:
				q := n.Qualifier
				if q.IsEmpty() && inSub {
					return false, nil
				}
				if !q.IsEmpty() && !strings.EqualFold(q.Name.String(), goesBy) {
					return false, nil
				}
				c := v.col(n.Name.String())
				if c == nil {
					return false, nil
				}
				if c.base != "" {
					n.Name = ast.NewColIdent(c.base)
					n.Qualifier = ast.TableName{}
					if qualify {
						n.Qualifier = ast.TableName{Name: ast.NewTableIdent(v.alias)}
					}
					return false, nil
				}
				repls = append(repls, repl{from: n, to: &ast.ParenExpr{Expr: cloneExpr(c.expr)}})
				return false, nil
			}
			return true, nil
		}, n)
	}
	visit(e, false)
	for _, r := range repls {
		e = ast.ReplaceExpr(e, r.from, r.to)
	}
	return e
}

// cloneExpr copies an expression by printing and parsing it.
func cloneExpr(e ast.Expr) ast.Expr {
	st, err := ast.Parse("select " + ast.String(e))
	if err != nil {
		return e
	}
	if sel, ok := st.(*ast.Select); ok && len(sel.SelectExprs) == 1 {
		if ae, ok := sel.SelectExprs[0].(*ast.AliasedExpr); ok {
			return ae.Expr
		}
	}
	return e
}

// unqualify drops the table qualifiers of e's column references outside
// subqueries (a CHECK constraint names its table's columns bare).
func unqualify(e ast.Expr) {
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.ColName:
			n.Qualifier = ast.TableName{}
		}
		return true, nil
	}, e)
}

func andExpr(a, b ast.Expr) ast.Expr {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return &ast.AndExpr{Left: &ast.ParenExpr{Expr: a}, Right: &ast.ParenExpr{Expr: b}}
}

// pendingCheck is a CHECK OPTION condition still over a view's columns.
type pendingCheck struct {
	name string
	expr ast.Expr
}

// writeThroughView rewrites stmt (INSERT, UPDATE, DELETE) when its target
// is a view; see the top of this file. The statement's CHECK OPTION
// conditions are kept on the session for this command.
func writeThroughView(ctx context.Context, query string, stmt ast.Statement) error {
	sctx, s := parsingSession(ctx)
	if s == nil || s.fe == nil {
		return nil
	}
	vcs, err := s.rewriteViewWrite(sctx, stmt, true)
	if err != nil || len(vcs) == 0 {
		return err
	}
	s.viewChecks = append(s.viewChecks, vcs...)
	// A prepared statement is parsed once, at PREPARE: its EXECUTEs find
	// the conditions by the statement's text (the query of their context).
	if s.preparedViewChecks == nil || len(s.preparedViewChecks) >= 256 {
		s.preparedViewChecks = map[string][]viewCheck{}
	}
	s.preparedViewChecks[query] = vcs
	return nil
}

// viewWriteTarget is the single table an INSERT, UPDATE or DELETE writes
// (ate: its FROM entry for UPDATE and DELETE) and the statement's name,
// or ok false for other statements and multi-table writes.
func viewWriteTarget(stmt ast.Statement) (tn ast.TableName, ate *ast.AliasedTableExpr, op string, ok bool) {
	op = "INSERT"
	switch st := stmt.(type) {
	case *ast.Insert:
		return st.Table, nil, op, true
	case *ast.Update:
		op = "UPDATE"
		if len(st.TableExprs) != 1 {
			return tn, nil, op, false
		}
		ate, _ = st.TableExprs[0].(*ast.AliasedTableExpr)
	case *ast.Delete:
		op = "DELETE"
		if len(st.TableExprs) != 1 || len(st.Targets) > 0 {
			return tn, nil, op, false
		}
		ate, _ = st.TableExprs[0].(*ast.AliasedTableExpr)
	default:
		return tn, nil, op, false
	}
	if ate == nil {
		return tn, nil, op, false
	}
	tn, ok = ate.Expr.(ast.TableName)
	return tn, ate, op, ok
}

// writtenView is the database of the view stmt writes, or nil when stmt
// is no single-table write to a view.
func (s *Session) writtenView(sctx *sql.Context, stmt ast.Statement) *Database {
	tn, _, _, ok := viewWriteTarget(stmt)
	if !ok {
		return nil
	}
	dbName := tn.DbQualifier.String()
	if dbName == "" {
		dbName = sctx.GetCurrentDatabase()
	}
	return s.viewOf(dbName, tn.Name.String())
}

// rewriteViewWrite rewrites stmt in place onto the view's base table when
// it writes a view, and returns its CHECK OPTION conditions. invoker: check
// the session user's privileges (a top-level statement; a routine's or
// trigger's statement runs with its definer's, which go-mysql-server does
// not model: not checked here).
func (s *Session) rewriteViewWrite(sctx *sql.Context, stmt ast.Statement, invoker bool) ([]viewCheck, error) {
	tn, ate, op, ok := viewWriteTarget(stmt)
	if !ok {
		return nil, nil
	}
	dbName := tn.DbQualifier.String()
	if dbName == "" {
		dbName = sctx.GetCurrentDatabase()
	}
	db := s.viewOf(dbName, tn.Name.String())
	if db == nil {
		return nil, nil
	}
	priv := func(op, db, table, view string) error {
		if !invoker {
			return nil
		}
		return s.viewWritePriv(sctx, op, db, table, view)
	}
	if err := priv(op, db.name, tn.Name.String(), tn.Name.String()); err != nil {
		return nil, err
	}
	goesBy := tn.Name.String()
	if ate != nil && !ate.As.IsEmpty() {
		goesBy = ate.As.String()
	}
	var where ast.Expr
	switch st := stmt.(type) {
	case *ast.Update:
		if st.Where != nil {
			where = st.Where.Expr
		}
	case *ast.Delete:
		if st.Where != nil {
			where = st.Where.Expr
		}
	}
	var checks []pendingCheck
	cascaded := false
	name := tn.Name.String()
	// A failed check names the statement's view, as MySQL's does.
	target := db.name + "." + name
	var te *tableEntry
	for depth := 0; ; depth++ {
		v, err := analyseView(sctx, s, db, name, op, depth)
		if err != nil {
			return nil, err
		}
		// Statement parts: over the view's columns, into the base's.
		switch st := stmt.(type) {
		case *ast.Insert:
			if err := v.mapInsert(st); err != nil {
				return nil, err
			}
		case *ast.Update:
			for _, a := range st.Exprs {
				if q := a.Name.Qualifier; !q.IsEmpty() && !strings.EqualFold(q.Name.String(), goesBy) {
					continue
				}
				c := v.col(a.Name.Name.String())
				if c == nil {
					continue // go-mysql-server's unknown column
				}
				if c.base == "" {
					return nil, errNonUpdatableColumn(c.name)
				}
				a.Name.Name, a.Name.Qualifier = ast.NewColIdent(c.base), ast.TableName{}
				a.Expr = v.mapExpr(a.Expr, goesBy, true)
			}
			for _, o := range st.OrderBy {
				o.Expr = v.mapExpr(o.Expr, goesBy, true)
			}
		case *ast.Delete:
			for _, o := range st.OrderBy {
				o.Expr = v.mapExpr(o.Expr, goesBy, true)
			}
		}
		where = v.mapExpr(where, goesBy, true)
		for i := range checks {
			checks[i].expr = v.mapExpr(checks[i].expr, goesBy, false)
		}
		if v.where != nil {
			where = andExpr(where, cloneExpr(v.where))
		}
		if v.check == ast.ViewCheckOptionCascaded {
			cascaded = true
		}
		if (cascaded || v.check != ast.ViewCheckOptionUnspecified) && v.where != nil && op != "DELETE" {
			c := cloneExpr(v.where)
			unqualify(c)
			checks = append(checks, pendingCheck{name: target, expr: c})
		}
		// The target is now the view's base.
		base := ast.TableName{Name: ast.NewTableIdent(v.base), DbQualifier: ast.NewTableIdent(v.baseDB)}
		goesBy = v.alias
		switch st := stmt.(type) {
		case *ast.Insert:
			st.Table = base
			st.Auth.TargetNames = []string{v.baseDB, v.base}
		default:
			ate.Expr = base
			ate.As = ast.NewTableIdent(v.alias)
			if strings.EqualFold(v.alias, v.base) {
				// No alias: go-mysql-server's BEFORE DELETE trigger
				// finds no columns of a table aliased by its own name.
				ate.As = ast.TableIdent{}
			}
			ate.Auth.TargetNames = []string{v.baseDB, v.base}
		}
		// The invoker's privilege on what the view reads (the base
		// table, or the view under it): named by the statement's view,
		// whose definition the refusal does not show.
		if err := priv(op, v.baseDB, v.base, tn.Name.String()); err != nil {
			return nil, err
		}
		next := s.viewOf(v.baseDB, v.base)
		if next == nil {
			te = s.fe.lookupEntry(strings.ToLower(v.baseDB), strings.ToLower(v.base))
			break
		}
		db, name = next, v.base
	}
	switch st := stmt.(type) {
	case *ast.Update:
		st.Where = ast.NewWhere(ast.WhereStr, where)
	case *ast.Delete:
		st.Where = ast.NewWhere(ast.WhereStr, where)
	}
	if te == nil || len(checks) == 0 {
		return nil, nil
	}
	var vcs []viewCheck
	for _, c := range checks {
		vcs = append(vcs, viewCheck{te: te, name: c.name, expr: "(" + ast.String(c.expr) + ") IS TRUE"})
	}
	return vcs, nil
}

// mapInsert points an INSERT's column list at the base columns: every view
// column must be a plain column reference (1471).
func (v *updatableView) mapInsert(st *ast.Insert) error {
	for _, c := range v.cols {
		if c.base == "" {
			return errNotInsertable(v.name)
		}
	}
	if len(st.Columns) == 0 {
		for _, c := range v.cols {
			st.Columns = append(st.Columns, ast.NewColIdent(c.base))
		}
	} else {
		for i, name := range st.Columns {
			if c := v.col(name.String()); c != nil {
				st.Columns[i] = ast.NewColIdent(c.base)
			}
		}
	}
	for _, a := range st.OnDup {
		if c := v.col(a.Name.Name.String()); c != nil {
			if c.base == "" {
				return errNonUpdatableColumn(c.name)
			}
			a.Name.Name, a.Name.Qualifier = ast.NewColIdent(c.base), ast.TableName{}
		}
		a.Expr = v.mapExpr(a.Expr, v.name, false)
	}
	return nil
}

// viewWritePriv is the invoker's privilege check for op on db.table, 1142
// naming view without it.
func (s *Session) viewWritePriv(ctx *sql.Context, op, db, table, view string) error {
	priv := map[string]sql.PrivilegeType{"INSERT": sql.PrivilegeType_Insert, "UPDATE": sql.PrivilegeType_Update,
		"DELETE": sql.PrivilegeType_Delete}[op]
	mdb := s.fe.Engine.Analyzer.Catalog.MySQLDb
	if !mdb.Enabled() {
		return nil
	}
	if mdb.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(
		sql.PrivilegeCheckSubject{Database: db, Table: table}, priv)) {
		return nil
	}
	return mysql.NewSQLError(1142, "42000", "%s command denied to user '%s'@'%s' for table '%s'", op, ctx.Session.Client().User, sessionHost(ctx), view)
}

// viewChecksFor are the CHECK OPTION conditions of this statement on the
// table te (Table.GetChecks).
func (s *Session) viewChecksFor(ctx *sql.Context, te *tableEntry) []sql.CheckDefinition {
	checks := s.viewChecks
	if len(checks) == 0 && ctx != nil {
		checks = s.preparedViewChecks[ctx.Query()] // an EXECUTE, not parsed again
	}
	if len(s.routineViewChecks) > 0 {
		checks = append(checks[:len(checks):len(checks)], s.routineViewChecks...)
	}
	var out []sql.CheckDefinition
	for _, c := range checks {
		if c.te == te {
			out = append(out, sql.CheckDefinition{Name: ViewCheckPrefix + c.name, CheckExpression: c.expr, Enforced: true})
		}
	}
	return out
}
