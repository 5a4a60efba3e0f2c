package sqlfront

import (
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// How statements reach this server's values (servervars.go) where
// go-mysql-server would read its process-wide registries.

// globalVarsRuleID names globalVarsRule among the analyzer's rules; it is
// far above go-mysql-server's own ids.
const globalVarsRuleID analyzer.RuleId = 1 << 20

// globalVarsRule gives each @@global.name of a per-server variable the
// scope that reads this server's value: go-mysql-server's planner builds
// every @@global reference with its own global scope, which reads the
// process-wide registry. It runs before the other rules, so that a filter
// folded into a constant folds this server's value. (go-mysql-server
// analyzes a single-table UPDATE or DELETE with a fixed list of rules
// that leaves this one out: there @@global.name still reads the default.)
func globalVarsRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	// A context without a query text (tests, internal statements) is walked.
	if ctx == nil || (ctx.Query() != "" && !strings.Contains(ctx.Query(), "@@")) {
		return n, transform.SameTree, nil
	}
	return transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		sv, ok := e.(*expression.SystemVar)
		if !ok {
			return e, transform.SameTree, nil
		}
		if ms, ok := sv.Scope.(*sql.MysqlScope); !ok || ms.Type != sql.SystemVariableScope_Global || ownedVar(sv.Name) == nil {
			return e, transform.SameTree, nil
		}
		out := *sv
		out.Scope = ownScope{global: true}
		return &out, transform.NewTree, nil
	})
}

// execOverride runs SHOW [GLOBAL] STATUS and SHOW GLOBAL VARIABLES with
// this server's values, SHOW REPLICA STATUS (replicastatus.go), prints foreign keys in SHOW CREATE TABLE as MySQL
// does, marks the foreign-key editors of an UPDATE or DELETE as its
// targets, and notes the column of an INSERT's or UPDATE's conversion
// error (errcolumn.go); go-mysql-server builds everything else (it asks
// the override first for every node, and a nil iterator means "not mine").
type execOverride struct {
	fe   *Frontend
	skip sql.Node // a node to leave to go-mysql-server (newExecOverride)
}

var _ sql.NodeExecBuilder = execOverride{}

// newExecOverride returns go-mysql-server's builder with lockstep's
// overrides, except for the node skip (nil: none), which go-mysql-server
// builds: an override that wraps a node's iterator builds the node itself
// this way.
func newExecOverride(fe *Frontend, skip sql.Node) sql.NodeExecBuilder {
	return rowexec.NewOverrideBuilder(execOverride{fe: fe, skip: skip})
}

func (o execOverride) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	if o.skip != nil && o.skip == n {
		return nil, nil
	}
	if err := executing(ctx); err != nil { // planning.go
		return nil, err
	}
	if s, ok := ctx.Session.(*Session); ok {
		s.planned = true // no more planning it again (mdl.go, RetryAfterDDL)
	}
	switch n := n.(type) {
	case *plan.Set:
		if err := o.fe.checkSetPrivileges(ctx, n); err != nil { // setpriv.go
			return nil, err
		}
	default:
		if o.fe.readOnlyActive() && isAccountStatement(n) { // readonly.go
			if err := o.fe.readOnlyError(ctx); err != nil {
				return nil, err
			}
		}
	}
	if mdb, table := accountTarget(n); mdb != nil {
		return o.buildAccountWrite(ctx, mdb, table, n, func(n sql.Node) (sql.RowIter, error) {
			iter, err := o.build(ctx, n, row)
			if iter == nil && err == nil {
				return newExecOverride(o.fe, n).Build(ctx, n, row) // go-mysql-server builds n
			}
			return iter, err
		})
	}
	return o.build(ctx, n, row)
}

// build is Build for a node that is not a write to an account table.
func (o execOverride) build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	switch n := n.(type) {
	case *showReplicaStatus:
		return o.fe.buildReplicaStatus(ctx) // replicastatus.go
	case *plan.DropTable, *plan.CreateTable, *plan.AlterIndex:
		return o.buildAccountDDL(ctx, n) // granttables.go
	case *plan.ResolvedTable:
		if helpTable(n) {
			return sql.RowsToRowIter(), nil // mysqlschema.go
		}
		if isProcessListTable(n) { // procpriv.go
			iter, err := newExecOverride(o.fe, n).Build(ctx, n, row)
			if err != nil {
				return nil, err
			}
			return o.fe.ownThreadsOnly(ctx, iter), nil
		}
	case *plan.ShowProcessList:
		iter, err := newExecOverride(o.fe, n).Build(ctx, n, row)
		if err != nil {
			return nil, err
		}
		return o.fe.ownThreadsOnly(ctx, iter), nil
	case *plan.Kill:
		if err := o.fe.checkKill(ctx, n); err != nil {
			return nil, err
		}
	case *plan.Call:
		return o.buildInDatabase(ctx, n, row) // routinedb.go
	case *plan.RenameTable:
		if pairs := renamesOf(ctx, n); pairs != nil {
			s := ctx.Session.(*Session)
			return o.fe.renameTables(ctx, pairs, s.renameAlter) // renametables.go
		}
	case *plan.Block:
		if iter, err := o.alterMove(ctx, n, row); iter != nil || err != nil {
			return iter, err // renametables.go
		}
	case *plan.LockTables, *plan.UnlockTables:
		return o.buildLockTables(ctx, n, row) // locktables.go
	case *plan.Use:
		if db := n.Database(); db != nil && !o.fe.mayUse(ctx, db.Name()) {
			return nil, errDatabaseDenied(ctx, db.Name()) // mysql (dbaccess.go)
		}
	case *plan.ShowDatabases:
		iter, err := newExecOverride(o.fe, n).Build(ctx, n, row)
		if err != nil {
			return nil, err
		}
		return listedDatabasesIter{RowIter: iter, fe: o.fe}, nil // dbaccess.go
	case *plan.Into:
		if n.Outfile != "" || n.Dumpfile != "" {
			return o.fe.buildInto(ctx, n, row) // outfile.go
		}
	case *plan.LoadData:
		return o.fe.buildLoadData(ctx, n, row) // loaddata.go
	case *plan.ShowStatus:
		// The scope is unexported; the node is a comparable struct.
		return o.fe.showStatus(ctx, *n == *plan.NewShowStatus(true)), nil
	case *plan.ShowVariables:
		if n.Global {
			return o.fe.showGlobalVariables(ctx, n.Filter)
		}
	case *plan.ShowCreateTable:
		return showCreateTable(ctx, n, row)
	case *plan.RecursiveCte:
		return o.buildRecursiveCte(ctx, n, row) // recursivecte.go
	case *plan.Update:
		// Single-table UPDATEs skip the post-analysis rules: integer
		// arithmetic as MySQL's (intarith.go) and the exact-comparison
		// mark of the target (collation_plan.go) are applied here.
		out, err := updateRules(n)
		if err != nil {
			return nil, err
		}
		lockFKTargets(ctx, out)
		if out == sql.Node(n) {
			return nil, nil // go-mysql-server builds it
		}
		return newExecOverride(o.fe, out).Build(ctx, out, row) // go-mysql-server builds out itself
	case *plan.UpdateSource:
		// go-mysql-server builds it (this case skipped for this node,
		// every other override kept); the iterator notes the column of a
		// conversion error (errcolumn.go).
		var target sql.Node = n
		if checked := withRangeChecks(n); checked != nil {
			target = checked // out-of-range SET values fail (errcolumn.go)
		}
		iter, err := newExecOverride(o.fe, target).Build(ctx, target, row)
		if err != nil {
			return nil, err
		}
		s, _ := ctx.Session.(*Session)
		return &updateErrIter{RowIter: iter, s: s, schema: n.Child.Schema()}, nil
	case *plan.InsertInto:
		if s, ok := ctx.Session.(*Session); ok && len(s.genWarnings) > 0 {
			s.giveGeneratedWarnings() // genvalues.go
		}
		if out := withConvCheck(n); out != nil {
			iter, err := o.fe.exec.Build(ctx, out, row)
			if err != nil {
				return nil, err
			}
			fixID, info := o.fe.okFixes(ctx, n)
			if !fixID && info == infoNone {
				return iter, nil
			}
			return newInsertIDIter(ctx, iter, fixID, info), nil
		}
	case *convCheck:
		iter, err := o.fe.exec.Build(ctx, n.Child, row)
		if err != nil {
			return nil, err
		}
		s, _ := ctx.Session.(*Session)
		return &convCheckIter{RowIter: iter, s: s, dest: n.dest}, nil
	case *plan.DeleteFrom:
		lockFKTargets(ctx, n) // and go-mysql-server builds it
	case *plan.Distinct:
		return o.buildDistinct(ctx, n.Child, row)
	case *plan.OrderedDistinct:
		return o.buildDistinct(ctx, n.Child, row)
	case *plan.SetOp:
		return o.buildUnionDistinct(ctx, n, row)
	}
	return nil, nil
}

// updateRules returns u with what the post-analysis rules would have
// changed in it, or u itself.
func updateRules(u *plan.Update) (sql.Node, error) {
	var out sql.Node = u
	if x, same, err := transform.NodeExprs(u, intArithExpr); err == nil && same == transform.NewTree {
		out = x
	}
	if x, ok := out.(*plan.Update); ok {
		marked, changed, err := exactUpdate(x)
		if err != nil {
			return nil, err
		}
		if changed {
			out = marked
		}
	}
	return out, nil
}

// showStatus is SHOW [GLOBAL] STATUS: go-mysql-server's counters (shared
// by the process, see docs/isolation.md) with this server's on top.
func (fe *Frontend) showStatus(ctx *sql.Context, global bool) sql.RowIter {
	m := map[string]any{}
	for k, v := range sql.StatusVariables.NewGlobalMap() {
		m[k] = v.Value()
	}
	if !global {
		for k, v := range ctx.Session.GetAllStatusVariables(ctx) {
			m[k] = v.Value()
		}
	}
	for k, v := range fe.StatusValues() {
		m[k] = v
	}
	return sortedRows(m)
}

// showGlobalVariables is SHOW GLOBAL VARIABLES [LIKE | WHERE]: the
// registry's global values with this server's on top, filtered as
// go-mysql-server filters them (on the lower-case name).
func (fe *Frontend) showGlobalVariables(ctx *sql.Context, filter sql.Expression) (sql.RowIter, error) {
	m := sql.SystemVariables.GetAllGlobalVariables()
	for k, v := range fe.ownGlobals(false) {
		m[k] = v
	}
	if filter != nil {
		for k := range m {
			res, err := filter.Eval(ctx, sql.Row{strings.ToLower(k)})
			if err != nil {
				return nil, err
			}
			keep, _, err := types.Boolean.Convert(ctx, res)
			if err != nil {
				ctx.Warn(1292, "%s", err.Error())
				delete(m, k)
				continue
			}
			if b, _ := keep.(int8); b == 0 {
				delete(m, k)
			}
		}
	}
	return sortedRows(m), nil
}

func sortedRows(m map[string]any) sql.RowIter {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	rows := make([]sql.Row, len(names))
	for i, k := range names {
		rows[i] = sql.Row{k, m[k]}
	}
	return sql.RowsToRowIter(rows...)
}

// connStats are this server's Threads_connected and Connections:
// go-mysql-server counts both for the whole process, and resets them when
// any engine is created.
func (fe *Frontend) connStats() (connected, connections int64) {
	return fe.sessions.len(), fe.connections.Load()
}
