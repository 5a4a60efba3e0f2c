package sqlfront

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// Triggers under metadata locks (mdl.go).
//
// go-mysql-server plans a write's triggers (its applyTriggers rule) by
// reading every trigger of the database (GetTriggers) and parsing each
// one, which finds the table it fires on by name, before it looks whether
// the trigger fires on the written table. MySQL opens the triggers of the
// tables the statement uses only. Two faults followed, both seen with
// pt-online-schema-change under unpaced writes:
//
//   - A write to t failed with 1146 "Table '..._t_old' doesn't exist":
//     its plan parsed the triggers of _t_old (the tool's, moved there by
//     its RENAME) while the tool's DROP TABLE _t_old removed the table
//     and then those triggers.
//   - A write planned its triggers (none yet), the tool's CREATE TRIGGER
//     then ran, and the write took its table's metadata lock after it:
//     the table itself had not changed (Table.stale), so the write ran
//     without the trigger — a DELETE that the trigger should have carried
//     into the tool's copy left the row there.
//
// So while the rule runs (planTriggers), GetTriggers lists only the
// triggers on tables of the plan (a superset of the ones the rule keeps),
// and notes which version of the database's triggers it read (trigSeen);
// mdlRule, once it holds the statement's locks, plans the statement again
// if a database's triggers changed since (triggersChanged). A CREATE or
// DROP TRIGGER holds its table's exclusive lock while it changes the list,
// so a write that holds the table's shared lock and read the current list
// runs with exactly the triggers that exist.

// trigSeen is a version of a database's triggers a statement planned with.
type trigSeen struct {
	db  *Database
	gen uint64
}

// planTriggers wraps go-mysql-server's applyTriggers rule with the
// session state trigger planning reads while it runs: GetTriggers lists
// the triggers of the plan's tables only (trigTables), and the trigger
// bodies it parses get their writes through views rewritten
// (triggerRule, read by triggerBodyParser; viewroutine.go), with their
// CHECK OPTION conditions put back afterwards.
func planTriggers(rule analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		s, ok := ctx.Session.(*Session)
		if !ok {
			return rule(ctx, a, n, scope, sel, qFlags)
		}
		prevTables, prevChecks := s.trigTables, s.routineViewChecks
		s.trigTables = planTableNames(n)
		s.triggerRule++
		defer func() { s.trigTables, s.routineViewChecks = prevTables, prevChecks; s.triggerRule-- }()
		return rule(ctx, a, n, scope, sel, qFlags)
	}
}

// planTableNames is the lower-cased names of the tables n reads or
// writes (go-mysql-server's trigger rule takes a written table's name the
// same way: the first resolved table under the write).
func planTableNames(n sql.Node) map[string]bool {
	names := map[string]bool{}
	var visit func(sql.Node)
	visit = func(n sql.Node) {
		transform.Inspect(n, func(c sql.Node) bool {
			switch c := c.(type) {
			case *plan.ResolvedTable:
				names[strings.ToLower(c.Name())] = true
			case *plan.UnresolvedTable:
				names[strings.ToLower(c.Name())] = true
			case *plan.IndexedTableAccess:
				names[strings.ToLower(c.Name())] = true
			case *plan.DeleteFrom:
				for _, t := range c.GetDeleteTargets() {
					visit(t)
				}
			case *plan.InsertInto:
				visit(c.Destination)
			}
			return true
		})
	}
	visit(n)
	return names
}

// planningTriggers is ctx's session while go-mysql-server plans its
// statement's triggers, nil otherwise.
func planningTriggers(ctx *sql.Context) *Session {
	if ctx == nil {
		return nil
	}
	s, ok := ctx.Session.(*Session)
	if !ok || s.trigTables == nil {
		return nil
	}
	return s
}

// planTriggers lists d's triggers on s's plan's tables and notes the
// version read; d.mu is held.
func (d *Database) planTriggers(s *Session) []sql.TriggerDefinition {
	s.trigSeen = append(s.trigSeen, trigSeen{db: d, gen: d.trigGen})
	var out []sql.TriggerDefinition
	for i := range d.triggers {
		if s.trigTables[strings.ToLower(triggerOn(&d.triggers[i]))] {
			out = append(out, d.triggers[i])
		}
	}
	return out
}

// triggersChanged reports whether a database's triggers changed since the
// statement read them.
func (s *Session) triggersChanged() bool {
	for _, ts := range s.trigSeen {
		ts.db.mu.RLock()
		gen := ts.db.trigGen
		ts.db.mu.RUnlock()
		if gen != ts.gen {
			return true
		}
	}
	return false
}
